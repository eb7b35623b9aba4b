"""`proctor verify`: integrity_check, triggers present, every run's event chain and the
audit chain recomputed; the first broken link is named."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from . import db
from . import schema as s
from .canonical import ZERO_DIGEST, chain_digest
from .journal import Journal, audit_digest_body, event_digest_body
from .models import VerifyProblem, VerifyReport

BATCH = 5000


def verify(journal: Journal, *, quick: bool = False, run_id: str | None = None) -> VerifyReport:
    problems: list[VerifyProblem] = []
    if run_id is None:
        for line in journal.integrity_check(quick=quick):
            if line != "ok":
                problems.append(VerifyProblem(what="integrity", where="file", detail=line))
        for name in sorted(journal.triggers_present()):
            problems.append(VerifyProblem(what="trigger missing", where=name,
                                          detail="evidence rows are no longer protected"))
    runs, events = _verify_runs(journal, problems, run_id)
    audits = 0 if run_id else _verify_audit(journal, problems)
    return VerifyReport(ok=not problems, checked_runs=runs, checked_events=events,
                        checked_audit=audits, problems=problems)


def verify_run(journal: Journal, run_id: str) -> VerifyReport:
    return verify(journal, run_id=run_id)


def _verify_runs(journal: Journal, problems: list[VerifyProblem],
                 only: str | None) -> tuple[int, int]:
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
        stmt = select(s.events).where(s.events.c.run_id == run.id,
                                      s.events.c.sequence >= expected_seq).order_by(
            s.events.c.sequence).limit(BATCH)
        rows = journal.read(lambda c, st=stmt: c.execute(st).all())
        for row in rows:
            where = f"run {run.id} event #{row.sequence} ({row.id})"
            if row.sequence != expected_seq:
                problems.append(VerifyProblem(what="sequence gap", where=where,
                                              detail=f"expected #{expected_seq}"))
                return count
            body = event_digest_body(row._mapping, json.loads(row.payload))
            if row.prev_digest != prev or chain_digest(prev, body) != row.digest:
                problems.append(VerifyProblem(what="event chain broken", where=where,
                                              detail="digest does not match the content"))
                return count
            prev, expected_seq, count = row.digest, expected_seq + 1, count + 1
        if len(rows) < BATCH:
            break
    if count != run.last_sequence or prev != run.last_digest:
        problems.append(VerifyProblem(
            what="run head mismatch", where=f"run {run.id}",
            detail=f"run says #{run.last_sequence}, chain ends at #{count}"))
    return count


def _verify_audit(journal: Journal, problems: list[VerifyProblem]) -> int:
    prev, expected, count = ZERO_DIGEST, 1, 0
    while True:
        stmt = select(s.audit).where(s.audit.c.sequence >= expected).order_by(
            s.audit.c.sequence).limit(BATCH)
        rows = journal.read(lambda c, st=stmt: c.execute(st).all())
        for row in rows:
            where = f"audit #{row.sequence} ({row.id})"
            if row.sequence != expected:
                problems.append(VerifyProblem(what="audit gap", where=where,
                                              detail=f"expected #{expected}"))
                return count
            if row.prev_digest != prev or chain_digest(prev, audit_digest_body(row)) != row.digest:
                problems.append(VerifyProblem(what="audit chain broken", where=where,
                                              detail="digest does not match the content"))
                return count
            prev, expected, count = row.digest, expected + 1, count + 1
        if len(rows) < BATCH:
            return count


__all__ = ["verify", "verify_run", "db"]
