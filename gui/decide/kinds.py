"""Which detail widget shows which inbox kind. Replace an entry to plug in a richer form."""

from __future__ import annotations

from proctor.core.models import INBOX_CHANGE_KIND, InboxKind

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

# The change-feed kinds of the inbox's items (core/models.py INBOX_CHANGE_KIND).
INBOX_CHANGE_KINDS = frozenset(INBOX_CHANGE_KIND.values())
