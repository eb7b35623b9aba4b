"""Approvals: an agent asks before it acts; a person (or a rule) decides; the agent
consumes the approval exactly once, for exactly the action that was approved."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import bindparam, insert, or_, select, update

from . import errors
from . import rules as rules_mod
from . import schema as s
from .canonical import canonical_json, digest_of
from .deciders import refuse_requester
from .integrity import refuse_tampered
from .items import status_after_closing, status_when_opening
from .journal import Journal, Tx
from .limits import check_text
from .models import (
    ActorKind,
    Approval,
    ApprovalRule,
    ApprovalScope,
    ApprovalStatus,
    BulkResult,
    Decision,
    Effect,
    OnExpiry,
    RuleDraft,
    RuleEffect,
    RuleMade,
    RulePreview,
    RuleUsage,
    SafetyClass,
)
from .rows import approval_select, by_id, fetch_one, fetch_prepared, to_model, to_models
from .signing import RULE, RULE_REVOKE, rule_content, sign_decision, sign_in
from .sql import Prepared, insert_rows, row_where, update_where

MAX_REASON = 10_000

APPROVAL_BY_ID = by_id(approval_select(), s.approvals.c.id)


def approval_in(conn: Any, approval_id: str) -> Approval:
    return fetch_prepared(conn, Approval, APPROVAL_BY_ID, f"approval {approval_id}",
                          key=approval_id)


def action_name(action: Any) -> str:
    if not isinstance(action, dict):
        raise errors.ValidationError("an action must be a JSON object", field="action")
    name = action.get("tool") or action.get("name")
    if not isinstance(name, str) or not name.strip():
        raise errors.ValidationError("an action needs a 'tool' name", field="action.tool")
    return name[:200]


def safety_counts(approvals: list[Approval]) -> dict[str, int]:
    """How many of ``approvals`` are of each safety class, most risky first."""
    order = [c.value for c in reversed(list(SafetyClass))]
    counts: dict[str, int] = {}
    for a in approvals:
        counts[a.safety_class.value] = counts.get(a.safety_class.value, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: order.index(kv[0])
                       if kv[0] in order else len(order)))


def action_resource(action: dict) -> str:
    if "resource" in action:
        return str(action["resource"])
    args = action.get("args") if isinstance(action.get("args"), dict) else {}
    for key in ("path", "url", "command", "to", "table", "account"):
        if key in args:
            return str(args[key])
    return ""


class Approvals:
    def __init__(self, journal: Journal) -> None:
        self.j = journal

    # ------------------------------------------------------------ agent side
    def request(self, run_id: str, action: dict, *, reason: str,
                safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
                requested_scope: ApprovalScope | str = ApprovalScope.ONCE,
                expires_in: float | None = None, expires_at: float | None = None,
                on_expiry: OnExpiry | str = OnExpiry.DENY, request_key: str | None = None,
                tool_call_id: str | None = None,
                input_schema: dict | None = None) -> Approval:
        """Ask for approval of ``action``. Idempotent by ``request_key``. A matching
        allow/deny rule decides at once (recorded as an automatic decision).
        ``input_schema``: the JSON Schema of ``action["args"]``, if the tool has one (an
        operator's edit of the arguments is validated against it)."""
        name = action_name(action)
        safety, scope, expiry = SafetyClass(safety_class), ApprovalScope(requested_scope), \
            OnExpiry(on_expiry)
        adigest = digest_of(action)
        check_text(reason, "the reason", "reason", MAX_REASON, required=False)
        # every field of what is asked is in the digest; the tool call that carried the
        # request is not what is asked: a host that retries makes a new tool call for the
        # same request, which rejoins it (the approval keeps the first call's id)
        request = {"run_id": run_id, "action_digest": adigest, "reason": reason,
                   "safety_class": safety.value, "scope": scope.value,
                   "expires_in": expires_in, "expires_at": expires_at,
                   "on_expiry": expiry.value}
        if input_schema is not None:
            check_input_schema(input_schema)
            request["input_schema"] = digest_of(input_schema)

        def op(tx: Tx) -> str:
            key = request_key or tx.new_id("req")
            row = row_where(tx.conn, s.approvals, request_key=key)
            if row is not None:
                if row.request_digest != digest_of(request):
                    raise errors.IdempotencyConflict(
                        f"approval request {key!r} was filed before with other content")
                return row.id
            run = tx.open_run(run_id)
            aid = tx.new_id("apr")
            exp = expires_at if expires_at is not None else (
                tx.now + expires_in if expires_in is not None else None)
            insert_rows(tx.conn, s.approvals, [dict(
                id=aid, run_id=run_id, attempt=run.current_attempt, agent=requester(tx, run),
                tool_call_id=tool_call_id, action=canonical_json(action), action_name=name,
                action_digest=adigest, safety_class=safety.value, reason=reason,
                requested_scope=scope.value, status="pending", on_expiry=expiry.value,
                expires_at=exp, request_key=key, request_digest=digest_of(request), version=1,
                created_at=tx.now, input_schema=None if input_schema is None
                else canonical_json(input_schema))])
            tx.changed("approval", aid, run_id)
            rule = self._matching_rule(tx, action, run)
            payload = {"approval_id": aid, "action": name, "action_digest": adigest,
                       "safety_class": safety.value, "expires_at": exp}
            if rule is None or rule.effect == RuleEffect.PROMPT:
                tx.append_event(run, "approval.requested", payload,
                                status=status_when_opening(run))
            else:
                tx.append_event(run, "approval.requested", payload)
                self._auto_decide(tx, aid, rule)
            return aid

        return self.j.write_then(op, lambda tx, aid: approval_in(tx.conn, aid))

    def _auto_decide(self, tx: Tx, aid: str, rule: Any, applied_by: str | None = None) -> None:
        """Decide ``aid`` by ``rule``: as the request arrives, or (``applied_by``: the
        operator) when a rule just made is applied to a pending request."""
        approve = rule.effect == RuleEffect.ALLOW
        status = "approved" if approve else "denied"
        who = f"rule:{rule.id}"
        if applied_by is None:
            update_where(tx.conn, s.approvals, dict(
                status=status, decided_at=tx.now, decided_by=who, rule_id=rule.id,
                decision_reason=f"{rule.effect} rule {rule.action_pattern}",
                decision_scope=rule.scope, version=2), id=aid)
        else:
            self._close(tx, self._row(tx, aid), status, dict(
                decided_at=tx.now, decided_by=who, rule_id=rule.id,
                decision_reason=f"{rule.effect} rule {rule.action_pattern}, applied by "
                                f"{applied_by}", decision_scope=rule.scope))
        row = row_where(tx.conn, s.approvals, id=aid)
        write_decision(tx, "approval", aid, row.run_id, {"approved": approve, "scope": rule.scope},
                       actor=who, source="rule", reason=f"matched rule {rule.id}")
        tx.audit(f"approval.auto_{status}", "approval", aid, run_id=row.run_id, actor=who,
                 before={"status": "pending"},
                 after={"status": status, "rule_id": rule.id, "applied_by": applied_by})
        event_status = None if applied_by is None else status_after_closing(
            tx.conn, tx.run_row(row.run_id))
        tx.run_event(row.run_id, f"approval.{status}",
                     {"approval_id": aid, "by": who, "rule_id": rule.id}, actor=who,
                     status=event_status)

    def many(self, approval_ids: list[str]) -> list[Approval]:
        """Several approvals in one read, in the order given (a missing one raises NotFound)."""
        return self.j.read(lambda c: [approval_in(c, i) for i in approval_ids])

    def get(self, approval_id: str) -> Approval:
        return self.j.read(lambda c: approval_in(c, approval_id))

    def wait(self, approval_id: str, timeout: float, poll: float = 0.05) -> Approval:
        """Block until the approval leaves ``pending`` (or ``timeout``); applies a due expiry
        (a read-only journal only reports what is stored)."""
        deadline = time.monotonic() + timeout
        while True:
            approval = self.get(approval_id)
            if approval.status == ApprovalStatus.PENDING and approval.expires_at is not None \
                    and approval.on_expiry == OnExpiry.DENY and not self.j.read_only \
                    and self.j.now() >= approval.expires_at:
                self.expire_due()
                approval = self.get(approval_id)
            if approval.status != ApprovalStatus.PENDING:
                self._check_trusted(approval_id)
                return approval
            if time.monotonic() >= deadline:
                return approval
            time.sleep(poll)

    def _check_trusted(self, approval_id: str) -> None:
        """With trust configured: DecisionUnverified unless a trusted operator (or a rule a
        trusted operator signed) made the approval's decision."""
        if self.j.trust is not None:
            from .decision_checks import check_approval

            self.j.read(lambda c: check_approval(c, self.j.trust, row_where(
                c, s.approvals, id=approval_id), self.j.now()))

    def withdraw(self, approval_id: str, reason: str) -> Approval:
        """Agent side: nobody waits for this any more (cancelled, with an audit row)."""

        def op(tx: Tx) -> None:
            row = self._row(tx, approval_id)
            if row.status != ApprovalStatus.PENDING:
                raise errors.InvalidTransition(f"approval {approval_id} is already {row.status}")
            self._close(tx, row, "cancelled", {"decided_at": tx.now, "decision_reason": reason})
            tx.audit("approval.withdrawn", "approval", approval_id, run_id=row.run_id,
                     reason=reason, before={"status": "pending"}, after={"status": "cancelled"})
            tx.run_event(row.run_id, "approval.withdrawn",
                         {"approval_id": approval_id, "reason": reason},
                         status=status_after_closing(tx.conn, tx.run_row(row.run_id)))

        return self.j.write_then(op, lambda tx, _: approval_in(tx.conn, approval_id))

    def consume_and_reserve(self, approval_id: str, action_digest: str, effect_key: str, *,
                            lease_seconds: float = 30.0, owner: str | None = None,
                            idempotency_key: str | None = None) -> Effect:
        """Consume an approved approval for exactly ``action_digest`` and reserve the effect,
        in one transaction. A refused reservation leaves the approval unconsumed."""
        effects = self.j.effects

        def op(tx: Tx) -> None:
            row = self._row(tx, approval_id)
            refuse_tampered("approval", approval_id, row)
            if row.status != ApprovalStatus.APPROVED:
                raise errors.NotConsumable(f"approval {approval_id} is {row.status}, not approved")
            if row.consumed_at is not None:
                raise errors.NotConsumable(
                    f"approval {approval_id} was already consumed for {row.consumed_effect_key}")
            approved_digest, approved = approved_action_of(row, tx.conn)
            if approved_digest != action_digest:
                raise errors.DigestMismatch(
                    f"approval {approval_id} is for action {approved_digest[:12]}…, "
                    f"not {action_digest[:12]}…" + (
                        " (the operator edited the action: run the approved one)"
                        if row.approved_digest is not None else ""))
            if self.j.trust is not None:
                from .decision_checks import check_approval

                check_approval(tx.conn, self.j.trust, row, tx.now)
            tx.live_run(row.run_id)  # an ended run consumes nothing (and gets no event)
            if tx.now >= consume_deadline(row):
                self._lapse(tx, row)
                return
            reserved = effects.reserve_in(
                tx, effect_key, run_id=row.run_id, tool=row.action_name,
                action=approved, safety_class=row.safety_class,
                idempotency_key=idempotency_key, lease_seconds=lease_seconds,
                owner=owner, approval_id=approval_id)
            if not reserved:
                return  # the refusal (and any write that must survive it) is pending
            update_where(tx.conn, s.approvals, dict(
                consumed_at=tx.now, consumed_effect_key=effect_key, version=row.version + 1),
                id=approval_id, consumed_at=None)
            tx.changed("approval", approval_id, row.run_id)
            tx.run_event(row.run_id, "approval.consumed",
                         {"approval_id": approval_id, "effect_key": effect_key})

        return self.j.write_then(op, lambda tx, _: effects.get_in(tx, effect_key))

    def _lapse(self, tx: Tx, row: Any) -> None:
        """An approved approval not consumed by its deadline becomes ``expired``: the
        status, an audit row and a run event are committed, then ``ApprovalLapsed`` is
        raised (a lapsed grant is evidence, like a lapsed pending request)."""
        deadline = consume_deadline(row)
        done = update_where(tx.conn, s.approvals, dict(status="expired",
                                                       version=row.version + 1),
                            id=row.id, version=row.version, status="approved",
                            consumed_at=None)
        if done != 1:
            raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
        tx.changed("approval", row.id, row.run_id)
        tx.audit("approval.expired", "approval", row.id, run_id=row.run_id,
                 actor="system:expiry", before={"status": "approved", "consume_by": deadline},
                 after={"status": "expired"}, reason="approved but not used before it lapsed")
        tx.run_event(row.run_id, "approval.expired",
                     {"approval_id": row.id, "was": "approved", "consume_by": deadline},
                     actor="system:expiry")
        tx.raise_after_commit(errors.ApprovalLapsed(
            f"approval {row.id} could be used until {deadline:.0f}; it lapsed unused and is "
            "now expired", consume_by=deadline))

    # ------------------------------------------------------------ operator side

    def consume_approval_and_reserve(self, approval_id: str, action_digest: str,
                                     effect_key: str, **kw: Any) -> Effect:
        """The name the issue and the seed stores use for :meth:`consume_and_reserve`."""
        return self.consume_and_reserve(approval_id, action_digest, effect_key, **kw)
    def decide(self, approval_id: str, approve: bool, *, expected_version: int,
               reason: str | None = None, scope: ApprovalScope | str = ApprovalScope.ONCE,
               request_id: str | None = None, source: str = "desk") -> Approval:
        """Approve or deny. One decision row, one audit row, one run event, one transaction."""
        self.j.require_operator()
        scope = ApprovalScope(scope)
        reason = (reason or "").strip() or None
        if not approve and not reason:
            raise errors.ValidationError("a reason is required to deny", field="reason")
        if reason:
            check_text(reason, "the reason", "reason", MAX_REASON)
        request = {"op": "approval.decide", "id": approval_id, "approve": approve,
                   "reason": reason, "scope": scope.value, "expected_version": expected_version,
                   "source": source}

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            refuse_tampered("approval", approval_id, self._row(tx, approval_id))
            row = self._decidable(tx, approval_id, expected_version)
            if row is None:
                return
            status = "approved" if approve else "denied"
            rule_id = None
            if approve and scope != ApprovalScope.ONCE:
                rule_id = self._rule_from(tx, row, scope)
            self._close(tx, row, status, {
                "decided_at": tx.now, "decided_by": tx.actor.label, "decision_reason": reason,
                "decision_scope": scope.value, "rule_id": rule_id})
            write_decision(tx, "approval", approval_id, row.run_id,
                           {"approved": approve, "scope": scope.value, "rule_id": rule_id},
                           actor=tx.actor.label, source=source, reason=reason,
                           request_id=request_id)
            tx.audit(f"approval.{status}", "approval", approval_id, run_id=row.run_id,
                     before={"status": "pending", "version": row.version},
                     after={"status": status, "scope": scope.value, "rule_id": rule_id},
                     reason=reason, request_id=request_id, request=request)
            tx.run_event(row.run_id, f"approval.{status}",
                         {"approval_id": approval_id, "by": tx.actor.label, "reason": reason,
                          "scope": scope.value},
                         status=status_after_closing(tx.conn, tx.run_row(row.run_id)))

        return self.j.write_then(op, lambda tx, _: approval_in(tx.conn, approval_id))

    def _decidable(self, tx: Tx, approval_id: str, expected_version: int) -> Any:
        row = self._row(tx, approval_id)
        if row.status == ApprovalStatus.EXPIRED:
            raise errors.Expired(f"approval {approval_id} expired before the decision")
        if row.status == ApprovalStatus.CANCELLED:
            raise errors.Withdrawn(
                f"approval {approval_id} was withdrawn by the agent"
                + (f": {row.decision_reason}" if row.decision_reason else ""),
                status=row.status, reason=row.decision_reason)
        if row.status != ApprovalStatus.PENDING:
            raise errors.AlreadyDecided(
                f"approval {approval_id} was already {row.status} by {row.decided_by or 'the agent'}",
                status=row.status, decided_by=row.decided_by, reason=row.decision_reason)
        if row.expires_at is not None and tx.now >= row.expires_at \
                and row.on_expiry == OnExpiry.DENY:
            self._expire(tx, row)
            tx.raise_after_commit(errors.Expired(
                f"approval {approval_id} expired before the decision; it is now expired"))
            return None
        if row.version != expected_version:
            raise errors.StaleVersion(
                f"approval {approval_id} is at version {row.version}, you saw {expected_version}")
        run = tx.run_row(row.run_id)
        refuse_requester(tx, (row.agent, run.agent), verb="approve")
        if run.status in ("completed", "failed", "cancelled"):
            raise errors.RunTerminal(f"run {row.run_id} is {run.status}")
        return row

    def bulk_decide(self, items: list[tuple[str, int]], approve: bool, *,
                    reason: str | None = None, scope: ApprovalScope | str = ApprovalScope.ONCE,
                    request_id: str | None = None) -> list[BulkResult]:
        """Decide N approvals, each in its own transaction; a per-item result for each."""
        self.j.require_operator()
        results = []
        for approval_id, version in items:
            rid = f"{request_id}:{approval_id}" if request_id else None
            try:
                self.decide(approval_id, approve, expected_version=version, reason=reason,
                            scope=scope, request_id=rid)
                results.append(BulkResult(id=approval_id, ok=True))
            except errors.ProctorError as err:
                results.append(BulkResult(id=approval_id, ok=False, error=str(err),
                                          error_type=type(err).__name__))
        return results

    def expire_due(self) -> int:
        """Expire every pending approval past its expiry whose policy is ``deny``."""

        def op(tx: Tx) -> int:
            rows = tx.conn.execute(select(s.approvals).where(
                s.approvals.c.status == "pending", s.approvals.c.on_expiry == "deny",
                s.approvals.c.expires_at <= tx.now).limit(500)).all()
            for row in rows:
                self._expire(tx, row)
            return len(rows)

        return self.j.write(op)

    def _expire(self, tx: Tx, row: Any) -> None:
        self._close(tx, row, "expired", {"decided_at": tx.now, "decided_by": "system:expiry"})
        write_decision(tx, "approval", row.id, row.run_id, {"approved": False, "expired": True},
                       actor="system:expiry", source="expiry", reason="expired")
        tx.audit("approval.expired", "approval", row.id, run_id=row.run_id,
                 actor="system:expiry", before={"status": "pending"},
                 after={"status": "expired"}, reason="expired before a decision")
        tx.run_event(row.run_id, "approval.expired", {"approval_id": row.id},
                     status=status_after_closing(tx.conn, tx.run_row(row.run_id)),
                     actor="system:expiry")

    @staticmethod
    def _row(tx: Tx, approval_id: str) -> Any:
        row = row_where(tx.conn, s.approvals, id=approval_id)
        if row is None:
            raise errors.NotFound(f"approval {approval_id} does not exist")
        return row

    @staticmethod
    def _close(tx: Tx, row: Any, status: str, values: dict) -> None:
        done = update_where(tx.conn, s.approvals, dict(
            status=status, version=row.version + 1, **values),
            id=row.id, version=row.version, status="pending")
        if done != 1:
            raise errors.StaleVersion(f"approval {row.id} changed meanwhile")
        tx.changed("approval", row.id, row.run_id)

    # ------------------------------------------------------------ rules
    def add_rule(self, effect: RuleEffect | str, action_pattern: str, *,
                 resource_pattern: str = "*", scope: ApprovalScope | str = ApprovalScope.RUN,
                 run_id: str | None = None, project: str = "*", space: str | None = None,
                 expires_at: float | None = None,
                 predicate: str | None = None) -> ApprovalRule:
        self.j.require_operator()
        scope = ApprovalScope(scope)
        predicate = rules_mod.predicates.normalized(predicate)
        if scope == ApprovalScope.RUN and not run_id:
            raise errors.ValidationError("a run-scoped rule needs a run", field="run_id")

        def op(tx: Tx) -> str:
            return self._insert_rule(tx, RuleEffect(effect), action_pattern, resource_pattern,
                                     scope, run_id, project, space, expires_at, None,
                                     predicate)

        return self.rule(self.j.write(op))

    def _rule_from(self, tx: Tx, row: Any, scope: ApprovalScope) -> str:
        """The rule a plain "always" decision makes: this tool, exactly this resource, the
        run (or its space), expiring after ``rules.DEFAULT_RULE_TTL`` (see ``rule_draft``)."""
        run = tx.run_row(row.run_id)
        resource = action_resource(canonical_json_loads(row.action))
        return self._insert_rule(
            tx, RuleEffect.ALLOW, rules_mod.glob_escape(row.action_name),
            rules_mod.glob_escape(resource) if resource else "*", scope,
            run.id if scope == ApprovalScope.RUN else None, run.project, run.space,
            tx.now + rules_mod.DEFAULT_RULE_TTL, row.id)

    @staticmethod
    def _insert_rule(tx: Tx, effect: RuleEffect, action_pattern: str, resource_pattern: str,
                     scope: ApprovalScope, run_id: str | None, project: str, space: str | None,
                     expires_at: float | None, source: str | None,
                     predicate: str | None = None) -> str:
        rid = tx.new_id("rule")
        tx.conn.execute(insert(s.approval_rules).values(
            id=rid, effect=effect.value, action_pattern=action_pattern,
            resource_pattern=resource_pattern, scope=scope.value, run_id=run_id,
            project=project, space=space, created_by=tx.actor.label, created_at=tx.now,
            expires_at=expires_at, source_approval_id=source, version=1, predicate=predicate))
        tx.changed("rule", rid, run_id)
        sign_in(tx, RULE, rid, "rule", rid, rule_content(row_where(
            tx.conn, s.approval_rules, id=rid)), None)
        if source is None:
            tx.audit("rule.created", "rule", rid, run_id=run_id,
                     after={"effect": effect.value, "action": action_pattern,
                            "resource": resource_pattern, "scope": scope.value,
                            "when": predicate, "expires_at": expires_at})
        return rid

    def revoke_rule(self, rule_id: str, *, expected_version: int,
                    request_id: str | None = None, reason: str | None = None) -> ApprovalRule:
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
            row = tx.conn.execute(select(s.approval_rules).where(
                s.approval_rules.c.id == rule_id)).first()
            if row is None:
                raise errors.NotFound(f"rule {rule_id} does not exist")
            if row.revoked_at is not None:
                raise errors.InvalidTransition(f"rule {rule_id} is already revoked")
            if row.version != expected_version:
                raise errors.StaleVersion(f"rule {rule_id} changed since you looked")
            tx.conn.execute(update(s.approval_rules).where(s.approval_rules.c.id == rule_id)
                            .values(revoked_at=tx.now, revoked_by=tx.actor.label,
                                    revoke_reason=reason, version=row.version + 1))
            tx.changed("rule", rule_id, row.run_id)
            sign_in(tx, RULE_REVOKE, f"{rule_id}/revoked", "rule", rule_id, {"revoked": True},
                    None)
            tx.audit("rule.revoked", "rule", rule_id, run_id=row.run_id,
                     before={"active": True}, after={"active": False},
                     reason=reason, request_id=request_id, request=request)

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
        rows = LIVE_RULES.all(conn, now=now, run_id=run.id, project=run.project,
                              space=run.space)
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

    def decide_with_rule(self, approval_id: str, draft: RuleDraft, *, expected_version: int,
                         reason: str | None = None, apply_to: list[tuple[str, int]] = (),
                         request_id: str | None = None, source: str = "desk") -> RuleMade:
        """Decide ``approval_id`` by making ``draft`` (allow approves it, deny denies it) and,
        in the same transaction, apply the rule to the pending requests ``apply_to`` (id,
        version as previewed). Anything stale, already decided, outside the rule or not
        the operator's to decide refuses the whole transaction."""
        self.j.require_operator()
        draft = rules_mod.checked(draft, self.j.now())
        if draft.effect == RuleEffect.PROMPT:
            raise errors.ValidationError("a prompt rule decides nothing; make it on its own",
                                         field="effect")
        approve = draft.effect == RuleEffect.ALLOW
        reason = (reason or "").strip() or None
        if not approve and not reason:
            raise errors.ValidationError("a reason is required to deny", field="reason")
        if reason and len(reason) > MAX_REASON:
            raise errors.ValidationError("the reason is too long", field="reason")
        pairs = [(str(i), int(v)) for i, v in apply_to]
        request = {"op": "approval.decide_with_rule", "id": approval_id,
                   "draft": draft.model_dump(mode="json"), "reason": reason,
                   "apply_to": pairs, "expected_version": expected_version}

        def op(tx: Tx) -> tuple[str, list[str]]:
            if tx.replayed(request_id, request):
                return self._replayed_rule(tx, request_id), [i for i, _ in pairs]
            refuse_tampered("approval", approval_id, self._row(tx, approval_id))
            row = self._decidable(tx, approval_id, expected_version)
            if row is None:
                return "", []
            rules_mod.check_fits(draft, tx.run_row(row.run_id))
            rid = self._insert_draft(tx, draft, row.id, request_id, request)
            status = "approved" if approve else "denied"
            scope = ApprovalScope(rules_mod.stored_scope(draft))
            self._close(tx, row, status, {
                "decided_at": tx.now, "decided_by": tx.actor.label, "decision_reason": reason,
                "decision_scope": scope.value, "rule_id": rid})
            write_decision(tx, "approval", approval_id, row.run_id,
                           {"approved": approve, "scope": scope.value, "rule_id": rid},
                           actor=tx.actor.label, source=source, reason=reason,
                           request_id=request_id)
            tx.audit(f"approval.{status}", "approval", approval_id, run_id=row.run_id,
                     before={"status": "pending", "version": row.version},
                     after={"status": status, "scope": scope.value, "rule_id": rid},
                     reason=reason)
            tx.run_event(row.run_id, f"approval.{status}",
                         {"approval_id": approval_id, "by": tx.actor.label, "reason": reason,
                          "scope": scope.value, "rule_id": rid},
                         status=status_after_closing(tx.conn, tx.run_row(row.run_id)))
            return rid, self._apply_rule(tx, rid, pairs)

        def fetch(tx: Tx, made: tuple[str, list[str]]) -> RuleMade:
            rid, applied = made
            return RuleMade(approval=approval_in(tx.conn, approval_id),
                            rule=self._rule_in(tx.conn, rid), applied=applied)

        return self.j.write_then(op, fetch)

    def make_rule(self, draft: RuleDraft, *, apply_to: list[tuple[str, int]] = (),
                  request_id: str | None = None) -> RuleMade:
        """Make ``draft`` on its own (the CLI, the Rules page) and apply it to the pending
        requests ``apply_to`` as previewed, in one transaction."""
        self.j.require_operator()
        draft = rules_mod.checked(draft, self.j.now())
        pairs = [(str(i), int(v)) for i, v in apply_to]
        if pairs and draft.effect == RuleEffect.PROMPT:
            raise errors.ValidationError("a prompt rule decides nothing it could apply to",
                                         field="apply_to")
        request = {"op": "rule.make", "draft": draft.model_dump(mode="json"),
                   "apply_to": pairs}

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
        return self.j.read(lambda c: rules_mod.usage(c, active_only=active_only,
                                                     now=self.j.now()))

    def decided_by_rule(self, rule_id: str, limit: int = 500) -> list[Approval]:
        """The requests ``rule_id`` decided, newest first."""
        stmt = rules_mod.decided_by_rule_select(rule_id).limit(limit)
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))

    @staticmethod
    def _rule_in(conn: Any, rule_id: str) -> ApprovalRule:
        stmt = select(s.approval_rules).where(s.approval_rules.c.id == rule_id)
        return fetch_one(conn, ApprovalRule, stmt, f"rule {rule_id}")

    @staticmethod
    def _replayed_rule(tx: Tx, request_id: str) -> str:
        row = row_where(tx.conn, s.audit, request_id=request_id)
        return row.entity_id

    @staticmethod
    def _insert_draft(tx: Tx, draft: RuleDraft, source: str | None, request_id: str | None,
                      request: Any) -> str:
        rid = tx.new_id("rule")
        scope = rules_mod.stored_scope(draft)
        tx.conn.execute(insert(s.approval_rules).values(
            id=rid, effect=RuleEffect(draft.effect).value, action_pattern=draft.action_pattern,
            resource_pattern=draft.resource_pattern, scope=scope, run_id=draft.run_id,
            project=draft.project, space=draft.space, created_by=tx.actor.label,
            created_at=tx.now, expires_at=draft.expires_at, source_approval_id=source,
            version=1, predicate=draft.predicate))
        tx.changed("rule", rid, draft.run_id)
        sign_in(tx, RULE, rid, "rule", rid, rule_content(row_where(
            tx.conn, s.approval_rules, id=rid)), None)
        tx.audit("rule.created", "rule", rid, run_id=draft.run_id,
                 after={"effect": RuleEffect(draft.effect).value, "action": draft.action_pattern,
                        "resource": draft.resource_pattern, "when": draft.predicate,
                        "scope": draft.scope, "project": draft.project, "space": draft.space,
                        "expires_at": draft.expires_at, "from_approval": source},
                 request_id=request_id, request=request)
        return rid

    def _apply_rule(self, tx: Tx, rule_id: str, pairs: list[tuple[str, int]]) -> list[str]:
        """Decide the pending requests ``pairs`` with the rule just made (each re-checked:
        pending, at the version previewed, in the rule's scope, matched by it, and not
        requested by the operator deciding)."""
        rule = row_where(tx.conn, s.approval_rules, id=rule_id)
        applied = []
        for approval_id, version in pairs:
            refuse_tampered("approval", approval_id, self._row(tx, approval_id))
            row = self._decidable(tx, approval_id, version)
            if row is None:
                raise errors.Expired(f"approval {approval_id} expired; preview the rule again")
            run = tx.run_row(row.run_id)
            action = canonical_json_loads(row.action)
            in_scope = rule_id in {r.id for r in LIVE_RULES.all(
                tx.conn, now=tx.now, run_id=run.id, project=run.project, space=run.space)}
            if not in_scope or not rules_mod.rule_matches(
                    rule, row.action_name, action_resource(action), action):
                raise errors.StaleVersion(
                    f"approval {approval_id} is not one this rule decides; preview it again")
            self._auto_decide(tx, approval_id, rule, applied_by=tx.actor.label)
            applied.append(approval_id)
        return applied

    # ------------------------------------------------------------ edit, then approve
    def approve_edited(self, approval_id: str, action: dict, *, expected_version: int,
                       reason: str | None = None, request_id: str | None = None,
                       source: str = "desk") -> Approval:
        """Approve ``action``, the operator's edit of the requested action (same tool, other
        arguments): it gets its own digest, which ``consume_and_reserve`` then requires;
        the requested action stays as evidence. One decision (recording both digests and the
        changes), one audit row, one run event, one transaction."""
        self.j.require_operator()
        reason = (reason or "").strip() or None
        if reason and len(reason) > MAX_REASON:
            raise errors.ValidationError("the reason is too long", field="reason")
        edited_name = action_name(action)
        edited_text = canonical_json(action)
        edited_digest = digest_of(action)
        request = {"op": "approval.approve_edited", "id": approval_id,
                   "approved_digest": edited_digest, "reason": reason,
                   "expected_version": expected_version}

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            refuse_tampered("approval", approval_id, self._row(tx, approval_id))
            row = self._decidable(tx, approval_id, expected_version)
            if row is None:
                return
            original = canonical_json_loads(row.action)
            if edited_name != row.action_name or action.get("tool") != original.get("tool") \
                    or action.get("name") != original.get("name"):
                raise errors.ValidationError(
                    f"an edit keeps the tool ({row.action_name}); change only its arguments",
                    field="action.tool")
            if edited_digest == row.action_digest:
                raise errors.ValidationError("the action is unchanged; approve it as it is",
                                             field="action")
            check_against_schema(action, canonical_json_loads(row.input_schema)
                                 if row.input_schema else None)
            changes = json_changes(original, action)
            self._close(tx, row, "approved", {
                "decided_at": tx.now, "decided_by": tx.actor.label, "decision_reason": reason,
                "decision_scope": "once", "approved_action": edited_text,
                "approved_digest": edited_digest})
            write_decision(tx, "approval", approval_id, row.run_id,
                           {"approved": True, "scope": "once", "edited": True,
                            "original_digest": row.action_digest,
                            "approved_digest": edited_digest, "approved_action": action,
                            "edited_action_digest": edited_digest},
                           actor=tx.actor.label, source=source, reason=reason,
                           request_id=request_id)
            tx.audit("approval.approved_edited", "approval", approval_id, run_id=row.run_id,
                     before={"status": "pending", "version": row.version,
                             "action_digest": row.action_digest},
                     after={"status": "approved", "approved_digest": edited_digest,
                            "changes": changes},
                     reason=reason, request_id=request_id, request=request)
            tx.run_event(row.run_id, "approval.approved",
                         {"approval_id": approval_id, "by": tx.actor.label, "reason": reason,
                          "scope": "once", "edited": True, "original_digest": row.action_digest,
                          "approved_digest": edited_digest, "changes": changes},
                         status=status_after_closing(tx.conn, tx.run_row(row.run_id)))

        return self.j.write_then(op, lambda tx, _: approval_in(tx.conn, approval_id))

    # ------------------------------------------------------------ reads
    def for_run(self, run_id: str) -> list[Approval]:
        stmt = approval_select().where(s.approvals.c.run_id == run_id).order_by(
            s.approvals.c.created_at, s.approvals.c.id)
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))

    def similar(self, approval_id: str, limit: int = 20) -> list[Approval]:
        """Past decisions on the same action name, newest first."""
        current = self.get(approval_id)
        a = s.approvals.c
        stmt = approval_select().where(
            a.action_name == current.action_name, a.id != approval_id,
            a.status.in_(["approved", "denied", "expired"]),
        ).order_by(a.decided_at.desc()).limit(limit)
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))

    def decisions(self, target_id: str) -> list[Decision]:
        return self.j.read(lambda c: decisions_for(c, target_id))


def _live_rules() -> Any:
    r = s.approval_rules.c
    return select(s.approval_rules).where(
        r.revoked_at.is_(None),
        or_(r.expires_at.is_(None), r.expires_at > bindparam("now")),
        or_(r.run_id == bindparam("run_id"),
            (r.scope == "space") & or_(r.project == bindparam("project"), r.project == "*")
            & (r.space.is_(None) | (r.space == bindparam("space")))))


# The rules that may decide a request in a run (then matched by pattern in Python).
LIVE_RULES = Prepared(_live_rules())


def approved_action_of(row: Any, conn: Any) -> tuple[str, Any]:
    """(digest, action) of what was approved: the operator's edit, if any — its stored digest
    re-checked against its stored text and against the (immutable) decision row that
    recorded the edit — else the requested action."""
    if row.approved_digest is None:
        return row.action_digest, canonical_json_loads(row.action)
    approved = canonical_json_loads(row.approved_action)
    recorded = [d.decision.get("approved_digest") for d in decisions_for(conn, row.id)
                if isinstance(d.decision, dict) and d.decision.get("edited")]
    if digest_of(approved) != row.approved_digest or recorded != [row.approved_digest]:
        raise errors.Tampered(
            f"approval {row.id}'s edited action does not match its digest: the journal was "
            "altered after the decision; nothing was reserved", kind="approval", id=row.id)
    return row.approved_digest, approved


def check_input_schema(schema: Any) -> None:
    import jsonschema

    if not isinstance(schema, dict):
        raise errors.ValidationError("an input schema is a JSON object", field="input_schema")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise errors.ValidationError(f"not a valid JSON Schema: {exc.message}",
                                     field="input_schema") from exc


def check_against_schema(action: dict, schema: Any) -> None:
    """An edited action's ``args`` against the tool's input schema (when the agent gave one)."""
    if schema is None:
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = sorted(validator.iter_errors(action.get("args", {})),
                      key=lambda e: list(e.absolute_path))
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.absolute_path)
        raise errors.ValidationError(
            f"the edited arguments do not fit the tool's schema: {first.message}"
            + (f" (at args.{where})" if where else ""),
            field="action.args" + (f".{where}" if where else ""))


MAX_CHANGES = 50


def json_changes(before: Any, after: Any, path: str = "") -> list[dict]:
    """What an edit changed, path by path: [{path, before, after}] (a missing side is
    absent from its dict), at most ``MAX_CHANGES``."""
    out: list[dict] = []
    _changes(before, after, path, out)
    return out[:MAX_CHANGES]


def _changes(before: Any, after: Any, path: str, out: list[dict]) -> None:
    if len(out) >= MAX_CHANGES:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append({"path": sub, "before": before[key]})
            elif key not in before:
                out.append({"path": sub, "after": after[key]})
            else:
                _changes(before[key], after[key], sub, out)
        return
    if canonical_json(before) != canonical_json(after):
        out.append({"path": path or "(action)", "before": before, "after": after})


# How long an approval may be used after the decision when its request set no expiry (or
# a person approved it after its advisory, keep_pending, expiry): one hour.
CONSUME_WINDOW = 3600.0


def consume_deadline(row: Any) -> float:
    """Until when an approved approval may be consumed: its ``expires_at`` when it was
    decided before that, else ``CONSUME_WINDOW`` after the decision."""
    decided = row.decided_at if row.decided_at is not None else row.created_at
    if row.expires_at is not None and decided < row.expires_at:
        return row.expires_at
    return decided + CONSUME_WINDOW


def requester(tx: Tx, run: Any) -> str:
    """Who asked: the calling agent itself, or the run's agent when an operator files it."""
    return tx.actor.name if tx.actor.kind == ActorKind.AGENT else run.agent


def write_decision(tx: Tx, kind: str, target_id: str, run_id: str | None, decision: Any, *,
                   actor: str, source: str, reason: str | None,
                   request_id: str | None = None) -> str:
    did = tx.new_id("dec")
    body = {"target_kind": kind, "target_id": target_id, "decision": decision, "actor": actor,
            "reason": reason, "created_at": tx.now}
    insert_rows(tx.conn, s.decisions, [dict(
        id=did, target_kind=kind, target_id=target_id, run_id=run_id,
        decision=canonical_json(decision), actor=actor, source=source, request_id=request_id,
        reason=reason, created_at=tx.now, digest=digest_of(body))])
    tx.changed("decision", did, run_id)
    sign_decision(tx, did, kind, target_id, decision, actor=actor, reason=reason,
                  created_at=tx.now)
    return did


def decisions_for(conn: Any, target_id: str) -> list[Decision]:
    stmt = select(s.decisions).where(s.decisions.c.target_id == target_id).order_by(
        s.decisions.c.created_at)
    return to_models(Decision, conn.execute(stmt))


def canonical_json_loads(text: str) -> Any:
    import json

    return json.loads(text)


__all__ = ["Approvals", "action_name", "action_resource", "write_decision", "to_model"]
