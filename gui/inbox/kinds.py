"""Which detail widget shows which inbox kind. Replace an entry to plug in a richer form."""

from __future__ import annotations

from proctor.core.models import InboxKind

from .approval import ApprovalDetail
from .conflict import ConflictDetail
from .detail import DetailWidget
from .effect import EffectDetail
from .question import QuestionDetail

DETAIL_WIDGETS: dict[InboxKind, type[DetailWidget]] = {
    InboxKind.APPROVAL: ApprovalDetail,
    InboxKind.QUESTION: QuestionDetail,
    InboxKind.MEMORY: ConflictDetail,
    InboxKind.EFFECT: EffectDetail,
}

# The entity kind in the change feed for each inbox kind.
CHANGE_KIND = {InboxKind.APPROVAL: "approval", InboxKind.QUESTION: "interaction",
               InboxKind.MEMORY: "reconciliation", InboxKind.EFFECT: "effect"}
INBOX_CHANGE_KINDS = frozenset(CHANGE_KIND.values())
