"""A request under a policy: bound to it when filed, then approved step by step.

Each person's step is a decision row (``approval_step``, signed when they have a key), an
audit row, a run event and an ``approval_steps`` row, in one transaction; the approval
stays ``pending`` (its version steps up, so a desk that showed it reloads) until the step
that satisfies the policy, which is then decided as any approval is (``Approvals.decide``
writes its decision). A deny by any required approver denies. The store refuses what these
functions refuse (core/storage/policy_sql.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select

from proctor.core import errors
from proctor.core.decisions.writer import action_resource, record_decision
from proctor.core.models import ChangeKind
from proctor.core.storage import schema as s
from proctor.core.storage.sql import Prepared, insert_rows, update_where
from proctor.core.storage.tx import Tx

from . import groups as groups_mod
from . import match
from .delegations import delegators_of
from .models import Policy, Progress, Step


def bind_in(tx: Tx, approval_id: str, action: dict, run: Any, safety: str) -> str | None:
    """Bind a request just filed to the policy that governs it; the policy's id, or None."""
    from proctor.core.decisions.writer import action_name

    row = match.pick_in(
        tx.conn,
        name=action_name(action),
        resource=action_resource(action),
        safety=safety,
        action=action,
        run=run,
    )
    if row is None:
        return None
    insert_rows(
        tx.conn,
        s.policy_bindings,
        [dict(approval_id=approval_id, policy_id=row.id, created_at=tx.now)],
    )
    return row.id


BOUND = Prepared(
    select(s.policy_bindings.c.policy_id).where(
        s.policy_bindings.c.approval_id == bindparam("approval_id")
    )
)


def bound_policy(conn: Any, approval_id: str) -> str | None:
    row = BOUND.first(conn, approval_id=approval_id)
    return None if row is None else row.policy_id


def steps_in(conn: Any, approval_id: str) -> list[Step]:
    st = s.approval_steps.c
    rows = conn.execute(
        select(s.approval_steps).where(st.approval_id == approval_id).order_by(st.created_at)
    ).all()
    return [
        Step(
            operator=r.operator,
            for_operator=r.for_operator,
            group=r.group_name,
            stage=r.stage,
            approve=bool(r.approve),
            reason=r.reason,
            created_at=r.created_at,
        )
        for r in rows
    ]


def progress_of(
    approval_id: str, policy: Policy, steps: list[Step], escalated: bool = False
) -> Progress:
    denied = any(not st.approve for st in steps)
    waiting: int | None = None
    for number, stage in enumerate(policy.stages):
        got = sum(1 for st in steps if st.stage == number and st.approve)
        if got < stage.need:
            waiting = number
            break
    return Progress(
        approval_id=approval_id,
        policy=policy,
        steps=steps,
        stage=None if denied else waiting,
        approvals=sum(1 for st in steps if st.approve),
        needed=sum(stage.need for stage in policy.stages),
        waiting_for=[]
        if denied or waiting is None
        else [
            *policy.stages[waiting].groups,
            *([policy.escalate_to] if escalated and policy.escalate_to else []),
        ],
        satisfied=not denied and waiting is None,
        denied=denied,
    )


def progress_in(conn: Any, approval_id: str, now: float) -> Progress | None:
    policy_id = bound_policy(conn, approval_id)
    if policy_id is None:
        return None
    policy = match.policy_in(conn, policy_id)
    a = s.approvals.c
    filed, by = conn.execute(select(a.created_at, a.decided_by).where(a.id == approval_id)).one()
    out = progress_of(
        approval_id, policy, steps_in(conn, approval_id), policy.escalated(filed, now)
    )
    if (by or "").startswith("policy:"):  # 0018e: denied at the policy's deadline
        return out.model_copy(update={"denied": True, "stage": None, "waiting_for": []})
    return out


def refuse_governed(conn: Any, approval_id: str, what: str) -> None:
    """``NotAllowed`` when a policy governs the request: only its steps decide it."""
    policy_id = bound_policy(conn, approval_id)
    if policy_id is not None:
        raise errors.NotAllowed(
            f"approval {approval_id} is under policy {policy_id}: {what} is not how it is "
            "decided; each required person approves (or denies) it",
            policy_id=policy_id,
        )


@dataclass(frozen=True)
class Stepped:
    """A step just taken: ``final`` when it satisfied the policy or denied the request (the
    caller then decides the approval); ``written``: the approval row as the step left it."""

    final: bool
    written: dict | None


def step_in(
    tx: Tx,
    row: Any,
    approve: bool,
    *,
    reason: str | None,
    source: str,
    request_id: str | None,
    request: Any,
    once: bool,
) -> Stepped | None:
    """The deciding operator's step on the pending approval ``row`` (already checked as
    decidable by them), or None when no policy governs it."""
    policy_id = bound_policy(tx.conn, row.id)
    if policy_id is None:
        return None
    if not once:
        raise errors.ValidationError(
            "a request under a policy is approved once: no rule is made from it",
            field="scope",
        )
    policy = match.policy_in(tx.conn, policy_id)
    steps = steps_in(tx.conn, row.id)
    me = tx.actor.name
    escalated = policy.escalated(row.created_at, tx.now)
    denies_at = policy.denies_at(row.created_at)
    if denies_at is not None and tx.now >= denies_at:
        raise errors.NotAllowed(
            f"approval {row.id} is past its policy's deadline: the policy denies it; no step "
            "is taken now",
            policy_id=policy_id,
        )
    mine = next((st for st in steps if me in (st.operator, st.for_operator)), None)
    if mine is not None:
        took = "you" if mine.operator == me else f"{mine.operator} (your delegate)"
        raise errors.AlreadyDecided(
            f"{took} already {'approved' if mine.approve else 'denied'} approval {row.id}; "
            f"it waits for {', '.join(progress_of(row.id, policy, steps, escalated).waiting_for) or 'no one'}",
            status="pending",
            decided_by=mine.operator,
        )
    before = progress_of(row.id, policy, steps, escalated)
    taken = {p for st in steps for p in (st.operator, st.for_operator) if p}
    stage, group, for_operator = _place(tx, policy, before, me, approve, taken, escalated)
    payload = {
        "approval_id": row.id,
        "action_digest": row.action_digest,
        "policy_id": policy_id,
        "stage": stage,
        "group": group,
        "approved": approve,
        **({"for_operator": for_operator} if for_operator else {}),
    }
    after = progress_of(
        row.id,
        policy,
        [
            *steps,
            Step(
                operator=me,
                for_operator=for_operator,
                group=group,
                stage=stage,
                approve=approve,
                created_at=tx.now,
            ),
        ],
    )
    final = after.satisfied or after.denied
    did = record_decision(
        tx,
        "approval_step",
        row.id,
        row.run_id,
        payload,
        source=source,
        reason=reason,
        request_id=None if final else request_id,
        request=None if final else request,
        audit=(
            "approval.step",
            {"approvals": before.approvals, "needed": before.needed},
            {"approvals": after.approvals, "needed": after.needed, **payload},
        ),
        event=(
            "approval.step",
            {**payload, "by": tx.actor.label, "reason": reason, "progress": after.summary()},
        ),
    )
    insert_rows(
        tx.conn,
        s.approval_steps,
        [
            dict(
                id=tx.new_id("stp"),
                approval_id=row.id,
                policy_id=policy_id,
                stage=stage,
                group_name=group,
                operator=me,
                for_operator=for_operator,
                approve=1 if approve else 0,
                reason=reason,
                decision_id=did,
                created_at=tx.now,
            )
        ],
    )
    if final:
        return Stepped(final=True, written=None)
    values = dict(version=row.version + 1)
    done = update_where(
        tx.conn, s.approvals, values, id=row.id, version=row.version, status="pending"
    )
    if done != 1:
        raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
    tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
    from proctor.core.storage.rows import written_row

    return Stepped(final=False, written=written_row(row, values))


def _place(
    tx: Tx,
    policy: Policy,
    now: Progress,
    me: str,
    approve: bool,
    taken: set[str],
    escalated: bool,
) -> tuple[int, str, str | None]:
    """(stage, group, for whom) of ``me``'s step: approving, a group of the stage the request
    waits for; denying, any group of the policy (the first such stage from the waiting one).
    A member steps for themselves; else, within a delegation to ``me``, for the delegator
    (one whose part nobody has taken yet)."""
    start = now.stage or 0  # a satisfied request is approved already: it waits for one
    order = [start] if approve else [*range(start, len(policy.stages)), *range(start)]
    people: list[str | None] = [None]
    people += [p for p in delegators_of(tx.conn, me, tx.now) if p not in taken]
    extra = [policy.escalate_to] if escalated and policy.escalate_to else []
    for person in people:
        for number in order:
            for group in [*policy.stages[number].groups, *(extra if number == start else [])]:
                if groups_mod.is_member(tx.conn, group, person or me):
                    return number, group, person
    wanted = (
        " or ".join(now.waiting_for)
        if approve
        else ", ".join([*(g for st in policy.stages for g in st.groups), *extra])
    )
    raise errors.NotAllowed(
        f"{me} is not in {wanted} (nor anyone's delegate there): approval {now.approval_id} "
        + (f"waits for {wanted}" if approve else "is denied only by a required approver"),
        groups=now.waiting_for,
    )
