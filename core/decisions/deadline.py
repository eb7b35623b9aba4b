"""A request denied by its policy at the escalation's deadline (0018e, core/policies/
escalation.py writes it): when the policy a request is bound to denies it, and what a
trusting agent checks of such a denial (``check_approval``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.storage import schema as s

PREFIX = "policy:"  # the decider of a policy's denial: policy:ID


def deny_at_in(conn: Any, approval_id: str) -> float | None:
    """When the policy ``approval_id`` is bound to denies it (None: it never does)."""
    a, b, p = s.approvals.c, s.policy_bindings.c, s.policies.c
    row = conn.execute(
        select(a.created_at, p.deadline)
        .join(s.policy_bindings, b.approval_id == a.id)
        .join(s.policies, p.id == b.policy_id)
        .where(a.id == approval_id, p.at_deadline == "deny", p.deadline.is_not(None))
    ).first()
    return None if row is None else row.created_at + row.deadline


def check_denial(conn: Any, row: Any, d: Any) -> str:
    """For a trusting agent: the denial ``d`` of approval ``row`` by its policy at the
    deadline is what the policy says (the policy it was bound to, its deadline come)."""
    at = deny_at_in(conn, row.id)
    what = f"approval {row.id}"
    if (
        at is None
        or d.actor != row.decided_by
        or row.decided_by != PREFIX + _bound(conn, row.id)
        or row.status != "denied"
        or row.decided_at < at
    ):
        raise errors.DecisionUnverified(
            f"{what} says its policy denied it at its deadline, which the policy does not say",
            why="mismatch",
        )
    return d.actor


def _bound(conn: Any, approval_id: str) -> str:
    b = s.policy_bindings.c
    got = conn.execute(select(b.policy_id).where(b.approval_id == approval_id)).first()
    return "" if got is None else got.policy_id
