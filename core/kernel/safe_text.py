"""Agent text made safe to print: one definition of the characters no terminal, shell line,
JSON file or spreadsheet may receive raw.

Agents choose ids, keys, titles and payloads, so anything they wrote may hold ANSI escape
sequences (ESC ...), other C0/C1 controls, DEL, bidi overrides (U+202E turns "12\\u202e345"
into "12543" on screen) and other invisible format characters. ``visible`` shows each of them
as an escape ("\\x1b", "\\u202e") for lines meant for people; ``json_escaped`` writes them as
JSON ``\\uXXXX`` escapes (the value read back is unchanged); ``csv_text`` shows them visibly in
a CSV cell. U+200D (the zero-width joiner inside emoji) stays, and so do tab, newline and
carriage return, which each caller handles for its format.
"""

from __future__ import annotations

import re
from typing import Any

# Every character of the Unicode categories Cc, Cf, Zl and Zp except tab, newline, carriage
# return and U+200D (a test checks this against ``unicodedata``).
INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f"
    "\u0890\u0891\u08e2\u180e\u200b\u200c\u200e\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
# the same, with tab, newline and carriage return: nothing of these fits on one line
INVISIBLE_OR_BREAK = re.compile(INVISIBLE.pattern[:-1] + "\t\n\r]")
BREAKS = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in BREAKS:
        return BREAKS[ch]
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def visible(text: str, *, breaks: bool = False) -> str:
    """``text`` with control and invisible format characters shown as escapes; with
    ``breaks`` also tab, newline and carriage return (as \\t, \\n, \\r)."""
    return (INVISIBLE_OR_BREAK if breaks else INVISIBLE).sub(_visible, text)


def is_printable(text: str) -> bool:
    """True when ``text`` holds no control, invisible or line-breaking character."""
    return INVISIBLE_OR_BREAK.search(text) is None


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_escaped(text: str) -> str:
    """JSON text (from ``json.dumps``) with every invisible character written as ``\\uXXXX``.
    JSON's own syntax is ASCII, so such a character can only sit inside a string, where the
    escape means the same character: the parsed value is unchanged."""
    return INVISIBLE.sub(_json_escape, text)


def csv_text(value: str) -> str:
    """A CSV cell's text with invisible characters shown as escapes (the csv module quotes
    tab, newline and carriage return itself)."""
    return INVISIBLE.sub(_visible, value)


def bounded(text: Any, limit: int) -> str:
    """One line of at most ``limit`` characters, invisible characters shown as escapes. Only a
    head of a long text is looked at (a 3 MB argument costs what a short one does)."""
    raw = str(text if text is not None else "")
    head = raw[: 8 * limit + 64]
    s = visible(" ".join(head.split()))
    if len(head) < len(raw) and len(s) <= limit:  # a head of mostly white space: all of it
        s = visible(" ".join(raw.split()))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def span(seconds: float) -> str:
    """A short duration for people: 45s, 12m, 3h 05m, 2d 4h."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {sec:02d}s" if minutes < 10 else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"
