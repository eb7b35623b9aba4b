"""How the desk names an inbox item: its key (kind and id, unique across kinds) and its
kind's title."""

from __future__ import annotations

from proctor.core.kernel import waiting
from proctor.core.models import InboxItem, InboxKind

from ..infra.i18n import tr
from ..widgets import fmt

WAITED_FOR = (InboxKind.APPROVAL, InboxKind.QUESTION)  # the kinds an agent's wait stamps
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
    the others): "agent waiting now" while its last look is fresh (``slack``: how old the
    desk's copy of the row may be), else how long no agent has looked, or "nobody waited"."""
    seen = item.waiter_seen_at
    if item.kind not in WAITED_FOR:
        return ""
    if seen is None:
        return tr("nobody waited")
    if waiting.waiting_now(seen, now - slack):
        return tr("agent waiting now")
    return tr("no agent has looked for {age}").format(age=fmt.span(now - seen))


def waiter_cell(item: InboxItem, now: float, slack: float = RESYNC_S) -> str:
    """``waiter_text`` in a table cell's few words: now, 12m ago, never."""
    seen = item.waiter_seen_at
    if item.kind not in WAITED_FOR:
        return ""
    if seen is None:
        return tr("never")
    if waiting.waiting_now(seen, now - slack):
        return tr("now")
    return tr("{age} ago").format(age=fmt.span(now - seen))
