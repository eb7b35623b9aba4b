"""Approvals: an agent asks before it acts; a person (or a rule) decides; the agent
consumes the approval exactly once, for exactly the action that was approved.

The service: requests, reads, decisions (plain, edited, in bulk), undo within a hold,
expiry and consumption. Its steps inside a transaction are ``transitions.py`` and
``consume.py``; the standing rules' operations are ``standing.py`` (offered here under
their old names), what a rule is and how rules are ordered ``rules.py``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.bulk import each
from proctor.core.decisions.undo import Held, undo
from proctor.core.decisions.writer import (
    CONSUME_WINDOW,
    MAX_REASON,
    action_name,
    action_resource,
    approval_after,
    approval_in,
    approved_action_of,
    canonical_json_loads,
    check_edit,
    check_input_schema,
    decisions_for,
    insert_decision_row,
    json_changes,
    record_decision,
    requester,
    safety_counts,
)
from proctor.core.effects.rows import effect_in
from proctor.core.kernel.canonical import canonical_json, digest_of, sha256_hex
from proctor.core.kernel.limits import check_text, hold_seconds
from proctor.core.kernel.origin import default_for as default_origin
from proctor.core.models import (
    ActorKind,
    Approval,
    ApprovalScope,
    ApprovalStatus,
    BulkResult,
    ChangeKind,
    Decision,
    Effect,
    OnExpiry,
    Origin,
    RuleEffect,
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
    inserted_row,
    to_model,
    to_models,
)
from proctor.core.storage.sql import filed_by_this_login, insert_rows, row_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from .consume import consume_in
from .standing import StandingRules, matching_rule, rule_from
from .transitions import approval_row, auto_decide, close, decidable, expire

FOUND_CHUNK = 500  # ids per read in ``Approvals.found`` (well under SQLite's bound variables)


def _found_in(conn: Any, *, ids: list[str]) -> dict[str, Approval | errors.Damaged]:
    out: dict[str, Approval | errors.Damaged] = {}
    for row in conn.execute(approval_select().where(s.approvals.c.id.in_(ids))):
        try:
            out[row.id] = to_model(Approval, row)
        except errors.Damaged as err:  # its JSON does not parse: this row alone
            out[row.id] = err
    return out


# an approval's decision, as an undo takes it back
HELD = Held(
    kind="approval",
    noun="approval",
    table=s.approvals,
    change=ChangeKind.APPROVAL,
    decided=(ApprovalStatus.APPROVED.value, ApprovalStatus.DENIED.value),
    reopened=ApprovalStatus.PENDING.value,
    by="decided_by",
    used="consumed_at",
    used_for="consumed_effect_key",
    cleared=(
        "decided_at",
        "decided_by",
        "decision_reason",
        "decision_scope",
        "rule_id",
        "approved_action",
        "approved_digest",
        "hold_until",
    ),
    what="decision",
    max_reason=MAX_REASON,
)

# what an agent's wait stamps (core/storage/waiter.py adds a decision still in its hold)
WAITED = ("pending",)


class Approvals:
    """Requests, decisions, undo and consumption (this module), and the standing rules'
    operations (``standing.py``), offered here under the names they have always had."""

    def __init__(self, store: Store) -> None:
        self.j = store
        standing = StandingRules(store)
        self.add_rule = standing.add_rule
        self.revoke_rule = standing.revoke_rule
        self.rule = standing.rule
        self.rules = standing.rules
        self.match_rule = standing.match_rule
        self.rule_draft = standing.rule_draft
        self.preview_rule = standing.preview_rule
        self.decide_with_rule = standing.decide_with_rule
        self.make_rule = standing.make_rule
        self.rule_usage = standing.rule_usage
        self.decided_by_rule = standing.decided_by_rule

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
            rule = matching_rule(tx.conn, action, run, tx.now)
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
            auto_decide(tx, aid, rule)
            return aid, None  # decided since: read as stored

        return self.j.write_then(op, lambda tx, made: approval_after(tx, *made))

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
            row = approval_row(tx, approval_id)
            if row.status != ApprovalStatus.PENDING:
                raise errors.InvalidTransition(f"approval {approval_id} is already {row.status}")
            written = close(tx, row, "cancelled", {"decided_at": tx.now, "decision_reason": reason})
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
        in one transaction (``consume.py``). A refused reservation leaves the approval
        unconsumed. ``origin``: the effect's (default: this Python process)."""
        reservation = dict(
            lease_seconds=lease_seconds,
            owner=owner,
            idempotency_key=idempotency_key,
            origin=default_origin(self.j.actor.kind, origin),
        )

        def op(tx: Tx) -> dict | None:
            return consume_in(
                tx, self.j.trust, approval_id, action_digest, effect_key, reservation=reservation
            )

        return self.j.write_then(op, lambda tx, row: effect_in(tx, effect_key, row))

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
            row = decidable(tx, approval_id, expected_version, stepping=True)
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
                rule_id = rule_from(tx, row, scope)
            hold_until = tx.now + held if held else None
            written = close(
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
        """Take back a person's decision within its hold (``decisions/undo.py``): the approval
        is pending again and the run waits for a person again. ``NotUndoable`` after the
        hold, once consumed, or for a decision made without a hold (a rule's, or with the
        hold off)."""
        return undo(
            self.j,
            HELD,
            approval_id,
            expected_version=expected_version,
            reason=reason,
            request_id=request_id,
            source=source,
            after=approval_after,
        )

    def bulk_decide(
        self,
        items: list[tuple[str, int]],
        approve: bool,
        *,
        reason: str | None = None,
        scope: ApprovalScope | str = ApprovalScope.ONCE,
        request_id: str | None = None,
        hold: float = 0.0,
    ) -> list[BulkResult]:
        """Decide N approvals, each in its own transaction; a per-item result for each (with
        the version and the hold each decision got: ``hold`` as for :meth:`decide`, so the
        batch may be undone with :meth:`bulk_undo` while it is held)."""
        self.j.require_operator()
        return each(
            items,
            request_id,
            lambda approval_id, version, rid: self.decide(
                approval_id,
                approve,
                expected_version=version,
                reason=reason,
                scope=scope,
                request_id=rid,
                hold=hold,
            ),
        )

    def bulk_undo(
        self, items: list[tuple[str, int]], *, request_id: str | None = None, source: str = "desk"
    ) -> list[BulkResult]:
        """Undo each held decision of a batch (id, version it was decided at), each in its
        own transaction (:meth:`undo`); one the agent already used, or whose hold passed, is
        a refused result naming why."""
        self.j.require_operator()
        return each(
            items,
            request_id,
            lambda approval_id, version, rid: self.undo(
                approval_id, expected_version=version, request_id=rid, source=source
            ),
        )

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
                expire(tx, row)
            return len(rows) + denied

        return self.j.write(op)

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
            row = decidable(tx, approval_id, expected_version)
            if row is None:
                return None
            original = canonical_json_loads(row.action)
            schema = canonical_json_loads(row.input_schema) if row.input_schema else None
            check_edit(original, schema, action)
            changes = json_changes(original, action)
            hold_until = tx.now + hold if hold else None
            written = close(
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


# the names the module had before its rules moved to standing.py (``proctor.core.approval_rules``)
from proctor.core.decisions.signing import RULE, RULE_REVOKE, rule_content, sign_in  # noqa: E402
from proctor.core.decisions.writer import LIVE_RULES  # noqa: E402
from proctor.core.models import (  # noqa: E402
    ApprovalRule,
    RuleDraft,
    RuleMade,
    RulePreview,
    RuleUsage,
)

__all__ = [
    "CONSUME_WINDOW",
    "LIVE_RULES",
    "MAX_REASON",
    "RULE",
    "RULE_REVOKE",
    "ApprovalRule",
    "Approvals",
    "RuleDraft",
    "RuleMade",
    "RulePreview",
    "RuleUsage",
    "action_name",
    "action_resource",
    "approval_in",
    "approved_action_of",
    "canonical_json_loads",
    "decisions_for",
    "insert_decision_row",
    "json_changes",
    "requester",
    "rule_content",
    "safety_counts",
    "sign_in",
    "to_model",
]
