"""Saved views: a list's filters kept under a name ("Views" menu: Save view…, each view,
Delete view), in the desk's preferences (``DeskSettings.views``), so they survive a restart.

A view is what the list's filter bar says it is (``current()``: a JSON-able dict) and is
applied by it (``apply(dict)``); a value the list no longer offers is applied as it was
saved (an agent not waiting now is still a filter)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import QSize, Slot
from PySide6.QtWidgets import QInputDialog, QMenu, QSizePolicy, QStyle, QToolButton, QWidget

from ..infra.i18n import tr
from ..infra.settings import MAX_VIEW_NAME, DeskSettings
from . import fmt


class SavedViews(QToolButton):
    """The "Views" button of a list's filter bar, for the views of ``page`` ("inbox", "runs")."""

    def __init__(
        self,
        settings: DeskSettings,
        page: str,
        current: Callable[[], dict[str, Any]],
        apply: Callable[[dict[str, Any]], None],
        say: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        """``say(text)``: tell the operator why a view was not saved."""
        super().__init__(parent)
        self.settings, self.page = settings, page
        self._current, self._apply, self._say = current, apply, say
        self.dialog: QInputDialog | None = None
        self.setText(tr("Views"))
        self.setAccessibleName(tr("Saved views"))
        self.setToolTip(tr("Save these filters under a name, or apply a saved view"))
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu_ = QMenu(self)
        self.menu_.aboutToShow.connect(self._fill)
        self.setMenu(self.menu_)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)  # never squeezed
        self._fill()

    def sizeHint(self) -> QSize:
        """Room for the text and the menu arrow: Fusion centres the text and draws the arrow
        in the right-hand corner without counting it, so the arrow sat on the text's last
        letter; an arrow's width on either side of the text clears it."""
        hint = super().sizeHint()
        arrow = self.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, None, self)
        text = self.fontMetrics().horizontalAdvance(self.text())
        return QSize(max(hint.width(), text + 2 * arrow), hint.height())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def names(self) -> list[str]:
        return list(self.settings.views(self.page))

    @Slot()
    def _fill(self) -> None:
        menu = self.menu_
        menu.clear()
        menu.addAction(tr("Save view…"), self.ask_name)
        views = self.settings.views(self.page)
        if not views:
            return
        menu.addSeparator()
        for name in views:
            menu.addAction(fmt.bounded(name, MAX_VIEW_NAME), partial(self.apply_view, name))
        forget = menu.addMenu(tr("Delete view"))
        for name in views:
            forget.addAction(fmt.bounded(name, MAX_VIEW_NAME), partial(self.delete_view, name))

    def ask_name(self) -> None:
        """Ask for the new view's name (not blocking: the answer arrives by signal)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle(tr("Save view"))
        dialog.setLabelText(tr("Name of the view (the filters as they are now):"))
        dialog.setTextValue("")
        dialog.textValueSelected.connect(self.save_view)
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()

    @Slot(str)
    def save_view(self, name: str) -> None:
        try:
            self.settings.save_view(self.page, name, self._current())
        except ValueError as exc:
            self._say(tr("The view was not saved: {why}.").format(why=exc))
        self._fill()

    def apply_view(self, name: str) -> None:
        view = self.settings.views(self.page).get(name)
        if view is not None:
            self._apply(view)

    def delete_view(self, name: str) -> None:
        self.settings.delete_view(self.page, name)
        self._fill()
