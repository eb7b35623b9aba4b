"""A comment's row: its digest (its link in the item's chain), writing one with its decision
and audit row inside a transaction, and reading an item's thread."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.writer import record_decision
from proctor.core.kernel.canonical import ZERO_DIGEST, chain_digest
from proctor.core.models import ChangeKind
from proctor.core.storage import schema as s
from proctor.core.storage.comment_sql import ITEM_TABLES
from proctor.core.storage.sql import insert_rows, row_where
from proctor.core.storage.tx import Tx

from .models import Comment

KINDS = tuple(ITEM_TABLES)  # approval, question, conflict, effect


def digest_body(row: Any) -> dict:
    """What a comment's digest covers (with the previous comment's digest before it)."""
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    keys = ("id", "item_kind", "item_id", "seq", "author", "body", "created_at")
    return {k: get(k) for k in keys}


def digest_of_row(prev_digest: str, row: Any) -> str:
    return chain_digest(prev_digest, digest_body(row))


def _table(kind: str) -> Any:
    name, key = ITEM_TABLES[kind]
    table = s.metadata.tables[name]
    return table, table.c[key]


def item_in(conn: Any, item_id: str, kind: str | None) -> tuple[str, str | None]:
    """(kind, run id) of the inbox item ``item_id``; its kind from ``kind``, else from the
    one table that has it. NotFound when none does; ValidationError when two do (an
    effect's key may look like another item's id) and no kind says which."""
    if kind is not None and kind not in ITEM_TABLES:
        raise errors.ValidationError(
            f"unknown item kind {kind!r} ({', '.join(KINDS)})", field="kind"
        )
    found = []
    for k in (kind,) if kind else KINDS:
        table, key = _table(k)
        row = conn.execute(select(table).where(key == item_id)).first()
        if row is not None:
            found.append((k, getattr(row, "run_id", None)))
    if not found:
        raise errors.NotFound(
            f"no approval, question, memory conflict or effect has the id {item_id}"
        )
    if len(found) > 1:
        raise errors.ValidationError(
            f"{item_id} names a {found[0][0]} and a {found[1][0]}: say which", field="kind"
        )
    return found[0]


def last_of(conn: Any, kind: str, item_id: str) -> tuple[int, str]:
    """(seq, digest) of the item's last comment; (0, 64 zeros) before the first."""
    c = s.comments.c
    row = conn.execute(
        select(c.seq, c.digest)
        .where(c.item_kind == kind, c.item_id == item_id)
        .order_by(c.seq.desc())
        .limit(1)
    ).first()
    return (row.seq, row.digest) if row is not None else (0, ZERO_DIGEST)


def add_in(
    tx: Tx, item_id: str, text: str, kind: str | None, request_id: str | None, source: str
) -> str:
    """Write one comment with its decision and audit row; the comment's id."""
    kind, run_id = item_in(tx.conn, item_id, kind)
    request = {"op": "comment.add", "kind": kind, "item_id": item_id, "text": text}
    if tx.replayed(request_id, request):  # the same request again: the comment it wrote
        return row_where(tx.conn, s.audit, request_id=request_id).entity_id
    seq, prev = last_of(tx.conn, kind, item_id)
    row: dict[str, Any] = dict(
        id=tx.new_id("cmt"),
        item_kind=kind,
        item_id=item_id,
        seq=seq + 1,
        author=tx.actor.label,
        body=text,
        created_at=tx.now,
        prev_digest=prev,
    )
    row["digest"] = digest_of_row(prev, row)
    content = {"item_kind": kind, "item_id": item_id, "seq": row["seq"], "digest": row["digest"]}
    row["decision_id"] = record_decision(
        tx,
        "comment",
        row["id"],
        run_id,
        content,
        source=source,
        reason=None,
        request_id=request_id,
        request=request,
        audit=("comment.added", None, content),
    )
    insert_rows(tx.conn, s.comments, [row])
    tx.changed(ChangeKind.COMMENT, item_id, run_id)
    return row["id"]


def model(row: Any) -> Comment:
    return Comment(
        id=row.id,
        item_kind=row.item_kind,
        item_id=row.item_id,
        seq=row.seq,
        author=row.author,
        text=row.body,
        created_at=row.created_at,
        digest=row.digest,
    )


def thread_in(conn: Any, item_id: str, kind: str | None) -> list[Comment]:
    """The item's comments, oldest first (every kind's, unless ``kind``)."""
    c = s.comments.c
    stmt = select(s.comments).where(c.item_id == item_id)
    if kind is not None:
        stmt = stmt.where(c.item_kind == kind)
    return [model(r) for r in conn.execute(stmt.order_by(c.item_kind, c.seq)).all()]
