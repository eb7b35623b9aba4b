"""Verify's evidence checks: every receipt's digest, every approval's and effect's action
against its digest (and an approval's consumption against its run's chain), every memory
entry's mutation chain."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from proctor.core.kernel.canonical import ZERO_DIGEST, digest_of, sha256_hex
from proctor.core.kernel.integrity import action_tampered, mutation_digest, receipt_digest_body
from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s
from proctor.core.storage.rows import all_rows

from .verify_pages import BATCH, LIMIT, _has_digests, _pages

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal


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
