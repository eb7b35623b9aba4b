"""`proctor verify`: integrity_check, triggers present, every run's event chain and the
audit chain recomputed, every receipt's digest, every memory entry's mutation chain, every
approval's and effect's action against its digest; the first broken link of each chain and
each bad row are named."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import LargeBinary, String, Text, and_, cast, or_, select, tuple_

from proctor.core import errors
from proctor.core.audit.undos import undone_by_another
from proctor.core.decisions.answers import disagrees
from proctor.core.kernel.canonical import ZERO_DIGEST, chain_digest, digest_of, sha256_hex
from proctor.core.kernel.integrity import action_tampered, mutation_digest, receipt_digest_body
from proctor.core.models import VerifyProblem, VerifyReport
from proctor.core.storage import db
from proctor.core.storage import schema as s
from proctor.core.storage.rows import all_rows
from proctor.core.storage.tx import audit_digest_body, event_digest_body

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal

BATCH = 5000


def verify(
    journal: Journal, *, quick: bool = False, run_id: str | None = None, trust: Any = None
) -> VerifyReport:
    """``trust`` (a Trust, a path or None: the journal's own ``trust``): every operator
    decision must be signed by a trusted key and match its rows; the first unsigned or
    forged decision is the first ``signature`` problem."""
    problems: list[VerifyProblem] = []
    if run_id is None:
        for line in journal.integrity_check(quick=quick):
            if line != "ok":
                problems.append(VerifyProblem(what="integrity", where="file", detail=line))
        for name in sorted(journal.missing_triggers()):
            problems.append(
                VerifyProblem(
                    what="trigger missing",
                    where=name,
                    detail="evidence rows are no longer protected",
                )
            )
        for name, why in journal.altered_triggers().items():
            problems.append(
                VerifyProblem(
                    what="trigger altered",
                    where=name,
                    detail=f"{why}: the rows it guards are no longer protected",
                )
            )
        _verify_tail(journal, problems)
        _verify_decodes(journal, problems)
    try:
        return _verify_rows(journal, problems, run_id, trust)
    except errors.Corrupt as err:  # a check that cannot read on: the damage is the finding
        if not any(p.what == "damaged" for p in problems):
            problems.append(VerifyProblem(what="damaged", where="journal", detail=err.message))
        return VerifyReport(
            ok=False, checked_runs=0, checked_events=0, checked_audit=0, problems=problems
        )


def _verify_rows(
    journal: Journal, problems: list[VerifyProblem], run_id: str | None, trust: Any
) -> VerifyReport:
    runs, events = _verify_runs(journal, problems, run_id)
    audits = 0 if run_id else _verify_audit(journal, problems)
    counts = None
    if run_id is None:
        _verify_decisions(journal, problems)
        journal.read(lambda c: _verify_revocations(c, problems))
        journal.read(lambda c: _verify_answers(c, problems))
        journal.read(lambda c: _verify_retries(c, problems))
        journal.read(lambda c: _verify_undos(c, problems))
        journal.read(lambda c: _verify_question_undos(c, problems))
        problems.extend(journal.read(undone_by_another))
        if db.has_revision(journal.read(db.current_revision), "0014p"):
            from proctor.core.policies.verify import problems_in

            problems.extend(journal.read(problems_in))
        from proctor.core.decisions.trust import resolve_trust

        trusted = resolve_trust(trust) if trust is not None else journal.trust
        counts = journal.read(lambda c: signature_counts(c, trusted, problems))
    rows = {
        "receipts": _verify_receipts(journal, problems, run_id),
        "approvals": _verify_approvals(journal, problems, run_id),
        "effects": _verify_effects(journal, problems, run_id),
    }
    if run_id is None and _has_digests(journal):
        rows["memory_mutations"] = _verify_memory(journal, problems)
    return VerifyReport(
        ok=not problems,
        checked_runs=runs,
        checked_events=events,
        checked_audit=audits,
        problems=problems,
        checked_rows=rows,
        signatures=counts,
        trusted=run_id is None and (trust is not None or journal.trust is not None),
    )


# The columns that hold JSON, by table: each must parse (every text column must be UTF-8).
JSON_COLUMNS = {
    "events": ("payload",),
    "tool_calls": ("request", "result"),
    "approvals": ("action", "input_schema", "approved_action"),
    "interactions": ("request", "response_schema", "options", "response"),
    "decisions": ("decision",),
    "effects": ("action", "result"),
    "receipts": ("evidence",),
    "audit": ("before", "after"),
}


def _verify_decodes(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Every stored text decodes: UTF-8 bytes, and JSON where a column holds JSON. A byte
    flipped inside a content page passes SQLite's integrity check (the page's structure is
    intact) yet no read of that row can succeed: such damage is named by table, row and
    column. (A server journal validates both on every write: nothing to scan.)"""
    if journal.server:
        return
    for table in s.metadata.sorted_tables:
        texts = [c for c in table.columns if isinstance(c.type, String | Text)]
        if not texts:
            continue
        keys = list(table.primary_key.columns)
        json_names = JSON_COLUMNS.get(table.name, ())
        bad = 0
        for row in _key_pages(journal, select(*keys, *(cast(c, LargeBinary) for c in texts)), keys):
            key = "/".join(str(v) for v in row[: len(keys)])
            for column, raw in zip(texts, row[len(keys) :], strict=True):
                why = _undecodable(raw, column.name in json_names)
                if why and bad < LIMIT:
                    bad += 1
                    problems.append(
                        VerifyProblem(
                            what="damaged",
                            where=f"{table.name} {key}, its {column.name}",
                            detail=why,
                        )
                    )


def _key_pages(journal: Journal, base: Any, keys: list[Any]) -> Any:
    """The rows of ``base`` (which selects ``keys`` first) in key order, ``BATCH`` a read
    (keyset: no read holds a snapshot for a whole table)."""
    after: tuple | None = None
    order = tuple_(*keys) if len(keys) > 1 else keys[0]
    while True:
        stmt = (
            base
            if after is None
            else base.where(order > (tuple_(*after) if len(keys) > 1 else after[0]))
        )
        rows = journal.read(all_rows(stmt.order_by(*keys).limit(BATCH)))
        yield from rows
        if len(rows) < BATCH:
            return
        after = tuple(rows[-1][: len(keys)])


def _undecodable(raw: bytes | None, is_json: bool) -> str:
    """Why a stored value cannot be read ("" when it can)."""
    if raw is None:
        return ""
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError as err:
        return f"its stored text is not valid UTF-8 ({err.reason} at byte {err.start})"
    if is_json:
        try:
            json.loads(text)
        except ValueError as err:
            return f"the stored JSON does not parse ({err})"
    return ""


def _verify_tail(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Changes a desk saw (its head witness, core/audit/witness.py) that the journal lacks: a
    -wal deleted before its checkpoint leaves a shorter chain that agrees with itself."""
    from .witness import check

    lost = check(journal)
    if lost is not None:
        span = f"changes {lost.first_missing}..{lost.last_seen}"
        problems.insert(
            0,
            VerifyProblem(
                what="changes missing", where=span, detail=f"{lost.sentence}. {lost.hint}"
            ),
        )


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


def verify_run(journal: Journal, run_id: str) -> VerifyReport:
    return verify(journal, run_id=run_id)


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


def _has_digests(journal: Journal) -> bool:
    """False for an older journal read without upgrading (0005 added the digests)."""
    return db.has_integrity(journal.schema_revision)


def _pages(journal: Journal, base: Any, key: Any, conds: list[Any]) -> Any:
    """The rows of the select ``base`` matching ``conds`` in ``key`` order, a page per
    read."""
    after = None
    while True:
        stmt = base.where(*conds, *([key > after] if after is not None else []))
        rows = journal.read(all_rows(stmt.order_by(key).limit(BATCH)))
        yield from rows
        if len(rows) < BATCH:
            return
        after = getattr(rows[-1], key.name)


def _verify_receipts(journal: Journal, problems: list[VerifyProblem], run_id: str | None) -> int:
    r = s.receipts.c
    count, bad = 0, 0
    for row in _pages(journal, select(s.receipts), r.id, [r.run_id == run_id] if run_id else []):
        count += 1
        if digest_of(receipt_digest_body(row)) != row.digest and bad < LIMIT:
            bad += 1
            problems.append(
                VerifyProblem(
                    what="receipt digest mismatch",
                    where=f"receipt {row.id} of effect {row.effect_key}",
                    detail="digest does not match the content",
                )
            )
    return count


def _verify_approvals(journal: Journal, problems: list[VerifyProblem], run_id: str | None) -> int:
    """Each approval's action matches its digest, and its identity matches the
    ``approval.requested`` event in its run's chain (when the chain has one)."""
    a = s.approvals.c
    count, bad = 0, 0
    requested: dict[str, dict[str, dict]] = {}
    imported = _imported_runs(journal)
    bad += _verify_consumptions(journal, problems, run_id)
    for row in _pages(journal, select(s.approvals), a.id, [a.run_id == run_id] if run_id else []):
        count += 1
        if bad >= LIMIT:
            continue
        where = f"approval {row.id} ({row.action_name}) in run {row.run_id}"
        if action_tampered(row.action, row.action_digest):
            bad += 1
            problems.append(
                VerifyProblem(
                    what="approval action tampered",
                    where=where,
                    detail=f"the stored action does not match its digest {row.action_digest[:12]}…",
                )
            )
            continue
        if row.run_id not in requested:
            requested[row.run_id] = _requested_events(journal, row.run_id)
        event = requested[row.run_id].get(row.id)
        if event is None and not imported(row.run_id):
            bad += 1
            problems.append(
                VerifyProblem(
                    what="approval without its request event",
                    where=where,
                    detail="its run's chain holds no approval.requested for it: it was put in "
                    "by hand, or moved from another run",
                )
            )
            continue
        differs = [
            k
            for k in ("action_digest", "safety_class", "expires_at", "attempt", "origin_digest")
            if event is not None
            and k in event
            and event[k] != _requested_value(row, k)
            and (k != "origin_digest" or row.origin is not None)  # none claims nothing
        ]
        if differs:
            bad += 1
            problems.append(
                VerifyProblem(
                    what="approval differs from its request event",
                    where=where,
                    detail=f"{', '.join(differs)} differ from the approval.requested event",
                )
            )
    return count


def _requested_value(row: Any, key: str) -> Any:
    """What the approval row says of ``key`` of its request event (its origin as a digest;
    a row without one, as a downgrade below 0006o leaves it, claims no origin and is not
    compared)."""
    if key == "origin_digest":
        return None if row.origin is None else sha256_hex(row.origin)
    return getattr(row, key)


def _requested_events(journal: Journal, run_id: str) -> dict[str, dict]:
    """The run's chained ``approval.requested`` payloads by approval id, each with the
    attempt the event was appended in."""
    e = s.events.c
    stmt = select(e.payload, e.attempt).where(e.run_id == run_id, e.type == "approval.requested")
    out: dict[str, dict] = {}
    for payload, attempt in journal.read(lambda c: c.execute(stmt).all()):
        p = json.loads(payload)
        if isinstance(p, dict) and isinstance(p.get("approval_id"), str):
            out.setdefault(p["approval_id"], {**p, "attempt": attempt})
    return out


def _imported_runs(journal: Journal) -> Any:
    """A test: was run ``run_id`` imported (its events came with it, checked at the import)?"""
    a = s.audit.c
    stmt = select(a.entity_id).where(a.action == "run.imported")
    runs = set(journal.read(lambda c: c.execute(stmt).scalars().all()))
    return runs.__contains__


def _verify_consumptions(
    journal: Journal, problems: list[VerifyProblem], run_id: str | None
) -> int:
    """An approval the row says is unconsumed, though its run's chain records its
    ``approval.consumed`` or an effect was reserved with it: its consumption was cleared."""
    e, a, f = s.events.c, s.approvals.c, s.effects.c
    consumed = select(e.run_id, e.payload).where(e.type == "approval.consumed")
    if run_id:
        consumed = consumed.where(e.run_id == run_id)
    named: dict[str, str] = {}
    for run, payload in journal.read(lambda c: c.execute(consumed).all()):
        p = json.loads(payload)
        if isinstance(p, dict) and isinstance(p.get("approval_id"), str):
            named.setdefault(p["approval_id"], f"run {run}'s chain records approval.consumed")
    effects = select(f.approval_id, f.key).where(f.approval_id.is_not(None))
    if run_id:
        effects = effects.where(f.run_id == run_id)
    for approval_id, key in journal.read(lambda c: c.execute(effects).all()):
        named.setdefault(approval_id, f"effect {key} was reserved with it")
    if not named:
        return 0
    bad = 0
    ids = sorted(named)
    for start in range(0, len(ids), 500):
        stmt = select(a.id, a.run_id).where(
            a.id.in_(ids[start : start + 500]), a.consumed_at.is_(None)
        )
        for row in journal.read(all_rows(stmt)):
            bad += 1
            problems.append(
                VerifyProblem(
                    what="approval consumption cleared",
                    where=f"approval {row.id} in run {row.run_id}",
                    detail=f"the row says unconsumed, but {named[row.id]}",
                )
            )
    return bad


def _verify_revocations(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each ``rule.revoked`` audit row has its rule revoked, and, when the revoking operator
    signed in this journal by then, its signed revocation (a deleted one leaves the audit row
    behind)."""
    a, r, k = s.audit.c, s.approval_rules.c, s.operator_keys.c
    stmt = (
        select(a.sequence, a.entity_id, a.actor, a.created_at, r.revoked_at, r.id.label("rule"))
        .outerjoin(s.approval_rules, r.id == a.entity_id)
        .where(a.action == "rule.revoked", a.entity_kind == "rule")
        .order_by(a.sequence)
    )
    for row in conn.execute(stmt).all():
        where = f"rule {row.entity_id} (audit #{row.sequence})"
        if row.rule is None or row.revoked_at is None:
            problems.append(
                VerifyProblem(
                    what="rule revocation undone",
                    where=where,
                    detail=f"the audit log records its revocation by {row.actor}, the rule "
                    + ("is gone" if row.rule is None else "says it is active"),
                )
            )
            continue
        keyed = conn.execute(
            select(k.key_id).where(k.operator == row.actor, k.first_seen_at <= row.created_at)
        ).first()
        signed = conn.execute(
            select(s.signatures.c.record_id).where(
                s.signatures.c.record_id == f"{row.entity_id}/revoked"
            )
        ).first()
        if keyed is not None and signed is None:
            problems.append(
                VerifyProblem(
                    what="signed revocation missing",
                    where=where,
                    detail=f"{row.actor} signed in this journal by then, but the revocation's "
                    "signature is gone",
                )
            )


def _verify_retries(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each retry a run was asked (its ``retry_requested``) and each one it started (its
    ``run.retried`` events) has an operator's decision row asking it (``request_retry``):
    a retry asked by hand has none (0013u)."""
    from proctor.core.decisions.checks import retry_decision

    r, e = s.runs.c, s.events.c
    for run in conn.execute(
        select(r.id, r.retry_requested).where(r.retry_requested.is_not(None)).order_by(r.id)
    ).all():
        asked = {run.retry_requested}
        for (payload,) in conn.execute(
            select(e.payload).where(e.run_id == run.id, e.type == "run.retried")
        ):
            attempt = _loaded(payload).get("attempt")
            asked.add(attempt)
        for attempt in sorted(asked, key=str):
            if retry_decision(conn, run.id, attempt) is None:
                problems.append(
                    VerifyProblem(
                        what="retry without a decision",
                        where=f"run {run.id}",
                        detail=f"attempt {attempt} was asked as a retry, but no operator's "
                        "decision row asks for it (retry_requested written by hand)",
                    )
                )


def _verify_undos(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each pending approval with a decision has an undo decision row after its last one,
    and each undo came before the hold of the decision it undid ended (0013u): a decision
    cleared by hand, or undone after its hold, is named."""
    from proctor.core.decisions.checks import decision_rows, undone

    a, d = s.approvals.c, s.decisions.c
    decided = select(d.id).where(d.target_kind == "approval", d.target_id == a.id)
    undid = decided.where(d.decision.like('%"undone"%'))
    stmt = (
        select(a.id, a.status)
        .where(or_(and_(a.status == "pending", decided.exists()), undid.exists()))
        .order_by(a.id)
    )
    for row in conn.execute(stmt).all():
        standing = None
        for r in decision_rows(conn, "approval", row.id):
            if not undone(r.decision):
                standing = r
                continue
            hold = _loaded(standing.decision).get("hold_until") if standing else None
            if not isinstance(hold, int | float) or r.created_at >= hold:
                problems.append(
                    VerifyProblem(
                        what="undone after its hold",
                        where=f"approval {row.id}",
                        detail=f"{r.actor}'s undo (decision {r.id}) came "
                        + (
                            "after the hold of the decision it undid had ended"
                            if standing is not None and isinstance(hold, int | float)
                            else "with no held decision to undo"
                        ),
                    )
                )
            standing = None
        if row.status == "pending" and standing is not None:
            problems.append(
                VerifyProblem(
                    what="decision cleared without an undo",
                    where=f"approval {row.id}",
                    detail=f"it is pending, but {standing.actor}'s decision (decision "
                    f"{standing.id}) stands: no undo decision row follows it",
                )
            )


def _verify_question_undos(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each open question with a decision has an undo decision row after its last one
    (0014u): an answer cleared by hand within its hold (the store's triggers refuse it after
    the hold or once taken, not before) is named. (An undo's time against the hold is the
    store's own clock's business: its trigger refuses a late one.)"""
    from proctor.core.decisions.checks import decision_rows, standing

    q, d = s.questions.c, s.decisions.c
    decided = select(d.id).where(d.target_kind == "interaction", d.target_id == q.id)
    stmt = (
        select(q.id)
        .where(q.status.in_(("requested", "presented")), decided.exists())
        .order_by(q.id)
    )
    for row in conn.execute(stmt).all():
        stands = standing(decision_rows(conn, "interaction", row.id))
        if stands:
            problems.append(
                VerifyProblem(
                    what="answer cleared without an undo",
                    where=f"question {row.id}",
                    detail=f"it is open, but {stands[-1].actor}'s answer (decision "
                    f"{stands[-1].id}) stands: no undo decision row follows it",
                )
            )


def _loaded(text_: str | None) -> dict:
    try:
        value = json.loads(text_) if text_ else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _verify_answers(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each answered (or dismissed) question's response is its decision's answer (or
    dismissal), the digest its run's chain recorded (``interaction.answered``, when the event
    has one), and, when signed, what the signature says (checked against the keys the journal
    records: the bytes, not who)."""
    from proctor.core.decisions.checks import check_question, journal_keys
    from proctor.core.decisions.signing import request_event, signature_row

    q = s.questions.c
    stmt = (
        select(s.questions)
        .where(q.status.in_(("resolved", "dismissed")))
        .order_by(q.created_at, q.id)
    )
    keys = None
    for row in _with_standing_answers(conn, conn.execute(stmt).all()):
        where = f"question {row.id} in run {row.run_id}"
        response = json.loads(row.response) if row.response is not None else None
        problem = None
        wrong = (
            None
            if row.answer is None
            else disagrees(json.loads(row.answer), response, row.hold_until)
        )
        if wrong == "response":
            problem = "the response is not the answer its decision records"
        elif wrong == "hold_until":
            problem = "its hold (hold_until) is not the one its decision records"
        else:
            event = request_event(
                conn,
                row.run_id,
                "interaction.dismissed" if row.status == "dismissed" else "interaction.answered",
                "interaction_id",
                row.id,
                near=row.resolved_at,
            )
            recorded = json.loads(event.payload).get("response_digest") if event else None
            if recorded is not None and recorded != digest_of(response):
                problem = "the response is not the one its run's chain recorded"
            elif row.decision_id is not None and signature_row(conn, row.decision_id):
                keys = keys or journal_keys(conn)
                try:
                    check_question(conn, keys, row)
                except errors.DecisionUnverified as err:
                    problem = f"its signed answer does not match: {err.message}"
        if problem is not None:
            problems.append(VerifyProblem(what="answer rewritten", where=where, detail=problem))


class _Answered:
    """A question's row with one of its standing decisions (``decision_id``, ``answer``)."""

    def __init__(self, row: Any, decision: Any) -> None:
        self._row = row
        self.decision_id = None if decision is None else decision.id
        self.answer = None if decision is None else decision.decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self._row, name)


def _with_standing_answers(conn: Any, rows: list[Any]) -> Any:
    """Each answered question with each decision that stands for it: those after its last
    undo (0014u: an answer taken back within its hold no longer stands), or none."""
    from proctor.core.decisions.checks import decision_rows, standing

    for row in rows:
        for decision in standing(decision_rows(conn, "interaction", row.id)) or [None]:
            yield _Answered(row, decision)


def _verify_effects(journal: Journal, problems: list[VerifyProblem], run_id: str | None) -> int:
    """Each effect's action matches its digest, and an effect reserved by consuming an
    approval records the action that approval was for."""
    f, a = s.effects.c, s.approvals.c
    if not _has_digests(journal):
        return 0
    count, bad = 0, 0
    base = select(s.effects, a.action_digest.label("approved")).outerjoin(
        s.approvals, a.id == f.approval_id
    )
    for row in _pages(journal, base, f.key, [f.run_id == run_id] if run_id else []):
        count += 1
        if bad >= LIMIT:
            continue
        where = f"effect {row.key} ({row.tool})"
        if not row.action_digest or action_tampered(row.action, row.action_digest):
            bad += 1
            problems.append(
                VerifyProblem(
                    what="effect action tampered",
                    where=where,
                    detail="the stored action does not match its digest",
                )
            )
            continue
        approved = row.approved
        if approved is not None and approved != row.action_digest:
            bad += 1
            problems.append(
                VerifyProblem(
                    what="effect differs from its approval",
                    where=where,
                    detail=f"approval {row.approval_id} was for action {approved[:12]}…, the "
                    f"effect records {row.action_digest[:12]}…",
                )
            )
    return count


def _verify_memory(journal: Journal, problems: list[VerifyProblem]) -> int:
    """Each entry's mutations form a gapless chain from version 1, and the entry is where
    its chain ends (same version, same content)."""
    m, e = s.memory_mutations.c, s.memory_entries.c
    count, bad = 0, 0
    heads: dict[str, tuple[int, str | None, str | None]] = {}
    broken: set[str] = set()
    after: tuple[str, int] = ("", 0)
    while True:
        stmt = (
            select(s.memory_mutations)
            .where((m.entry_id > after[0]) | ((m.entry_id == after[0]) & (m.version > after[1])))
            .order_by(m.entry_id, m.version)
            .limit(BATCH)
        )
        rows = journal.read(all_rows(stmt))
        for row in rows:
            count += 1
            version, prev, _ = heads.get(row.entry_id, (0, ZERO_DIGEST, None))
            heads[row.entry_id] = (row.version, row.digest, row.after_hash)
            if row.entry_id in broken:
                continue
            where = f"memory entry {row.entry_id} mutation v{row.version} ({row.id})"
            if row.version != version + 1:
                what, detail = "memory mutation gap", f"expected v{version + 1}"
            elif (
                prev is None or row.prev_digest != prev or mutation_digest(prev, row) != row.digest
            ):
                what, detail = "memory chain broken", "digest does not match the content"
            else:
                continue
            broken.add(row.entry_id)
            if bad < LIMIT:
                bad += 1
                problems.append(VerifyProblem(what=what, where=where, detail=detail))
        if len(rows) < BATCH:
            break
        after = (rows[-1].entry_id, rows[-1].version)
    for row in _pages(journal, select(s.memory_entries), e.id, []):
        last = heads.get(row.id)
        if row.id in broken or bad >= LIMIT:
            continue
        if (
            last is None
            or last[0] != row.version
            or last[2] != row.content_hash
            or sha256_hex(row.content) != row.content_hash
        ):
            bad += 1
            problems.append(
                VerifyProblem(
                    what="memory head mismatch",
                    where=f"memory entry {row.id}",
                    detail=f"the entry (v{row.version}) is not where its mutation chain ends "
                    f"(v{last[0] if last else 0})",
                )
            )
    return count


LIMIT = 100  # bad rows named per kind (the first is the one to look at)

__all__ = ["db", "verify", "verify_run"]
