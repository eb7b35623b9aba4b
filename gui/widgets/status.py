"""The status bar: journal path, schema version, store state, operator, last change."""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QWidget

from . import fmt


class StoreState(StrEnum):
    OK = "ok"
    BUSY = "busy"
    READ_ONLY = "read-only"
    ERROR = "error"


STATE_TIPS = {
    StoreState.OK: "The journal answers normally.",
    StoreState.BUSY: "Another process holds the journal's write lock; writes wait for it.",
    StoreState.READ_ONLY: "Opened read-only: you can watch but not decide.",
    StoreState.ERROR: "The last store call failed; see the message for the next step.",
}


def _label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setAccessibleName(name)
    return label


class DeskStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = _label(self, "Journal path")
        self.schema = _label(self, "Schema version")
        self.state = _label(self, "Store state")
        self.operator = _label(self, "Operator")
        self.last_change = _label(self, "Last change seen")
        self.path.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.path.setMinimumWidth(80)
        self.addWidget(self.path, 1)
        for widget in (self.schema, self.state, self.operator, self.last_change):
            widget.setContentsMargins(8, 0, 8, 0)
            self.addPermanentWidget(widget)
        self.read_only = False
        self._error = False
        self._busy = False
        self.set_last_change(None)

    def set_journal(self, path: str, schema: str, operator: str, read_only: bool) -> None:
        self.path.setText(path)
        self.path.setToolTip(path)
        self.schema.setText(f"schema {schema}")
        self.operator.setText(f"operator: {operator}")
        self.read_only = read_only
        self._show_state()

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._show_state()

    def set_error(self, failing: bool) -> None:
        self._error = failing
        self._show_state()

    def current_state(self) -> StoreState:
        if self._error:
            return StoreState.ERROR
        if self._busy:
            return StoreState.BUSY
        if self.read_only:
            return StoreState.READ_ONLY
        return StoreState.OK

    def _show_state(self) -> None:
        state = self.current_state()
        self.state.setText(f"store: {state.value}")
        self.state.setToolTip(STATE_TIPS[state])

    def set_last_change(self, ts: float | None) -> None:
        self.last_change.setText(f"last change: {fmt.clock(ts)}" if ts else "last change: —")
