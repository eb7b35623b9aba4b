"""An inline message bar: what happened, and the next step (plain text only)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget


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

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._text = QLabel(self)
        self._text.setTextFormat(Qt.TextFormat.PlainText)
        self._text.setWordWrap(True)
        self._text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._button = QPushButton(self)
        self._button.clicked.connect(self._on_button)
        self._close = QToolButton(self)
        self._close.setText("×")
        self._close.setAccessibleName("Dismiss message")
        self._close.setToolTip("Dismiss")
        self._close.clicked.connect(self.clear)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self._text, 1)
        layout.addWidget(self._button)
        layout.addWidget(self._close)
        self._callback: Callable[[], None] | None = None
        self.level = Level.INFO
        self.hide()

    def show_message(self, text: str, level: Level = Level.INFO, *, action: str | None = None,
                     on_action: Callable[[], None] | None = None) -> None:
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
        self.show()

    def text(self) -> str:
        return self._text.text() if self.isVisibleTo(self.parentWidget()) else ""

    @Slot()
    def clear(self) -> None:
        self._callback = None
        self._text.clear()
        self.hide()

    @Slot()
    def _on_button(self) -> None:
        callback = self._callback
        self.acted.emit()
        if callback is not None:
            callback()
