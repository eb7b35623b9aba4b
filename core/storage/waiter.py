"""Is anyone waiting? A request's ``waiter_seen_at`` (schema 0012w): the requesting agent's
``wait`` stamps it at most every ``STAMP_S`` seconds, one UPDATE of that one column (a
lease-like timestamp, not an event per look); a reader calls the request waited for while
the stamp is younger than ``FRESH_S`` (core/kernel/waiting.py)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Table, or_

from proctor.core import errors
from proctor.core.kernel.waiting import STAMP_S
from proctor.core.models import ActorKind

from .sql import filed_by_this_login
from .store import Store
from .tx import Tx


def stamp(store: Store, table: Table, item_id: str, open_states: tuple[str, ...]) -> None:
    """Stamp ``waiter_seen_at`` on the open request ``item_id`` (on a server journal only a
    row this login filed). Nothing else of the row changes: no version step, no change row."""

    def op(tx: Tx) -> None:
        tx.conn.execute(
            table.update()
            .where(table.c.id == item_id, _waited(table, open_states, tx.now))
            .where(filed_by_this_login(tx.conn, agent=True))
            .values(waiter_seen_at=tx.now)
        )

    store.write(op)


def _waited(table: Table, open_states: tuple[str, ...], now: float) -> Any:
    """The rows an agent still waits on: open ones, and (approvals) a decision still held."""
    if "hold_until" not in table.c:
        return table.c.status.in_(open_states)
    return or_(table.c.status.in_(open_states), table.c.hold_until > now)


def stamp_due(
    store: Store, table: Table, item_id: str, open_states: tuple[str, ...], last: float | None
) -> float | None:
    """``stamp`` when the last one (``last``, monotonic; None: none yet) is ``STAMP_S`` old,
    and the monotonic time of the latest stamp. Only an agent stamps (an operator's wait
    says nothing of the requester). Best effort: a read-only or busy journal leaves the
    stamp as it was, and the wait goes on."""
    if store.read_only or store.actor.kind != ActorKind.AGENT:
        return last
    if last is not None and time.monotonic() - last < STAMP_S:
        return last
    try:
        stamp(store, table, item_id, open_states)
    except errors.StoreError:
        return last
    return time.monotonic()
