"""Approvals: an agent asks before it acts; a person (or a rule) decides; the agent
consumes the approval exactly once, for exactly the action that was approved.

One service, its standing rules included: a rule is made from a decision or by hand (with a
draft, its impact preview and apply-to-pending in one transaction), matched in the request
transaction, listed with its use and revoked with a reason (``rules.py`` has what a rule
is and how rules are ordered)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.deciders import refuse_requester
from proctor.core.decisions.signing import RULE, RULE_REVOKE, rule_content, sign_in
from proctor.core.decisions.writer import (
    CONSUME_WINDOW,
    LIVE_RULES,
    MAX_REASON,
    action_name,
    action_resource,
    approval_after,
    approval_in,
    approved_action_of,
    canonical_json_loads,
    check_edit,
    check_input_schema,
    consume_deadline,
    decisions_for,
    insert_decision_row,
    json_changes,
    record_decision,
    requester,
    safety_counts,
)
from proctor.core.effects.rows import effect_in, reserve_in
from proctor.core.kernel.canonical import canonical_json, digest_of, sha256_hex
from proctor.core.kernel.integrity import refuse_tampered
from proctor.core.kernel.limits import check_text, hold_seconds
from proctor.core.kernel.origin import default_for as default_origin
from proctor.core.models import (
    ActorKind,
    Approval,
    ApprovalRule,
    ApprovalScope,
    ApprovalStatus,
    BulkResult,
    ChangeKind,
    Decision,
    Effect,
    OnExpiry,
    Origin,
    RuleDraft,
    RuleEffect,
    RuleMade,
    RulePreview,
    RuleUsage,
    SafetyClass,
)
from proctor.core.policies import escalation
from proctor.core.policies import steps as policy_steps
from proctor.core.policies.trust import check_quorum
from proctor.core.runs.facts import approvals_of
from proctor.core.storage import schema as s
from proctor.core.storage import waiter
from proctor.core.storage.items import status_after_closing, status_when_opening
from proctor.core.storage.rows import (
    approval_select,
    fetch_one,
    inserted_row,
    to_model,
    to_models,
    written_row,
)
from proctor.core.storage.sql import filed_by_this_login, insert_rows, row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import rules as rules_mod

FOUND_CHUNK = 500  # ids per read in ``Approvals.found`` (well under SQLite's bound variables)


def _found_in(conn: Any, *, ids: list[str]) -> dict[str, Approval | errors.Damaged]:
    out: dict[str, Approval | errors.Damaged] = {}
    for row in conn.execute(approval_select().where(s.approvals.c.id.in_(ids))):
        try:
            out[row.id] = to_model(Approval, row)
        except errors.Damaged as err:  # its JSON does not parse: this row alone
            out[row.id] = err
    return out


# what an agent's wait stamps (core/storage/waiter.py adds a decision still in its hold)
WAITED = ("pending",)


class Approvals:
    def __init__(self, store: Store) -> None:
        self.j = store

    # ------------------------------------------------------------ agent side
    def request(
        self,
        run_id: str,
        action: dict,
        *,
        reason: str,
        safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
        requested_scope: ApprovalScope | str = ApprovalScope.ONCE,
        expires_in: float | None = None,
        expires_at: float | None = None,
        on_expiry: OnExpiry | str = OnExpiry.DENY,
        request_key: str | None = None,
        tool_call_id: str | None = None,
        input_schema: dict | None = None,
        origin: Origin | dict | None = None,
    ) -> Approval:
        """Ask for approval of ``action``. Idempotent by ``request_key``. A matching
        allow/deny rule decides at once (recorded as an automatic decision).
        ``input_schema``: the JSON Schema of ``action["args"]``, if the tool has one (an
        operator's edit of the arguments is validated against it). ``origin``: where the
        request comes from (default: this Python process); stored as the agent's word, in no
        digest, so a retry from another process rejoins the request."""
        name = action_name(action)
        # each as its text, checked once
        safety, scope, expiry = (
            SafetyClass(safety_class).value,
            ApprovalScope(requested_scope).value,
            OnExpiry(on_expiry).value,
        )
        action_text = canonical_json(action)  # serialised (and checked) once
        adigest = sha256_hex(action_text)
        check_text(reason, "the reason", "reason", MAX_REASON, required=False)
        # every field of what is asked is in the digest; the tool call that carried the
        # request is not what is asked: a host that retries makes a new tool call for the
        # same request, which rejoins it (the approval keeps the first call's id)
        request = {
            "run_id": run_id,
            "action_digest": adigest,
            "reason": reason,
            "safety_class": safety,
            "scope": scope,
            "expires_in": expires_in,
            "expires_at": expires_at,
            "on_expiry": expiry,
        }
        if input_schema is not None:
            check_input_schema(input_schema)
            request["input_schema"] = digest_of(input_schema)

        origin_text = default_origin(self.j.actor.kind, origin)

        def op(tx: Tx) -> tuple[str, dict | None]:
            key = request_key or tx.new_id("req")
            row = tx.row_beside_run(s.approvals, run_id, request_key=key)
            if row is not None:
                if row.request_digest != digest_of(request):
                    raise errors.IdempotencyConflict(
                        f"approval request {key!r} was filed before with other content"
                    )
                return row.id, None
            run = tx.open_run(run_id)
            aid = tx.new_id("apr")
            exp = (
                expires_at
                if expires_at is not None
                else (tx.now + expires_in if expires_in is not None else None)
            )
            new = dict(
                id=aid,
                run_id=run_id,
                attempt=run.current_attempt,
                agent=requester(tx, run),
                tool_call_id=tool_call_id,
                action=action_text,
                action_name=name,
                action_digest=adigest,
                safety_class=safety,
                reason=reason,
                requested_scope=scope,
                status="pending",
                on_expiry=expiry,
                expires_at=exp,
                request_key=key,
                request_digest=digest_of(request),
                version=1,
                created_at=tx.now,
                input_schema=None if input_schema is None else canonical_json(input_schema),
                origin=origin_text,
            )
            insert_rows(tx.conn, s.approvals, [new])
            tx.changed(ChangeKind.APPROVAL, aid, run_id)
            rule = self._matching_rule(tx, action, run)
            if policy_steps.bind_in(tx, aid, action, run, safety) and rule is not None:
                rule = rule if rule.effect == RuleEffect.DENY else None  # the policy decides
            payload = {
                "approval_id": aid,
                "action": name,
                "action_digest": adigest,
                "safety_class": safety,
                "expires_at": exp,
                # where the agent said it came from, fixed in the chain (verify compares it)
                "origin_digest": None if origin_text is None else sha256_hex(origin_text),
            }
            if rule is None or rule.effect == RuleEffect.PROMPT:
                tx.append_event(run, "approval.requested", payload, status=status_when_opening(run))
                return aid, inserted_row(s.approvals, new)
            tx.append_event(run, "approval.requested", payload)
            self._auto_decide(tx, aid, rule)
            return aid, None  # decided since: read as stored

        return self.j.write_then(op, lambda tx, made: approval_after(tx, *made))

    def _auto_decide(self, tx: Tx, aid: str, rule: Any, applied_by: str | None = None) -> None:
        """Decide ``aid`` by ``rule``: as the request arrives, or (``applied_by``: the
        operator) when a rule just made is applied to a pending request."""
        approve = rule.effect == RuleEffect.ALLOW
        status = "approved" if approve else "denied"
        who = f"rule:{rule.id}"
        if applied_by is None:
            update_where(
                tx.conn,
                s.approvals,
                dict(
                    status=status,
                    decided_at=tx.now,
                    decided_by=who,
                    rule_id=rule.id,
                    decision_reason=f"{rule.effect} rule {rule.action_pattern}",
                    decision_scope=rule.scope,
                    version=2,
                ),
                id=aid,
            )
        else:
            self._close(
                tx,
                self._row(tx, aid),
                status,
                dict(
                    decided_at=tx.now,
                    decided_by=who,
                    rule_id=rule.id,
                    decision_reason=f"{rule.effect} rule {rule.action_pattern}, applied by "
                    f"{applied_by}",
                    decision_scope=rule.scope,
                ),
            )
        row = row_where(tx.conn, s.approvals, id=aid)
        record_decision(
            tx,
            "approval",
            aid,
            row.run_id,
            {"approved": approve, "scope": rule.scope},
            actor=who,
            source="rule",
            reason=f"matched rule {rule.id}",
            audit_reason=None,
            audit=(
                f"approval.auto_{status}",
                {"status": "pending"},
                {"status": status, "rule_id": rule.id, "applied_by": applied_by},
            ),
            event=(f"approval.{status}", {"approval_id": aid, "by": who, "rule_id": rule.id}),
            closes=applied_by is not None,
        )  # as it arrives, the request left the run as it was

    def many(self, approval_ids: list[str]) -> list[Approval]:
        """Several approvals in one read, in the order given (a missing one raises NotFound)."""
        return self.j.read(lambda c: [approval_in(c, i) for i in approval_ids])

    def get(self, approval_id: str) -> Approval:
        return self.j.read(lambda c: approval_in(c, approval_id))

    def found(self, approval_ids: Sequence[str]) -> dict[str, Approval | errors.Damaged]:
        """The approvals of ``approval_ids`` that are there, by id, in one read per
        ``FOUND_CHUNK`` ids (a list's rows, not one read each): one decided and gone since
        is left out; one whose stored row does not decode is its ``Damaged`` (noted as the
        journal's damage), the others read all the same."""
        ids = list(dict.fromkeys(approval_ids))
        out: dict[str, Approval | errors.Damaged] = {}
        for start in range(0, len(ids), FOUND_CHUNK):
            chunk = ids[start : start + FOUND_CHUNK]
            try:
                out.update(self.j.read(partial(_found_in, ids=chunk)))
            except errors.Damaged:  # a row's text is not even text: each on its own
                for approval_id in chunk:
                    try:
                        out[approval_id] = self.get(approval_id)
                    except errors.NotFound:
                        continue
                    except errors.Damaged as err:
                        out[approval_id] = err
        for value in out.values():
            if isinstance(value, errors.Damaged):
                self.j.note_damage(value)
        return out

    def filed_under(self, request_key: str) -> Approval | None:
        """The approval requested with ``request_key``, if there is one (an integration that
        serves one agent over several connections finds its request again)."""

        def read(c: Any) -> Approval | None:
            row = row_where(c, s.approvals, request_key=request_key)
            return None if row is None else approval_in(c, row.id)

        return self.j.read(read)

    def wait(self, approval_id: str, timeout: float, poll: float = 0.05) -> Approval:
        """Block until the approval leaves ``pending`` (or ``timeout``); applies a due expiry
        (a read-only journal only reports what is stored). A decision still within its hold
        (``Approval.held``: the operator may undo it) counts as pending: the wait goes on
        until the hold passes; at ``timeout`` a held approval is returned as its agent sees it:
        pending, without its decision (``Approval.as_agent_sees``)."""
        deadline, stamped = time.monotonic() + timeout, None
        denied_at = self.j.read(lambda c: escalation.deny_at_in(c, approval_id))
        while True:
            stamped = waiter.stamp_due(self.j, s.approvals, approval_id, WAITED, stamped)
            approval = self.get(approval_id)
            if (
                approval.status == ApprovalStatus.PENDING
                and approval.expires_at is not None
                and approval.on_expiry == OnExpiry.DENY
                and not self.j.read_only
                and self.j.now() >= approval.expires_at
            ):
                self.expire_due()
                approval = self.get(approval_id)
            if approval.status == ApprovalStatus.PENDING and escalation.due(
                denied_at, self.j.now(), self.j.read_only
            ):
                self.expire_due()
                approval = self.get(approval_id)
            if approval.status != ApprovalStatus.PENDING and not approval.held(self.j.now()):
                self._check_trusted(approval_id)
                return approval
            if time.monotonic() >= deadline:
                return approval.as_agent_sees(self.j.now())
            time.sleep(poll)

    def _check_trusted(self, approval_id: str) -> None:
        """With trust configured: DecisionUnverified unless a trusted operator (or a rule a
        trusted operator signed) made the approval's decision."""
        if self.j.trust is not None:
            from proctor.core.decisions.checks import check_approval

            def check(c: Any) -> None:
                row = row_where(c, s.approvals, id=approval_id)
                check_approval(c, self.j.trust, row, self.j.now())
                check_quorum(c, self.j.trust, row)

            self.j.read(check)

    def withdraw(self, approval_id: str, reason: str) -> Approval:
        """Agent side: nobody waits for this any more (cancelled, with an audit row)."""

        def op(tx: Tx) -> dict:
            row = self._row(tx, approval_id)
            if row.status != ApprovalStatus.PENDING:
                raise errors.InvalidTransition(f"approval {approval_id} is already {row.status}")
            written = self._close(
                tx, row, "cancelled", {"decided_at": tx.now, "decision_reason": reason}
            )
            tx.audit(
                "approval.withdrawn",
                "approval",
                approval_id,
                run_id=row.run_id,
                reason=reason,
                before={"status": "pending"},
                after={"status": "cancelled"},
            )
            tx.run_event(
                row.run_id,
                "approval.withdrawn",
                {"approval_id": approval_id, "reason": reason},
                status=status_after_closing(tx.conn, tx.run_row(row.run_id)),
            )
            return written

        return self.j.write_then(op, lambda tx, row: approval_after(tx, approval_id, row))

    def consume_and_reserve(
        self,
        approval_id: str,
        action_digest: str,
        effect_key: str,
        *,
        lease_seconds: float = 30.0,
        owner: str | None = None,
        idempotency_key: str | None = None,
        origin: Origin | dict | None = None,
    ) -> Effect:
        """Consume an approved approval for exactly ``action_digest`` and reserve the effect,
        in one transaction. A refused reservation leaves the approval unconsumed.
        ``origin``: the effect's (default: this Python process)."""
        origin_text = default_origin(self.j.actor.kind, origin)

        def op(tx: Tx) -> dict | None:
            row = self._row(tx, approval_id)
            # the requested action's stored text is the canonical one its digest names (the
            # usual case): the effect stores that text, not the parsed action serialised again
            canonical = (
                row.action is not None
                and row.action_digest is not None
                and sha256_hex(row.action) == row.action_digest
            )
            if not canonical:
                refuse_tampered("approval", approval_id, row)
            if row.status != ApprovalStatus.APPROVED:
                raise errors.NotConsumable(f"approval {approval_id} is {row.status}, not approved")
            if row.consumed_at is not None:
                raise errors.NotConsumable(
                    f"approval {approval_id} was already consumed for {row.consumed_effect_key}"
                )
            approved_digest, approved = approved_action_of(row, tx.conn)
            if approved_digest != action_digest:
                raise errors.DigestMismatch(
                    f"approval {approval_id} is for action {approved_digest[:12]}…, "
                    f"not {action_digest[:12]}…"
                    + (
                        " (the operator edited the action: run the approved one)"
                        if row.approved_digest is not None
                        else ""
                    )
                )
            if self.j.trust is not None:
                from proctor.core.decisions.checks import check_approval, check_unconsumed

                check_approval(tx.conn, self.j.trust, row, tx.now)
                check_quorum(tx.conn, self.j.trust, row)
                check_unconsumed(tx.conn, row)
            if row.hold_until is not None and tx.now < row.hold_until:
                raise errors.Held(
                    f"approval {approval_id} may still be undone by the operator for "
                    f"{row.hold_until - tx.now:.1f} s; wait, then consume it",
                    hold_until=row.hold_until,
                )
            tx.live_run(row.run_id)  # an ended run consumes nothing (and gets no event)
            if tx.now >= consume_deadline(row):
                self._lapse(tx, row)
                return None
            text = row.action if canonical and row.approved_digest is None else None
            reserved = reserve_in(
                tx,
                effect_key,
                run_id=row.run_id,
                tool=row.action_name,
                action=approved,
                action_text=text,
                safety_class=row.safety_class,
                idempotency_key=idempotency_key,
                lease_seconds=lease_seconds,
                owner=owner,
                approval_id=approval_id,
                origin=origin_text,
                then=(
                    row.run_id,
                    "approval.consumed",
                    {"approval_id": approval_id, "effect_key": effect_key},
                ),
            )
            if reserved is None:
                return None  # the refusal (and any write that must survive it) is pending
            update_where(
                tx.conn,
                s.approvals,
                dict(consumed_at=tx.now, consumed_effect_key=effect_key, version=row.version + 1),
                id=approval_id,
                consumed_at=None,
            )
            tx.changed(ChangeKind.APPROVAL, approval_id, row.run_id)
            return reserved

        return self.j.write_then(op, lambda tx, row: effect_in(tx, effect_key, row))

    def _lapse(self, tx: Tx, row: Any) -> None:
        """An approved approval not consumed by its deadline becomes ``expired``: the
        status, an audit row and a run event are committed, then ``ApprovalLapsed`` is
        raised (a lapsed grant is evidence, like a lapsed pending request)."""
        deadline = consume_deadline(row)
        done = update_where(
            tx.conn,
            s.approvals,
            dict(status="expired", version=row.version + 1),
            id=row.id,
            version=row.version,
            status="approved",
            consumed_at=None,
        )
        if done != 1:
            raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
        tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
        tx.audit(
            "approval.expired",
            "approval",
            row.id,
            run_id=row.run_id,
            actor="system:expiry",
            before={"status": "approved", "consume_by": deadline},
            after={"status": "expired"},
            reason="approved but not used before it lapsed",
        )
        tx.run_event(
            row.run_id,
            "approval.expired",
            {"approval_id": row.id, "was": "approved", "consume_by": deadline},
            actor="system:expiry",
        )
        tx.raise_after_commit(
            errors.ApprovalLapsed(
                f"approval {row.id} could be used until {deadline:.0f}; it lapsed unused and is "
                "now expired",
                consume_by=deadline,
            )
        )

    # ------------------------------------------------------------ operator side

    def consume_approval_and_reserve(
        self, approval_id: str, action_digest: str, effect_key: str, **kw: Any
    ) -> Effect:
        """The name the issue and the seed stores use for :meth:`consume_and_reserve`."""
        return self.consume_and_reserve(approval_id, action_digest, effect_key, **kw)

    def decide(
        self,
        approval_id: str,
        approve: bool,
        *,
        expected_version: int,
        reason: str | None = None,
        scope: ApprovalScope | str = ApprovalScope.ONCE,
        request_id: str | None = None,
        source: str = "desk",
        hold: float = 0.0,
    ) -> Approval:
        """Approve or deny. One decision row, one audit row, one run event, one transaction.
        ``hold`` (seconds, > 0): the decision may be undone (:meth:`undo`) for that long,
        and the agent may not act on it before (a decision that makes a standing rule has
        no hold: undoing it would leave the rule)."""
        self.j.require_operator()
        scope = ApprovalScope(scope)
        hold = hold_seconds(hold) if scope == ApprovalScope.ONCE else 0.0
        scope_text = scope.value
        reason = (reason or "").strip() or None
        if not approve and not reason:
            raise errors.ValidationError("a reason is required to deny", field="reason")
        if reason:
            check_text(reason, "the reason", "reason", MAX_REASON)
        request = {
            "op": "approval.decide",
            "id": approval_id,
            "approve": approve,
            "reason": reason,
            "scope": scope_text,
            "expected_version": expected_version,
            "source": source,
            **({"hold": hold} if hold else {}),
        }

        def op(tx: Tx) -> dict | None:
            if tx.replayed(request_id, request):
                return None
            row = self._decidable(tx, approval_id, expected_version, stepping=True)
            if row is None:
                return None
            stepped = policy_steps.step_in(
                tx,
                row,
                approve,
                reason=reason,
                source=source,
                request_id=request_id,
                request=request,
                once=scope == ApprovalScope.ONCE,
            )
            if stepped is not None and not stepped.final:
                return stepped.written  # still pending: its policy waits for more
            held = 0.0 if stepped is not None else hold  # a policy's steps have no undo
            status = "approved" if approve else "denied"
            rule_id = None
            if approve and scope != ApprovalScope.ONCE:
                rule_id = self._rule_from(tx, row, scope)
            hold_until = tx.now + held if held else None
            written = self._close(
                tx,
                row,
                status,
                {
                    "decided_at": tx.now,
                    "decided_by": tx.actor.label,
                    "decision_reason": reason,
                    "decision_scope": scope_text,
                    "rule_id": rule_id,
                    "hold_until": hold_until,
                },
            )
            record_decision(
                tx,
                "approval",
                approval_id,
                row.run_id,
                {"approved": approve, "scope": scope_text, "rule_id": rule_id}
                | ({"hold_until": hold_until} if hold_until is not None else {}),  # signed
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    f"approval.{status}",
                    {"status": "pending", "version": row.version},
                    {"status": status, "scope": scope_text, "rule_id": rule_id},
                ),
                event=(
                    f"approval.{status}",
                    {
                        "approval_id": approval_id,
                        "by": tx.actor.label,
                        "reason": reason,
                        "scope": scope_text,
                    },
                ),
                closes=True,
            )
            return written

        return self.j.write_then(op, lambda tx, row: approval_after(tx, approval_id, row))

    def undo(
        self,
        approval_id: str,
        *,
        expected_version: int,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Approval:
        """Take back a person's decision within its hold: the approval is pending again (its
        decision columns cleared, version + 1), the run waits for a person again, and an
        undo decision (signed like any other), an audit row and a run event record it.
        ``NotUndoable`` after the hold, once consumed, or for a decision made without a
        hold (a rule's, or with the hold off)."""
        self.j.require_operator()
        reason = (reason or "").strip() or None
        if reason:
            check_text(reason, "the reason", "reason", MAX_REASON)
        request = {
            "op": "approval.undo",
            "id": approval_id,
            "reason": reason,
            "expected_version": expected_version,
            "source": source,
        }

        def op(tx: Tx) -> dict | None:
            if tx.replayed(request_id, request):
                return None
            row = self._row(tx, approval_id)
            if row.status not in (ApprovalStatus.APPROVED, ApprovalStatus.DENIED):
                raise errors.NotUndoable(
                    f"approval {approval_id} is {row.status}: there is no decision to undo"
                )
            if row.consumed_at is not None:
                raise errors.NotUndoable(
                    f"approval {approval_id} was already used by the agent "
                    f"({row.consumed_effect_key}); the decision stands"
                )
            if row.hold_until is None:
                raise errors.NotUndoable(
                    f"approval {approval_id} was {row.status} by {row.decided_by} without a "
                    "hold; it cannot be undone"
                )
            if tx.now >= row.hold_until:
                raise errors.NotUndoable(
                    f"the hold on approval {approval_id} ended {tx.now - row.hold_until:.1f} s "
                    f"ago; the agent may already act on it ({row.status})",
                    hold_until=row.hold_until,
                )
            if row.version != expected_version:
                raise errors.StaleVersion(
                    f"approval {approval_id} is at version {row.version}, you saw "
                    f"{expected_version}"
                )
            run = tx.live_run(row.run_id)
            was = row.status
            values = dict(
                status="pending",
                version=row.version + 1,
                decided_at=None,
                decided_by=None,
                decision_reason=None,
                decision_scope=None,
                rule_id=None,
                approved_action=None,
                approved_digest=None,
                hold_until=None,
            )
            done = update_where(
                tx.conn,
                s.approvals,
                values,
                id=approval_id,
                version=row.version,
                status=was,
                consumed_at=None,
            )
            if done != 1:
                raise errors.StaleVersion(f"approval {approval_id} changed meanwhile")
            tx.changed(ChangeKind.APPROVAL, approval_id, row.run_id)
            record_decision(
                tx,
                "approval",
                approval_id,
                row.run_id,
                {"undone": True, "was": was, "by": row.decided_by},
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    "approval.undone",
                    {"status": was, "version": row.version, "decided_by": row.decided_by},
                    {"status": "pending"},
                ),
            )
            tx.append_event(
                tx.run_row(row.run_id),
                "approval.undone",
                {"approval_id": approval_id, "was": was, "by": tx.actor.label, "reason": reason},
                status=status_when_opening(run),
            )
            return written_row(row, values)

        return self.j.write_then(op, lambda tx, row: approval_after(tx, approval_id, row))

    def _decidable(
        self, tx: Tx, approval_id: str, expected_version: int, *, stepping: bool = False
    ) -> Any:
        """The approval's row (read once in ``tx``) when the operator may decide it at
        ``expected_version``: untampered, pending, not expired (else its expiry is written and
        None returned, with ``Expired`` to raise after the commit), its run not ended, and
        not requested by the operator deciding. Under a policy only ``decide`` (``stepping``)
        decides it, step by step (core/policies/steps.py)."""
        row = self._row(tx, approval_id)
        refuse_tampered("approval", approval_id, row)
        if row.status == ApprovalStatus.EXPIRED:
            raise errors.Expired(f"approval {approval_id} expired before the decision")
        if row.status == ApprovalStatus.CANCELLED:
            raise errors.Withdrawn(
                f"approval {approval_id} was withdrawn by the agent"
                + (f": {row.decision_reason}" if row.decision_reason else ""),
                status=row.status,
                reason=row.decision_reason,
            )
        if row.status != ApprovalStatus.PENDING:
            raise errors.AlreadyDecided(
                f"approval {approval_id} was already {row.status} by {row.decided_by or 'the agent'}",
                status=row.status,
                decided_by=row.decided_by,
                reason=row.decision_reason,
            )
        if (
            row.expires_at is not None
            and tx.now >= row.expires_at
            and row.on_expiry == OnExpiry.DENY
        ):
            self._expire(tx, row)
            tx.raise_after_commit(
                errors.Expired(
                    f"approval {approval_id} expired before the decision; it is now expired"
                )
            )
            return None
        if row.version != expected_version:
            raise errors.StaleVersion(
                f"approval {approval_id} is at version {row.version}, you saw {expected_version}"
            )
        run = tx.run_row(row.run_id)
        refuse_requester(tx, (row.agent, run.agent), verb="approve")
        if run.status in ("completed", "failed", "cancelled"):
            raise errors.RunTerminal(f"run {row.run_id} is {run.status}")
        if not stepping:
            policy_steps.refuse_governed(tx.conn, approval_id, "this decision")
        return row

    def bulk_decide(
        self,
        items: list[tuple[str, int]],
        approve: bool,
        *,
        reason: str | None = None,
        scope: ApprovalScope | str = ApprovalScope.ONCE,
        request_id: str | None = None,
    ) -> list[BulkResult]:
        """Decide N approvals, each in its own transaction; a per-item result for each."""
        self.j.require_operator()
        results = []
        for approval_id, version in items:
            rid = f"{request_id}:{approval_id}" if request_id else None
            try:
                self.decide(
                    approval_id,
                    approve,
                    expected_version=version,
                    reason=reason,
                    scope=scope,
                    request_id=rid,
                )
                results.append(BulkResult(id=approval_id, ok=True))
            except errors.ProctorError as err:
                results.append(
                    BulkResult(
                        id=approval_id, ok=False, error=str(err), error_type=type(err).__name__
                    )
                )
        return results

    def expire_due(self) -> int:
        """Expire every pending approval past its expiry whose policy is ``deny``, and deny
        every one whose approval policy's deadline has come (0018e, core/policies/escalation)."""

        def op(tx: Tx) -> int:
            agent = tx.actor.kind == ActorKind.AGENT
            denied = escalation.deny_due_in(tx, agent=agent)
            rows = tx.conn.execute(
                select(s.approvals)
                .where(
                    s.approvals.c.status == "pending",
                    s.approvals.c.on_expiry == "deny",
                    s.approvals.c.expires_at <= tx.now,
                    filed_by_this_login(tx.conn, tx.actor.kind == ActorKind.AGENT),
                )
                .limit(500)
            ).all()
            for row in rows:
                self._expire(tx, row)
            return len(rows) + denied

        return self.j.write(op)

    def _expire(self, tx: Tx, row: Any) -> None:
        self._close(tx, row, "expired", {"decided_at": tx.now, "decided_by": "system:expiry"})
        record_decision(
            tx,
            "approval",
            row.id,
            row.run_id,
            {"approved": False, "expired": True},
            actor="system:expiry",
            source="expiry",
            reason="expired",
            audit_reason="expired before a decision",
            audit=("approval.expired", {"status": "pending"}, {"status": "expired"}),
            event=("approval.expired", {"approval_id": row.id}),
            closes=True,
        )

    @staticmethod
    def _row(tx: Tx, approval_id: str) -> Any:
        row = tx.row_with_run(s.approvals, id=approval_id)
        if row is None:
            raise errors.NotFound(f"approval {approval_id} does not exist")
        return row

    @staticmethod
    def _close(tx: Tx, row: Any, status: str, values: dict) -> dict:
        """Move the pending ``row`` to ``status`` with ``values``; the row as now stored."""
        values = dict(status=status, version=row.version + 1, **values)
        done = update_where(
            tx.conn, s.approvals, values, id=row.id, version=row.version, status="pending"
        )
        if done != 1:
            raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
        tx.changed(ChangeKind.APPROVAL, row.id, row.run_id)
        return written_row(row, values)

    # ------------------------------------------------------------ rules
    def check_edit(self, approval: Approval, action: Any) -> None:
        """Raises ``ValidationError`` unless ``action`` may be approved in place of the
        requested one (``approve_edited`` checks the same in its transaction): a caller can
        refuse a bad edit before asking anyone to confirm it."""
        check_edit(approval.action, approval.input_schema, action)

    def approve_edited(
        self,
        approval_id: str,
        action: dict,
        *,
        expected_version: int,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
        hold: float = 0.0,
    ) -> Approval:
        """Approve ``action``, the operator's edit of the requested action (same tool, other
        arguments): it gets its own digest, which ``consume_and_reserve`` then requires;
        the requested action stays as evidence. One decision (recording both digests and the
        changes), one audit row, one run event, one transaction. ``hold``: as for
        :meth:`decide` (the edited approval may be undone for that long)."""
        self.j.require_operator()
        hold = hold_seconds(hold)
        reason = (reason or "").strip() or None
        if reason and len(reason) > MAX_REASON:
            raise errors.ValidationError("the reason is too long", field="reason")
        edited_text = canonical_json(action)
        edited_digest = digest_of(action)
        request = {
            "op": "approval.approve_edited",
            "id": approval_id,
            "approved_digest": edited_digest,
            "reason": reason,
            "expected_version": expected_version,
            **({"hold": hold} if hold else {}),
        }

        def op(tx: Tx) -> dict | None:
            if tx.replayed(request_id, request):
                return None
            row = self._decidable(tx, approval_id, expected_version)
            if row is None:
                return None
            original = canonical_json_loads(row.action)
            schema = canonical_json_loads(row.input_schema) if row.input_schema else None
            check_edit(original, schema, action)
            changes = json_changes(original, action)
            hold_until = tx.now + hold if hold else None
            written = self._close(
                tx,
                row,
                "approved",
                {
                    "decided_at": tx.now,
                    "decided_by": tx.actor.label,
                    "decision_reason": reason,
                    "decision_scope": "once",
                    "approved_action": edited_text,
                    "approved_digest": edited_digest,
                    "hold_until": hold_until,
                },
            )
            record_decision(
                tx,
                "approval",
                approval_id,
                row.run_id,
                {
                    "approved": True,
                    "scope": "once",
                    "edited": True,
                    "original_digest": row.action_digest,
                    "approved_digest": edited_digest,
                    "approved_action": action,
                    "edited_action_digest": edited_digest,
                }
                | ({"hold_until": hold_until} if hold_until is not None else {}),  # signed
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    "approval.approved_edited",
                    {
                        "status": "pending",
                        "version": row.version,
                        "action_digest": row.action_digest,
                    },
                    {"status": "approved", "approved_digest": edited_digest, "changes": changes},
                ),
                event=(
                    "approval.approved",
                    {
                        "approval_id": approval_id,
                        "by": tx.actor.label,
                        "reason": reason,
                        "scope": "once",
                        "edited": True,
                        "original_digest": row.action_digest,
                        "approved_digest": edited_digest,
                        "changes": changes,
                    },
                ),
                closes=True,
            )
            return written

        return self.j.write_then(op, lambda tx, row: approval_after(tx, approval_id, row))

    # ------------------------------------------------------------ reads
    def for_run(self, run_id: str) -> list[Approval]:
        return self.j.read(lambda c: approvals_of(c, run_id))

    def similar(self, approval_id: str, limit: int = 20) -> list[Approval]:
        """Past decisions on the same action name, newest first."""
        current = self.get(approval_id)
        a = s.approvals.c
        stmt = (
            approval_select()
            .where(
                a.action_name == current.action_name,
                a.id != approval_id,
                a.status.in_(["approved", "denied", "expired"]),
                a.decided_at.is_not(None),  # every decided row has it: ix_approvals_action's rows
            )
            .order_by(a.decided_at.desc())
            .limit(limit)
        )
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))

    def decisions(self, target_id: str) -> list[Decision]:
        return self.j.read(lambda c: decisions_for(c, target_id))

    # ------------------------------------------------------------ standing rules
    def add_rule(
        self,
        effect: RuleEffect | str,
        action_pattern: str,
        *,
        resource_pattern: str = "*",
        scope: ApprovalScope | str = ApprovalScope.RUN,
        run_id: str | None = None,
        project: str = "*",
        space: str | None = None,
        expires_at: float | None = None,
        predicate: str | None = None,
    ) -> ApprovalRule:
        self.j.require_operator()
        scope = ApprovalScope(scope)
        predicate = rules_mod.predicates.normalized(predicate)
        if scope == ApprovalScope.RUN and not run_id:
            raise errors.ValidationError("a run-scoped rule needs a run", field="run_id")

        def op(tx: Tx) -> str:
            return self._insert_rule(
                tx,
                RuleEffect(effect),
                action_pattern,
                resource_pattern,
                scope,
                run_id,
                project,
                space,
                expires_at,
                None,
                predicate,
            )

        return self.rule(self.j.write(op))

    def _rule_from(self, tx: Tx, row: Any, scope: ApprovalScope) -> str:
        """The rule a plain "always" decision makes: this tool, exactly this resource, the
        run (or its space), expiring after ``rules.DEFAULT_RULE_TTL`` (see ``rule_draft``)."""
        run = tx.run_row(row.run_id)
        resource = action_resource(canonical_json_loads(row.action))
        return self._insert_rule(
            tx,
            RuleEffect.ALLOW,
            rules_mod.glob_escape(row.action_name),
            rules_mod.glob_escape(resource) if resource else "*",
            scope,
            run.id if scope == ApprovalScope.RUN else None,
            run.project,
            run.space,
            tx.now + rules_mod.DEFAULT_RULE_TTL,
            row.id,
        )

    @staticmethod
    def _insert_rule(
        tx: Tx,
        effect: RuleEffect,
        action_pattern: str,
        resource_pattern: str,
        scope: ApprovalScope,
        run_id: str | None,
        project: str,
        space: str | None,
        expires_at: float | None,
        source: str | None,
        predicate: str | None = None,
    ) -> str:
        rid = tx.new_id("rule")
        insert_rows(
            tx.conn,
            s.approval_rules,
            [
                dict(
                    id=rid,
                    effect=effect.value,
                    action_pattern=action_pattern,
                    resource_pattern=resource_pattern,
                    scope=scope.value,
                    run_id=run_id,
                    project=project,
                    space=space,
                    created_by=tx.actor.label,
                    created_at=tx.now,
                    expires_at=expires_at,
                    source_approval_id=source,
                    version=1,
                    predicate=predicate,
                )
            ],
        )
        tx.changed(ChangeKind.RULE, rid, run_id)
        sign_in(
            tx,
            RULE,
            rid,
            "rule",
            rid,
            rule_content(row_where(tx.conn, s.approval_rules, id=rid)),
            None,
        )
        if source is None:
            tx.audit(
                "rule.created",
                "rule",
                rid,
                run_id=run_id,
                after={
                    "effect": effect.value,
                    "action": action_pattern,
                    "resource": resource_pattern,
                    "scope": scope.value,
                    "when": predicate,
                    "expires_at": expires_at,
                },
            )
        return rid

    def revoke_rule(
        self,
        rule_id: str,
        *,
        expected_version: int,
        request_id: str | None = None,
        reason: str | None = None,
    ) -> ApprovalRule:
        """Stop a rule deciding (one audited transaction); the rule stays as history."""
        self.j.require_operator()
        reason = (reason or "").strip() or None
        if reason and len(reason) > MAX_REASON:
            raise errors.ValidationError("the reason is too long", field="reason")
        request = {"op": "rule.revoke", "id": rule_id, "expected_version": expected_version}
        if reason is not None:
            request["reason"] = reason

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = row_where(tx.conn, s.approval_rules, id=rule_id)
            if row is None:
                raise errors.NotFound(f"rule {rule_id} does not exist")
            if row.revoked_at is not None:
                raise errors.InvalidTransition(f"rule {rule_id} is already revoked")
            if row.version != expected_version:
                raise errors.StaleVersion(f"rule {rule_id} changed since you looked")
            update_where(
                tx.conn,
                s.approval_rules,
                dict(
                    revoked_at=tx.now,
                    revoked_by=tx.actor.label,
                    revoke_reason=reason,
                    version=row.version + 1,
                ),
                id=rule_id,
            )
            tx.changed(ChangeKind.RULE, rule_id, row.run_id)
            sign_in(tx, RULE_REVOKE, f"{rule_id}/revoked", "rule", rule_id, {"revoked": True}, None)
            tx.audit(
                "rule.revoked",
                "rule",
                rule_id,
                run_id=row.run_id,
                before={"active": True},
                after={"active": False},
                reason=reason,
                request_id=request_id,
                request=request,
            )

        self.j.write(op)
        return self.rule(rule_id)

    def rule(self, rule_id: str) -> ApprovalRule:
        stmt = select(s.approval_rules).where(s.approval_rules.c.id == rule_id)
        return self.j.read(lambda c: fetch_one(c, ApprovalRule, stmt, f"rule {rule_id}"))

    def rules(self, *, active_only: bool = True) -> list[ApprovalRule]:
        stmt = select(s.approval_rules).order_by(s.approval_rules.c.created_at.desc())
        if active_only:
            stmt = stmt.where(s.approval_rules.c.revoked_at.is_(None))
        return self.j.read(lambda c: to_models(ApprovalRule, c.execute(stmt)))

    def match_rule(self, action: dict, run_id: str) -> ApprovalRule | None:
        """The rule that would decide ``action`` in ``run_id`` now (deny beats allow)."""

        def q(conn: Any) -> ApprovalRule | None:
            run = conn.execute(select(s.runs).where(s.runs.c.id == run_id)).first()
            if run is None:
                raise errors.NotFound(f"run {run_id} does not exist")
            row = self._match(conn, action, run, self.j.now())
            return to_model(ApprovalRule, row) if row is not None else None

        return self.j.read(q)

    def _matching_rule(self, tx: Tx, action: dict, run: Any) -> Any:
        return self._match(tx.conn, action, run, tx.now)

    @staticmethod
    def _match(conn: Any, action: dict, run: Any, now: float) -> Any:
        rows = LIVE_RULES.all(conn, now=now, run_id=run.id, project=run.project, space=run.space)
        return rules_mod.pick(rows, action_name(action), action_resource(action), action)

    # ------------------------------------------------------------ rules you see first
    def rule_draft(self, approval_id: str, scope: str) -> RuleDraft:
        """The rule approving ``approval_id`` with ``scope`` (run / space / project) would
        make, before the operator edits it (see ``rules.draft_from``)."""
        return rules_mod.draft_from(self.get(approval_id), scope, self.j.now())

    def preview_rule(self, draft: RuleDraft, *, exclude: str | None = None) -> RulePreview:
        """Which past requests ``draft`` would have decided, which pending ones it would
        decide now (``exclude``: the request being decided)."""
        draft = rules_mod.checked(draft, self.j.now())
        return self.j.read(lambda c: rules_mod.preview(c, draft, exclude=exclude))

    def decide_with_rule(
        self,
        approval_id: str,
        draft: RuleDraft,
        *,
        expected_version: int,
        reason: str | None = None,
        apply_to: Sequence[tuple[str, int]] = (),
        request_id: str | None = None,
        source: str = "desk",
    ) -> RuleMade:
        """Decide ``approval_id`` by making ``draft`` (allow approves it, deny denies it) and,
        in the same transaction, apply the rule to the pending requests ``apply_to`` (id,
        version as previewed). Anything stale, already decided, outside the rule or not
        the operator's to decide refuses the whole transaction."""
        self.j.require_operator()
        draft = rules_mod.checked(draft, self.j.now())
        if draft.effect == RuleEffect.PROMPT:
            raise errors.ValidationError(
                "a prompt rule decides nothing; make it on its own", field="effect"
            )
        approve = draft.effect == RuleEffect.ALLOW
        reason = (reason or "").strip() or None
        if not approve and not reason:
            raise errors.ValidationError("a reason is required to deny", field="reason")
        if reason and len(reason) > MAX_REASON:
            raise errors.ValidationError("the reason is too long", field="reason")
        pairs = [(str(i), int(v)) for i, v in apply_to]
        request = {
            "op": "approval.decide_with_rule",
            "id": approval_id,
            "draft": draft.model_dump(mode="json"),
            "reason": reason,
            "apply_to": pairs,
            "expected_version": expected_version,
        }

        def op(tx: Tx) -> tuple[str, list[str]]:
            if tx.replayed(request_id, request):
                return self._replayed_rule(tx, request_id), [i for i, _ in pairs]
            row = self._decidable(tx, approval_id, expected_version)
            if row is None:
                return "", []
            rules_mod.check_fits(draft, tx.run_row(row.run_id))
            rid = self._insert_draft(tx, draft, row.id, request_id, request)
            status = "approved" if approve else "denied"
            scope = ApprovalScope(rules_mod.stored_scope(draft))
            self._close(
                tx,
                row,
                status,
                {
                    "decided_at": tx.now,
                    "decided_by": tx.actor.label,
                    "decision_reason": reason,
                    "decision_scope": scope.value,
                    "rule_id": rid,
                },
            )
            # as approvals.decide, but the rule's own row carries the request (its audit
            # row: _insert_draft) and the event names the rule
            record_decision(
                tx,
                "approval",
                approval_id,
                row.run_id,
                {"approved": approve, "scope": scope.value, "rule_id": rid},
                source=source,
                reason=reason,
                request_id=request_id,
                keyed_audit=False,
                audit=(
                    f"approval.{status}",
                    {"status": "pending", "version": row.version},
                    {"status": status, "scope": scope.value, "rule_id": rid},
                ),
                event=(
                    f"approval.{status}",
                    {
                        "approval_id": approval_id,
                        "by": tx.actor.label,
                        "reason": reason,
                        "scope": scope.value,
                        "rule_id": rid,
                    },
                ),
                closes=True,
            )
            return rid, self._apply_rule(tx, rid, pairs)

        def fetch(tx: Tx, made: tuple[str, list[str]]) -> RuleMade:
            rid, applied = made
            return RuleMade(
                approval=approval_in(tx.conn, approval_id),
                rule=self._rule_in(tx.conn, rid),
                applied=applied,
            )

        return self.j.write_then(op, fetch)

    def make_rule(
        self,
        draft: RuleDraft,
        *,
        apply_to: Sequence[tuple[str, int]] = (),
        request_id: str | None = None,
    ) -> RuleMade:
        """Make ``draft`` on its own (the CLI, the Rules page) and apply it to the pending
        requests ``apply_to`` as previewed, in one transaction."""
        self.j.require_operator()
        draft = rules_mod.checked(draft, self.j.now())
        pairs = [(str(i), int(v)) for i, v in apply_to]
        if pairs and draft.effect == RuleEffect.PROMPT:
            raise errors.ValidationError(
                "a prompt rule decides nothing it could apply to", field="apply_to"
            )
        request = {"op": "rule.make", "draft": draft.model_dump(mode="json"), "apply_to": pairs}

        def op(tx: Tx) -> tuple[str, list[str]]:
            if tx.replayed(request_id, request):
                return self._replayed_rule(tx, request_id), [i for i, _ in pairs]
            if draft.run_id:
                tx.run_row(draft.run_id)
            rid = self._insert_draft(tx, draft, None, request_id, request)
            return rid, self._apply_rule(tx, rid, pairs)

        def fetch(tx: Tx, made: tuple[str, list[str]]) -> RuleMade:
            rid, applied = made
            return RuleMade(approval=None, rule=self._rule_in(tx.conn, rid), applied=applied)

        return self.j.write_then(op, fetch)

    def rule_usage(self, *, active_only: bool = False) -> list[RuleUsage]:
        """Every rule (revoked ones too, as history) with how many requests it decided."""
        return self.j.read(lambda c: rules_mod.usage(c, active_only=active_only, now=self.j.now()))

    def decided_by_rule(self, rule_id: str, limit: int = 500) -> list[Approval]:
        """The requests ``rule_id`` decided, newest first."""
        stmt = rules_mod.decided_by_rule_select(rule_id).limit(limit)
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))

    @staticmethod
    def _rule_in(conn: Any, rule_id: str) -> ApprovalRule:
        stmt = select(s.approval_rules).where(s.approval_rules.c.id == rule_id)
        return fetch_one(conn, ApprovalRule, stmt, f"rule {rule_id}")

    @staticmethod
    def _replayed_rule(tx: Tx, request_id: str | None) -> str:
        """The rule a replayed request made (``tx.replayed`` found its audit row)."""
        row = row_where(tx.conn, s.audit, request_id=request_id)
        return row.entity_id

    @staticmethod
    def _insert_draft(
        tx: Tx, draft: RuleDraft, source: str | None, request_id: str | None, request: Any
    ) -> str:
        rid = tx.new_id("rule")
        scope = rules_mod.stored_scope(draft)
        insert_rows(
            tx.conn,
            s.approval_rules,
            [
                dict(
                    id=rid,
                    effect=RuleEffect(draft.effect).value,
                    action_pattern=draft.action_pattern,
                    resource_pattern=draft.resource_pattern,
                    scope=scope,
                    run_id=draft.run_id,
                    project=draft.project,
                    space=draft.space,
                    created_by=tx.actor.label,
                    created_at=tx.now,
                    expires_at=draft.expires_at,
                    source_approval_id=source,
                    version=1,
                    predicate=draft.predicate,
                )
            ],
        )
        tx.changed(ChangeKind.RULE, rid, draft.run_id)
        sign_in(
            tx,
            RULE,
            rid,
            "rule",
            rid,
            rule_content(row_where(tx.conn, s.approval_rules, id=rid)),
            None,
        )
        tx.audit(
            "rule.created",
            "rule",
            rid,
            run_id=draft.run_id,
            after={
                "effect": RuleEffect(draft.effect).value,
                "action": draft.action_pattern,
                "resource": draft.resource_pattern,
                "when": draft.predicate,
                "scope": draft.scope,
                "project": draft.project,
                "space": draft.space,
                "expires_at": draft.expires_at,
                "from_approval": source,
            },
            request_id=request_id,
            request=request,
        )
        return rid

    def _apply_rule(self, tx: Tx, rule_id: str, pairs: list[tuple[str, int]]) -> list[str]:
        """Decide the pending requests ``pairs`` with the rule just made (each re-checked:
        pending, at the version previewed, in the rule's scope, matched by it, and not
        requested by the operator deciding)."""
        rule = row_where(tx.conn, s.approval_rules, id=rule_id)
        applied = []
        for approval_id, version in pairs:
            row = self._decidable(tx, approval_id, version)
            if row is None:
                raise errors.Expired(f"approval {approval_id} expired; preview the rule again")
            run = tx.run_row(row.run_id)
            action = canonical_json_loads(row.action)
            in_scope = rule_id in {
                r.id
                for r in LIVE_RULES.all(
                    tx.conn, now=tx.now, run_id=run.id, project=run.project, space=run.space
                )
            }
            if not in_scope or not rules_mod.rule_matches(
                rule, row.action_name, action_resource(action), action
            ):
                raise errors.StaleVersion(
                    f"approval {approval_id} is not one this rule decides; preview it again"
                )
            self._auto_decide(tx, approval_id, rule, applied_by=tx.actor.label)
            applied.append(approval_id)
        return applied

    # ------------------------------------------------------------ edit, then approve


__all__ = [
    "CONSUME_WINDOW",
    "MAX_REASON",
    "Approvals",
    "action_name",
    "action_resource",
    "approval_in",
    "approved_action_of",
    "canonical_json_loads",
    "decisions_for",
    "insert_decision_row",
    "json_changes",
    "requester",
    "safety_counts",
    "to_model",
]
