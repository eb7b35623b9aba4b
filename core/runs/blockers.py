"""What stands between a run and its next attempt (the resume gate, a retry's too), and the
refusal of a second cancel request."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.models import (
    ToolCallStatus,
)
from proctor.core.storage import schema as s
from proctor.core.storage.items import (
    is_open_question,
)
from proctor.core.storage.paging import (  # noqa: F401 - re-exported: the run sorts were defined here
    MAX_PAGE,
    RUN_PAGE,
    RUN_SORTS,
    RunQuery,
    escape_like,
    has_open_items_clause,
    run_conditions,
    run_page,
    run_page_statement,
    run_page_with_open_items,
    sort_fields,
)
from proctor.core.storage.tx import Tx


def check_resume(tx: Tx, run: Any) -> None:
    """The resume gate before a new attempt (a retry's too): ``ResumeBlocked``, naming
    each blocker, while ``resume_blockers`` finds any."""
    blockers = resume_blockers(tx.conn, run)
    if blockers:
        listed = ", ".join(f"{kind} {bid}" for kind, bid in blockers)
        raise errors.ResumeBlocked(
            f"run {run.id} cannot start a new attempt while it waits on: {listed}",
            blockers=blockers,
        )


def resume_blockers(conn: Any, run: Any) -> list[tuple[str, str]]:
    """The resume gate (seed invariant 17): pending approvals, open questions, ambiguous
    effects and tool calls of unknown outcome of ``run``, and its cancel request."""
    a, i, e, t = s.approvals.c, s.questions.c, s.effects.c, s.tool_calls.c
    found: list[tuple[str, str]] = []
    for kind, stmt in (
        (
            "approval",
            select(a.id)
            .where(a.run_id == run.id, a.status == "pending")
            .order_by(a.created_at, a.id),
        ),
        (
            "question",
            select(i.id)
            .where(i.run_id == run.id, is_open_question(i.status))
            .order_by(i.created_at, i.id),
        ),
        (
            "effect",
            select(e.key)
            .where(e.run_id == run.id, e.status == "ambiguous")
            .order_by(e.created_at, e.key),
        ),
        (
            "tool_call",
            select(t.id)
            .where(t.run_id == run.id, t.status == ToolCallStatus.OUTCOME_UNKNOWN.value)
            .order_by(t.created_at, t.id),
        ),
    ):
        found += [(kind, ident) for ident in conn.execute(stmt).scalars()]
    if run.cancel_requested:
        found.append(("cancel", run.id))
    return found


def cancel_asked_already(tx: Tx, run: Any) -> errors.AlreadyDecided:
    """The refusal of a second cancel request: who asked first, when, and why (the cancel
    reason is set once; a second request would rewrite what the agent was told)."""
    first = tx.conn.execute(
        select(s.decisions.c.actor, s.decisions.c.created_at)
        .where(s.decisions.c.target_kind == "run", s.decisions.c.target_id == run.id)
        .order_by(s.decisions.c.created_at, s.decisions.c.id)
        .limit(1)
    ).first()
    by = f" by {first.actor}" if first is not None else ""
    at = (
        time.strftime(" at %Y-%m-%d %H:%M:%S UTC", time.gmtime(first.created_at))
        if first is not None
        else ""
    )
    return errors.AlreadyDecided(
        f"a cancel of run {run.id} was already requested{at}{by}: {run.cancel_reason}",
        hint="Nothing was changed: the agent has been asked to stop and ends the run at its "
        "next step.",
        run_id=run.id,
    )
