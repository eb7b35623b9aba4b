"""The status bar: journal path, schema version, store state, operator, last change."""

from __future__ import annotations

import os
import stat
from enum import StrEnum
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QWidget

from ..infra.i18n import tr
from . import fmt
from .labels import plain_tip


class StoreState(StrEnum):
    OK = "ok"
    BUSY = "busy"
    READ_ONLY = "read-only"
    ERROR = "error"
    DAMAGED = "damaged"
    WAL_DELETED = "-wal deleted"
    TAIL_LOST = "changes missing"


# Faults that stay until the journal is reopened: no later successful call clears them.
STICKY = (StoreState.DAMAGED, StoreState.WAL_DELETED, StoreState.TAIL_LOST)


STATE_TIPS = {
    StoreState.OK: "The journal answers normally.",
    StoreState.BUSY: "Another process holds the journal's write lock; writes wait for it "
    "(after the wait runs out, retry).",
    StoreState.READ_ONLY: "Opened read-only: you can watch but not decide.",
    StoreState.ERROR: "The last store call failed; see the message for the next step.",
    StoreState.DAMAGED: "The journal file is damaged. Run `proctor verify` on it, and restore "
    "it from a backup if verify names a problem.",
    StoreState.WAL_DELETED: "The journal's -wal file was deleted while it was open: what it "
    "held may be lost. Close and reopen the journal, check that "
    "nothing else deletes journal files, and run `proctor verify`.",
    StoreState.TAIL_LOST: "Changes this desk saw earlier are not in the journal (its -wal "
    "was lost): run `proctor verify` and restore it from a backup.",
}


def exposure_warning(path: str | Path) -> str | None:
    """A warning when the journal (or its -wal/-shm) can be read by other users: agents'
    requests, answers and memory are in there. None when only the owner can read it."""
    if os.name == "nt":
        return None
    for file in (Path(path), Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            mode = stat.S_IMODE(file.stat().st_mode)
        except OSError:
            continue
        if mode & 0o077:
            return (
                f"⚠ {file.name} is readable by other users (mode {mode:04o}); run: chmod 600 {file}"
            )
    return None


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
        self.exposure = _label(self, "File permissions warning")
        self.exposure.setObjectName("StatusWarning")
        self.exposure.hide()
        self.check = _label(self, "Damage check")
        self.check.setText(tr("checking the journal file…"))
        self.check.setToolTip(
            tr("The desk reads the whole journal file once to find damage; it works meanwhile.")
        )
        self.check.hide()
        self.path.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.path.setMinimumWidth(80)
        self.addWidget(self.path, 1)
        self.addPermanentWidget(self.exposure)
        self.addPermanentWidget(self.check)
        for widget in (self.schema, self.state, self.operator, self.last_change):
            widget.setContentsMargins(8, 0, 8, 0)
            self.addPermanentWidget(widget)
        self.read_only = False
        self._error = False
        self._error_busy = False
        self._busy = False
        self.fault: StoreState | None = None
        self.set_last_change(None)

    def set_journal(self, path: str, schema: str, operator: str, read_only: bool) -> None:
        self.path.setText(path)
        self.path.setToolTip(path)
        self.schema.setText(tr("schema {schema}").format(schema=schema))
        self.operator.setText(tr("operator: {operator}").format(operator=operator))
        self.read_only = read_only
        self._show_state()

    def checking(self, running: bool) -> None:
        """The damage check (after the window opened) is running / has ended."""
        self.check.setVisible(running)

    def set_exposure(self, warning: str | None) -> None:
        """Show (or hide) the warning that the journal is readable by others."""
        self.exposure.setText(warning or "")
        self.exposure.setToolTip(plain_tip(warning or ""))
        self.exposure.setVisible(bool(warning))

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._show_state()

    def set_error(self, failing: bool, *, busy: bool = False) -> None:
        """The last store call failed (``busy``: because another process held the lock)."""
        self._error = failing
        self._error_busy = failing and busy
        self._show_state()

    def set_fault(self, state: StoreState) -> None:
        """A fault that stays until the journal is reopened (damaged, -wal deleted)."""
        if state in STICKY and self.fault is None:
            self.fault = state
            self._show_state()

    def current_state(self) -> StoreState:
        if self.fault is not None:
            return self.fault
        if self._error:
            return StoreState.BUSY if self._error_busy else StoreState.ERROR
        if self._busy:
            return StoreState.BUSY
        if self.read_only:
            return StoreState.READ_ONLY
        return StoreState.OK

    def _show_state(self) -> None:
        state = self.current_state()
        self.state.setText(tr("store: {state}").format(state=state.value))
        self.state.setToolTip(STATE_TIPS[state])

    def set_last_change(self, ts: float | None) -> None:
        self.last_change.setText(
            tr("last change: {ts}").format(ts=fmt.clock(ts)) if ts else tr("last change: —")
        )
