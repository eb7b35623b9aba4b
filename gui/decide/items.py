"""How the desk names an inbox item: its key (kind and id, unique across kinds) and its
kind's title."""

from __future__ import annotations

from proctor.core.kernel import waiting
from proctor.core.models import InboxItem, InboxKind

from ..infra.i18n import tr

WAITED_FOR = tuple(InboxKind(k) for k in waiting.WAITED_KINDS)  # the kinds a wait stamps
# the inbox re-reads all its rows this often (inbox.model.RESYNC_MS); an agent's stamp writes
# no change row, so a row's waiter_seen_at on screen may be that much older than the store's
RESYNC_S = 15

KIND_TITLES = {
    "approval": "Approval",
    "question": "Question",
    "conflict": "Conflict",
    "effect": "Effect",
}


def item_key(item: InboxItem) -> str:
    return f"{item.kind.value}:{item.id}"


def only_waiter_differs(a: InboxItem | None, b: InboxItem | None) -> bool:
    """``a`` and ``b`` are the same row but for the agent's last look (nothing to reload)."""
    if a is None or b is None or a == b:
        return False
    return a.model_copy(update={"waiter_seen_at": None}) == b.model_copy(
        update={"waiter_seen_at": None}
    )


def waiter_text(item: InboxItem, now: float, slack: float = RESYNC_S) -> str:
    """Whether the requesting agent waits for the item (an approval or a question; "" for
    the others), in core's words (``waiting.waiter_words``; ``slack``: how old the desk's
    copy of the row may be)."""
    if item.kind not in WAITED_FOR:
        return ""
    return waiting.waiter_words(item.waiter_seen_at, now, slack, translate=tr)


def waiter_cell(item: InboxItem, now: float, slack: float = RESYNC_S) -> str:
    """``waiter_text`` in a table cell's few words (``waiting.waiter_cell``)."""
    if item.kind not in WAITED_FOR:
        return ""
    return waiting.waiter_cell(item.waiter_seen_at, now, slack, translate=tr)
