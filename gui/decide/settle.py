"""A decision takes a deliberate act on the item the operator is looking at.

``InputWatch`` notes when the operator last pressed a key or a mouse button (anywhere in
the desk). ``Settle`` knows which item the detail shows and since when: a mouse click on
a decision button of an item that has not been on screen for ``SETTLE_S`` does nothing,
and neither does any decision on an item the desk put there by itself (it advanced to it
after a decision, or the list changed) until it has been on screen that long. So the
second click of a double-click, landing on the Approve button of the item the desk just
advanced to, decides nothing.

Time comes from ``now()`` (monotonic); tests replace it to step the clock.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

SETTLE_S = 0.7  # an item must be on screen this long before a click on it decides it
QUIET_S = 1.5  # a key pressed this recently: the operator is busy, arrivals wait

KEY_EVENTS = frozenset({QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride})
MOUSE_EVENTS = frozenset(
    {QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick, QEvent.Type.MouseButtonRelease}
)


def now() -> float:
    return time.monotonic()


class InputWatch(QObject):
    """Watches the application's key and mouse-button events (never consumes them)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.last_key = float("-inf")
        self.last_mouse = float("-inf")
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in KEY_EVENTS:
            self.last_key = now()
        elif kind in MOUSE_EVENTS:
            self.last_mouse = now()
        return False

    def by_mouse(self) -> bool:
        """The operator's last act was a mouse button (a click), not a key."""
        return self.last_mouse > self.last_key

    def typing(self) -> bool:
        """A key was pressed within the last ``QUIET_S``."""
        return now() - self.last_key < QUIET_S


class Settle:
    """Which item is on screen, since when, and whether the operator brought it there."""

    def __init__(self, watch: InputWatch) -> None:
        self.watch = watch
        self.key: str | None = None
        self.since: float | None = None  # when its whole entity was first shown
        self.by_desk = False  # the desk (not the operator) made it the current item

    def showing(self, key: str | None, *, by_desk: bool) -> None:
        """The detail now shows ``key`` (its row; the entity is still loading)."""
        if key != self.key:
            self.key, self.since, self.by_desk = key, None, by_desk

    def loaded(self, key: str) -> None:
        """The whole entity of ``key`` is on screen now."""
        if key == self.key and self.since is None:
            self.since = now()

    def read_for(self) -> float:
        """Seconds the shown item has been on screen whole (0 while it loads)."""
        return 0.0 if self.since is None else now() - self.since

    def too_soon(self, key: str) -> bool:
        """A decision on ``key`` now would not be a deliberate act on what is on screen."""
        if key != self.key:
            return True
        if self.read_for() >= SETTLE_S:
            return False
        return self.by_desk or self.watch.by_mouse()
