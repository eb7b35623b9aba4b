"""Is anyone waiting for a request? Its ``waiter_seen_at`` (schema 0012w), stamped by the
requesting agent's ``wait`` every ``STAMP_S`` seconds (core/storage/waiter.py), read here:
the request is waited for while the stamp is younger than ``FRESH_S``.

The words for it are defined once, here, and said alike by the desk (gui/decide/items.py,
through its translator) and the CLI (cli/ops_render.py): a line (``waiter_words``) and a
table cell's few words (``waiter_cell``), with one phrase for a request nobody waited for
and one duration format (``safe_text.span``: 45s, 12m, 3h 05m)."""

from __future__ import annotations

from collections.abc import Callable

from .safe_text import span

STAMP_S = 5.0
FRESH_S = 2 * STAMP_S
WAITED_KINDS = ("approval", "question")  # the kinds an agent's wait stamps

# The words (templates: ``{age}`` is a ``span``); the desk passes each through its ``tr``.
NOBODY = "nobody waited"  # the line and the cell: one phrase
WAITING = "agent waiting now"
GONE = "no agent has looked for {age}"
CELL_WAITING = "now"
CELL_GONE = "{age} ago"


def waiting_now(seen_at: float | None, now: float) -> bool:
    return seen_at is not None and now - seen_at <= FRESH_S


def waiter_rank(seen_at: float | None, now: float, newest_first: bool) -> int:
    """An inbox sorted by waiter orders by this first (then by age, all one direction, as
    its keyset pages need): a request an agent waits for now comes first whichever way the
    ages run (core/inbox/service.py says the same in SQL, ``waiter_rank_sql``)."""
    return int(waiting_now(seen_at, now) == newest_first)


def _same(text: str) -> str:
    return text


def waiter_words(
    seen_at: float | None,
    now: float,
    slack: float = 0.0,
    *,
    translate: Callable[[str], str] = _same,
) -> str:
    """What the desk and the CLI say of a request's waiter, on a line. ``slack``: how old
    the caller's copy of ``seen_at`` may be (a stamp that fresh still counts as now);
    ``translate``: the desk's ``tr``."""
    if seen_at is None:
        return translate(NOBODY)
    if waiting_now(seen_at, now - slack):
        return translate(WAITING)
    return translate(GONE).format(age=span(now - seen_at))


def waiter_cell(
    seen_at: float | None,
    now: float,
    slack: float = 0.0,
    *,
    translate: Callable[[str], str] = _same,
) -> str:
    """``waiter_words`` in a table cell's few words: now, 12m ago, nobody waited."""
    if seen_at is None:
        return translate(NOBODY)
    if waiting_now(seen_at, now - slack):
        return translate(CELL_WAITING)
    return translate(CELL_GONE).format(age=span(now - seen_at))
