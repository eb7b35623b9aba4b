"""Verify's chain checks: each run's event chain and the audit chain, recomputed from their
rows; the first broken link of each is named."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from proctor.core.kernel.canonical import ZERO_DIGEST, chain_digest
from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s
from proctor.core.storage.rows import all_rows
from proctor.core.storage.tx import audit_digest_body, event_digest_body

from .verify_pages import BATCH

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal


def _verify_runs(
    journal: Journal, problems: list[VerifyProblem], only: str | None
) -> tuple[int, int]:
    stmt = select(s.runs.c.id, s.runs.c.last_sequence, s.runs.c.last_digest).order_by(s.runs.c.id)
    if only:
        stmt = stmt.where(s.runs.c.id == only)
    run_rows = journal.read(lambda c: c.execute(stmt).all())
    total = 0
    for run in run_rows:
        total += _verify_chain(journal, run, problems)
    return len(run_rows), total


def _verify_chain(journal: Journal, run: Any, problems: list[VerifyProblem]) -> int:
    prev, expected_seq, count = ZERO_DIGEST, 1, 0
    while True:
        stmt = (
            select(s.events)
            .where(s.events.c.run_id == run.id, s.events.c.sequence >= expected_seq)
            .order_by(s.events.c.sequence)
            .limit(BATCH)
        )
        rows = journal.read(all_rows(stmt))
        for row in rows:
            where = f"run {run.id} event #{row.sequence} ({row.id})"
            if row.sequence != expected_seq:
                problems.append(
                    VerifyProblem(
                        what="sequence gap", where=where, detail=f"expected #{expected_seq}"
                    )
                )
                return count
            body = event_digest_body(row._mapping, json.loads(row.payload))
            if row.prev_digest != prev or chain_digest(prev, body) != row.digest:
                problems.append(
                    VerifyProblem(
                        what="event chain broken",
                        where=where,
                        detail="digest does not match the content",
                    )
                )
                return count
            prev, expected_seq, count = row.digest, expected_seq + 1, count + 1
        if len(rows) < BATCH:
            break
    if count != run.last_sequence or prev != run.last_digest:
        problems.append(
            VerifyProblem(
                what="run head mismatch",
                where=f"run {run.id}",
                detail=f"run says #{run.last_sequence}, chain ends at #{count}",
            )
        )
    return count


def _verify_audit(journal: Journal, problems: list[VerifyProblem]) -> int:
    prev, expected, count = ZERO_DIGEST, 1, 0
    while True:
        stmt = (
            select(s.audit)
            .where(s.audit.c.sequence >= expected)
            .order_by(s.audit.c.sequence)
            .limit(BATCH)
        )
        rows = journal.read(all_rows(stmt))
        for row in rows:
            where = f"audit #{row.sequence} ({row.id})"
            if row.sequence != expected:
                problems.append(
                    VerifyProblem(what="audit gap", where=where, detail=f"expected #{expected}")
                )
                return count
            if row.prev_digest != prev or chain_digest(prev, audit_digest_body(row)) != row.digest:
                problems.append(
                    VerifyProblem(
                        what="audit chain broken",
                        where=where,
                        detail="digest does not match the content",
                    )
                )
                return count
            prev, expected, count = row.digest, expected + 1, count + 1
        if len(rows) < BATCH:
            return count
