"""proctor.core: the journal agents write and operators decide in. No Qt, ever."""

from proctor.core.audit.verify import verify
from proctor.core.kernel.canonical import canonical_json, digest_of

from . import errors
from .errors import ProctorError
from .journal import Journal
from .models import (
    Actor,
    ActorKind,
    ApprovalScope,
    ApprovalStatus,
    EffectStatus,
    InboxFilter,
    InboxKind,
    InteractionKind,
    InteractionStatus,
    MemoryScope,
    OnExpiry,
    ReconciliationStatus,
    RuleEffect,
    RunStatus,
    SafetyClass,
    ToolCallStatus,
    Trust,
)

__all__ = [
    "Actor", "ActorKind", "ApprovalScope", "ApprovalStatus", "EffectStatus", "InboxFilter",
    "InboxKind", "InteractionKind", "InteractionStatus", "Journal", "MemoryScope", "OnExpiry",
    "ProctorError", "ReconciliationStatus", "RuleEffect", "RunStatus", "SafetyClass",
    "ToolCallStatus", "Trust", "canonical_json", "digest_of", "errors", "verify",
]
