"""What ``proctor verify`` checks of the policy tables (the triggers refuse each of these
as it is written; a same-user process that drops them first is named here): every approved
request under a policy has the steps its policy needs (distinct people, none the agent that
asked, each a member of its stage's group when it stepped, stage after stage, no deny);
every step, group change, policy and revocation has its decision row, saying what it says."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

from . import match

LIMIT = 100  # problems of one kind listed


def problems_in(conn: Any) -> list[VerifyProblem]:
    out: list[VerifyProblem] = []
    history = history_in(conn)
    decisions = {
        row.id: row
        for row in conn.execute(
            select(s.decisions).where(
                s.decisions.c.target_kind.in_(("approval_step", "group", "policy", "delegation"))
            )
        ).all()
    }
    out += _changes_decided(conn, decisions)
    out += _policies_decided(conn, decisions)
    out += _steps_decided(conn, decisions)
    out += _delegations_decided(conn, decisions)
    out += _approved_in_full(conn, history)
    from . import ended, escalation

    out += escalation.problems_in(conn) + ended.problems_in(conn)  # 0018e
    return out


def history_in(conn: Any) -> dict[tuple[str, str], list[tuple[float, str]]]:
    g = s.group_changes.c
    out: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for row in conn.execute(select(s.group_changes).order_by(g.seq)).all():
        out.setdefault((row.group_name, row.operator), []).append((row.created_at, row.change))
    return out


def _member_at(history: dict, group: str, operator: str, when: float) -> bool:
    last = None
    for at, change in history.get((group, operator), []):
        if at <= when:
            last = change
    return last == "add"


def _says(decision: Any, kind: str, target: str, actor: str | None, **content: Any) -> bool:
    if decision is None or decision.target_kind != kind or decision.target_id != target:
        return False
    if actor is not None and decision.actor != actor:
        return False
    body = json.loads(decision.decision)
    return isinstance(body, dict) and all(body.get(k) == v for k, v in content.items())


def _changes_decided(conn: Any, decisions: dict) -> list[VerifyProblem]:
    out = []
    for row in conn.execute(select(s.group_changes)).all():
        d = decisions.get(row.decision_id)
        if not _says(
            d, "group", row.group_name, row.actor, operator=row.operator, change=row.change
        ):
            out.append(
                VerifyProblem(
                    what="group change without its decision",
                    where=f"group {row.group_name} ({row.change} {row.operator})",
                    detail="no decision row records this change as it is stored",
                )
            )
    return out[:LIMIT]


def _policies_decided(conn: Any, decisions: dict) -> list[VerifyProblem]:
    out = []
    for table, key, what in (
        (s.policies, "id", "policy"),
        (s.policy_revocations, "policy_id", "policy revocation"),
    ):
        for row in conn.execute(select(table)).all():
            if not _says(decisions.get(row.decision_id), "policy", getattr(row, key), None):
                out.append(
                    VerifyProblem(
                        what=f"{what} without its decision",
                        where=f"policy {getattr(row, key)}",
                        detail="no decision row records it",
                    )
                )
    return out[:LIMIT]


def _steps_decided(conn: Any, decisions: dict) -> list[VerifyProblem]:
    out = []
    for row in conn.execute(select(s.approval_steps)).all():
        if not _says(
            decisions.get(row.decision_id),
            "approval_step",
            row.approval_id,
            f"operator:{row.operator}",
            policy_id=row.policy_id,
            stage=row.stage,
            group=row.group_name,
            approved=bool(row.approve),
            for_operator=row.for_operator,
        ):
            out.append(
                VerifyProblem(
                    what="step without its decision",
                    where=f"approval {row.approval_id} (step by {row.operator})",
                    detail="no decision row of that person records this step as it is stored",
                )
            )
    return out[:LIMIT]


def _delegations_decided(conn: Any, decisions: dict) -> list[VerifyProblem]:
    out = []
    for row in conn.execute(select(s.delegations)).all():
        if not _says(
            decisions.get(row.decision_id),
            "delegation",
            row.operator,
            f"operator:{row.operator}",
            delegate=row.delegate,
            starts_at=row.starts_at,
            ends_at=row.ends_at,
        ):
            out.append(
                VerifyProblem(
                    what="delegation without its decision",
                    where=f"delegation {row.id} ({row.operator} to {row.delegate})",
                    detail="no decision row of the delegator records it as it is stored",
                )
            )
    return out[:LIMIT]


def _delegated(conn: Any, step: Any) -> bool:
    d = s.delegations.c
    return (
        conn.execute(
            select(d.id).where(
                d.operator == step.for_operator,
                d.delegate == step.operator,
                d.starts_at <= step.created_at,
                d.ends_at > step.created_at,
            )
        ).first()
        is not None
    )


def _approved_in_full(conn: Any, history: dict) -> list[VerifyProblem]:
    a, b = s.approvals.c, s.policy_bindings.c
    rows = conn.execute(
        select(
            a.id, a.agent, a.status, a.created_at, s.runs.c.agent.label("run_agent"), b.policy_id
        )
        .join(s.policy_bindings, b.approval_id == a.id)
        .join(s.runs, s.runs.c.id == a.run_id)
        .where(a.status == "approved")
    ).all()
    out = []
    for row in rows:
        why = short_of(
            conn, row.id, row.policy_id, {row.agent, row.run_agent}, history, row.created_at
        )
        if why:
            out.append(
                VerifyProblem(
                    what="approved short of its policy",
                    where=f"approval {row.id} (policy {row.policy_id})",
                    detail=why,
                )
            )
    return out[:LIMIT]


def short_of(
    conn: Any,
    approval_id: str,
    policy_id: str,
    requesters: set,
    history: dict,
    filed_at: float,
) -> str | None:
    """Why approval ``approval_id`` does not satisfy its policy (None: it does)."""
    policy = match.policy_in(conn, policy_id)
    st = s.approval_steps.c
    steps = conn.execute(
        select(s.approval_steps).where(st.approval_id == approval_id).order_by(st.created_at)
    ).all()
    people = [x.for_operator or x.operator for x in steps]
    hands = [x.operator for x in steps]
    if len(set(people)) != len(people) or len(set(hands)) != len(hands):
        return "one person took more than one step"
    if requesters & (set(people) | set(hands)):
        return "the agent that asked took a step"
    if any(not x.approve for x in steps):
        return "a required approver denied it"
    done_at: list[float] = []
    for number, stage in enumerate(policy.stages):
        mine = [x for x in steps if x.stage == number]
        for x in mine:
            routed = x.group_name == policy.escalate_to and policy.escalated(filed_at, x.created_at)
            if x.group_name not in stage.groups and not routed:
                return f"{x.operator}'s step is for {x.group_name}, not a group of its stage"
            person = x.for_operator or x.operator
            if not _member_at(history, x.group_name, person, x.created_at):
                return f"{person} was not in {x.group_name} when they stepped"
            if x.for_operator and not _delegated(conn, x):
                return f"{x.operator} stepped for {x.for_operator} without their delegation"
            if done_at and x.created_at < done_at[-1]:
                return f"{x.operator} approved before the stage before it was complete"
        if len(mine) < stage.need:
            return f"{len(mine)} of {stage.need} approvals of {' or '.join(stage.groups)}"
        done_at.append(sorted(x.created_at for x in mine)[stage.need - 1])
    return None
