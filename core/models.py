"""Frozen pydantic models: the only shapes that cross the core boundary.

Times are UTC seconds since the epoch (float). JSON payloads are plain Python
values (dict/list/str/...), already parsed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from proctor.core import aliases
from proctor.core.aliases import Retiring, retired_value


class Frozen(BaseModel):
    # defer_build: a model's validator is built on its first use, not at import (a hook
    # uses a few of the many models; issue 33)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# ---------------------------------------------------------------- enums


class ActorKind(StrEnum):
    AGENT = "agent"
    OPERATOR = "operator"
    SYSTEM = "system"


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    WAITING_FOR_USER = "waiting_for_user"
    INTERRUPTED = "interrupted"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_RUN_STATUSES


TERMINAL_RUN_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class AttemptStatus(StrEnum):
    """An attempt's state. There is no "cancelled": a cancelled run's open attempt ends
    ``failed`` with the error "cancelled: <reason>" (a new value would break older desks
    reading the journal); an agent closes its own attempt with ``Runs.finish_attempt``."""

    RUNNING = "running"
    WAITING_FOR_USER = "waiting_for_user"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class SafetyClass(StrEnum):
    SAFE_READ = "safe_read"
    IDEMPOTENT_WRITE = "idempotent_write"
    UNSAFE_WRITE = "unsafe_write"
    EXTERNAL_SIDE_EFFECT = "external_side_effect"
    FINANCIAL = "financial"
    DESTRUCTIVE = "destructive"


class ToolCallStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    OUTCOME_UNKNOWN = "outcome_unknown"


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class ApprovalScope(StrEnum):
    ONCE = "once"
    RUN = "run"
    SPACE = "space"


class OnExpiry(StrEnum):
    KEEP_PENDING = "keep_pending"
    DENY = "deny"


class RuleEffect(StrEnum):
    ALLOW = "allow"
    PROMPT = "prompt"
    DENY = "deny"


class QuestionKind(StrEnum):
    QUESTION = "question"
    CHOICE = "choice"
    FORM = "form"
    CONFIRMATION = "confirmation"
    DIFF_REVIEW = "diff_review"
    MERGE_CONFLICT = "merge_conflict"
    CREDENTIAL_BINDING = "credential_binding"
    MEMORY_CHANGE_REVIEW = "memory_change_review"


class QuestionStatus(StrEnum):
    REQUESTED = "requested"
    PRESENTED = "presented"
    RESOLVED = "resolved"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    DISMISSED = "dismissed"  # an operator closed it without answering (with a reason)


class MemoryScope(StrEnum):
    PROJECT = "project"
    SPACE = "space"
    USER = "user"


class Trust(StrEnum):
    USER_CONFIRMED = "user_confirmed"
    OPERATOR_EDITED = "operator_edited"
    AGENT_OBSERVED = "agent_observed"
    MODEL_INFERRED = "model_inferred"


class ConflictStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED_LOCAL = "accepted_local"
    ACCEPTED_INCOMING = "accepted_incoming"
    MERGED = "merged"
    DISMISSED = "dismissed"


class EffectStatus(StrEnum):
    RESERVED = "reserved"
    EXECUTING = "executing"
    COMMITTED = "committed"
    FAILED = "failed"
    AMBIGUOUS = "ambiguous"


class InboxKind(StrEnum, metaclass=Retiring):
    """What waits for a person. Each kind's change-feed rows are ``change_kind``'s."""

    APPROVAL = "approval"
    QUESTION = "question"
    CONFLICT = "conflict"
    EFFECT = "effect"

    @property
    def change_kind(self) -> ChangeKind:
        return ChangeKind[self.name]

    @classmethod
    def _missing_(cls, value: object) -> InboxKind | None:
        return retired_value(cls, value)


class ChangeKind(StrEnum, metaclass=Retiring):
    """What a change-feed row (``changes.entity_kind``) is about. An 'event' row says its
    run's head moved (``ChangeSet.kinds`` counts it as a 'run' change): a transaction writes
    one per run (its last event's), none for a run it writes a 'run' row for."""

    RUN = "run"
    EVENT = "event"
    AUDIT = "audit"
    APPROVAL = "approval"
    QUESTION = "interaction"  # stored values stay what the journal has always held
    EFFECT = "effect"
    RECEIPT = "receipt"
    MEMORY = "memory"
    CONFLICT = "reconciliation"
    TOOL_CALL = "tool_call"
    RULE = "rule"
    DECISION = "decision"


# ---------------------------------------------------------------- inputs


class Actor(Frozen):
    """Who performs a call. Recorded on every decision and audit row."""

    name: str = Field(min_length=1, max_length=200)
    kind: ActorKind = ActorKind.OPERATOR

    @classmethod
    def operator(cls, name: str) -> Actor:
        return cls(name=name, kind=ActorKind.OPERATOR)

    @classmethod
    def agent(cls, name: str) -> Actor:
        return cls(name=name, kind=ActorKind.AGENT)

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"  # a StrEnum formats as its value


# ---------------------------------------------------------------- entities


class Run(Frozen):
    id: str
    project: str
    space: str
    agent: str
    title: str
    parent_run_id: str | None
    status: RunStatus
    version: int
    deadline: float | None
    created_at: float
    updated_at: float
    finished_at: float | None
    last_sequence: int
    current_attempt: int
    cancel_requested: bool
    cancel_reason: str | None
    error: str | None
    open_items: int = 0
    retry_requested: int | None = None  # the attempt an operator asked a retry as (0013u)
    retry_reason: str | None = None

    @property
    def retry_pending(self) -> bool:
        """A retry was asked of this failed run and its agent has not started it yet."""
        return (
            self.status == RunStatus.FAILED
            and self.retry_requested is not None
            and self.retry_requested > self.current_attempt
        )


class Attempt(Frozen):
    run_id: str
    number: int
    status: AttemptStatus
    started_at: float
    finished_at: float | None
    error: str | None


class RunEvent(Frozen):
    id: str
    run_id: str
    sequence: int
    type: str
    payload: Any
    run_version: int
    attempt: int
    actor: str
    created_at: float
    prev_digest: str
    digest: str


class ToolCall(Frozen):
    id: str
    run_id: str
    attempt: int
    tool: str
    safety_class: SafetyClass
    idempotency_key: str | None
    request: Any
    result: Any
    error: str | None
    status: ToolCallStatus
    version: int
    created_at: float
    updated_at: float


class Origin(Frozen):
    """Where a request came from, as the agent reports it: the runtime (mcp, langgraph,
    claude-code, openai-agents, pydantic-ai, python), the host process (name, pid, machine),
    the tool that filed it and the client's own name. Nothing here is checked; it is shown as
    the agent's word and is never part of what the operator approves (no digest holds it).
    Fixed once filed (a trigger refuses any UPDATE of it)."""

    runtime: str
    process: str | None = None
    pid: int | None = None
    host: str | None = None
    tool: str | None = None
    client: str | None = None


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


class AuditEntry(Frozen):
    sequence: int
    id: str
    actor: str
    action: str
    entity_kind: str
    entity_id: str
    run_id: str | None
    before: Any
    after: Any
    reason: str | None
    request_id: str | None
    created_at: float
    prev_digest: str
    digest: str
    # Where the decision behind the entry was made (desk, cli, rule, expiry, mcp…), read
    # from its decision row (not part of the entry's digest); None when no decision row
    # records it (e.g. an agent's withdrawal, a rule created, a cancel request).
    source: str | None = None


class Change(Frozen):
    seq: int
    entity_kind: ChangeKind
    entity_id: str
    run_id: str | None
    created_at: float


class ChangeSet(Frozen):
    """What changed since a change_seq: enough for each view to refresh its part."""

    since: int
    until: int
    changes: list[Change]
    # an agent's look (``waiter_seen_at``, written without a change row): the newest look
    # when this was read, and the requests looked at since the reader's last (``Changes.since``
    # with ``looks_after``) as (approval | question, id)
    looked_at: float | None = None
    looks: list[tuple[ChangeKind, str]] = []

    def kinds(self) -> set[ChangeKind]:
        """The kinds that changed; an appended event ('event') changed its run ('run') too
        (the feed stores no 'run' row for an append that left the run's status alone)."""
        kinds = {c.entity_kind for c in self.changes}
        if ChangeKind.EVENT in kinds:
            kinds.add(ChangeKind.RUN)
        return kinds

    def ids(self, kind: ChangeKind) -> set[str]:
        found = {c.entity_id for c in self.changes if c.entity_kind == kind}
        if kind == ChangeKind.RUN:
            found |= {
                c.run_id for c in self.changes if c.entity_kind == ChangeKind.EVENT and c.run_id
            }
        return found

    def run_ids(self) -> set[str]:
        return {c.run_id for c in self.changes if c.run_id}


class InboxItem(Frozen):
    """One row of the cross-run inbox: something that waits for a person."""

    kind: InboxKind
    id: str
    run_id: str | None
    agent: str
    project: str
    space: str
    run_title: str
    summary: str
    safety_class: str | None
    created_at: float
    expires_at: float | None
    snoozed_until: float | None
    version: int
    origin: Origin | None = None  # as the agent reported it (never verified)
    # when the requesting agent's wait last looked (approvals and questions; None: never)
    waiter_seen_at: float | None = None


class InboxFilter(Frozen):
    kinds: frozenset[InboxKind] = frozenset()
    agent: str | None = None
    project: str | None = None
    safety_class: str | None = None
    text: str | None = None
    snoozed: bool = False  # False: hide snoozed items; True: show only snoozed ones
    # True: only the requests an agent waits for now (a fresh waiter_seen_at, 0012w)
    waited: bool = False
    newest_first: bool = True
    # "waiter": the requests an agent waits for now first (core/kernel/waiting.py's
    # ``waiter_rank``), each group by age as ``newest_first`` says; "age": by age alone
    sort: Literal["age", "waiter"] = "age"
    # waiting since: created after ``created_after`` (exclusive) and at or before
    # ``created_until`` (an Overview bar's age bucket, as of the moment it was counted)
    created_after: float | None = None
    created_until: float | None = None


T = TypeVar("T")


class Page(Frozen, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


class BulkResult(Frozen):
    id: str
    ok: bool
    error: str | None = None
    error_type: str | None = None
    version: int | None = None  # the item's version after the write (what an undo expects)
    hold_until: float | None = None  # a held decision may be undone until then


class VerifyProblem(Frozen):
    what: str
    where: str
    detail: str


class VerifyReport(Frozen):
    ok: bool
    checked_runs: int
    checked_events: int
    checked_audit: int
    problems: list[VerifyProblem]
    # the other evidence verified, by table (receipts, memory_mutations, approvals, effects)
    checked_rows: dict[str, int] = {}
    # signed decisions: how many decisions are signed / unsigned / invalid / automatic
    # (checked against the trust file when one was given, else the journal's own keys)
    signatures: dict[str, int] | None = None
    trusted: bool = False  # the signatures were checked against a trust file

    @property
    def first_problem(self) -> VerifyProblem | None:
        return self.problems[0] if self.problems else None


def __getattr__(name: str) -> Any:
    return aliases.name(globals(), __name__, name)
