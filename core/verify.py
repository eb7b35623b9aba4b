"""`proctor verify`: integrity_check, triggers present, every run's event chain and the
audit chain recomputed; the first broken link is named."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from . import db
from . import schema as s
from .canonical import ZERO_DIGEST, chain_digest, digest_of
from .journal import Journal, audit_digest_body, event_digest_body
from .models import VerifyProblem, VerifyReport

BATCH = 5000


def verify(journal: Journal, *, quick: bool = False, run_id: str | None = None) -> VerifyReport:
    problems: list[VerifyProblem] = []
    if run_id is None:
        for line in journal.integrity_check(quick=quick):
            if line != "ok":
                problems.append(VerifyProblem(what="integrity", where="file", detail=line))
        for name in sorted(journal.missing_triggers()):
            problems.append(VerifyProblem(what="trigger missing", where=name,
                                          detail="evidence rows are no longer protected"))
    runs, events = _verify_runs(journal, problems, run_id)
    audits = 0 if run_id else _verify_audit(journal, problems)
    if run_id is None:
        _verify_decisions(journal, problems)
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


def _verify_decisions(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Each decision's digest matches its content and an audit row of the same entity,
    actor and time records it; a decided approval, an answered question and a resolved
    conflict each have a decision. (Decisions of an imported run were audited in the
    journal they came from, before the import.)"""
    after = ""
    while True:
        stmt = select(s.decisions).where(s.decisions.c.id > after).order_by(
            s.decisions.c.id).limit(BATCH)
        rows = journal.read(lambda c, st=stmt: c.execute(st).all())
        for row in rows:
            body = {"target_kind": row.target_kind, "target_id": row.target_id,
                    "decision": json.loads(row.decision), "actor": row.actor,
                    "reason": row.reason, "created_at": row.created_at}
            if digest_of(body) != row.digest:
                problems.append(VerifyProblem(what="decision digest mismatch",
                                              where=f"decision {row.id} on {row.target_id}",
                                              detail="digest does not match the content"))
        if len(rows) < BATCH:
            break
        after = rows[-1].id
    d, a = s.decisions, s.audit
    audited = select(a.c.id).where(a.c.entity_kind == d.c.target_kind,
                                   a.c.entity_id == d.c.target_id,
                                   a.c.created_at == d.c.created_at, a.c.actor == d.c.actor)
    imported = select(a.c.id).where(a.c.action == "run.imported", a.c.entity_id == d.c.run_id,
                                    a.c.created_at >= d.c.created_at)
    stmt = select(d.c.id, d.c.target_id, d.c.actor).where(
        ~audited.exists(), ~imported.exists()).order_by(d.c.id).limit(100)
    for row in journal.read(lambda c: c.execute(stmt).all()):
        problems.append(VerifyProblem(what="decision without audit row",
                                      where=f"decision {row.id} on {row.target_id}",
                                      detail=f"by {row.actor}; the audit log does not record it"))
    for table, statuses in ((s.approvals, ("approved", "denied", "expired")),
                            (s.interactions, ("resolved",)),
                            (s.reconciliations, ("accepted_local", "accepted_incoming",
                                                 "merged", "dismissed"))):
        decided = select(d.c.id).where(d.c.target_id == table.c.id)
        stmt = select(table.c.id, table.c.status).where(
            table.c.status.in_(statuses), ~decided.exists()).order_by(table.c.id).limit(100)
        for row in journal.read(lambda c, st=stmt: c.execute(st).all()):
            problems.append(VerifyProblem(what="decided without a decision",
                                          where=f"{table.name} {row.id}",
                                          detail=f"it is {row.status} but no decision says so"))


__all__ = ["verify", "verify_run", "db"]
