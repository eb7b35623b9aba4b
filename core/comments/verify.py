"""What ``proctor verify`` checks of the comments (the triggers refuse each of these as it
is written; a same-user process that drops them first is named here): each item's thread
is a chain (seq 1, 2, ... each naming the digest of the one before), each comment's digest
matches its content, each comment has its decision row saying what it says, by an operator,
and no comment decision has lost its comment."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from proctor.core.kernel.canonical import ZERO_DIGEST
from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

from .rows import digest_of_row

LIMIT = 100  # problems of one kind listed


def problems_in(conn: Any) -> list[VerifyProblem]:
    c = s.comments.c
    rows = conn.execute(select(s.comments).order_by(c.item_kind, c.item_id, c.seq)).all()
    decisions = {
        d.id: d
        for d in conn.execute(
            select(s.decisions).where(s.decisions.c.target_kind == "comment")
        ).all()
    }
    return _chains(rows) + _decided(rows, decisions) + _missing(rows, decisions)


def _where(row: Any) -> str:
    return f"comment {row.id} (#{row.seq} on {row.item_kind} {row.item_id})"


def _chains(rows: list[Any]) -> list[VerifyProblem]:
    out: list[VerifyProblem] = []
    item, expected, prev = None, 1, ZERO_DIGEST
    for row in rows:
        if (row.item_kind, row.item_id) != item:
            item, expected, prev = (row.item_kind, row.item_id), 1, ZERO_DIGEST
        if row.seq != expected or row.prev_digest != prev:
            out.append(
                VerifyProblem(
                    what="comment chain broken",
                    where=_where(row),
                    detail=f"expected #{expected} naming the previous comment's digest: a "
                    "comment of this thread was removed, reordered or put in by hand",
                )
            )
        if digest_of_row(row.prev_digest, row) != row.digest:
            out.append(
                VerifyProblem(
                    what="comment altered",
                    where=_where(row),
                    detail="its text, author, time or place does not match its digest",
                )
            )
        expected, prev = row.seq + 1, row.digest
    return out[:LIMIT]


def _decided(rows: list[Any], decisions: dict) -> list[VerifyProblem]:
    out = []
    for row in rows:
        d = decisions.get(row.decision_id)
        body = json.loads(d.decision) if d is not None else None
        says = {
            "item_kind": row.item_kind,
            "item_id": row.item_id,
            "seq": row.seq,
            "digest": row.digest,
        }
        if (
            d is None
            or d.target_id != row.id
            or d.actor != row.author
            or not row.author.startswith("operator:")
            or body != says
        ):
            out.append(
                VerifyProblem(
                    what="comment without its decision",
                    where=_where(row),
                    detail=f"by {row.author}: no decision row records this comment as it is stored",
                )
            )
    return out[:LIMIT]


def _missing(rows: list[Any], decisions: dict) -> list[VerifyProblem]:
    kept = {row.id for row in rows}
    out = [
        VerifyProblem(
            what="comment missing",
            where=f"comment {d.target_id}",
            detail=f"by {d.actor}: its decision ({d.id}) and audit row remain, the comment is gone",
        )
        for d in sorted(decisions.values(), key=lambda d: (d.created_at, d.id))
        if d.target_id not in kept
    ]
    return out[:LIMIT]
