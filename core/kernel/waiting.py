"""Is anyone waiting for a request? Its ``waiter_seen_at`` (schema 0012w), stamped by the
requesting agent's ``wait`` every ``STAMP_S`` seconds (core/storage/waiter.py), read here:
the request is waited for while the stamp is younger than ``FRESH_S``."""

from __future__ import annotations

STAMP_S = 5.0
FRESH_S = 2 * STAMP_S


def waiting_now(seen_at: float | None, now: float) -> bool:
    return seen_at is not None and now - seen_at <= FRESH_S


def waiter_words(seen_at: float | None, now: float) -> str:
    """What the desk and the CLI say of a request's waiter."""
    if seen_at is None:
        return "nobody waited"
    if waiting_now(seen_at, now):
        return "agent waiting now"
    return f"no agent has looked for {_age(now - seen_at)}"


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h"
