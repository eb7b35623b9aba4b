"""What ``proctor verify`` checks of a delegation ended early (0018e): each end has its
delegator's decision row, saying what it says, and no step counted as the delegator's was
taken by the delegate at or after the end (the store refuses it as it is written:
core/storage/policy_sql.py's ``trg_approval_steps_delegated``; a same-user process that drops
that trigger first is named here)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

LIMIT = 100


def problems_in(conn: Any) -> list[VerifyProblem]:
    return _ends_decided(conn) + _steps_after_end(conn)


def _ends_decided(conn: Any) -> list[VerifyProblem]:
    e, dc = s.delegation_ends.c, s.decisions.c
    rows = conn.execute(
        select(
            e.delegation_id, e.ended_by, e.ended_at, dc.actor, dc.target_id, dc.decision
        ).outerjoin(s.decisions, dc.id == e.decision_id)
    ).all()
    out = []
    for row in rows:
        body = json.loads(row.decision) if row.decision else None
        if not (
            row.actor == row.ended_by
            and row.target_id == row.delegation_id
            and isinstance(body, dict)
            and body.get("ended") == row.delegation_id
            and body.get("ended_at") == row.ended_at
        ):
            out.append(
                VerifyProblem(
                    what="delegation end without its decision",
                    where=f"delegation {row.delegation_id}",
                    detail="no decision row of the delegator records this end as it is stored",
                )
            )
    return out[:LIMIT]


def _steps_after_end(conn: Any) -> list[VerifyProblem]:
    st, d, e = s.approval_steps.c, s.delegations.c, s.delegation_ends.c
    rows = conn.execute(
        select(st.approval_id, st.operator, st.for_operator, st.created_at, e.ended_at)
        .join(s.delegations, (d.operator == st.for_operator) & (d.delegate == st.operator))
        .join(s.delegation_ends, e.delegation_id == d.id)
        .where(d.starts_at <= st.created_at, st.created_at < d.ends_at)
    ).all()
    covered = _covered(conn)
    out = []
    for row in rows:
        if row.created_at < row.ended_at or (row.approval_id, row.operator) in covered:
            continue
        out.append(
            VerifyProblem(
                what="step under an ended delegation",
                where=f"approval {row.approval_id} (step by {row.operator} for {row.for_operator})",
                detail=f"{row.for_operator} ended the delegation before the step was taken",
            )
        )
    return out[:LIMIT]


def _covered(conn: Any) -> set[tuple[str, str]]:
    """Steps for another person that some delegation not ended at the step's time covers (a
    second delegation running alongside the ended one)."""
    st, d, e = s.approval_steps.c, s.delegations.c, s.delegation_ends.c
    rows = conn.execute(
        select(st.approval_id, st.operator, st.created_at, e.ended_at)
        .join(s.delegations, (d.operator == st.for_operator) & (d.delegate == st.operator))
        .outerjoin(s.delegation_ends, e.delegation_id == d.id)
        .where(d.starts_at <= st.created_at, st.created_at < d.ends_at)
    ).all()
    return {
        (r.approval_id, r.operator) for r in rows if r.ended_at is None or r.created_at < r.ended_at
    }
