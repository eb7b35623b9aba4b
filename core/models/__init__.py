"""Frozen pydantic models: the only shapes that cross the core boundary.

Times are UTC seconds since the epoch (float). JSON payloads are plain Python
values (dict/list/str/...), already parsed.

By entity family: enums (the base model and the enumerations), runs (actors, runs and their
events), approvals (approvals and rules), items (questions, decisions, memory, effects),
views (what the journal's views return); every name is re-exported here.
"""

from __future__ import annotations

from typing import Any

from proctor.core import aliases

from .approvals import (  # noqa: F401 - re-exported: callers import these from here
    Approval,
    ApprovalRule,
    RuleDraft,
    RuleHit,
    RuleMade,
    RulePreview,
    RuleUsage,
)
from .enums import (  # noqa: F401 - re-exported: callers import these from here
    TERMINAL_RUN_STATUSES,
    ActorKind,
    ApprovalScope,
    ApprovalStatus,
    AttemptStatus,
    ChangeKind,
    ConflictStatus,
    EffectStatus,
    Frozen,
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
from .items import (  # noqa: F401 - re-exported: callers import these from here
    Conflict,
    Decision,
    Effect,
    MemoryEntry,
    MemoryMutation,
    Question,
    Receipt,
)
from .runs import (  # noqa: F401 - re-exported: callers import these from here
    Actor,
    Attempt,
    Origin,
    Run,
    RunEvent,
    ToolCall,
)
from .views import (  # noqa: F401 - re-exported: callers import these from here
    AuditEntry,
    BulkResult,
    Change,
    ChangeSet,
    InboxFilter,
    InboxItem,
    Page,
    T,
    VerifyProblem,
    VerifyReport,
)


def __getattr__(name: str) -> Any:
    return aliases.name(globals(), __name__, name)
