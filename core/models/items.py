"""The other items a person decides and what they leave: questions and decisions, memory
entries with their mutations and conflicts, effects and their receipts."""

from __future__ import annotations

from typing import Any

from .enums import (
    ConflictStatus,
    EffectStatus,
    Frozen,
    MemoryScope,
    QuestionKind,
    QuestionStatus,
    SafetyClass,
    Trust,
)
from .runs import Origin


class Question(Frozen):
    id: str
    run_id: str
    attempt: int
    agent: str
    project: str
    space: str
    run_title: str
    kind: QuestionKind
    prompt: str
    request: Any
    response_schema: Any
    options: list[Any]
    status: QuestionStatus
    expires_at: float | None
    version: int
    created_at: float
    resolved_at: float | None
    resolved_by: str | None
    response: Any
    snoozed_until: float | None
    origin: Origin | None = None  # as the agent reported it when asking (never verified)
    waiter_seen_at: float | None = None  # when the waiting agent last looked (Questions.wait)
    hold_until: float | None = None  # the answer may be undone until then (Questions.undo)
    taken_at: float | None = None  # when the agent took the held answer (never undone after)

    def held(self, now: float) -> bool:
        """Answered or dismissed, but the decision may still be undone: the agent may not
        see it yet."""
        return (
            self.status in (QuestionStatus.RESOLVED, QuestionStatus.DISMISSED)
            and self.hold_until is not None
            and self.taken_at is None
            and now < self.hold_until
        )

    def as_agent_sees(self, now: float) -> Question:
        """The question as its agent may read it at ``now``: while the answer (or dismissal)
        is held it is still open (``presented``), with no answer; otherwise as stored. Every
        agent-side read goes through this (``Questions.wait``, ``Questions.take``, MCP, the
        adapters), as ``Approval.as_agent_sees`` for approvals."""
        if not self.held(now):
            return self
        return self.model_copy(
            update={
                "status": QuestionStatus.PRESENTED,
                "resolved_at": None,
                "resolved_by": None,
                "response": None,
            }
        )

    @property
    def dismiss_reason(self) -> str | None:
        """Why the operator dismissed the question (None unless it is dismissed)."""
        if self.status != QuestionStatus.DISMISSED or not isinstance(self.response, dict):
            return None
        return str(self.response.get("reason") or "")

    @property
    def dismissal(self) -> str | None:
        """What an agent is told of a dismissed question (None unless it is dismissed):
        ``dismissed by the operator: <reason>``."""
        why = self.dismiss_reason
        return None if why is None else f"dismissed by the operator: {why or 'no reason given'}"


class Decision(Frozen):
    id: str
    target_kind: str
    target_id: str
    run_id: str | None
    decision: Any
    actor: str
    source: str
    request_id: str | None
    reason: str | None
    created_at: float
    digest: str


class MemoryEntry(Frozen):
    id: str
    scope: MemoryScope
    scope_key: str
    kind: str
    title: str
    content: str
    priority: int
    trust: Trust
    sensitivity: str
    pinned: bool
    confirmed: bool
    deleted: bool
    version: int
    content_hash: str
    source_run_id: str | None
    created_at: float
    updated_at: float
    last_used_at: float = 0.0  # when an agent last read it (memory.mark_used); 0: never
    use_count: int = 0


class MemoryMutation(Frozen):
    id: str
    entry_id: str
    operation: str
    actor: str
    reason: str | None
    version: int
    before_hash: str | None
    after_hash: str | None
    before_content: str | None
    after_content: str | None
    run_id: str | None
    idempotency_key: str | None
    created_at: float
    event_sequence: int | None = None  # the run_id event this change appended, if any


class Conflict(Frozen):
    id: str
    entry_id: str
    scope: MemoryScope
    scope_key: str
    title: str
    local_content: str
    local_version: int
    incoming_content: str
    incoming_source: str
    # the incoming version's other fields; None: it carried only content for that field
    incoming_kind: str | None = None
    incoming_priority: int | None = None
    incoming_trust: Trust | None = None
    incoming_sensitivity: str | None = None
    run_id: str | None
    status: ConflictStatus
    version: int
    created_at: float
    resolved_at: float | None
    resolved_by: str | None
    resolution_reason: str | None
    snoozed_until: float | None
    origin: Origin | None = None  # as the agent reported it (never verified)


class Effect(Frozen):
    key: str
    run_id: str | None
    attempt: int
    tool: str
    action: Any
    action_digest: str | None = None  # None: an older journal read without upgrading
    safety_class: SafetyClass
    idempotency_key: str | None
    status: EffectStatus
    lease_owner: str | None
    lease_seconds: float
    lease_expires_at: float | None
    approval_id: str | None
    result: Any
    error: str | None
    ambiguous_reason: str | None
    resolved_by: str | None
    resolution_reason: str | None
    version: int
    created_at: float
    started_at: float | None
    updated_at: float
    snoozed_until: float | None
    tampered: bool = False  # as Approval.tampered
    origin: Origin | None = None  # as the agent reported it (never verified)


class Receipt(Frozen):
    id: str
    effect_key: str
    run_id: str | None
    kind: str
    status: str
    external_id: str | None
    evidence: Any
    digest: str
    actor: str
    created_at: float
