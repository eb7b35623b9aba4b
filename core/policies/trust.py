"""A trusting agent verifies the whole quorum before it acts on an approval under a policy:
each approving step signed by a trusted key of the operator it names, that operator (or the
member whose part they took, by a delegation that member signed) a member of the step's group
by a group change a trusted operator signed, distinct people, none the
agent that asked, stage after stage, none denying, and every stage complete. The final
approval's own decision is checked as any approval's is (``decisions.checks``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.signing import (
    binding_of,
    check_record,
    expected_for_decision,
    journal_id_in,
)
from proctor.core.storage import schema as s

from . import steps as steps_mod
from .delegations import delegation_at
from .verify import history_in, short_of


def _signed(conn: Any, trust: Any, decision_id: str, what: str, versioned: bool) -> str:
    d = conn.execute(select(s.decisions).where(s.decisions.c.id == decision_id)).first()
    if d is None:
        raise errors.DecisionUnverified(f"{what} has no decision row", why="unsigned")
    key, _payload = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=(lambda v: isinstance(v, int)) if versioned else (lambda v: v is None),
        what=what,
        binding=binding_of(conn, d.target_kind, d.target_id, locate=False),
    )
    return key.name


def check_quorum(conn: Any, trust: Any, row: Any) -> None:
    """``DecisionUnverified`` unless the approved ``row``'s policy (if it has one) is
    satisfied by steps and memberships trusted operators signed."""
    if trust is None or row.status != "approved":
        return
    policy_id = steps_mod.bound_policy(conn, row.id)
    if policy_id is None:
        return
    what = f"approval {row.id} (policy {policy_id})"
    run = conn.execute(select(s.runs.c.agent).where(s.runs.c.id == row.run_id)).first()
    history = history_in(conn)
    requesters = {row.agent, run.agent if run else None}
    why = short_of(conn, row.id, policy_id, requesters, history, row.created_at)
    if why:
        raise errors.DecisionUnverified(f"{what}: {why}", why="policy")
    st, g = s.approval_steps.c, s.group_changes.c
    for step in conn.execute(select(s.approval_steps).where(st.approval_id == row.id)).all():
        signer = _signed(conn, trust, step.decision_id, f"{step.operator}'s step on {what}", True)
        if signer != step.operator:
            raise errors.DecisionUnverified(
                f"{what}: {step.operator}'s step was signed by {signer}", why="wrong_operator"
            )
        person = step.for_operator or step.operator
        if step.for_operator:
            handed = delegation_at(conn, step.for_operator, step.operator, step.created_at)
            if handed is None:
                raise errors.DecisionUnverified(
                    f"{what}: {step.operator} stepped for {person} without a delegation",
                    why="policy",
                )
            by = _signed(conn, trust, handed.decision_id, f"{person}'s delegation", False)
            if by != person:
                raise errors.DecisionUnverified(
                    f"{what}: {person}'s delegation was signed by {by}", why="wrong_operator"
                )
        change = conn.execute(
            select(s.group_changes)
            .where(
                g.group_name == step.group_name,
                g.operator == person,
                g.created_at <= step.created_at,
            )
            .order_by(g.seq.desc())
            .limit(1)
        ).first()
        if change is None or change.change != "add":
            raise errors.DecisionUnverified(
                f"{what}: {person} was not in {step.group_name}", why="policy"
            )
        _signed(
            conn,
            trust,
            change.decision_id,
            f"the change that put {person} in {step.group_name}",
            False,
        )
