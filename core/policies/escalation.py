"""An escalation's deadline (0018e): a policy whose escalation says ``deny`` denies a request
still undecided ``deadline`` seconds after it was filed; one that says ``wait`` (the default)
lets it wait until its own expiry, as before.

The denial is a decision like the others: the policy is its decider (``policy:ID`` as the
approval's ``decided_by`` and the decision's actor, source ``deadline``), with its audit row
and run event, written by whoever sweeps due requests (``Approvals.expire_due``: the desk, an
agent's wait). The store refuses a step at or after the deadline, an approval decided at or
after it, and a policy's denial before it or of a request not bound to that policy
(core/storage/deadline_sql.py); ``proctor verify`` names each (``problems_in``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.deadline import PREFIX, deny_at_in
from proctor.core.decisions.writer import record_decision
from proctor.core.models import ChangeKind, VerifyProblem
from proctor.core.storage import schema as s
from proctor.core.storage.sql import filed_by_this_login, update_where

__all__ = ["check_deadline", "deny_at_in", "deny_due_in", "due", "problems_in"]

from .models import PolicyDraft

SOURCE = "deadline"
SWEEP_LIMIT = 500


def check_deadline(draft: PolicyDraft) -> None:
    """``ValidationError`` unless the draft's deadline fits its escalation."""
    if draft.at_deadline == "wait":
        if draft.deadline is not None:
            raise errors.ValidationError(
                "a deadline is given only to deny at it (--at-deadline deny); a request that "
                "waits keeps waiting until its own expiry",
                field="deadline",
            )
        return
    if not draft.escalate_to or not draft.escalate_after:
        raise errors.ValidationError(
            "a deadline is an escalation's: name --escalate-after and --to first",
            field="at_deadline",
        )
    if draft.deadline is None or draft.deadline <= draft.escalate_after:
        raise errors.ValidationError(
            "denying at a deadline needs a deadline after the escalation (--deadline)",
            field="deadline",
        )


def _due() -> Any:
    a, b, p = s.approvals.c, s.policy_bindings.c, s.policies.c
    return (
        select(s.approvals, p.id.label("policy_id"), p.deadline.label("policy_deadline"))
        .join(s.policy_bindings, b.approval_id == a.id)
        .join(s.policies, p.id == b.policy_id)
        .where(a.status == "pending", p.at_deadline == "deny", p.deadline.is_not(None))
    )


def due(denied_at: float | None, now: float, read_only: bool) -> bool:
    """Whether an agent's wait should sweep: the request's policy denies it by ``now``."""
    return denied_at is not None and not read_only and now >= denied_at


def deny_due_in(tx: Any, *, agent: bool) -> int:
    """Deny every pending request whose policy's deadline has come (``agent``: only those
    this login filed, as for an expiry); how many."""
    a, p = s.approvals.c, s.policies.c
    rows = tx.conn.execute(
        _due()
        .where(a.created_at + p.deadline <= tx.now, filed_by_this_login(tx.conn, agent))
        .limit(SWEEP_LIMIT)
    ).all()
    for row in rows:
        _deny(tx, row)
    return len(rows)


def _deny(tx: Any, row: Any) -> None:
    who = PREFIX + row.policy_id
    at = row.created_at + row.policy_deadline
    reason = "undecided at its policy's deadline"
    values = dict(
        status="denied",
        version=row.version + 1,
        decided_at=tx.now,
        decided_by=who,
        decision_reason=reason,
    )
    done = update_where(
        tx.conn, s.approvals, values, id=row.id, version=row.version, status="pending"
    )
    if done != 1:
        raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
    tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
    record_decision(
        tx,
        "approval",
        row.id,
        row.run_id,
        {"approved": False, "policy_id": row.policy_id, "deadline": at},
        actor=who,
        source=SOURCE,
        reason=reason,
        audit=("approval.denied", {"status": "pending"}, {"status": "denied", "by": who}),
        event=("approval.denied", {"approval_id": row.id, "by": who, "reason": reason}),
        closes=True,
    )


def problems_in(conn: Any) -> list[VerifyProblem]:
    """What ``proctor verify`` names: a request approved at or after its policy's deadline,
    a step taken at or after it, a policy's denial that its policy does not make."""
    a, b, p, st = s.approvals.c, s.policy_bindings.c, s.policies.c, s.approval_steps.c
    rows = conn.execute(
        select(
            a.id,
            a.status,
            a.decided_at,
            a.decided_by,
            a.created_at,
            p.id.label("pid"),
            p.at_deadline,
            p.deadline,
        )
        .join(s.policy_bindings, b.approval_id == a.id)
        .join(s.policies, p.id == b.policy_id)
        .where((a.status != "pending") | a.decided_by.like(PREFIX + "%"))
    ).all()
    out = []
    for row in rows:
        at = row.created_at + row.deadline if row.at_deadline == "deny" and row.deadline else None
        where = f"approval {row.id} (policy {row.pid})"
        late = conn.execute(
            select(st.operator).where(st.approval_id == row.id, st.created_at >= (at or 0))
        ).first()
        if at is not None and late is not None:
            out.append(_problem("step after its policy's deadline", where, late.operator))
        if at is not None and row.status == "approved" and row.decided_at >= at:
            out.append(_problem("approved after its policy's deadline", where, row.decided_by))
        if (row.decided_by or "").startswith(PREFIX) and (
            at is None
            or row.decided_by != PREFIX + row.pid
            or row.status != "denied"
            or row.decided_at < at
        ):
            out.append(
                VerifyProblem(
                    what="denied by a policy that does not deny it",
                    where=where,
                    detail=f"{row.decided_by} is not this request's policy denying at its deadline",
                )
            )
    return out[:100]


def _problem(what: str, where: str, who: str | None) -> VerifyProblem:
    return VerifyProblem(
        what=what,
        where=where,
        detail=f"the policy denies the request at its deadline; {who} acted at or after it",
    )
