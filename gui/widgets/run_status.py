"""How a status looks: a word, a shape and a colour (never the colour alone).

Shapes are SVG icons (resources/icons/status-*.svg): ▶ running, ⏸ waiting for you,
✓ completed, ✕ failed, ⊘ cancelled, ! interrupted, ○ pending. The same table serves runs,
attempts, tool calls, approvals, questions and effects (the timeline bars use the colours).
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QIcon

from .icons import icon

# status -> (shape, colour)
STYLE: dict[str, tuple[str, str]] = {
    "pending": ("ring", "#7a8294"),
    "requested": ("ring", "#7a8294"),
    "presented": ("ring", "#7a8294"),
    "reserved": ("ring", "#7a8294"),
    "running": ("play", "#2f6fdf"),
    "executing": ("play", "#2f6fdf"),
    "waiting_for_user": ("pause", "#c27c0e"),
    "completed": ("check", "#1e8a4c"),
    "succeeded": ("check", "#1e8a4c"),
    "approved": ("check", "#1e8a4c"),
    "resolved": ("check", "#1e8a4c"),
    "committed": ("check", "#1e8a4c"),
    "failed": ("cross", "#cc3333"),
    "denied": ("cross", "#cc3333"),
    "outcome_unknown": ("warn", "#c2561b"),
    "ambiguous": ("warn", "#c2561b"),
    "interrupted": ("warn", "#c2561b"),
    "cancelled": ("slash", "#6b6f7a"),
    "expired": ("slash", "#6b6f7a"),
    "accepted_local": ("check", "#1e8a4c"),
    "accepted_incoming": ("check", "#1e8a4c"),
    "merged": ("check", "#1e8a4c"),
    "dismissed": ("slash", "#6b6f7a"),
    "unfinished": ("warn", "#c2561b"),  # a tool call its run ended without finishing
}
WORDS = {
    "waiting_for_user": "waiting for you",
    "outcome_unknown": "outcome unknown",
    "unfinished": "unfinished when the run ended",
}


def words(status: str) -> str:
    return WORDS.get(status, status.replace("_", " "))


def color(status: str) -> QColor:
    return QColor(STYLE.get(status, ("ring", "#7a8294"))[1])


# shape -> the SVG in proctor.resources (icons/status-*.svg) drawing it in its colour
SHAPE_ICONS = {
    "ring": "status-pending",
    "play": "status-running",
    "pause": "status-waiting",
    "check": "status-done",
    "cross": "status-failed",
    "warn": "status-attention",
    "slash": "status-cancelled",
}


def status_icon(status: str, size: int = 14) -> QIcon:
    """The status's icon (an SVG, so ``size`` is only the size callers ask pixmaps at)."""
    return icon(SHAPE_ICONS[STYLE.get(status, ("ring", ""))[0]])
