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
    InboxKind.CONFLICT: ConflictDetail,
    InboxKind.EFFECT: EffectDetail,
}

# The change-feed kinds of the inbox's items (``InboxKind.change_kind``).
INBOX_CHANGE_KINDS = frozenset(kind.change_kind for kind in InboxKind)
