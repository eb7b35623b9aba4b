"""How the desk names an inbox item: its key (kind and id, unique across kinds) and its
kind's title."""

from __future__ import annotations

from proctor.core.models import InboxItem

KIND_TITLES = {
    "approval": "Approval",
    "question": "Question",
    "conflict": "Conflict",
    "effect": "Effect",
}


def item_key(item: InboxItem) -> str:
    return f"{item.kind.value}:{item.id}"
