"""Standing rules in their transactions: a rule made by hand or from a decision ("always"),
its draft and impact preview, applied to pending requests in the transaction that makes it,
matched as a request arrives, listed with its use and revoked with a reason (``rules.py``
has what a rule is and how rules are ordered; ``transitions.py`` the approval's own steps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.signing import RULE, RULE_REVOKE, rule_content, sign_in
from proctor.core.decisions.writer import (
    LIVE_RULES,
    MAX_REASON,
    action_name,
    action_resource,
    approval_in,
    canonical_json_loads,
    record_decision,
)
from proctor.core.models import (
    Approval,
    ApprovalRule,
    ApprovalScope,
    ChangeKind,
    RuleDraft,
    RuleEffect,
    RuleMade,
    RulePreview,
    RuleUsage,
)
from proctor.core.storage import schema as s
from proctor.core.storage.rows import fetch_one, to_model, to_models
from proctor.core.storage.sql import insert_rows, row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import rules as rules_mod
from .transitions import auto_decide, close, decidable


class StandingRules:
    """The standing rules' operations (``journal.approvals`` offers each under its own
    name): made by hand or from a decision, previewed, applied to pending requests,
    listed with their use and revoked, each in one transaction."""

    def __init__(self, store: Store) -> None:
        self.j = store

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
            return insert_rule(
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
            row = matching_rule(conn, action, run, self.j.now())
            return to_model(ApprovalRule, row) if row is not None else None

        return self.j.read(q)

    def rule_draft(self, approval_id: str, scope: str) -> RuleDraft:
        """The rule approving ``approval_id`` with ``scope`` (run / space / project) would
        make, before the operator edits it (see ``rules.draft_from``)."""
        return rules_mod.draft_from(
            self.j.read(lambda c: approval_in(c, approval_id)), scope, self.j.now()
        )

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
                return replayed_rule(tx, request_id), [i for i, _ in pairs]
            row = decidable(tx, approval_id, expected_version)
            if row is None:
                return "", []
            rules_mod.check_fits(draft, tx.run_row(row.run_id))
            rid = insert_draft(tx, draft, row.id, request_id, request)
            status = "approved" if approve else "denied"
            scope = ApprovalScope(rules_mod.stored_scope(draft))
            close(
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
            return rid, apply_rule(tx, rid, pairs)

        def fetch(tx: Tx, made: tuple[str, list[str]]) -> RuleMade:
            rid, applied = made
            return RuleMade(
                approval=approval_in(tx.conn, approval_id),
                rule=rule_in(tx.conn, rid),
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
                return replayed_rule(tx, request_id), [i for i, _ in pairs]
            if draft.run_id:
                tx.run_row(draft.run_id)
            rid = insert_draft(tx, draft, None, request_id, request)
            return rid, apply_rule(tx, rid, pairs)

        def fetch(tx: Tx, made: tuple[str, list[str]]) -> RuleMade:
            rid, applied = made
            return RuleMade(approval=None, rule=rule_in(tx.conn, rid), applied=applied)

        return self.j.write_then(op, fetch)

    def rule_usage(self, *, active_only: bool = False) -> list[RuleUsage]:
        """Every rule (revoked ones too, as history) with how many requests it decided."""
        return self.j.read(lambda c: rules_mod.usage(c, active_only=active_only, now=self.j.now()))

    def decided_by_rule(self, rule_id: str, limit: int = 500) -> list[Approval]:
        """The requests ``rule_id`` decided, newest first."""
        stmt = rules_mod.decided_by_rule_select(rule_id).limit(limit)
        return self.j.read(lambda c: to_models(Approval, c.execute(stmt)))


def rule_from(tx: Tx, row: Any, scope: ApprovalScope) -> str:
    """The rule a plain "always" decision makes: this tool, exactly this resource, the
    run (or its space), expiring after ``rules.DEFAULT_RULE_TTL`` (see ``rule_draft``)."""
    run = tx.run_row(row.run_id)
    resource = action_resource(canonical_json_loads(row.action))
    return insert_rule(
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


def insert_rule(
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


def matching_rule(conn: Any, action: dict, run: Any, now: float) -> Any:
    rows = LIVE_RULES.all(conn, now=now, run_id=run.id, project=run.project, space=run.space)
    return rules_mod.pick(rows, action_name(action), action_resource(action), action)


def rule_in(conn: Any, rule_id: str) -> ApprovalRule:
    stmt = select(s.approval_rules).where(s.approval_rules.c.id == rule_id)
    return fetch_one(conn, ApprovalRule, stmt, f"rule {rule_id}")


def replayed_rule(tx: Tx, request_id: str | None) -> str:
    """The rule a replayed request made (``tx.replayed`` found its audit row)."""
    row = row_where(tx.conn, s.audit, request_id=request_id)
    return row.entity_id


def insert_draft(
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


def apply_rule(tx: Tx, rule_id: str, pairs: list[tuple[str, int]]) -> list[str]:
    """Decide the pending requests ``pairs`` with the rule just made (each re-checked:
    pending, at the version previewed, in the rule's scope, matched by it, and not
    requested by the operator deciding)."""
    rule = row_where(tx.conn, s.approval_rules, id=rule_id)
    applied = []
    for approval_id, version in pairs:
        row = decidable(tx, approval_id, version)
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
        auto_decide(tx, approval_id, rule, applied_by=tx.actor.label)
        applied.append(approval_id)
    return applied
