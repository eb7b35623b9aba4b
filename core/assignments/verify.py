"""What ``proctor verify`` checks of ``assignments`` (its trigger refuses each of these as
it is written; a same-user process that drops it first is named here): every assignment
has its decision row, by the assignee, saying what the row says."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

LIMIT = 100  # problems listed


def _says(decision: Any, row: Any) -> bool:
    if decision is None or decision.target_kind != "assignment":
        return False
    if decision.target_id != row.item_id or decision.actor != f"operator:{row.assignee}":
        return False
    try:
        content = json.loads(decision.decision)
    except (TypeError, ValueError):
        return False
    return content == {
        "item_kind": row.item_kind,
        "item_id": row.item_id,
        "assignee": row.assignee,
    }


def problems_in(conn: Any) -> list[VerifyProblem]:
    d = s.decisions.c
    decisions = {
        r.id: r
        for r in conn.execute(select(s.decisions).where(d.target_kind == "assignment")).all()
    }
    out = []
    for row in conn.execute(select(s.assignments).order_by(s.assignments.c.id)).all():
        if not _says(decisions.get(row.decision_id), row):
            out.append(
                VerifyProblem(
                    what="assignment without its decision",
                    where=f"assignment {row.id} of {row.item_kind} {row.item_id}",
                    detail=f"to {row.assignee}: no decision by them records it "
                    f"(decision {row.decision_id})",
                )
            )
        if len(out) >= LIMIT:
            break
    return out
