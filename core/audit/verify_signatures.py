"""Verify's decision checks: each decision's digest and audit row, each decided item's
decision, and every decision's signature state against the trusted keys."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from proctor.core.kernel.canonical import digest_of
from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s
from proctor.core.storage.rows import all_rows

from .verify_pages import BATCH

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal


def _counted_without_trust(conn: Any, counts: dict[str, int]) -> dict[str, int]:
    """`proctor verify` without --trust: one query, signatures present or not (not checked:
    nobody said whom to trust, and checking every one costs a millisecond each)."""
    from sqlalchemy import case, func

    d, sig = s.decisions.c, s.signatures.c
    automatic = d.source.in_(("rule", "expiry")) | ~d.actor.like("operator:%")
    signed = select(sig.record_id).where(sig.record_id == d.id).exists()
    kind = case((automatic, "automatic"), (signed, "signed"), else_="unsigned")
    for state, n in conn.execute(select(kind, func.count()).group_by(kind)):
        counts[state] = n
    return counts


def signature_counts(
    conn: Any, trust: Any, problems: list[VerifyProblem] | None = None
) -> dict[str, int]:
    """Every decision's signature state, counted; with ``trust`` (and ``problems``) each
    unsigned or invalid operator decision, each unsigned rule and each decided item whose
    row disagrees with its signed decision is a problem, oldest first."""
    from proctor.core.decisions import checks as dc
    from proctor.core.decisions.signing import (
        binding_of,
        check_record,
        expected_for_rule,
        journal_id_in,
    )

    counts = {"signed": 0, "unsigned": 0, "invalid": 0, "automatic": 0}
    if trust is None and problems is not None:
        return _counted_without_trust(conn, counts)
    report = problems if trust is not None else None  # where problems go (None: nowhere)
    for d in conn.execute(select(s.decisions).order_by(s.decisions.c.created_at, s.decisions.c.id)):
        state = dc.decision_status(conn, trust, d)
        counts[state.state] += 1
        if report is not None and state.state in ("unsigned", "invalid"):
            report.append(
                VerifyProblem(
                    what="decision unsigned" if state.state == "unsigned" else "decision forged",
                    where=f"decision {d.id} on {d.target_kind} {d.target_id}",
                    detail=f"by {d.actor}: {state.text}",
                )
            )
    if report is None:
        return counts
    jid = journal_id_in(conn)
    for rule in conn.execute(select(s.approval_rules).order_by(s.approval_rules.c.created_at)):
        try:
            check_record(
                conn,
                trust,
                rule.id,
                expected_for_rule(conn, jid, rule),
                what=f"rule {rule.id}",
                binding=binding_of(conn, "rule", rule.id),
            )
        except dc.errors.DecisionUnverified as err:
            report.append(
                VerifyProblem(
                    what="rule not signed by a trusted operator",
                    where=f"rule {rule.id}",
                    detail=err.message,
                )
            )
    checks = (
        (
            s.approvals,
            ("approved", "denied"),
            lambda r: dc.check_approval(conn, trust, r, 0.0, acting=False),
        ),
        (s.questions, ("resolved", "dismissed"), lambda r: dc.check_question(conn, trust, r)),
        (
            s.conflicts,
            ("accepted_local", "accepted_incoming", "merged", "dismissed"),
            lambda r: dc.check_conflict(conn, trust, r),
        ),
    )
    seen = {p.where.split(" on ")[-1] for p in report if p.what.startswith("decision ")}
    for table, statuses, check in checks:
        for row in conn.execute(
            select(table)
            .where(table.c.status.in_(statuses))
            .order_by(table.c.created_at, table.c.id)
        ):
            kind = {"approvals": "approval", "interactions": "interaction"}.get(
                table.name, "reconciliation"
            )
            try:
                check(row)
            except dc.errors.DecisionUnverified as err:
                if f"{kind} {row.id}" not in seen:
                    report.append(
                        VerifyProblem(
                            what="decision does not match its item",
                            where=f"{table.name} {row.id}",
                            detail=err.message,
                        )
                    )
    return counts


def _verify_decisions(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Each decision's digest matches its content and an audit row of the same entity,
    actor and time records it; a decided approval, an answered question and a resolved
    conflict each have a decision. (Decisions of an imported run were audited in the
    journal they came from, before the import.)"""
    after = ""
    while True:
        stmt = (
            select(s.decisions)
            .where(s.decisions.c.id > after)
            .order_by(s.decisions.c.id)
            .limit(BATCH)
        )
        rows = journal.read(all_rows(stmt))
        for row in rows:
            body = {
                "target_kind": row.target_kind,
                "target_id": row.target_id,
                "decision": json.loads(row.decision),
                "actor": row.actor,
                "reason": row.reason,
                "created_at": row.created_at,
            }
            if digest_of(body) != row.digest:
                problems.append(
                    VerifyProblem(
                        what="decision digest mismatch",
                        where=f"decision {row.id} on {row.target_id}",
                        detail="digest does not match the content",
                    )
                )
        if len(rows) < BATCH:
            break
        after = rows[-1].id
    d, a = s.decisions, s.audit
    audited = select(a.c.id).where(
        a.c.entity_kind == d.c.target_kind,
        a.c.entity_id == d.c.target_id,
        a.c.created_at == d.c.created_at,
        a.c.actor == d.c.actor,
    )
    imported = select(a.c.id).where(
        a.c.action == "run.imported", a.c.entity_id == d.c.run_id, a.c.created_at >= d.c.created_at
    )
    stmt = (
        select(d.c.id, d.c.target_id, d.c.actor)
        .where(~audited.exists(), ~imported.exists())
        .order_by(d.c.id)
        .limit(100)
    )
    for row in journal.read(lambda c: c.execute(stmt).all()):
        problems.append(
            VerifyProblem(
                what="decision without audit row",
                where=f"decision {row.id} on {row.target_id}",
                detail=f"by {row.actor}; the audit log does not record it",
            )
        )
    for table, statuses in (
        (s.approvals, ("approved", "denied", "expired")),
        (s.questions, ("resolved", "dismissed")),
        (s.conflicts, ("accepted_local", "accepted_incoming", "merged", "dismissed")),
    ):
        decided = select(d.c.id).where(d.c.target_id == table.c.id)
        stmt = (
            select(table.c.id, table.c.status)
            .where(table.c.status.in_(statuses), ~decided.exists())
            .order_by(table.c.id)
            .limit(100)
        )
        for row in journal.read(all_rows(stmt)):
            problems.append(
                VerifyProblem(
                    what="decided without a decision",
                    where=f"{table.name} {row.id}",
                    detail=f"it is {row.status} but no decision says so",
                )
            )
