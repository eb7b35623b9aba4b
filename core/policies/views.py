"""The inbox's views of one operator — "Waiting for me", "Waiting for my groups", "Assigned
to me" (``InboxFilter.waiting_for``, ``for_groups_of``, ``assigned_to``) — as the set of
ids they keep, read in the list's own transaction; and each row's assignee and "1 of 2".
The facade hands this module to the inbox (``Inbox(views=...)``), which sits below the
policies."""

from __future__ import annotations

from typing import Any

from proctor.core.assignments.service import assigned_ids_in, assignees_in
from proctor.core.models import InboxFilter, InboxItem, InboxKind

from .waiting import counts_in, waiting_ids_in


def only_in(conn: Any, f: InboxFilter, now: float) -> set[str] | None:
    """The ids ``f``'s operator views keep (None: ``f`` has none of them)."""
    kept: set[str] | None = None
    for name, ids in (
        (f.waiting_for, lambda who: waiting_ids_in(conn, who, now, groups=False)),
        (f.for_groups_of, lambda who: waiting_ids_in(conn, who, now, groups=True)),
        (f.assigned_to, lambda who: assigned_ids_in(conn, who)),
    ):
        if name:
            found = ids(name)
            kept = found if kept is None else kept & found
    return kept


def marked_in(conn: Any, items: list[InboxItem], now: float) -> list[InboxItem]:
    """``items`` with their assignee and, for a request under a policy, "1 of 2"."""
    if not items:
        return items
    who = assignees_in(conn, [i.id for i in items])
    counts = counts_in(conn, [i.id for i in items if i.kind == InboxKind.APPROVAL], now)
    return [
        i.model_copy(update={"assignee": who.get(i.id), "progress": counts.get(i.id)})
        if i.id in who or i.id in counts
        else i
        for i in items
    ]
