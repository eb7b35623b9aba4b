"""A memory entry's writes: the UPDATE of its row and the mutation that chains it (with the
event on its live run), a replayed change found by its key, the entry's row as read in a
transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select

from proctor.core import errors
from proctor.core.kernel.canonical import ZERO_DIGEST, digest_of, sha256_hex
from proctor.core.kernel.integrity import mutation_digest
from proctor.core.kernel.limits import check_text
from proctor.core.models import (
    ChangeKind,
    RunStatus,
)
from proctor.core.storage import schema as s
from proctor.core.storage.rows import (
    written_row,
)
from proctor.core.storage.sql import (
    Prepared,
    insert_rows,
    row_where,
    update_where,
)
from proctor.core.storage.tx import Tx

MAX_CONTENT = 200_000


def content_hash(text: str) -> str:
    return sha256_hex(text)


# The head of an entry's mutation chain (the link a new mutation follows).
LAST_MUTATION = Prepared(
    select(s.memory_mutations.c.digest)
    .where(s.memory_mutations.c.entry_id == bindparam("entry_id"))
    .order_by(s.memory_mutations.c.version.desc())
    .limit(bindparam("one", 1))
)


_UNREAD = object()  # no chain head was read beside the entry: write_mutation reads it


def run_event(tx: Tx, run_id: str | None, type_: str, payload: Any) -> int | None:
    """An event on the linked run, unless it has ended (a terminal run never changes): its
    sequence, or None when nothing was appended."""
    if not run_id:
        return None
    run = tx.run_row(run_id)
    if RunStatus(run.status).terminal:
        return None
    return int(tx.append_event(run, type_, payload)["sequence"])


def content_values(text: str, entry: Any) -> dict[str, Any]:
    return {} if text == entry.content else {"content": text, "content_hash": content_hash(text)}


def check_content(content: Any) -> None:
    check_text(content, "memory content", "content", MAX_CONTENT)


def apply(
    tx: Tx,
    row: Any,
    operation: str,
    values: dict,
    reason: str | None,
    run_id: str | None,
    idempotency_key: str | None,
    request: Any,
    event: bool = True,
    event_sequence: int | None = None,
) -> dict:
    """UPDATE the entry ``row`` (as read in ``tx``) and write its mutation; the entry's
    row as now stored."""
    version = row.version + 1
    values = dict(version=version, updated_at=tx.now, **values)
    done = update_where(tx.conn, s.memory_entries, values, id=row.id, version=row.version)
    if done != 1:
        raise errors.StaleVersion(f"memory entry {row.id} changed meanwhile")
    after = values.get("content", row.content)
    write_mutation(
        tx,
        row.id,
        operation,
        version,
        row.content_hash,
        row.content,
        content_hash(after),
        after,
        reason,
        run_id,
        idempotency_key,
        request,
        event=event,
        event_sequence=event_sequence,
        chain_head=getattr(row, "chain_head", _UNREAD),
    )
    return written_row(row, values)


def write_mutation(
    tx: Tx,
    entry_id: str,
    operation: str,
    version: int,
    before_hash: str | None,
    before: str | None,
    after_hash: str,
    after: str,
    reason: str | None,
    run_id: str | None,
    idempotency_key: str | None,
    request: Any,
    event: bool = True,
    event_sequence: int | None = None,
    chain_head: Any = _UNREAD,
) -> None:
    """The mutation row, and (``event``) a ``memory.changed`` event on its live run, whose
    sequence the row keeps (``event_sequence``: the caller's own event instead).
    ``chain_head``: the entry's last mutation digest as read beside it in this
    transaction (None: it has none), else it is read here."""
    if event:
        event_sequence = run_event(
            tx,
            run_id,
            "memory.changed",
            {"entry_id": entry_id, "operation": operation, "version": version},
        )
    mid = tx.new_id("mut")
    row = dict(
        id=mid,
        entry_id=entry_id,
        operation=operation,
        actor=tx.actor.label,
        reason=reason,
        version=version,
        before_hash=before_hash,
        after_hash=after_hash,
        before_content=before,
        after_content=after,
        run_id=run_id,
        idempotency_key=idempotency_key,
        request_digest=digest_of(request) if idempotency_key else None,
        created_at=tx.now,
        event_sequence=event_sequence,
    )
    if chain_head is _UNREAD:
        last = LAST_MUTATION.first(tx.conn, entry_id=entry_id)
        chain_head = last.digest if last is not None else None
    prev = chain_head or ZERO_DIGEST
    row.update(prev_digest=prev, digest=mutation_digest(prev, row))
    insert_rows(tx.conn, s.memory_mutations, [row])
    tx.changed(ChangeKind.MEMORY, entry_id, run_id)


def replayed(tx: Tx, key: str | None, request: Any) -> str | None:
    if key is None:
        return None
    row = row_where(tx.conn, s.memory_mutations, idempotency_key=key)
    if row is None:
        return None
    if row.request_digest != digest_of(request):
        raise errors.IdempotencyConflict(f"memory change {key!r} was made with other content")
    return row.entry_id


def entry_row(tx: Tx, entry_id: str, run_id: str | None = None) -> Any:
    """The entry's row (with ``run_id``: that run's head read in the same statement)."""
    row = tx.row_beside_run(s.memory_entries, run_id, id=entry_id)
    if row is None:
        raise errors.NotFound(f"memory entry {entry_id} does not exist")
    return row
