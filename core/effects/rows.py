"""An effect's rows inside one write transaction: the reservation (what ``effects.reserve``
and ``approvals.consume_and_reserve`` share), its updates and run events, and receipts."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import bindparam, or_, select

from proctor.core import errors
from proctor.core.decisions.deciders import agent_name
from proctor.core.kernel.canonical import canonical_json, digest_of, sha256_hex
from proctor.core.kernel.integrity import receipt_digest_body, refuse_tampered
from proctor.core.models import Actor, ChangeKind, Effect, EffectStatus, Receipt, SafetyClass
from proctor.core.storage import schema as s
from proctor.core.storage.rows import as_written, inserted_row, one_where, written_row
from proctor.core.storage.sql import Prepared, insert_rows, update_where
from proctor.core.storage.tx import Tx

LIVE = (EffectStatus.RESERVED, EffectStatus.EXECUTING)


def default_owner(actor: Actor) -> str:
    """Who holds a lease when the caller names nobody: the actor, in this process."""
    return f"{actor.name}@{os.getpid()}"


def reserve_in(
    tx: Tx,
    key: str,
    *,
    run_id: str | None,
    tool: str,
    action: Any,
    safety_class: SafetyClass | str,
    idempotency_key: str | None,
    lease_seconds: float,
    owner: str | None,
    approval_id: str | None,
    origin: str | None = None,
    then: tuple[str, str, dict] | None = None,
    action_text: str | None = None,
) -> dict | None:
    """Reserve inside ``tx``: the effect's row as written. Returns None when refused with a
    write that must survive (a lapsed lease turned ambiguous); raises when refused without
    writing. ``then``: the caller's own event (run id, type, payload), appended right after
    the reservation's (in the same statement when both go to one run); not appended when
    the reservation is refused. ``action_text``: ``canonical_json(action)``, when the caller
    holds it (an approval's stored canonical text)."""
    if lease_seconds <= 0:
        raise errors.ValidationError("the lease must be positive", field="lease_seconds")
    owner = owner or default_owner(tx.actor)
    safety = SafetyClass(safety_class).value
    row = tx.row_beside_run(s.effects, run_id, key=key)
    values = dict(
        status=EffectStatus.RESERVED.value,
        lease_owner=owner,
        lease_seconds=lease_seconds,
        lease_expires_at=tx.now + lease_seconds,
        approval_id=approval_id,
        updated_at=tx.now,
        error=None,
        result=None,
        started_at=None,
    )
    if row is None:
        if run_id is not None:
            tx.live_run(run_id)
        text = action_text if action_text is not None else canonical_json(action)
        new = dict(
            key=key,
            run_id=run_id,
            attempt=1,
            tool=tool,
            action=text,
            action_digest=sha256_hex(text),
            safety_class=safety,
            idempotency_key=idempotency_key,
            version=1,
            created_at=tx.now,
            agent=agent_name(tx),
            origin=origin,
            **values,
        )
        insert_rows(tx.conn, s.effects, [new])
        tx.changed(
            ChangeKind.EFFECT, key, run_id
        )  # the Effects page lists it live (it reads no events)
        effect_event(tx, run_id, "effect.reserved", key, {"attempt": 1, "owner": owner}, then=then)
        return inserted_row(s.effects, new)
    if tx.store.trust is not None:
        from proctor.core.decisions.checks import check_effect

        check_effect(tx.conn, tx.store.trust, row)
    if row.status == EffectStatus.COMMITTED:
        raise errors.EffectCommitted(f"effect {key} already committed; it never runs again")
    if row.status == EffectStatus.AMBIGUOUS:
        raise errors.EffectAmbiguous(f"effect {key} is ambiguous and waits for a person")
    if row.status in LIVE:
        if row.lease_expires_at is not None and row.lease_expires_at > tx.now:
            raise errors.EffectBusy(f"effect {key} is leased by {row.lease_owner}")
        make_ambiguous(tx, row, "lease expired before the outcome was recorded")
        tx.raise_after_commit(
            errors.EffectAmbiguous(
                f"effect {key}: the previous lease of {row.lease_owner} expired mid-flight; "
                "the outcome is unknown and a person must resolve it"
            )
        )
        return None
    # failed: may be retried as the next attempt, which starts with nothing of the last one
    # on the row (its outcome, "unknown" reason and resolution stay in the receipts,
    # decisions and events), for a run that is still live (the same check as a new key:
    # a retry never starts on an ended run)
    for rid in {run_id, row.run_id} - {None}:
        tx.live_run(rid)
    refuse_tampered("effect", key, row)
    written = update_effect(
        tx,
        row,
        attempt=row.attempt + 1,
        ambiguous_reason=None,
        resolved_by=None,
        resolution_reason=None,
        **values,
    )
    effect_event(
        tx,
        row.run_id,
        "effect.reserved",
        key,
        {"attempt": row.attempt + 1, "owner": owner},
        then=then,
    )
    return written


def effect_in(tx: Tx, key: str, written: dict | None = None) -> Effect:
    """The effect as the write transaction ``tx`` sees it (what a write returns): built from
    ``written`` (its row as this transaction last wrote it) when given, else read."""
    if written is not None:
        effect = as_written(Effect, written)
        if effect is not None:
            return effect
    return one_where(tx.conn, Effect, s.effects, f"effect {key}", key=key)


LAPSED = "lease expired before the outcome was recorded"
SWEEP_LIMIT = 100  # lapsed leases turned ambiguous per transaction (the rest by the next)


def _lapsed(one: bool) -> Prepared:
    """The live effects whose lease ran out, soonest lapsed first (``one``: of one key),
    compiled once: ``effects.reserve`` sends it in every reservation."""
    e = s.effects.c
    query = select(s.effects).where(
        or_(*(e.status == bindparam(f"live_{i}") for i in range(len(LIVE)))),
        e.lease_expires_at <= bindparam("now"),
    )
    if one:
        query = query.where(e.key == bindparam("key"))
    return Prepared(query.order_by(e.lease_expires_at).limit(bindparam("limit")))


LAPSED_ANY, LAPSED_ONE = _lapsed(False), _lapsed(True)
_LIVE_VALUES = {f"live_{i}": st.value for i, st in enumerate(LIVE)}


def lapsed_leases(conn: Any, now: float, key: str | None = None, limit: int = SWEEP_LIMIT) -> list:
    """Live effects (reserved, executing) whose lease ran out: their holder stopped (killed,
    crashed, hung) before it said what happened. ``key``: only that effect."""
    if key is None:
        return LAPSED_ANY.all(conn, now=now, limit=limit, **_LIVE_VALUES)
    return LAPSED_ONE.all(conn, now=now, key=key, limit=limit, **_LIVE_VALUES)


def sweep_lapsed(tx: Tx, *, skip: str | None = None, key: str | None = None) -> int:
    """Turn lapsed leases ambiguous in ``tx`` (each with its audit row and event, by
    ``system:recovery``), so each reaches the inbox and waits for a person. ``skip``: a key
    the caller handles itself."""
    rows = [r for r in lapsed_leases(tx.conn, tx.now, key) if r.key != skip]
    for row in rows:
        make_ambiguous(tx, row, LAPSED)
    return len(rows)


def make_ambiguous(tx: Tx, row: Any, reason: str, partial_result: Any = None) -> None:
    values: dict[str, Any] = {}
    payload: dict[str, Any] = {"attempt": row.attempt, "reason": reason}
    if partial_result is not None:
        values["result"] = canonical_json(partial_result)
        payload["partial_result"] = partial_result
    update_effect(
        tx,
        row,
        status=EffectStatus.AMBIGUOUS.value,
        ambiguous_reason=reason,
        lease_expires_at=None,
        **values,
    )
    tx.audit(
        "effect.ambiguous",
        "effect",
        row.key,
        run_id=row.run_id,
        actor="system:recovery",
        before={"status": row.status},
        after={"status": "ambiguous"},
        reason=reason,
    )
    effect_event(tx, row.run_id, "effect.ambiguous", row.key, payload, actor="system:recovery")


def update_effect(tx: Tx, row: Any, **values: Any) -> dict:
    """UPDATE ``row`` (as read in ``tx``) with ``values``; the row as now stored."""
    values = {"version": row.version + 1, "updated_at": tx.now, **values}
    done = update_where(tx.conn, s.effects, values, key=row.key, version=row.version)
    if done != 1:
        raise errors.StaleVersion(f"effect {row.key} changed meanwhile")
    tx.changed(ChangeKind.EFFECT, row.key, row.run_id)
    return written_row(row, values)


def effect_event(
    tx: Tx,
    run_id: str | None,
    type_: str,
    key: str,
    payload: dict,
    actor: str | None = None,
    then: tuple[str, str, dict] | None = None,
) -> None:
    """The effect's run event (none once its run has ended: the effect outlives its run;
    the audit row is the record), then ``then`` (run id, type, payload), if any."""
    body = {"effect_key": key, **payload}
    run = tx.run_row(run_id) if run_id is not None else None
    if run is not None and run.status in ("completed", "failed", "cancelled"):
        run = None
    if then is not None and run is not None and then[0] == run_id and actor is None:
        tx.append_events(
            run,
            [
                (type_, body, tx.new_id("evt"), canonical_json(body)),
                (then[1], then[2], tx.new_id("evt"), canonical_json(then[2])),
            ],
        )
        return
    if run is not None:
        tx.append_event(run, type_, body, actor=actor)
    if then is not None:
        tx.run_event(then[0], then[1], then[2])


def receipt_in(tx: Tx, receipt_id: str) -> Receipt:
    """The receipt as the write transaction ``tx`` sees it."""
    return one_where(tx.conn, Receipt, s.receipts, f"receipt {receipt_id}", id=receipt_id)


def write_receipt(
    tx: Tx, row: Any, kind: str, status: str, external_id: str | None, evidence: Any, actor: str
) -> str:
    rid = tx.new_id("rcp")
    receipt = dict(
        id=rid,
        effect_key=row.key,
        run_id=row.run_id,
        kind=kind,
        status=status,
        external_id=external_id,
        evidence=evidence,
        actor=actor,
        created_at=tx.now,
    )
    receipt.update(
        digest=digest_of(receipt_digest_body(receipt)), evidence=canonical_json(evidence)
    )
    insert_rows(tx.conn, s.receipts, [receipt])
    tx.changed(ChangeKind.RECEIPT, rid, row.run_id)
    return rid
