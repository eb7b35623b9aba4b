"""The core's base model (Frozen) and its enumerations: statuses, kinds, scopes, trust levels."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from proctor.core.aliases import Retiring, retired_value


class Frozen(BaseModel):
    # defer_build: a model's validator is built on its first use, not at import (a hook
    # uses a few of the many models; issue 33)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


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
