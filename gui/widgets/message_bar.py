"""An inline message bar: what happened, and the next step (plain text only).

Its text goes through the one display function for agent text (``PlainLabel``: plain
text, control and invisible characters shown as escapes). A message shown with
``close_after_ms`` closes by itself after that long (the countdown pauses while the
pointer is over the bar); a success closes by itself after ``MessageBar.success_close_ms``
unless told otherwise (tests set it short); errors and warnings stay until dismissed or
replaced. A message may say what it is ``about`` (a run, an entry): the host calls
``keep_only(key)`` when it shows another item, and a message about an item no longer shown
goes (issue 32: a run's "approved." appeared on another run)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import ClassVar

from PySide6.QtCore import QEvent, QTimer, Signal, Slot
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QToolButton, QWidget

from ..infra.i18n import tr
from .labels import plain_label

BANNER_CLOSE_MS = 10_000  # "Approved …" banners close by themselves after this long
NOTE_CLOSE_MS = 6_000  # quiet notes ("not approved: it just came on screen") close sooner


class Level(StrEnum):
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"


class MessageBar(QFrame):
    """Signals:
    acted(): the operator pressed the bar's action button.
    """

    acted = Signal()
    success_close_ms: ClassVar[int] = BANNER_CLOSE_MS  # injectable: tests make it short

    def __init__(self, parent: QWidget | None = None, *, reserve: bool = True) -> None:
        """``reserve``: the bar keeps its one-line height while hidden, so nothing below it
        moves when a message comes or goes (issue 32); the window's notice of the journal's
        state (rare, and it stays until the state changes) does not."""
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._text = plain_label(parent=self)
        self._closer = QTimer(self)
        self._closer.setSingleShot(True)
        self._closer.timeout.connect(self.clear)
        self._close_after: int | None = None
        self._button = QPushButton(self)
        self._button.clicked.connect(self._on_button)
        self._close = QToolButton(self)
        self._close.setText("×")
        self._close.setAccessibleName(tr("Dismiss message"))
        self._close.setToolTip(tr("Dismiss"))
        self._close.clicked.connect(self.clear)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self._text, 1)
        layout.addWidget(self._button)
        layout.addWidget(self._close)
        self._callback: Callable[[], object] | None = None
        if reserve:
            self._reserve(layout)
        self.level = Level.INFO
        self.about: str | None = None  # the item the shown message is about (None: the page)
        self.hide()

    def show_message(
        self,
        text: str,
        level: Level = Level.INFO,
        *,
        action: str | None = None,
        on_action: Callable[[], object] | None = None,
        close_after_ms: int | None = None,
        about: str | None = None,
    ) -> None:
        """Show ``text``; with ``close_after_ms`` the bar closes by itself after that long
        (a success: after ``success_close_ms`` when not given). ``about``: the item it is
        about (see ``keep_only``)."""
        if close_after_ms is None and level == Level.SUCCESS:
            close_after_ms = self.success_close_ms
        self.about = about
        self.level = level
        self.setProperty("level", level.value)
        self.style().unpolish(self)
        self.style().polish(self)
        self._text.setText(text)
        self.setAccessibleName(f"{level.value}: {text}")
        self._callback = on_action
        self._button.setVisible(bool(action))
        if action:
            self._button.setText(action)
            self._button.setAccessibleName(action)
        self._close_after = close_after_ms
        self._closer.stop()
        if close_after_ms is not None and not self.underMouse():
            self._closer.start(close_after_ms)
        self.show()

    def _reserve(self, layout: QHBoxLayout) -> None:
        """Hold the height of a one-line message with its action button, shown or not."""
        margins = layout.contentsMargins()
        inner = max(
            self._button.sizeHint().height(),
            self._close.sizeHint().height(),
            self._text.fontMetrics().lineSpacing(),
        )
        self.setMinimumHeight(inner + margins.top() + margins.bottom() + 2 * self.frameWidth())
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)

    def closes_by_itself(self) -> bool:
        return self._close_after is not None

    def keep_only(self, about: str | None) -> None:
        """The host now shows ``about``: a message about another item goes."""
        if self.about is not None and self.about != about:
            self.clear()

    def enterEvent(self, event: QEnterEvent) -> None:
        self._closer.stop()  # the operator is reading it
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self._close_after is not None and self.isVisible():
            self._closer.start(self._close_after)
        super().leaveEvent(event)

    def text(self) -> str:
        parent = self.parentWidget()  # Qt: visible to no ancestor is visible
        shown = self.isVisibleTo(parent) if parent is not None else self.isVisible()
        return self._text.text() if shown else ""

    @Slot()
    def clear(self) -> None:
        self._closer.stop()
        self._close_after = None
        self._callback = None
        self.about = None
        self._text.clear()
        self.hide()

    @Slot()
    def _on_button(self) -> None:
        callback = self._callback
        self.acted.emit()
        if callback is not None:
            callback()
