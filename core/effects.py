"""Effects (the ctrlrun model): reserve -> begin -> commit/fail, ``ambiguous`` when
nobody knows whether it happened; only a person resolves an ambiguous effect."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import func, select

from . import errors
from . import schema as s
from .canonical import canonical_json, digest_of, loads, sha256_hex
from .deciders import agent_name, refuse_requester, requesters_of_effect
from .integrity import receipt_digest_body, refuse_tampered
from .journal import Journal
from .models import Effect, EffectStatus, Origin, Page, Receipt, SafetyClass
from .origin import default_for as default_origin
from .rows import by_id, fetch_prepared, keyset_after, order_by, to_models
from .sql import insert_rows, row_where, update_where
from .tx import Tx

LIVE = (EffectStatus.RESERVED, EffectStatus.EXECUTING)
EFFECT_BY_KEY = by_id(select(s.effects), s.effects.c.key)
RECEIPT_BY_ID = by_id(select(s.receipts), s.receipts.c.id)


class Effects:
    def __init__(self, journal: Journal) -> None:
        self.j = journal

    def default_owner(self) -> str:
        return f"{self.j.actor.name}@{os.getpid()}"

    # ------------------------------------------------------------ agent side
    def reserve(self, key: str, *, tool: str, run_id: str | None = None, action: Any = None,
                safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
                idempotency_key: str | None = None, lease_seconds: float = 30.0,
                owner: str | None = None, origin: Origin | dict | None = None) -> Effect:
        """Win the reservation of ``key`` (at most one caller across processes).
        ``origin``: where it comes from, stored when the key is new (the agent's word)."""
        origin_text = default_origin(self.j.actor.kind, origin)

        def op(tx: Tx) -> None:
            self.reserve_in(tx, key, run_id=run_id, tool=tool, action=action,
                            safety_class=safety_class, idempotency_key=idempotency_key,
                            lease_seconds=lease_seconds, owner=owner, approval_id=None,
                            origin=origin_text)

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def reserve_in(self, tx: Tx, key: str, *, run_id: str | None, tool: str, action: Any,
                   safety_class: SafetyClass | str, idempotency_key: str | None,
                   lease_seconds: float, owner: str | None, approval_id: str | None,
                   origin: str | None = None) -> bool:
        """Reserve inside ``tx``. Returns False when refused with a write that must survive
        (a lapsed lease turned ambiguous); raises when refused without writing."""
        if lease_seconds <= 0:
            raise errors.ValidationError("the lease must be positive", field="lease_seconds")
        owner = owner or self.default_owner()
        safety = SafetyClass(safety_class).value
        row = row_where(tx.conn, s.effects, key=key)
        values = dict(status=EffectStatus.RESERVED.value, lease_owner=owner,
                      lease_seconds=lease_seconds, lease_expires_at=tx.now + lease_seconds,
                      approval_id=approval_id, updated_at=tx.now, error=None, result=None,
                      started_at=None)
        if row is None:
            if run_id is not None:
                tx.live_run(run_id)
            text = canonical_json(action)
            insert_rows(tx.conn, s.effects, [dict(
                key=key, run_id=run_id, attempt=1, tool=tool, action=text,
                action_digest=sha256_hex(text), safety_class=safety, idempotency_key=idempotency_key, version=1,
                created_at=tx.now, agent=agent_name(tx), origin=origin, **values)])
            self._event(tx, run_id, "effect.reserved", key, {"attempt": 1, "owner": owner})
            return True
        if self.j.trust is not None:
            from .decision_checks import check_effect

            check_effect(tx.conn, self.j.trust, row)
        if row.status == EffectStatus.COMMITTED:
            raise errors.EffectCommitted(f"effect {key} already committed; it never runs again")
        if row.status == EffectStatus.AMBIGUOUS:
            raise errors.EffectAmbiguous(f"effect {key} is ambiguous and waits for a person")
        if row.status in LIVE:
            if row.lease_expires_at is not None and row.lease_expires_at > tx.now:
                raise errors.EffectBusy(f"effect {key} is leased by {row.lease_owner}")
            self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
            tx.raise_after_commit(errors.EffectAmbiguous(
                f"effect {key}: the previous lease of {row.lease_owner} expired mid-flight; "
                "the outcome is unknown and a person must resolve it"))
            return False
        # failed: may be retried as the next attempt, which starts with nothing of the last one
        # on the row (its outcome, "unknown" reason and resolution stay in the receipts,
        # decisions and events), for a run that is still live (the same check as a new key:
        # a retry never starts on an ended run)
        for rid in {run_id, row.run_id} - {None}:
            tx.live_run(rid)
        refuse_tampered("effect", key, row)
        self._update(tx, row, attempt=row.attempt + 1, ambiguous_reason=None, resolved_by=None,
                     resolution_reason=None, **values)
        self._event(tx, row.run_id, "effect.reserved", key,
                    {"attempt": row.attempt + 1, "owner": owner})
        return True

    def begin(self, key: str, *, owner: str | None = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> None:
            row = self._owned(tx, key, owner, (EffectStatus.RESERVED,))
            if row is None:
                return
            self._update(tx, row, status=EffectStatus.EXECUTING.value, started_at=tx.now,
                         lease_expires_at=tx.now + row.lease_seconds)
            self._event(tx, row.run_id, "effect.started", key, {"attempt": row.attempt})

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def renew(self, key: str, *, owner: str | None = None,
              lease_seconds: float | None = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> None:
            row = self._owned(tx, key, owner, LIVE)
            if row is None:
                return
            secs = lease_seconds or row.lease_seconds
            self._update(tx, row, lease_seconds=secs, lease_expires_at=tx.now + secs)

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def commit(self, key: str, result: Any = None, *, owner: str | None = None,
               external_id: str | None = None, evidence: Any = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> None:
            row = self._owned(tx, key, owner, (EffectStatus.EXECUTING,))
            if row is None:
                return
            self._update(tx, row, status=EffectStatus.COMMITTED.value,
                         result=canonical_json(result), lease_expires_at=None)
            write_receipt(tx, row, "commit", "committed", external_id,
                          {"result": result, "evidence": evidence}, tx.actor.label)
            self._event(tx, row.run_id, "effect.committed", key,
                        {"attempt": row.attempt, "external_id": external_id})

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def fail(self, key: str, error: str, *, owner: str | None = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> None:
            row = self._owned(tx, key, owner, LIVE)
            if row is None:
                return
            self._update(tx, row, status=EffectStatus.FAILED.value, error=error,
                         lease_expires_at=None)
            self._event(tx, row.run_id, "effect.failed", key,
                        {"attempt": row.attempt, "error": error})

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def record_receipt(self, key: str, *, external_id: str | None = None,
                       evidence: Any = None, owner: str | None = None) -> Receipt:
        """The lease holder records what it knows so far about an executing effect (a
        provider's request id, a partial response), before the outcome is known: an
        immutable receipt of kind ``progress``, a run event (unless the run has ended) and a
        change-feed row, in one transaction. If the operator later has to resolve the
        effect, these receipts are the evidence they see.

        A holder whose lease just lapsed still has its receipt kept (it is the best evidence
        there will be); the effect becomes ambiguous in the same transaction and
        ``EffectAmbiguous`` is raised after the commit."""
        owner = owner or self.default_owner()
        if external_id is None and evidence is None:
            raise errors.ValidationError("a receipt needs an external id or evidence",
                                         field="external_id")

        def op(tx: Tx) -> str:
            row = row_where(tx.conn, s.effects, key=key)
            if row is None:
                raise errors.NotFound(f"effect {key} does not exist")
            if row.status != EffectStatus.EXECUTING:
                raise errors.InvalidTransition(
                    f"effect {key} is {row.status}; receipts so far are recorded while it "
                    "executes")
            if row.lease_owner != owner:
                raise errors.EffectBusy(
                    f"effect {key} is leased by {row.lease_owner}, not {owner}")
            rid = write_receipt(tx, row, "progress", row.status, external_id, evidence,
                                tx.actor.label)
            self._event(tx, row.run_id, "effect.receipt", key,
                        {"attempt": row.attempt, "receipt_id": rid,
                         "external_id": external_id})
            if row.lease_expires_at is not None and row.lease_expires_at <= tx.now:
                self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
                tx.raise_after_commit(errors.EffectAmbiguous(
                    f"effect {key}: your lease expired; the receipt is kept and the outcome "
                    "is now for a person to resolve"))
            return rid

        return self.j.write_then(op, receipt_in)

    def mark_ambiguous(self, key: str, reason: str, *, owner: str | None = None,
                       partial_result: Any = None) -> Effect:
        """The caller lost track of the outcome (timeout, unknown response).
        ``partial_result``: what the tool returned before it lost track (kept as the
        effect's result, shown to the operator as the partial result, and in the
        ``effect.ambiguous`` event)."""
        owner = owner or self.default_owner()

        def op(tx: Tx) -> None:
            row = self._owned(tx, key, owner, LIVE)
            if row is not None:
                self._make_ambiguous(tx, row, reason, partial_result)

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    def sweep_expired(self) -> int:
        """Turn every live effect whose lease lapsed into ``ambiguous``."""

        def op(tx: Tx) -> int:
            rows = tx.conn.execute(select(s.effects).where(
                s.effects.c.status.in_([st.value for st in LIVE]),
                s.effects.c.lease_expires_at <= tx.now).limit(500)).all()
            for row in rows:
                self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
            return len(rows)

        return self.j.write(op)

    # ------------------------------------------------------------ operator side
    def resolve(self, key: str, outcome: EffectStatus | str, *, reason: str,
                expected_version: int, external_id: str | None = None,
                evidence: Any = None, request_id: str | None = None,
                source: str = "desk") -> Effect:
        """A person says what really happened: ``committed`` or ``failed``. ``source``
        says where (desk, cli, mcp…); it is kept on the decision row."""
        self.j.require_operator()
        outcome = EffectStatus(outcome)
        if outcome not in (EffectStatus.COMMITTED, EffectStatus.FAILED):
            raise errors.ValidationError("resolve to committed or failed", field="outcome")
        if not reason or not reason.strip():
            raise errors.ValidationError("a reason is required to resolve an effect",
                                         field="reason")
        request = {"op": "effect.resolve", "key": key, "outcome": outcome.value,
                   "reason": reason, "external_id": external_id, "evidence": evidence,
                   "expected_version": expected_version, "source": source}

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = row_where(tx.conn, s.effects, key=key)
            if row is None:
                raise errors.NotFound(f"effect {key} does not exist")
            if row.status != EffectStatus.AMBIGUOUS:
                who = f" by {row.resolved_by}" if row.resolved_by else ""
                raise errors.AlreadyDecided(f"effect {key} is {row.status}{who}, not ambiguous",
                                            status=row.status, decided_by=row.resolved_by)
            if row.version != expected_version:
                raise errors.StaleVersion(f"effect {key} changed since you looked")
            refuse_tampered("effect", key, row)
            refuse_requester(tx, requesters_of_effect(tx.conn, row), verb="resolve",
                             what=f"effect {key}")
            self._update(tx, row, status=outcome.value, resolved_by=tx.actor.label,
                         resolution_reason=reason, lease_expires_at=None)
            body = {"reason": reason, "evidence": evidence, "prior_error": row.error,
                    "ambiguous_reason": row.ambiguous_reason}
            if loads(row.result) is not None:
                body["partial_result"] = loads(row.result)  # a retry's reserve clears it
            write_receipt(tx, row, "resolution", outcome.value, external_id, body,
                          tx.actor.label)
            from .approvals import write_decision

            write_decision(tx, "effect", key, row.run_id, {"outcome": outcome.value},
                           actor=tx.actor.label, source=source, reason=reason,
                           request_id=request_id)
            tx.audit(f"effect.resolved_{outcome.value}", "effect", key, run_id=row.run_id,
                     before={"status": "ambiguous", "error": row.error},
                     after={"status": outcome.value, "external_id": external_id},
                     reason=reason, request_id=request_id, request=request)
            self._event(tx, row.run_id, "effect.resolved", key,
                        {"outcome": outcome.value, "by": tx.actor.label, "reason": reason})

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    # ------------------------------------------------------------ reads
    def get(self, key: str) -> Effect:
        return self.j.read(lambda c: fetch_prepared(c, Effect, EFFECT_BY_KEY, f"effect {key}",
                                                    key=key))

    @staticmethod
    def get_in(tx: Tx, key: str) -> Effect:
        """The effect as the write transaction ``tx`` sees it (what a write returns)."""
        return fetch_prepared(tx.conn, Effect, EFFECT_BY_KEY, f"effect {key}", key=key)

    def list(self, *, status: list[str] | None = None, run_id: str | None = None,
             newest_first: bool = True, cursor: str | None = None,
             limit: int = 200) -> Page[Effect]:
        from .runs import page_of

        e = s.effects.c
        conds = [c for c in (e.status.in_(status) if status else None,
                             e.run_id == run_id if run_id else None,
                             keyset_after(e.created_at, e.key, cursor, newest_first))
                 if c is not None]
        stmt = select(s.effects).where(*conds).order_by(
            *order_by(e.created_at, e.key, newest_first)).limit(limit + 1)
        rows = self.j.read(lambda c: c.execute(stmt).all())
        return page_of(Effect, rows, limit, lambda m: (m.created_at, m.key))

    def browse(self, query: Any = None, *, cursor: str | None = None,
               limit: int = 200) -> Page[Effect]:
        """Filtered, keyset-paged effects (``effect_views.EffectQuery``)."""
        from . import effect_views

        return effect_views.browse(self.j, query or effect_views.EffectQuery(), self.j.now(),
                                   cursor, limit)

    def context(self, key: str) -> Any:
        """The effect with its receipts, run, approval and tool call
        (``effect_views.EffectContext``)."""
        from . import effect_views

        return effect_views.context(self.j, key)

    def count(self, status: str = "ambiguous") -> int:
        stmt = select(func.count()).select_from(s.effects).where(s.effects.c.status == status)
        return self.j.read(lambda c: int(c.execute(stmt).scalar_one()))

    def receipts(self, key: str) -> list[Receipt]:
        stmt = select(s.receipts).where(s.receipts.c.effect_key == key).order_by(
            s.receipts.c.created_at, s.receipts.c.id)
        return self.j.read(lambda c: to_models(Receipt, c.execute(stmt)))

    # ------------------------------------------------------------ helpers
    def _owned(self, tx: Tx, key: str, owner: str, allowed: tuple) -> Any:
        """The effect row when ``owner`` may move it on. A holder whose lease lapsed always
        learns it the same way, ``EffectAmbiguous``, whoever touched the row first: the
        lapse itself (then this call writes the ambiguity), a sweep or another worker's
        reserve (the row is already ambiguous), or a person who has resolved it since."""
        row = row_where(tx.conn, s.effects, key=key)
        if row is None:
            raise errors.NotFound(f"effect {key} does not exist")
        if row.status == EffectStatus.AMBIGUOUS:
            raise errors.EffectAmbiguous(
                f"effect {key} is ambiguous ({row.ambiguous_reason}); the outcome is now for "
                "a person to resolve")
        if row.resolved_by is not None and row.lease_owner == owner and \
                row.status in (EffectStatus.COMMITTED, EffectStatus.FAILED):
            raise errors.EffectAmbiguous(
                f"effect {key} lost its lease and was resolved {row.status} by "
                f"{row.resolved_by}; what you report now is not recorded")
        if row.status not in allowed:
            raise errors.InvalidTransition(f"effect {key} is {row.status}")
        refuse_tampered("effect", key, row)
        if row.lease_owner != owner:
            raise errors.EffectBusy(f"effect {key} is leased by {row.lease_owner}, not {owner}")
        if row.lease_expires_at is not None and row.lease_expires_at <= tx.now:
            self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
            tx.raise_after_commit(errors.EffectAmbiguous(
                f"effect {key}: your lease expired; the outcome is now for a person to resolve"))
            return None
        return row

    def _make_ambiguous(self, tx: Tx, row: Any, reason: str,
                        partial_result: Any = None) -> None:
        values: dict[str, Any] = {}
        payload: dict[str, Any] = {"attempt": row.attempt, "reason": reason}
        if partial_result is not None:
            values["result"] = canonical_json(partial_result)
            payload["partial_result"] = partial_result
        self._update(tx, row, status=EffectStatus.AMBIGUOUS.value, ambiguous_reason=reason,
                     lease_expires_at=None, **values)
        tx.audit("effect.ambiguous", "effect", row.key, run_id=row.run_id,
                 actor="system:recovery", before={"status": row.status},
                 after={"status": "ambiguous"}, reason=reason)
        self._event(tx, row.run_id, "effect.ambiguous", row.key, payload,
                    actor="system:recovery")

    @staticmethod
    def _update(tx: Tx, row: Any, **values: Any) -> None:
        done = update_where(tx.conn, s.effects, {"version": row.version + 1,
                                                 "updated_at": tx.now, **values},
                            key=row.key, version=row.version)
        if done != 1:
            raise errors.StaleVersion(f"effect {row.key} changed meanwhile")
        tx.changed("effect", row.key, row.run_id)

    @staticmethod
    def _event(tx: Tx, run_id: str | None, type_: str, key: str, payload: dict,
               actor: str | None = None) -> None:
        if run_id is None:
            return
        run = tx.run_row(run_id)
        if run.status in ("completed", "failed", "cancelled"):
            return  # the effect outlives its run; the audit row is the record
        tx.append_event(run, type_, {"effect_key": key, **payload}, actor=actor)


def receipt_in(tx: Tx, receipt_id: str) -> Receipt:
    """The receipt as the write transaction ``tx`` sees it."""
    return fetch_prepared(tx.conn, Receipt, RECEIPT_BY_ID, f"receipt {receipt_id}",
                          key=receipt_id)


def write_receipt(tx: Tx, row: Any, kind: str, status: str, external_id: str | None,
                  evidence: Any, actor: str) -> str:
    rid = tx.new_id("rcp")
    receipt = dict(id=rid, effect_key=row.key, run_id=row.run_id, kind=kind, status=status,
                   external_id=external_id, evidence=evidence, actor=actor, created_at=tx.now)
    receipt.update(digest=digest_of(receipt_digest_body(receipt)),
                   evidence=canonical_json(evidence))
    insert_rows(tx.conn, s.receipts, [receipt])
    tx.changed("receipt", rid, row.run_id)
    return rid
