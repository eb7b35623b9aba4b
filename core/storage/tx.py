"""The unit of work: one open write transaction plus the bookkeeping every write shares
(the change feed, the audit chain and run events), and the digest bodies of the two chains."""

from __future__ import annotations

import math
from collections.abc import Callable
from json.encoder import encode_basestring  # what canonical JSON writes for a str
from typing import Any, Protocol

from sqlalchemy import Connection, bindparam, select

from proctor.core import errors
from proctor.core.kernel.canonical import (
    ZERO_DIGEST,
    canonical_json,
    chain_digest,
    digest_of,
    scalar_json,
    sha256_hex,
)
from proctor.core.kernel.limits import check_json_text
from proctor.core.models import Actor, ChangeKind, RunStatus

from . import schema as s
from .sql import (
    Link,
    Prepared,
    insert_numbered,
    insert_rows,
    link_of,
    parent_and_row,
    row_and_parent,
    row_where,
    update_where,
)

LAST_AUDIT = Prepared(
    select(s.audit.c.sequence, s.audit.c.digest)
    .order_by(s.audit.c.sequence.desc())
    .limit(bindparam("one", 1))
)


class Owner(Protocol):
    """What a transaction needs of the store that opened it (``store.Store``)."""

    actor: Actor
    path: Any  # the journal's Path, or a server journal's pg.ServerAddress
    signer: Any
    trust: Any
    damage: Any  # the damage a read or write ran into (errors.Corrupt), or None

    def new_id(self, prefix: str) -> str: ...


class Tx:
    """One open write transaction plus the bookkeeping every write shares:
    the change feed, the audit chain and run events."""

    def __init__(
        self, store: Owner, conn: Connection, now: float, link: Link | None = None
    ) -> None:
        self.store = store
        self.conn = conn
        self.now = now
        self.actor = store.actor
        self.new_id: Callable[[str], str] = store.new_id  # an id: ``new_id("evt")``
        self._after_commit: errors.ProctorError | None = None
        self._changes: list[dict] = []
        self._heads = 0  # 'event' and 'run' rows noted: more than one, and flush may drop some
        # run heads read or written in this transaction (None: a connection no store keeps);
        # emptied whenever anything writes to runs on this connection (db.watch_runs)
        if link is None:  # the store gives the one it began; anyone else: the store's, if any
            link = link_of(conn)
        self._runs: dict[str, Any] | None = link.runs if link is not None else None
        # runs written in this transaction other than by moving their head (db.watch_runs)
        self._touched: set[str] | None = link.touched if link is not None else None

    # -- plumbing
    def raise_after_commit(self, err: errors.ProctorError) -> None:
        """Commit what was written so far, then raise ``err`` (a write that survives a refusal)."""
        self._after_commit = err

    def changed(self, kind: ChangeKind, entity_id: str, run_id: str | None = None) -> None:
        """Note a change-feed row; they are written in order, in one statement, at the end
        of the transaction (``flush``). An 'event' row also says its run's head moved
        (``ChangeSet`` counts it as a 'run' change), so a 'run' row is written only when a run
        is made, its status moves, or anything else in the transaction changed its row; and
        ``flush`` keeps one 'event' row per run, none beside that run's 'run' row."""
        if kind == ChangeKind.EVENT or kind == ChangeKind.RUN:
            self._heads += 1
        self._changes.append(
            {"entity_kind": kind, "entity_id": entity_id, "run_id": run_id, "created_at": self.now}
        )

    def flush(self) -> list[dict]:
        """Write what is still buffered (called by ``Store.write`` before it commits): the
        noted changes, and a 'run' change for each run whose row something else changed.
        Returns the change rows written, each with the ``seq`` its INSERT returned (the
        transaction's change set, read back from nothing)."""
        if self._touched:
            noted = {c["entity_id"] for c in self._changes if c["entity_kind"] == ChangeKind.RUN}
            for run_id in sorted(self._touched - noted):
                self.changed(ChangeKind.RUN, run_id, run_id)
            self._touched.clear()
        changes, self._changes = self._changes, []
        if self._heads > 1:
            changes = one_event_row(changes)
        self._heads = 0
        if changes:
            for row, seq in zip(
                changes, insert_numbered(self.conn, s.changes, changes, "seq"), strict=True
            ):
                row["seq"] = seq
        return changes

    # -- operator idempotency
    def replayed(self, request_id: str | None, request: Any) -> bool:
        """True if this operator request id was already applied with the same content."""
        if request_id is None:
            return False
        row = row_where(self.conn, s.audit, request_id=request_id)
        if row is None:
            return False
        if row.request_digest != digest_of(request):
            raise errors.IdempotencyConflict(
                f"request id {request_id!r} was already used for a different request"
            )
        return True

    # -- audit chain
    def audit(
        self,
        action: str,
        entity_kind: str,
        entity_id: str,
        *,
        run_id: str | None,
        before: Any = None,
        after: Any = None,
        reason: str | None = None,
        request_id: str | None = None,
        request: Any = None,
        actor: str | None = None,
    ) -> str:
        last = LAST_AUDIT.first(self.conn)
        sequence = (last.sequence + 1) if last else 1
        prev = last.digest if last else ZERO_DIGEST
        row: dict[str, Any] = {
            "sequence": sequence,
            "id": self.new_id("aud"),
            "actor": actor or self.actor.label,
            "action": action,
            "entity_kind": entity_kind,
            "entity_id": entity_id,
            "run_id": run_id,
            "before": canonical_json(before),
            "after": canonical_json(after),
            "reason": reason,
            "created_at": self.now,
        }
        row["digest"] = chain_digest(prev, audit_digest_body(row))
        row.update(
            prev_digest=prev,
            request_id=request_id,
            request_digest=digest_of(request) if request_id else None,
        )
        insert_rows(self.conn, s.audit, [row])
        self.changed(ChangeKind.AUDIT, row["id"], run_id)
        return row["id"]

    # -- runs and events
    def run_row(self, run_id: str) -> Any:
        """The run's row as this transaction sees it: read once, then kept up to date by
        ``append_event(s)`` (any other write to runs drops what was kept)."""
        runs = self._runs
        if runs is not None:
            row = runs.get(run_id)
            if row is not None:
                return row
        row = row_where(self.conn, s.runs, id=run_id)
        if row is None:
            raise errors.NotFound(f"run {run_id} does not exist")
        if runs is not None:
            runs[run_id] = row
        return row

    def row_with_run(self, table: Any, **where: Any) -> Any:
        """The row of ``table`` whose columns equal ``where`` (None if there is none), its
        run's head read in the same statement and kept (``run_row`` then reads nothing)
        unless this transaction keeps it already."""
        runs = self._runs
        if runs is None:
            return row_where(self.conn, table, **where)
        row, run = row_and_parent(self.conn, table, s.runs, "run_id", **where)
        if run is not None and run.id not in runs:
            runs[run.id] = run
        return row

    def row_beside_run(self, table: Any, run_id: str | None, **where: Any) -> Any:
        """``row_where(table, **where)``, with the head of the run ``run_id`` read in the
        same statement and kept (``run_row`` then reads nothing) unless there is no run id,
        this transaction keeps it already, or there is no such run."""
        runs = self._runs
        if run_id is None or runs is None or run_id in runs:
            return row_where(self.conn, table, **where)
        found = parent_and_row(self.conn, s.runs, run_id, table, **where)
        if found is None:  # no such run: whoever needs it says so
            return row_where(self.conn, table, **where)
        run, row = found
        runs[run_id] = run
        return row

    def may_keep_run(self, run_id: str) -> bool:
        """True if reading ``run_id``'s head beside another row would be kept (this
        transaction keeps run heads and does not keep that one yet): what ``row_beside_run``
        asks before it joins the run in."""
        return self._runs is not None and run_id not in self._runs

    def keep_run(self, run: Any) -> None:
        """Keep ``run`` (its head, as read in this transaction beside another row)."""
        if self._runs is not None and run.id not in self._runs:
            self._runs[run.id] = run

    def _moved(self, run: Any, kept: bool, touched: bool, values: dict[str, Any]) -> None:
        """After this transaction's UPDATE of ``run``'s head: the new head is kept (if the
        old one was), and moving the head is not counted as another change to its row."""
        if kept and self._runs is not None:
            self._runs[run.id] = run._replace(**values)
        if not touched and self._touched is not None:
            self._touched.discard(run.id)

    def live_run(self, run_id: str) -> Any:
        run = self.run_row(run_id)
        if RunStatus(run.status).terminal:
            raise errors.RunTerminal(f"run {run_id} is {run.status}; it accepts no new requests")
        return run

    def open_run(self, run_id: str) -> Any:
        """A run that may be asked something new: live, and not interrupted (an interrupted
        run takes new approvals and questions again once a new attempt starts)."""
        run = self.live_run(run_id)
        if run.status == RunStatus.INTERRUPTED:
            raise errors.RunInterrupted(
                f"run {run_id} is interrupted; it asks nothing new until a new attempt starts"
            )
        return run

    def append_event(
        self,
        run: Any,
        type_: str,
        payload: Any,
        *,
        event_id: str | None = None,
        status: RunStatus | None = None,
        actor: str | None = None,
        also: dict[str, Any] | None = None,
    ) -> dict:
        """Append one event to ``run``'s chain, optionally moving its status (never without one).
        ``also``: more of the run's columns written in the same UPDATE (a retry starts its
        attempt in the UPDATE that moves the run, as the census's trigger requires)."""
        sequence = run.last_sequence + 1
        version = run.version + 1
        text = canonical_json(payload)
        row = {
            "id": event_id or self.new_id("evt"),
            "run_id": run.id,
            "sequence": sequence,
            "type": type_,
            "payload": text,
            "run_version": version,
            # the attempt this UPDATE makes current (a retry's run.retried opens it)
            "attempt": (also or {}).get("current_attempt", run.current_attempt),
            "actor": actor or self.actor.label,
            "created_at": self.now,
            "prev_digest": run.last_digest,
        }
        row["digest"] = sha256_hex(run.last_digest + event_digest_text(row, payload, text))
        kept = self._runs is not None and self._runs.get(run.id) is run
        touched = self._touched is not None and run.id in self._touched
        insert_rows(self.conn, s.events, [row])
        values: dict[str, Any] = {
            "last_sequence": sequence,
            "last_digest": row["digest"],
            "version": version,
            "updated_at": self.now,
        }
        if status is not None and status != run.status:
            values["status"] = status.value
            if status.terminal:
                values["finished_at"] = self.now
        values.update(also or {})
        done = update_where(self.conn, s.runs, values, id=run.id, last_sequence=run.last_sequence)
        if done != 1:
            raise errors.StaleVersion(f"run {run.id} changed while appending an event")
        self._moved(run, kept, touched, values)
        if sequence == 1 or "status" in values:  # a new run, or its status moved
            self.changed(ChangeKind.RUN, run.id, run.id)
        self.changed(ChangeKind.EVENT, row["id"], run.id)  # moved the run's head (ChangeSet.kinds)
        return row

    def append_events(self, run: Any, items: list[tuple[str, Any, str, str]]) -> list[dict]:
        """Append several ``(type, payload, event_id, payload's canonical JSON)`` to ``run``'s
        chain in two statements (the batched path; the run's status does not change)."""
        rows, prev, sequence, version = [], run.last_digest, run.last_sequence, run.version
        for type_, payload, event_id, text in items:
            sequence, version = sequence + 1, version + 1
            row = {
                "id": event_id,
                "run_id": run.id,
                "sequence": sequence,
                "type": type_,
                "payload": text,
                "run_version": version,
                "attempt": run.current_attempt,
                "actor": self.actor.label,
                "created_at": self.now,
                "prev_digest": prev,
            }
            row["digest"] = prev = sha256_hex(prev + event_digest_text(row, payload, text))
            rows.append(row)
        if not rows:
            return rows
        kept = self._runs is not None and self._runs.get(run.id) is run
        touched = self._touched is not None and run.id in self._touched
        insert_rows(self.conn, s.events, rows)
        values = {
            "last_sequence": sequence,
            "last_digest": prev,
            "version": version,
            "updated_at": self.now,
        }
        done = update_where(self.conn, s.runs, values, id=run.id, last_sequence=run.last_sequence)
        if done != 1:
            raise errors.StaleVersion(f"run {run.id} changed while appending events")
        self._moved(run, kept, touched, values)
        if run.last_sequence == 0:  # a new run's first events
            self.changed(ChangeKind.RUN, run.id, run.id)
        for r in rows:
            self.changed(ChangeKind.EVENT, r["id"], run.id)
        return rows

    def run_event(
        self,
        run_id: str,
        type_: str,
        payload: Any,
        *,
        status: RunStatus | None = None,
        actor: str | None = None,
    ) -> dict:
        return self.append_event(self.run_row(run_id), type_, payload, status=status, actor=actor)


def one_event_row(changes: list[dict]) -> list[dict]:
    """The change rows a transaction writes, in order: an 'event' row says that its run's head
    moved (``ChangeSet`` counts it as a 'run' change), so a run gets one, its last event's,
    and none beside a 'run' row of its own."""
    runs, last, events = set(), {}, 0
    for i, c in enumerate(changes):
        kind = c["entity_kind"]
        if kind == ChangeKind.EVENT:
            last[c["run_id"]] = i
            events += 1
        elif kind == ChangeKind.RUN:
            runs.add(c["entity_id"])
    if events == len(last) and runs.isdisjoint(last):
        return changes
    return [
        c
        for i, c in enumerate(changes)
        if c["entity_kind"] != ChangeKind.EVENT
        or (last[c["run_id"]] == i and c["run_id"] not in runs)
    ]


def event_digest_body(row: dict, payload: Any) -> dict:
    return {
        "run_id": row["run_id"],
        "sequence": row["sequence"],
        "type": row["type"],
        "payload": payload,
        "created_at": row["created_at"],
    }


def event_digest_text(row: dict, payload: Any, text: str) -> str:
    """``canonical_json(event_digest_body(row, payload))`` around ``text`` (the payload's
    canonical JSON, made and checked by ``canonical_json`` for the row): the payload is
    serialised and its keys checked once. The body is checked against the size and depth
    limits as ``canonical_json`` would check it (the envelope's own keys are text)."""
    body = (
        f'{{"created_at":{_number(row["created_at"])},"payload":{text},'
        f'"run_id":{_text(row["run_id"])},"sequence":{_number(row["sequence"])},'
        f'"type":{_text(row["type"])}}}'
    )
    check_json_text(body)
    return body


def _number(value: Any) -> str:
    """A finite int or float as canonical JSON writes it (``repr``); anything else through
    the serialiser (which refuses NaN and Infinity)."""
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return repr(value)
    return scalar_json(value)


def _text(value: Any) -> str:
    return encode_basestring(value) if type(value) is str else scalar_json(value)


def audit_digest_body(row: Any) -> dict:
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    keys = (
        "sequence",
        "id",
        "actor",
        "action",
        "entity_kind",
        "entity_id",
        "run_id",
        "before",
        "after",
        "reason",
        "created_at",
    )
    return {k: get(k) for k in keys}


__all__ = ["LAST_AUDIT", "Owner", "Tx", "audit_digest_body", "event_digest_body", "one_event_row"]
