"""Whom a pending request under a policy waits for: the desk's "Waiting for me" and
"Waiting for my groups", its "1 of 2" on a row, whether an operator may take a step now
(and why not), and whom to notify.

A request waits for me when the stage it waits for has a group I am in — or one of a person
who delegated their part to me (a delegation running now) whose part nobody took yet — and
I have not stepped on it (nor has my delegate for me). It waits for my groups when that
stage has a group I am in, whether or not I stepped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from proctor.core.storage import schema as s

from . import match
from .delegations import delegators_of
from .groups import members_in
from .models import Policy, Progress, Step
from .steps import progress_of


@dataclass(frozen=True)
class Pending:
    """A pending request under a policy, as it stands."""

    approval_id: str
    agent: str
    progress: Progress


def _step(r: Any) -> Step:
    return Step(
        operator=r.operator,
        for_operator=r.for_operator,
        group=r.group_name,
        stage=r.stage,
        approve=bool(r.approve),
        reason=r.reason,
        created_at=r.created_at,
    )


def pending_in(conn: Any, now: float, ids: list[str] | None = None) -> list[Pending]:
    """Every pending request bound to a policy (of ``ids``, when given), with its progress:
    three reads whatever their number (the approvals, their steps, their policies)."""
    a, b = s.approvals.c, s.policy_bindings.c
    stmt = (
        select(a.id, a.agent, a.created_at, b.policy_id)
        .join(s.policy_bindings, b.approval_id == a.id)
        .where(a.status == "pending")
    )
    if ids is not None:
        if not ids:
            return []
        stmt = stmt.where(a.id.in_(sorted(set(ids))))
    rows = conn.execute(stmt).all()
    if not rows:
        return []
    st = s.approval_steps.c
    steps: dict[str, list[Step]] = {}
    for r in conn.execute(
        select(s.approval_steps)
        .where(st.approval_id.in_([row.id for row in rows]))
        .order_by(st.created_at)
    ).all():
        steps.setdefault(r.approval_id, []).append(_step(r))
    policies: dict[str, Policy] = {}
    out = []
    for row in rows:
        policy = policies.get(row.policy_id) or match.policy_in(conn, row.policy_id)
        policies[row.policy_id] = policy
        mine = steps.get(row.id, [])
        progress = progress_of(row.id, policy, mine, policy.escalated(row.created_at, now))
        out.append(Pending(row.id, row.agent, progress))
    return out


def _groups_of(members: dict[str, list[str]], person: str) -> set[str]:
    return {group for group, people in members.items() if person in people}


def taken_by(progress: Progress) -> set[str]:
    """The people whose part is taken: each step's operator, and whom they stepped for."""
    return {p for st in progress.steps for p in (st.operator, st.for_operator) if p}


def waits_for(
    pending: Pending, operator: str, members: dict[str, list[str]], delegators: list[str]
) -> bool:
    """``pending`` waits for ``operator`` (themselves, or as a delegate) to step."""
    p = pending.progress
    taken = taken_by(p)
    if p.stage is None or operator in taken or operator == pending.agent:
        return False
    people = [operator, *(d for d in delegators if d not in taken and d != pending.agent)]
    wanted = set(p.waiting_for)
    return any(wanted & _groups_of(members, person) for person in people)


def waiting_ids_in(conn: Any, operator: str, now: float, *, groups: bool) -> set[str]:
    """The pending requests under a policy waiting for ``operator`` (``groups``: for a
    group ``operator`` is in, stepped or not)."""
    members = members_in(conn)
    if groups:
        mine = _groups_of(members, operator)
        return {
            p.approval_id
            for p in pending_in(conn, now)
            if p.progress.stage is not None and mine & set(p.progress.waiting_for)
        }
    delegators = delegators_of(conn, operator, now)
    return {
        p.approval_id for p in pending_in(conn, now) if waits_for(p, operator, members, delegators)
    }


def why_not_in(conn: Any, approval_id: str, operator: str, now: float) -> str | None:
    """Why ``operator`` cannot approve ``approval_id`` now (None: they can, or no policy
    governs it): they already took a step, or the stage it waits for is not theirs."""
    found = pending_in(conn, now, [approval_id])
    if not found:
        return None
    p = found[0].progress
    if p.stage is None:
        return None
    step = next((st for st in p.steps if operator in (st.operator, st.for_operator)), None)
    waiting = " or ".join(p.waiting_for)
    if step is not None:
        did = "approved" if step.approve else "denied"
        who = "You" if step.operator == operator else f"{step.operator} (your delegate)"
        return f"{who} already {did} this request; it waits for {waiting}"
    members = members_in(conn)
    if not waits_for(found[0], operator, members, delegators_of(conn, operator, now)):
        return f"It waits for {waiting}: you are not in it (nor anyone's delegate there)"
    return None


def counts_in(conn: Any, ids: list[str], now: float) -> dict[str, str]:
    """``1 of 2`` for each of ``ids`` that is pending under a policy."""
    return {
        p.approval_id: f"{p.progress.approvals} of {p.progress.needed}"
        for p in pending_in(conn, now, ids)
    }
