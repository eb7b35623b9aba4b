"""The desk's one switch between relative times ("12m ago") and absolute ones ("14:42:37",
with the date when not today). ``fmt`` formats by it; the models and views listen to
``time_mode().changed`` and repaint (no reload)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from ..widgets import fmt


class TimeMode(QObject):
    """Signals: changed(bool): times are now absolute (True) or relative (False)."""

    changed = Signal(bool)

    def set_absolute(self, on: bool) -> None:
        if fmt.absolute() == bool(on):
            return
        fmt.set_absolute(on)
        self.changed.emit(bool(on))


_MODE: list[TimeMode] = []


def time_mode() -> TimeMode:
    """The process's one TimeMode."""
    if not _MODE:
        _MODE.append(TimeMode())
    return _MODE[0]
