"""How responsive the GUI thread stays: ``GapMeter`` ticks a QTimer every TICK_MS and keeps
the longest time between two ticks (a blocked event loop shows as one long gap)."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Slot

TICK_MS = 10


class GapMeter(QObject):
    """``with GapMeter() as meter: ...`` then ``meter.longest`` (seconds) and ``meter.ticks``."""

    def __init__(self) -> None:
        super().__init__()
        self.longest = 0.0
        self.ticks = 0
        self._last = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def __enter__(self) -> GapMeter:
        self._last = time.monotonic()
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._tick()  # a block at the very end counts too
        self._timer.stop()

    @Slot()
    def _tick(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self._last)
        self._last = now
        self.ticks += 1
