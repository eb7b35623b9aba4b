"""``verify``'s look at who undid what (issue 37): a held decision is taken back only by the
person who made it (``core/decisions/undo.py`` refuses anyone else; a team server's login
check too). On a journal file every writer is the same user, so an undo written by another
operator (raw SQL, a forged decision row) is named here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

KINDS = (("approval", "approval"), ("interaction", "question"))


def undone_by_another(conn: Any) -> list[VerifyProblem]:
    """Each undo decision row whose decision it undid was another operator's."""
    from proctor.core.decisions.checks import decision_rows, undone

    d = s.decisions.c
    problems: list[VerifyProblem] = []
    for kind, noun in KINDS:
        targets = conn.execute(
            select(d.target_id)
            .where(d.target_kind == kind, d.decision.like('%"undone"%'))
            .distinct()
            .order_by(d.target_id)
        ).scalars()
        for target in list(targets):
            standing = None
            for r in decision_rows(conn, kind, target):
                if not undone(r.decision):
                    standing = r
                    continue
                if standing is not None and standing.actor != r.actor:
                    problems.append(
                        VerifyProblem(
                            what="undone by another operator",
                            where=f"{noun} {target}",
                            detail=f"{r.actor} undid {standing.actor}'s decision (decision "
                            f"{standing.id}, undo {r.id}); only the person who decided may",
                        )
                    )
                standing = None
    return problems
