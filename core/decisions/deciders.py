"""Who may decide: the one requester rule every operator decision goes through.

An operator decision (approve or deny, answer a question, resolve an ambiguous effect or an
unknown tool outcome, resolve a memory conflict, confirm a memory entry) is refused with
``NotAllowed`` when the deciding operator's name is the name of an agent that asked for,
proposed or executed the thing decided. Each service names those agents (``requesters_*``
below); the check itself is ``refuse_requester``, and nothing else decides it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from proctor.core import errors
from proctor.core.storage import schema as s
from proctor.core.storage.sql import row_where


def refuse_requester(
    tx: Any, requesters: Iterable[str | None], *, verb: str, what: str = "this action"
) -> None:
    """Raise ``NotAllowed`` (nothing written) if ``tx``'s actor is one of ``requesters``."""
    names = {n for n in requesters if n}
    if tx.actor.name in names:
        raise errors.NotAllowed(
            f"{tx.actor.name} requested {what} (or runs it) and cannot {verb} it",
            requesters=sorted(names),
        )


def agent_name(tx: Any) -> str | None:
    """The calling actor's name when it is an agent (what ``effects.agent`` and
    ``memory_reconciliations.agent`` record; an operator's own filing records NULL)."""
    return tx.actor.name if tx.actor.kind == "agent" else None


def run_agent(conn: Any, run_id: str | None) -> str | None:
    if not run_id:
        return None
    row = row_where(conn, s.runs, id=run_id)
    return row.agent if row is not None else None


def lease_name(owner: str | None) -> str | None:
    """The actor name in a lease owner (``Effects.default_owner`` is ``name@pid``)."""
    if not owner:
        return None
    return owner.rsplit("@", 1)[0] if "@" in owner else owner


def requesters_of_effect(conn: Any, row: Any) -> list[str | None]:
    """An effect's requesters: the agent that reserved it, its run's agent, the agent that
    requested the approval it consumed, and whoever holds (held) its lease."""
    names = [getattr(row, "agent", None), run_agent(conn, row.run_id), lease_name(row.lease_owner)]
    if row.approval_id:
        approval = row_where(conn, s.approvals, id=row.approval_id)
        if approval is not None:
            names.append(approval.agent)
    return names


def requesters_of_conflict(conn: Any, item: Any) -> list[str | None]:
    """A memory conflict's requesters: the agent that recorded it, its run's agent, and the
    agent of the run that created the entry."""
    entry = row_where(conn, s.memory_entries, id=item.entry_id)
    return [
        getattr(item, "agent", None),
        run_agent(conn, item.run_id),
        run_agent(conn, entry.source_run_id) if entry is not None else None,
    ]


def requesters_of_entry(conn: Any, entry: Any) -> list[str | None]:
    """A memory entry's requesters: the agent of the run that created it and the agents
    whose changes made its current content (agent rows of its history)."""
    rows = conn.execute(
        s.memory_mutations.select().where(s.memory_mutations.c.entry_id == entry.id)
    ).all()
    agents = [r.actor.split(":", 1)[1] for r in rows if r.actor.startswith("agent:")]
    return [run_agent(conn, entry.source_run_id), *agents]
