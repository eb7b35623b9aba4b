"""What crosses the boundary: one comment of an item's thread."""

from __future__ import annotations

from typing import Literal

from proctor.core.models import Frozen

ItemKind = Literal["approval", "question", "conflict", "effect"]


class Comment(Frozen):
    """An operator's comment on an inbox item, in the item's thread at ``seq`` (1, 2, ...).
    ``text`` is plain text as the operator typed it: show it as text, never as markup."""

    id: str
    item_kind: ItemKind
    item_id: str
    seq: int
    author: str  # operator:NAME
    text: str
    created_at: float
    digest: str  # this comment's link in the item's chain
