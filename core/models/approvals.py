"""Approvals and the rules that decide them: an approval, a rule, a drafted rule, what a rule
would match (its hits and preview), what making one did and how it was used."""

from __future__ import annotations

from typing import Any

from .enums import ApprovalScope, ApprovalStatus, Frozen, OnExpiry, RuleEffect, SafetyClass
from .runs import Origin


class Approval(Frozen):
    id: str
    run_id: str
    attempt: int
    agent: str
    project: str
    space: str
    run_title: str
    tool_call_id: str | None
    action: Any
    action_name: str
    action_digest: str
    safety_class: SafetyClass
    reason: str
    requested_scope: ApprovalScope
    status: ApprovalStatus
    on_expiry: OnExpiry
    expires_at: float | None
    version: int
    created_at: float
    decided_at: float | None
    decided_by: str | None
    decision_reason: str | None
    decision_scope: ApprovalScope | None
    rule_id: str | None
    consumed_at: float | None
    consumed_effect_key: str | None
    snoozed_until: float | None
    # the stored action no longer matches action_digest (rewritten outside Proctor): shown
    # as tampered, never decided or consumed (integrity.action_tampered, on every read)
    tampered: bool = False
    input_schema: Any = None  # the tool's argument schema, when the agent supplied one
    approved_action: Any = None  # the action as the operator edited and approved it
    approved_digest: str | None = None
    origin: Origin | None = None  # as the agent reported it when filing (never verified)
    waiter_seen_at: float | None = None  # when the waiting agent last looked (Approvals.wait)
    hold_until: float | None = None  # a person's decision may be undone until then (0013u)

    def held(self, now: float) -> bool:
        """Decided, but the decision may still be undone: the agent may not act on it yet."""
        return (
            self.status in (ApprovalStatus.APPROVED, ApprovalStatus.DENIED)
            and self.hold_until is not None
            and self.consumed_at is None
            and now < self.hold_until
        )

    def as_agent_sees(self, now: float) -> Approval:
        """The approval as its agent may act on it at ``now``: while the decision is held
        (the operator may still undo it) it is still pending, with no decision; otherwise as
        stored. Every adapter's wait reads approvals through this (``Approvals.wait``)."""
        if not self.held(now):
            return self
        return self.model_copy(
            update={
                "status": ApprovalStatus.PENDING,
                "decided_at": None,
                "decided_by": None,
                "decision_reason": None,
                "decision_scope": None,
                "rule_id": None,
                "approved_action": None,
                "approved_digest": None,
            }
        )

    @property
    def edited(self) -> bool:
        """The operator edited the action before approving it."""
        return self.approved_digest is not None

    @property
    def effective_action(self) -> Any:
        """What the agent may do: the edited action if there is one, else the requested."""
        return self.approved_action if self.edited else self.action

    @property
    def effective_digest(self) -> str:
        """The digest ``consume_and_reserve`` takes for this approval."""
        return self.approved_digest if self.approved_digest is not None else self.action_digest


class ApprovalRule(Frozen):
    id: str
    effect: RuleEffect
    action_pattern: str
    resource_pattern: str
    scope: ApprovalScope
    run_id: str | None
    project: str
    space: str | None
    created_by: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None
    revoked_by: str | None
    source_approval_id: str | None
    version: int
    predicate: str | None = None  # core/kernel/predicates.py; None: no condition on the arguments
    revoke_reason: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    @property
    def scope_label(self) -> str:
        """run / space / project as the operator chose it (a project rule is stored as a
        space-scoped rule with no space)."""
        if self.scope == ApprovalScope.RUN:
            return "run"
        return "space" if self.space is not None else "project"

    @property
    def scope_text(self) -> str:
        """Where the rule applies, in words ("run R", "space P/S", "project P")."""
        label = self.scope_label
        if label == "run":
            return f"run {self.run_id}"
        if label == "space":
            return f"space {self.project}/{self.space}"
        return f"project {self.project}" if self.project != "*" else "every project"


class RuleDraft(Frozen):
    """A rule as the operator is about to make it (shown, previewed, then confirmed).
    ``scope`` is run / space / project; ``expires_at`` None means never (not the default)."""

    effect: RuleEffect = RuleEffect.ALLOW
    action_pattern: str
    resource_pattern: str = "*"
    predicate: str | None = None
    scope: str = "run"
    run_id: str | None = None
    project: str = "*"
    space: str | None = None
    expires_at: float | None = None


class RuleHit(Frozen):
    """A request a rule (draft) matches: enough to list it and open it."""

    id: str
    run_id: str
    agent: str
    action_name: str
    status: ApprovalStatus
    version: int
    created_at: float
    decided_by: str | None = None


class RulePreview(Frozen):
    """What a rule would do: past requests it would have decided (newest first, capped)
    and the pending ones it would decide now. ``by_agent_tool``: (agent, tool, count)."""

    past: list[RuleHit]
    past_total: int
    by_agent_tool: list[tuple[str, str, int]]
    pending: list[RuleHit]
    scanned: int
    truncated: bool


class RuleMade(Frozen):
    """A rule just made: the request decided with it (None for a rule made on its own),
    the rule, and the pending requests it was applied to in the same transaction."""

    approval: Approval | None
    rule: ApprovalRule
    applied: list[str]


class RuleUsage(Frozen):
    """A rule with how many requests it decided and whether it still applies."""

    rule: ApprovalRule
    decided: int
    state: str  # active / expired / revoked
