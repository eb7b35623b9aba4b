"""Plain-text formatting shared by the views: ages, countdowns, times, bounded text."""

from __future__ import annotations

import ast
import re
import time
from typing import Any

from proctor.core.kernel import canonical, resource, safe_text
from proctor.core.kernel.resource import readable

CELL_MAX = 300  # characters shown in one table cell (agent text is bounded on display)
# Control characters (ANSI escapes start with ESC) and invisible format characters (bidi
# overrides such as U+202E, zero-width spaces) are shown as escapes like "\x1b" and "\u202e",
# exactly as the CLI prints them: one definition, ``proctor.core.kernel.safe_text``, so agent text can
# neither reorder nor hide what it says. (U+200D, the zero-width joiner inside emoji, stays.)
INVISIBLE = safe_text.INVISIBLE


def visible(text: str) -> str:
    """``text`` with control and invisible format characters shown as escapes."""
    return safe_text.visible(text)


def bounded(text: Any, limit: int = CELL_MAX) -> str:
    """One line of at most ``limit`` characters (agent text is data, never markup)."""
    return safe_text.bounded(text, limit)


span = safe_text.span  # a short human duration: 45s, 12m, 3h 05m, 2d 4h


def age(created_at: float, now: float | None = None) -> str:
    return span((now or time.time()) - created_at)


def countdown(expires_at: float | None, now: float | None = None) -> str:
    if expires_at is None:
        return "—"
    left = expires_at - (now or time.time())
    return "expired" if left <= 0 else span(left)


def clock(ts: float | None) -> str:
    """Local wall time; the date too when it is not today."""
    if ts is None:
        return "—"
    local = time.localtime(ts)
    if time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


_absolute = [False]  # the View menu's "Absolute times" (gui/infra/time_mode.py switches it)


def set_absolute(on: bool) -> None:
    _absolute[0] = bool(on)


def absolute() -> bool:
    """Times are shown as wall times (else relative: "12m ago", "in 5m")."""
    return _absolute[0]


def relative(ts: float | None, now: float | None = None) -> str:
    """``ts`` from now: "12m ago", "in 5m"."""
    if ts is None:
        return "—"
    delta = (now or time.time()) - ts
    return f"{span(delta)} ago" if delta >= 0 else f"in {span(-delta)}"


def when(ts: float | None, now: float | None = None) -> str:
    """A moment in the form the operator chose (absolute or relative)."""
    return clock(ts) if absolute() else relative(ts, now)


def other(ts: float | None, now: float | None = None) -> str:
    """The form ``when`` does not show (for tooltips)."""
    return relative(ts, now) if absolute() else clock(ts)


def since(ts: float, now: float | None = None) -> str:
    """An Age cell: how long ago, or (absolute times) when."""
    return clock(ts) if absolute() else age(ts, now)


def until(ts: float | None, now: float | None = None) -> str:
    """An Expires cell: how long is left, or (absolute times) until when."""
    return clock(ts) if absolute() and ts is not None else countdown(ts, now)


def resource_text(action: Any) -> str:
    """What an action is about (its resource, or its path, url, command, recipients…),
    readable: ``email.send jonas@…, mia@…``, not ``['jonas@…', 'mia@…']``."""
    return resource.words(action)


ESCAPED = re.compile(r"\[([*?\[])\]")  # core.approvals.rules.glob_escape's "[*]", "[?]", "[[]"


def pattern_text(pattern: str) -> str:
    """A rule's pattern as a person reads it: a pattern that matches one text exactly (as
    ``glob_escape`` writes one) is that text — a Python list repr read as "a, b" — and a
    real pattern (``*``, ``?``, ``[…]``) is shown as it is."""
    plain = ESCAPED.split(pattern)
    if any(c in part for part in plain[::2] for c in "*?["):
        return pattern
    literal = ESCAPED.sub(r"\1", pattern)
    if literal.startswith("[") and literal.endswith("]") and len(literal) < 2_000:
        try:
            value = ast.literal_eval(literal)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            value = None
        if isinstance(value, list):
            return readable(value)
    return literal


pretty_json = canonical.pretty_json


def short(text: str | None, keep: int = 12) -> str:
    text = text or ""
    return text if len(text) <= keep else text[:keep] + "…"


def label(text: str) -> str:
    """An identifier as words (``safe_read`` -> ``safe read``)."""
    return text.replace("_", " ")
