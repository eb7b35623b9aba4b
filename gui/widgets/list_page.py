"""A list page: filter row + a PagedModel table, refreshed live from the change feed.

A page refreshes only when the change set names one of its ``change_kinds``; while it
is hidden it only notes that it is stale and refreshes when shown.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import ChangeKind, ChangeSet

from ..infra.context import PageContext
from ..infra.i18n import tr
from . import fmt
from .labels import plain_label
from .message_bar import MessageBar
from .paged_model import PagedModel
from .tables import TimeColumns, row_table

REFRESH_THROTTLE_MS = 300
SEARCH_DEBOUNCE_MS = 250


def make_table(model: PagedModel, name: str, parent: QWidget, stretch: int) -> QTableView:
    view = row_table(model, name, parent, model.column_widths())
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setTabKeyNavigation(False)
    view.verticalHeader().setDefaultSectionSize(28)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    TimeColumns(view, model.time_columns())  # a child of the view: lives as long
    return view


def choice_combo(name: str, choices: list[tuple[str, Any]], parent: QWidget) -> QComboBox:
    """A filter menu; each choice's text (marked QT_TR_NOOP where declared) is translated
    here, its value stays the item's data."""
    combo = QComboBox(parent)
    combo.setAccessibleName(name)
    combo.setToolTip(name)
    for text, value in choices:
        combo.addItem(tr(text), value)
    return combo


def fill_combo(combo: QComboBox, first: str, values: list[str], *, keep: bool = False) -> None:
    """Replace a filter menu's choices (``first`` means all) without emitting. The current
    choice stays when it is still offered; otherwise ``keep`` adds it back, or ``first`` is
    chosen."""
    current = combo.currentData()
    combo.blockSignals(True)
    combo.clear()
    combo.addItem(first, None)
    for value in values:
        combo.addItem(fmt.bounded(value, 80), value)
    found = combo.findData(current) if current is not None else 0
    if found < 0 and keep:
        combo.addItem(fmt.bounded(current, 80), current)
        found = combo.count() - 1
    combo.setCurrentIndex(max(found, 0))
    combo.blockSignals(False)


class ListPage(QWidget):
    """Subclasses set ``change_kinds`` and ``title``, pass their model (the page owns it) and
    implement ``apply_query()``; ``self.layout_top`` holds the filter row."""

    change_kinds: ClassVar[frozenset[ChangeKind]] = frozenset()
    title: ClassVar[str] = ""
    stretch_column: ClassVar[int] = 0

    def __init__(self, ctx: PageContext, model: PagedModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.journal = ctx.journal
        self.model = model
        model.setParent(self)
        self.message = MessageBar(self)
        self.search = QLineEdit(self)
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName(tr("Search {title}").format(title=self.title.lower()))
        self.search.setPlaceholderText(tr("Search {title}").format(title=self.title.lower()))
        self.heading = plain_label(self.title, self, name="DetailTitle", selectable=False)
        self.heading.setWordWrap(False)
        self.count_label = plain_label("", self, name="Muted", selectable=False)
        self.count_label.setWordWrap(False)
        self.table = make_table(model, self.title, self, self.stretch_column)
        self.layout_top = QHBoxLayout()
        self.layout_top.addWidget(self.heading)
        self.layout_top.addWidget(self.count_label)
        self.layout_top.addStretch(1)
        self.layout_top.addWidget(self.search, 1)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(8, 8, 8, 0)
        self.body.addLayout(self.layout_top)
        self.body.addWidget(self.message)
        self._stale = False
        self._throttle = QTimer(self)
        self._throttle.setSingleShot(True)
        self._throttle.setInterval(REFRESH_THROTTLE_MS)
        self._throttle.timeout.connect(self._refresh_if_visible)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DEBOUNCE_MS)
        self._debounce.timeout.connect(self.apply_query)
        self.search.textChanged.connect(self._debounce.start)
        self.model.failed.connect(self._on_failed)
        self.model.loaded.connect(self._on_loaded)
        self.model.rowsInserted.connect(self._on_loaded)  # pages fetched by scrolling

    def add_main(self, widget: QWidget) -> None:
        """Put the page's main widget (the table, or a splitter holding it) under the filters."""
        self.body.addWidget(widget, 1)

    def start(self) -> None:
        self.apply_query()

    def apply_query(self) -> None:
        raise NotImplementedError

    def on_changes(self, cs: ChangeSet) -> None:
        if cs.kinds() & self.change_kinds:
            self._stale = True
            if not self._throttle.isActive():
                self._throttle.start()

    @Slot()
    def _refresh_if_visible(self) -> None:
        if self._stale and self.isVisible():
            self._stale = False
            self.model.refresh()
            self.refreshed()

    def refreshed(self) -> None:
        """Called after a live refresh was started (subclasses refresh side panels)."""

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._throttle.start(0)

    @Slot()
    def _on_loaded(self) -> None:
        n = self.model.rowCount()
        if self.model.capped():
            self.count_label.setText(
                tr(
                    "{n:,} shown, the most one list holds: narrow the filters to see the rest"
                ).format(n=n)
            )
            return
        more = "+" if self.model.canFetchMore() else ""
        self.count_label.setText(tr("{n:,}{more} shown").format(n=n, more=more))

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.ctx.presenter.present(
            exc, inline=self.message, action="Retry", on_action=self.model.refresh
        )

    def focus_list(self) -> None:
        self.table.setFocus()

    def text(self) -> str | None:
        return self.search.text().strip() or None
