"""``journal.comments``: an operator's comment on an inbox item, and the item's thread."""

from __future__ import annotations

from proctor.core import errors
from proctor.core.kernel.limits import check_text
from proctor.core.storage.store import Store

from . import rows
from .models import Comment

MAX_COMMENT = 20_000  # characters


def checked_text(text: str) -> str:
    """The comment as it is kept: plain text, trimmed, not empty, at most ``MAX_COMMENT``
    characters, without NUL (which a server journal cannot store)."""
    check_text(text, "a comment", "text", MAX_COMMENT)
    if "\x00" in text:
        raise errors.ValidationError("a comment cannot contain a NUL character", field="text")
    return text.strip()


class Comments:
    def __init__(self, store: Store) -> None:
        self.j = store

    def add(
        self,
        item_id: str,
        text: str,
        *,
        kind: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> Comment:
        """Comment on the approval, question, memory conflict or effect ``item_id`` (its kind
        found from its id unless ``kind`` says it) as this journal's operator, in one
        transaction with its decision (signed when the operator has a key) and its audit row.
        Any item, open or closed. NotAllowed for an agent; NotFound for no such item."""
        self.j.require_operator()
        body = checked_text(text)
        return self.j.write_then(
            lambda tx: rows.add_in(tx, item_id, body, kind, request_id, source),
            lambda tx, cid: next(c for c in rows.thread_in(tx.conn, item_id, None) if c.id == cid),
        )

    def thread(self, item_id: str, *, kind: str | None = None) -> list[Comment]:
        """The comments on ``item_id``, oldest first (empty when it has none)."""
        return self.j.read(lambda c: rows.thread_in(c, item_id, kind))
