"""An approval's transitions inside a transaction: its row read for deciding, closed
(pending → a decision), decided by a rule, expired unanswered, lapsed unused. The service
(``service.py``) and the standing rules (``standing.py``) compose them in their writes."""

from __future__ import annotations

from typing import Any

from proctor.core import errors
from proctor.core.decisions.deciders import refuse_requester
from proctor.core.decisions.writer import consume_deadline, record_decision
from proctor.core.kernel.integrity import refuse_tampered
from proctor.core.models import ApprovalStatus, ChangeKind, OnExpiry, RuleEffect
from proctor.core.policies import steps as policy_steps
from proctor.core.storage import schema as s
from proctor.core.storage.rows import written_row
from proctor.core.storage.sql import row_where, update_where
from proctor.core.storage.tx import Tx


def approval_row(tx: Tx, approval_id: str) -> Any:
    row = tx.row_with_run(s.approvals, id=approval_id)
    if row is None:
        raise errors.NotFound(f"approval {approval_id} does not exist")
    return row


def close(tx: Tx, row: Any, status: str, values: dict) -> dict:
    """Move the pending ``row`` to ``status`` with ``values``; the row as now stored."""
    values = dict(status=status, version=row.version + 1, **values)
    done = update_where(
        tx.conn, s.approvals, values, id=row.id, version=row.version, status="pending"
    )
    if done != 1:
        raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
    tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
    return written_row(row, values)


def decidable(tx: Tx, approval_id: str, expected_version: int, *, stepping: bool = False) -> Any:
    """The approval's row (read once in ``tx``) when the operator may decide it at
    ``expected_version``: untampered, pending, not expired (else its expiry is written and
    None returned, with ``Expired`` to raise after the commit), its run not ended, and
    not requested by the operator deciding. Under a policy only ``decide`` (``stepping``)
    decides it, step by step (core/policies/steps.py)."""
    row = approval_row(tx, approval_id)
    refuse_tampered("approval", approval_id, row)
    if row.status == ApprovalStatus.EXPIRED:
        raise errors.Expired(f"approval {approval_id} expired before the decision")
    if row.status == ApprovalStatus.CANCELLED:
        raise errors.Withdrawn(
            f"approval {approval_id} was withdrawn by the agent"
            + (f": {row.decision_reason}" if row.decision_reason else ""),
            status=row.status,
            reason=row.decision_reason,
        )
    if row.status != ApprovalStatus.PENDING:
        raise errors.AlreadyDecided(
            f"approval {approval_id} was already {row.status} by {row.decided_by or 'the agent'}",
            status=row.status,
            decided_by=row.decided_by,
            reason=row.decision_reason,
        )
    if row.expires_at is not None and tx.now >= row.expires_at and row.on_expiry == OnExpiry.DENY:
        expire(tx, row)
        tx.raise_after_commit(
            errors.Expired(f"approval {approval_id} expired before the decision; it is now expired")
        )
        return None
    if row.version != expected_version:
        raise errors.StaleVersion(
            f"approval {approval_id} is at version {row.version}, you saw {expected_version}"
        )
    run = tx.run_row(row.run_id)
    refuse_requester(tx, (row.agent, run.agent), verb="approve")
    if run.status in ("completed", "failed", "cancelled"):
        raise errors.RunTerminal(f"run {row.run_id} is {run.status}")
    if not stepping:
        policy_steps.refuse_governed(tx.conn, approval_id, "this decision")
    return row


def auto_decide(tx: Tx, aid: str, rule: Any, applied_by: str | None = None) -> None:
    """Decide ``aid`` by ``rule``: as the request arrives, or (``applied_by``: the
    operator) when a rule just made is applied to a pending request."""
    approve = rule.effect == RuleEffect.ALLOW
    status = "approved" if approve else "denied"
    who = f"rule:{rule.id}"
    if applied_by is None:
        update_where(
            tx.conn,
            s.approvals,
            dict(
                status=status,
                decided_at=tx.now,
                decided_by=who,
                rule_id=rule.id,
                decision_reason=f"{rule.effect} rule {rule.action_pattern}",
                decision_scope=rule.scope,
                version=2,
            ),
            id=aid,
        )
    else:
        close(
            tx,
            approval_row(tx, aid),
            status,
            dict(
                decided_at=tx.now,
                decided_by=who,
                rule_id=rule.id,
                decision_reason=f"{rule.effect} rule {rule.action_pattern}, applied by "
                f"{applied_by}",
                decision_scope=rule.scope,
            ),
        )
    row = row_where(tx.conn, s.approvals, id=aid)
    record_decision(
        tx,
        "approval",
        aid,
        row.run_id,
        {"approved": approve, "scope": rule.scope},
        actor=who,
        source="rule",
        reason=f"matched rule {rule.id}",
        audit_reason=None,
        audit=(
            f"approval.auto_{status}",
            {"status": "pending"},
            {"status": status, "rule_id": rule.id, "applied_by": applied_by},
        ),
        event=(f"approval.{status}", {"approval_id": aid, "by": who, "rule_id": rule.id}),
        closes=applied_by is not None,
    )  # as it arrives, the request left the run as it was


def expire(tx: Tx, row: Any) -> None:
    close(tx, row, "expired", {"decided_at": tx.now, "decided_by": "system:expiry"})
    record_decision(
        tx,
        "approval",
        row.id,
        row.run_id,
        {"approved": False, "expired": True},
        actor="system:expiry",
        source="expiry",
        reason="expired",
        audit_reason="expired before a decision",
        audit=("approval.expired", {"status": "pending"}, {"status": "expired"}),
        event=("approval.expired", {"approval_id": row.id}),
        closes=True,
    )


def lapse(tx: Tx, row: Any) -> None:
    """An approved approval not consumed by its deadline becomes ``expired``: the
    status, an audit row and a run event are committed, then ``ApprovalLapsed`` is
    raised (a lapsed grant is evidence, like a lapsed pending request)."""
    deadline = consume_deadline(row)
    done = update_where(
        tx.conn,
        s.approvals,
        dict(status="expired", version=row.version + 1),
        id=row.id,
        version=row.version,
        status="approved",
        consumed_at=None,
    )
    if done != 1:
        raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
    tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
    tx.audit(
        "approval.expired",
        "approval",
        row.id,
        run_id=row.run_id,
        actor="system:expiry",
        before={"status": "approved", "consume_by": deadline},
        after={"status": "expired"},
        reason="approved but not used before it lapsed",
    )
    tx.run_event(
        row.run_id,
        "approval.expired",
        {"approval_id": row.id, "was": "approved", "consume_by": deadline},
        actor="system:expiry",
    )
    tx.raise_after_commit(
        errors.ApprovalLapsed(
            f"approval {row.id} could be used until {deadline:.0f}; it lapsed unused and is "
            "now expired",
            consume_by=deadline,
        )
    )


# ------------------------------------------------------------ operator side
