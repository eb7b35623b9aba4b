"""proctor.core: the journal agents write and operators decide in. No Qt, ever."""

from typing import Any

from proctor.core import aliases, lens  # noqa: F401 - lens: rule conditions read it (risk.)
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
    ConflictStatus,
    EffectStatus,
    InboxFilter,
    InboxKind,
    MemoryScope,
    OnExpiry,
    QuestionKind,
    QuestionStatus,
    RuleEffect,
    RunStatus,
    SafetyClass,
    ToolCallStatus,
    Trust,
)

__all__ = [
    "Actor",
    "ActorKind",
    "ApprovalScope",
    "ApprovalStatus",
    "ConflictStatus",
    "EffectStatus",
    "InboxFilter",
    "InboxKind",
    "Journal",
    "MemoryScope",
    "OnExpiry",
    "ProctorError",
    "QuestionKind",
    "QuestionStatus",
    "RuleEffect",
    "RunStatus",
    "SafetyClass",
    "ToolCallStatus",
    "Trust",
    "canonical_json",
    "digest_of",
    "errors",
    "verify",
]

aliases.install()


def __getattr__(name: str) -> Any:
    return aliases.name(globals(), __name__, name)
