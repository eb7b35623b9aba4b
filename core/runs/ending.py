"""What a run's end does to what it left open: its open items closed, and (a cancel) its
dispatched tool calls without an outcome made ``outcome_unknown``."""

from __future__ import annotations

import builtins

from sqlalchemy import select, update

from proctor.core import errors
from proctor.core.models import (
    ChangeKind,
    RunStatus,
    ToolCallStatus,
)
from proctor.core.storage import schema as s
from proctor.core.storage.items import (
    OPEN_QUESTION,
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
from proctor.core.storage.sql import update_where
from proctor.core.storage.tx import Tx


def outcomes_now_unknown(tx: Tx, run_id: str) -> builtins.list[str]:
    """Completing a cancel: the run's dispatched tool calls without an outcome become
    ``outcome_unknown`` (seed rule), each with an audit row; returns their ids."""
    t = s.tool_calls.c
    rows = tx.conn.execute(
        select(s.tool_calls)
        .where(t.run_id == run_id, t.status == ToolCallStatus.RUNNING.value)
        .order_by(t.created_at, t.id)
    ).all()
    for row in rows:
        done = update_where(
            tx.conn,
            s.tool_calls,
            dict(
                status=ToolCallStatus.OUTCOME_UNKNOWN.value,
                version=row.version + 1,
                updated_at=tx.now,
            ),
            id=row.id,
            version=row.version,
        )
        if done != 1:
            raise errors.StaleVersion(f"tool call {row.id} changed meanwhile")
        tx.audit(
            "tool_call.outcome_unknown",
            "tool_call",
            row.id,
            run_id=run_id,
            actor="system:cancel",
            before={"status": row.status},
            after={"status": ToolCallStatus.OUTCOME_UNKNOWN.value},
            reason="the run was cancelled while the call was running",
        )
        tx.changed(ChangeKind.TOOL_CALL, row.id, run_id)
    return [row.id for row in rows]


def close_open_items(tx: Tx, run_id: str, status: RunStatus) -> None:
    """A run that ends withdraws what it still asked for (nobody waits for it any more)."""
    reason = f"run {status.value}"
    pending = (
        tx.conn.execute(
            select(s.approvals.c.id).where(
                s.approvals.c.run_id == run_id, s.approvals.c.status == "pending"
            )
        )
        .scalars()
        .all()
    )
    for aid in pending:
        tx.conn.execute(
            update(s.approvals)
            .where(s.approvals.c.id == aid)
            .values(
                status="cancelled",
                version=s.approvals.c.version + 1,
                decided_at=tx.now,
                decision_reason=reason,
            )
        )
        tx.audit(
            "approval.withdrawn",
            "approval",
            aid,
            run_id=run_id,
            reason=reason,
            before={"status": "pending"},
            after={"status": "cancelled"},
        )
        tx.changed(ChangeKind.APPROVAL, aid, run_id)
    asked = (
        tx.conn.execute(
            select(s.questions.c.id).where(
                s.questions.c.run_id == run_id, s.questions.c.status.in_(OPEN_QUESTION)
            )
        )
        .scalars()
        .all()
    )
    for iid in asked:
        tx.conn.execute(
            update(s.questions)
            .where(s.questions.c.id == iid)
            .values(status="cancelled", version=s.questions.c.version + 1)
        )
        tx.audit(
            "interaction.withdrawn",
            "interaction",
            iid,
            run_id=run_id,
            reason=reason,
            before={"status": "open"},
            after={"status": "cancelled"},
        )
        tx.changed(ChangeKind.QUESTION, iid, run_id)
