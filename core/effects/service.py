"""Effects (the ctrlrun model): reserve -> begin -> commit/fail, ``ambiguous`` when
nobody knows whether it happened; only a person resolves an ambiguous effect."""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import func, select

from proctor.core import errors
from proctor.core.decisions.deciders import refuse_requester, requesters_of_effect
from proctor.core.decisions.writer import record_decision
from proctor.core.kernel.canonical import canonical_json, loads
from proctor.core.kernel.integrity import refuse_tampered
from proctor.core.kernel.origin import default_for as default_origin
from proctor.core.models import Effect, EffectStatus, Origin, Page, Receipt, SafetyClass
from proctor.core.runs.facts import receipts_of
from proctor.core.storage import schema as s
from proctor.core.storage.rows import one_where
from proctor.core.storage.sql import row_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import views as effect_views
from .rows import (
    LIVE,
    default_owner,
    effect_event,
    effect_in,
    lapsed_leases,
    make_ambiguous,
    receipt_in,
    reserve_in,
    sweep_lapsed,
    update_effect,
    write_receipt,
)
from .views import EffectQuery


class Effects:
    def __init__(self, store: Store) -> None:
        self.j = store

    def default_owner(self) -> str:
        return default_owner(self.j.actor)

    # the transaction-level steps live in effect_rows (approvals reserve through them too)
    reserve_in = staticmethod(reserve_in)
    get_in = staticmethod(effect_in)
    _make_ambiguous = staticmethod(make_ambiguous)
    _update = staticmethod(update_effect)
    _event = staticmethod(effect_event)

    # ------------------------------------------------------------ agent side
    def reserve(
        self,
        key: str,
        *,
        tool: str,
        run_id: str | None = None,
        action: Any = None,
        safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
        idempotency_key: str | None = None,
        lease_seconds: float = 30.0,
        owner: str | None = None,
        origin: Origin | dict | None = None,
    ) -> Effect:
        """Win the reservation of ``key`` (at most one caller across processes).
        ``origin``: where it comes from, stored when the key is new (the agent's word).
        The agents' own sweep: in the same transaction, any other effect whose holder's lease
        lapsed (the holder was killed mid-effect) becomes ambiguous and reaches the inbox."""
        origin_text = default_origin(self.j.actor.kind, origin)

        def op(tx: Tx) -> dict | None:
            sweep_lapsed(tx, skip=key)
            return self.reserve_in(
                tx,
                key,
                run_id=run_id,
                tool=tool,
                action=action,
                safety_class=safety_class,
                idempotency_key=idempotency_key,
                lease_seconds=lease_seconds,
                owner=owner,
                approval_id=None,
                origin=origin_text,
            )

        return self.j.write_then(op, lambda tx, row: self.get_in(tx, key, row))

    def begin(self, key: str, *, owner: str | None = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> dict | None:
            row = self._owned(tx, key, owner, (EffectStatus.RESERVED,))
            if row is None:
                return None
            written = self._update(
                tx,
                row,
                status=EffectStatus.EXECUTING.value,
                started_at=tx.now,
                lease_expires_at=tx.now + row.lease_seconds,
            )
            self._event(tx, row.run_id, "effect.started", key, {"attempt": row.attempt})
            return written

        return self.j.write_then(op, lambda tx, row: self.get_in(tx, key, row))

    def renew(
        self, key: str, *, owner: str | None = None, lease_seconds: float | None = None
    ) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> dict | None:
            row = self._owned(tx, key, owner, LIVE)
            if row is None:
                return None
            secs = lease_seconds or row.lease_seconds
            return self._update(tx, row, lease_seconds=secs, lease_expires_at=tx.now + secs)

        return self.j.write_then(op, lambda tx, row: self.get_in(tx, key, row))

    def commit(
        self,
        key: str,
        result: Any = None,
        *,
        owner: str | None = None,
        external_id: str | None = None,
        evidence: Any = None,
    ) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> dict | None:
            row = self._owned(tx, key, owner, (EffectStatus.EXECUTING,))
            if row is None:
                return None
            written = self._update(
                tx,
                row,
                status=EffectStatus.COMMITTED.value,
                result=canonical_json(result),
                lease_expires_at=None,
            )
            write_receipt(
                tx,
                row,
                "commit",
                "committed",
                external_id,
                {"result": result, "evidence": evidence},
                tx.actor.label,
            )
            self._event(
                tx,
                row.run_id,
                "effect.committed",
                key,
                {"attempt": row.attempt, "external_id": external_id},
            )
            return written

        return self.j.write_then(op, lambda tx, row: self.get_in(tx, key, row))

    def fail(self, key: str, error: str, *, owner: str | None = None) -> Effect:
        owner = owner or self.default_owner()

        def op(tx: Tx) -> dict | None:
            row = self._owned(tx, key, owner, LIVE)
            if row is None:
                return None
            written = self._update(
                tx, row, status=EffectStatus.FAILED.value, error=error, lease_expires_at=None
            )
            self._event(
                tx, row.run_id, "effect.failed", key, {"attempt": row.attempt, "error": error}
            )
            return written

        return self.j.write_then(op, lambda tx, row: self.get_in(tx, key, row))

    def record_receipt(
        self,
        key: str,
        *,
        external_id: str | None = None,
        evidence: Any = None,
        owner: str | None = None,
    ) -> Receipt:
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
            raise errors.ValidationError(
                "a receipt needs an external id or evidence", field="external_id"
            )

        def op(tx: Tx) -> str:
            row = row_where(tx.conn, s.effects, key=key)
            if row is None:
                raise errors.NotFound(f"effect {key} does not exist")
            if row.status != EffectStatus.EXECUTING:
                raise errors.InvalidTransition(
                    f"effect {key} is {row.status}; receipts so far are recorded while it executes"
                )
            if row.lease_owner != owner:
                raise errors.EffectBusy(f"effect {key} is leased by {row.lease_owner}, not {owner}")
            rid = write_receipt(
                tx, row, "progress", row.status, external_id, evidence, tx.actor.label
            )
            self._event(
                tx,
                row.run_id,
                "effect.receipt",
                key,
                {"attempt": row.attempt, "receipt_id": rid, "external_id": external_id},
            )
            if row.lease_expires_at is not None and row.lease_expires_at <= tx.now:
                self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
                tx.raise_after_commit(
                    errors.EffectAmbiguous(
                        f"effect {key}: your lease expired; the receipt is kept and the outcome "
                        "is now for a person to resolve"
                    )
                )
            return rid

        return self.j.write_then(op, receipt_in)

    def mark_ambiguous(
        self, key: str, reason: str, *, owner: str | None = None, partial_result: Any = None
    ) -> Effect:
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

    def sweep_expired(self, key: str | None = None) -> int:
        """Turn every live effect whose lease lapsed into ``ambiguous`` (``key``: only that
        one), so it reaches the inbox; how many. Reads first: nothing lapsed, nothing written
        (the desk calls it on a timer)."""
        if not self.j.read_only and not self.j.read(
            lambda c: lapsed_leases(c, self.j.now(), key, limit=1)
        ):
            return 0
        return self.j.write(lambda tx: sweep_lapsed(tx, key=key))

    # ------------------------------------------------------------ operator side
    def resolve(
        self,
        key: str,
        outcome: EffectStatus | str,
        *,
        reason: str,
        expected_version: int,
        external_id: str | None = None,
        evidence: Any = None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Effect:
        """A person says what really happened: ``committed`` or ``failed``. ``source``
        says where (desk, cli, mcp…); it is kept on the decision row."""
        self.j.require_operator()
        outcome = EffectStatus(outcome)
        if outcome not in (EffectStatus.COMMITTED, EffectStatus.FAILED):
            raise errors.ValidationError("resolve to committed or failed", field="outcome")
        if not reason or not reason.strip():
            raise errors.ValidationError(
                "a reason is required to resolve an effect", field="reason"
            )
        request = {
            "op": "effect.resolve",
            "key": key,
            "outcome": outcome.value,
            "reason": reason,
            "external_id": external_id,
            "evidence": evidence,
            "expected_version": expected_version,
            "source": source,
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = row_where(tx.conn, s.effects, key=key)
            if row is None:
                raise errors.NotFound(f"effect {key} does not exist")
            if row.status != EffectStatus.AMBIGUOUS:
                who = f" by {row.resolved_by}" if row.resolved_by else ""
                raise errors.AlreadyDecided(
                    f"effect {key} is {row.status}{who}, not ambiguous",
                    status=row.status,
                    decided_by=row.resolved_by,
                )
            if row.version != expected_version:
                raise errors.StaleVersion(f"effect {key} changed since you looked")
            refuse_tampered("effect", key, row)
            refuse_requester(
                tx, requesters_of_effect(tx.conn, row), verb="resolve", what=f"effect {key}"
            )
            self._update(
                tx,
                row,
                status=outcome.value,
                resolved_by=tx.actor.label,
                resolution_reason=reason,
                lease_expires_at=None,
            )
            body = {
                "reason": reason,
                "evidence": evidence,
                "prior_error": row.error,
                "ambiguous_reason": row.ambiguous_reason,
            }
            if loads(row.result) is not None:
                body["partial_result"] = loads(row.result)  # a retry's reserve clears it
            write_receipt(tx, row, "resolution", outcome.value, external_id, body, tx.actor.label)
            record_decision(
                tx,
                "effect",
                key,
                row.run_id,
                {"outcome": outcome.value},
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    f"effect.resolved_{outcome.value}",
                    {"status": "ambiguous", "error": row.error},
                    {"status": outcome.value, "external_id": external_id},
                ),
            )
            self._event(
                tx,
                row.run_id,
                "effect.resolved",
                key,
                {"outcome": outcome.value, "by": tx.actor.label, "reason": reason},
            )

        return self.j.write_then(op, lambda tx, _: self.get_in(tx, key))

    # ------------------------------------------------------------ reads
    def get(self, key: str) -> Effect:
        return self.j.read(lambda c: one_where(c, Effect, s.effects, f"effect {key}", key=key))

    def list(
        self,
        query: EffectQuery | None = None,
        *,
        status: builtins.list[str] | None = None,
        run_id: str | None = None,
        newest_first: bool = True,
        cursor: str | None = None,
        limit: int = 200,
    ) -> Page[Effect]:
        """Effects matching ``query`` (``effect_views.EffectQuery``; or the filters given one
        by one), keyset-paged by (created, key): the one effect listing (the desk's Effects
        page, ``proctor effects``, the integrations' recovery sweeps)."""
        q = query or EffectQuery(
            statuses=frozenset(EffectStatus(x) for x in status or ()),
            run_id=run_id,
            newest_first=newest_first,
        )
        return self.j.read(lambda c: effect_views.browse(c, q, self.j.now(), cursor, limit))

    def browse(
        self, query: EffectQuery | None = None, *, cursor: str | None = None, limit: int = 200
    ) -> Page[Effect]:
        """``list(query)`` (the name the desk's Effects page knew it by)."""
        return self.list(query or EffectQuery(), cursor=cursor, limit=limit)

    def context(self, key: str) -> Any:
        """The effect with its receipts, run, approval and tool call
        (``effect_views.EffectContext``)."""
        return effect_views.context(self.j, key)

    def count(self, status: str = "ambiguous") -> int:
        stmt = select(func.count()).select_from(s.effects).where(s.effects.c.status == status)
        return self.j.read(lambda c: int(c.execute(stmt).scalar_one()))

    def receipts(self, key: str) -> builtins.list[Receipt]:
        return self.j.read(lambda c: receipts_of(c, [key])[key])

    # ------------------------------------------------------------ helpers
    def _owned(self, tx: Tx, key: str, owner: str, allowed: tuple) -> Any:
        """The effect row when ``owner`` may move it on. A holder whose lease lapsed always
        learns it the same way, ``EffectAmbiguous``, whoever touched the row first: the
        lapse itself (then this call writes the ambiguity), a sweep or another worker's
        reserve (the row is already ambiguous), or a person who has resolved it since."""
        row = tx.row_with_run(s.effects, key=key)
        if row is None:
            raise errors.NotFound(f"effect {key} does not exist")
        if row.status == EffectStatus.AMBIGUOUS:
            raise errors.EffectAmbiguous(
                f"effect {key} is ambiguous ({row.ambiguous_reason}); the outcome is now for "
                "a person to resolve"
            )
        if (
            row.resolved_by is not None
            and row.lease_owner == owner
            and row.status in (EffectStatus.COMMITTED, EffectStatus.FAILED)
        ):
            raise errors.EffectAmbiguous(
                f"effect {key} lost its lease and was resolved {row.status} by "
                f"{row.resolved_by}; what you report now is not recorded"
            )
        if row.status not in allowed:
            raise errors.InvalidTransition(f"effect {key} is {row.status}")
        refuse_tampered("effect", key, row)
        if row.lease_owner != owner:
            raise errors.EffectBusy(f"effect {key} is leased by {row.lease_owner}, not {owner}")
        if row.lease_expires_at is not None and row.lease_expires_at <= tx.now:
            self._make_ambiguous(tx, row, "lease expired before the outcome was recorded")
            tx.raise_after_commit(
                errors.EffectAmbiguous(
                    f"effect {key}: your lease expired; the outcome is now for a person to resolve"
                )
            )
            return None
        return row
