"""Approvals: an agent asks before it acts; a person (or a rule) decides; the agent
consumes the approval exactly once, for exactly the action that was approved."""

from __future__ import annotations

import fnmatch
import time
from typing import Any

from sqlalchemy import bindparam, insert, or_, select, update

from . import errors
from . import schema as s
from .canonical import canonical_json, digest_of
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
    RuleEffect,
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
                tool_call_id: str | None = None) -> Approval:
        """Ask for approval of ``action``. Idempotent by ``request_key``. A matching
        allow/deny rule decides at once (recorded as an automatic decision)."""
        name = action_name(action)
        safety, scope, expiry = SafetyClass(safety_class), ApprovalScope(requested_scope), \
            OnExpiry(on_expiry)
        adigest = digest_of(action)
        check_text(reason, "the reason", "reason", MAX_REASON, required=False)
        request = {"run_id": run_id, "action_digest": adigest, "reason": reason,
                   "safety_class": safety.value, "scope": scope.value}

        def op(tx: Tx) -> str:
            key = request_key or tx.new_id("req")
            row = row_where(tx.conn, s.approvals, request_key=key)
            if row is not None:
                if row.request_digest != digest_of(request):
                    raise errors.IdempotencyConflict(
                        f"approval request {key!r} was filed before with other content")
                return row.id
            run = tx.live_run(run_id)
            aid = tx.new_id("apr")
            exp = expires_at if expires_at is not None else (
                tx.now + expires_in if expires_in is not None else None)
            insert_rows(tx.conn, s.approvals, [dict(
                id=aid, run_id=run_id, attempt=run.current_attempt, agent=requester(tx, run),
                tool_call_id=tool_call_id, action=canonical_json(action), action_name=name,
                action_digest=adigest, safety_class=safety.value, reason=reason,
                requested_scope=scope.value, status="pending", on_expiry=expiry.value,
                expires_at=exp, request_key=key, request_digest=digest_of(request), version=1,
                created_at=tx.now)])
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

    def _auto_decide(self, tx: Tx, aid: str, rule: Any) -> None:
        approve = rule.effect == RuleEffect.ALLOW
        status = "approved" if approve else "denied"
        who = f"rule:{rule.id}"
        update_where(tx.conn, s.approvals, dict(
            status=status, decided_at=tx.now, decided_by=who, rule_id=rule.id,
            decision_reason=f"{rule.effect} rule {rule.action_pattern}",
            decision_scope=rule.scope, version=2), id=aid)
        row = row_where(tx.conn, s.approvals, id=aid)
        write_decision(tx, "approval", aid, row.run_id, {"approved": approve, "scope": rule.scope},
                       actor=who, source="rule", reason=f"matched rule {rule.id}")
        tx.audit(f"approval.auto_{status}", "approval", aid, run_id=row.run_id, actor=who,
                 before={"status": "pending"}, after={"status": status, "rule_id": rule.id})
        tx.run_event(row.run_id, f"approval.{status}",
                     {"approval_id": aid, "by": who, "rule_id": rule.id}, actor=who)

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
            if row.action_digest != action_digest:
                raise errors.DigestMismatch(
                    f"approval {approval_id} is for action {row.action_digest[:12]}…, "
                    f"not {action_digest[:12]}…")
            if self.j.trust is not None:
                from .decision_checks import check_approval

                check_approval(tx.conn, self.j.trust, row, tx.now)
            reserved = effects.reserve_in(
                tx, effect_key, run_id=row.run_id, tool=row.action_name,
                action=canonical_json_loads(row.action), safety_class=row.safety_class,
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
                   "reason": reason, "scope": scope.value, "expected_version": expected_version}

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
        if tx.actor.name in (row.agent, run.agent):
            raise errors.NotAllowed(
                f"{tx.actor.name} requested this action (or runs it) and cannot approve it")
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
                 expires_at: float | None = None) -> ApprovalRule:
        self.j.require_operator()
        scope = ApprovalScope(scope)
        if scope == ApprovalScope.RUN and not run_id:
            raise errors.ValidationError("a run-scoped rule needs a run", field="run_id")

        def op(tx: Tx) -> str:
            return self._insert_rule(tx, RuleEffect(effect), action_pattern, resource_pattern,
                                     scope, run_id, project, space, expires_at, None)

        return self.rule(self.j.write(op))

    def _rule_from(self, tx: Tx, row: Any, scope: ApprovalScope) -> str:
        run = tx.run_row(row.run_id)
        return self._insert_rule(tx, RuleEffect.ALLOW, row.action_name, "*", scope,
                                 run.id if scope == ApprovalScope.RUN else None, run.project,
                                 run.space, None, row.id)

    @staticmethod
    def _insert_rule(tx: Tx, effect: RuleEffect, action_pattern: str, resource_pattern: str,
                     scope: ApprovalScope, run_id: str | None, project: str, space: str | None,
                     expires_at: float | None, source: str | None) -> str:
        rid = tx.new_id("rule")
        tx.conn.execute(insert(s.approval_rules).values(
            id=rid, effect=effect.value, action_pattern=action_pattern,
            resource_pattern=resource_pattern, scope=scope.value, run_id=run_id,
            project=project, space=space, created_by=tx.actor.label, created_at=tx.now,
            expires_at=expires_at, source_approval_id=source, version=1))
        tx.changed("rule", rid, run_id)
        sign_in(tx, RULE, rid, "rule", rid, rule_content(row_where(
            tx.conn, s.approval_rules, id=rid)), None)
        if source is None:
            tx.audit("rule.created", "rule", rid, run_id=run_id,
                     after={"effect": effect.value, "action": action_pattern,
                            "resource": resource_pattern, "scope": scope.value})
        return rid

    def revoke_rule(self, rule_id: str, *, expected_version: int,
                    request_id: str | None = None) -> ApprovalRule:
        self.j.require_operator()
        request = {"op": "rule.revoke", "id": rule_id, "expected_version": expected_version}

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
                                    version=row.version + 1))
            tx.changed("rule", rule_id, row.run_id)
            sign_in(tx, RULE_REVOKE, f"{rule_id}/revoked", "rule", rule_id, {"revoked": True},
                    None)
            tx.audit("rule.revoked", "rule", rule_id, run_id=row.run_id,
                     before={"active": True}, after={"active": False},
                     request_id=request_id, request=request)

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
        name, resource = action_name(action), action_resource(action)
        hits = [row for row in rows
                if fnmatch.fnmatchcase(name, row.action_pattern)
                and fnmatch.fnmatchcase(resource, row.resource_pattern)]
        order = {"deny": 0, "prompt": 1, "allow": 2}
        hits.sort(key=lambda row: order[row.effect])
        return hits[0] if hits else None

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
