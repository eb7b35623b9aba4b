"""Journal.open: the one entry point, and the transaction helper every service uses."""

from __future__ import annotations

import functools
import getpass
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Connection, bindparam, exc, func, select

from . import db, errors
from . import schema as s
from .canonical import ZERO_DIGEST, canonical_json, chain_digest, digest_of
from .models import Actor, ActorKind, Change, RunStatus
from .rows import to_models
from .sql import Prepared, insert_rows, row_where, update_where

T = TypeVar("T")

LAST_AUDIT = Prepared(select(s.audit.c.sequence, s.audit.c.digest)
                      .order_by(s.audit.c.sequence.desc()).limit(bindparam("one", 1)))
OldSchemaPolicy = Literal["migrate", "read_only", "error"]


class Tx:
    """One open write transaction plus the bookkeeping every write shares:
    the change feed, the audit chain and run events."""

    def __init__(self, journal: Journal, conn: Connection, now: float) -> None:
        self.journal = journal
        self.conn = conn
        self.now = now
        self.actor = journal.actor
        self._after_commit: errors.ProctorError | None = None
        self._changes: list[dict] = []

    # -- plumbing
    def new_id(self, prefix: str) -> str:
        return self.journal.new_id(prefix)

    def raise_after_commit(self, err: errors.ProctorError) -> None:
        """Commit what was written so far, then raise ``err`` (a write that survives a refusal)."""
        self._after_commit = err

    def changed(self, kind: str, entity_id: str, run_id: str | None = None) -> None:
        """Note a change-feed row; they are written in order, in one statement, at the end
        of the transaction (``flush``)."""
        self._changes.append({"entity_kind": kind, "entity_id": entity_id, "run_id": run_id,
                              "created_at": self.now})

    def flush(self) -> None:
        """Write what is still buffered (called by ``Journal.write`` before it commits)."""
        changes, self._changes = self._changes, []
        insert_rows(self.conn, s.changes, changes)

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
                f"request id {request_id!r} was already used for a different request")
        return True

    # -- audit chain
    def audit(self, action: str, entity_kind: str, entity_id: str, *, run_id: str | None,
              before: Any = None, after: Any = None, reason: str | None = None,
              request_id: str | None = None, request: Any = None,
              actor: str | None = None) -> str:
        last = LAST_AUDIT.first(self.conn)
        sequence = (last.sequence + 1) if last else 1
        prev = last.digest if last else ZERO_DIGEST
        row = {
            "sequence": sequence, "id": self.new_id("aud"), "actor": actor or self.actor.label,
            "action": action, "entity_kind": entity_kind, "entity_id": entity_id,
            "run_id": run_id, "before": canonical_json(before), "after": canonical_json(after),
            "reason": reason, "created_at": self.now,
        }
        row["digest"] = chain_digest(prev, audit_digest_body(row))
        row.update(prev_digest=prev, request_id=request_id,
                   request_digest=digest_of(request) if request_id else None)
        insert_rows(self.conn, s.audit, [row])
        self.changed("audit", row["id"], run_id)
        return row["id"]

    # -- runs and events
    def run_row(self, run_id: str) -> Any:
        row = row_where(self.conn, s.runs, id=run_id)
        if row is None:
            raise errors.NotFound(f"run {run_id} does not exist")
        return row

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
                f"run {run_id} is interrupted; it asks nothing new until a new attempt starts")
        return run

    def append_event(self, run: Any, type_: str, payload: Any, *, event_id: str | None = None,
                     status: RunStatus | None = None, actor: str | None = None) -> dict:
        """Append one event to ``run``'s chain, optionally moving its status (never without one)."""
        sequence = run.last_sequence + 1
        version = run.version + 1
        row = {
            "id": event_id or self.new_id("evt"), "run_id": run.id, "sequence": sequence,
            "type": type_, "payload": canonical_json(payload), "run_version": version,
            "attempt": run.current_attempt, "actor": actor or self.actor.label,
            "created_at": self.now, "prev_digest": run.last_digest,
        }
        row["digest"] = chain_digest(run.last_digest, event_digest_body(row, payload))
        insert_rows(self.conn, s.events, [row])
        values: dict[str, Any] = {"last_sequence": sequence, "last_digest": row["digest"],
                                  "version": version, "updated_at": self.now}
        if status is not None and status != run.status:
            values["status"] = status.value
            if status.terminal:
                values["finished_at"] = self.now
        done = update_where(self.conn, s.runs, values, id=run.id,
                            last_sequence=run.last_sequence)
        if done != 1:
            raise errors.StaleVersion(f"run {run.id} changed while appending an event")
        self.changed("run", run.id, run.id)
        self.changed("event", row["id"], run.id)
        return row

    def append_events(self, run: Any, items: list[tuple[str, Any, str, str]]) -> list[dict]:
        """Append several ``(type, payload, event_id, payload's canonical JSON)`` to ``run``'s
        chain in two statements (the batched path; the run's status does not change)."""
        rows, prev, sequence, version = [], run.last_digest, run.last_sequence, run.version
        for type_, payload, event_id, text in items:
            sequence, version = sequence + 1, version + 1
            row = {
                "id": event_id, "run_id": run.id, "sequence": sequence, "type": type_,
                "payload": text, "run_version": version,
                "attempt": run.current_attempt, "actor": self.actor.label,
                "created_at": self.now, "prev_digest": prev,
            }
            row["digest"] = prev = chain_digest(prev, event_digest_body(row, payload))
            rows.append(row)
        if not rows:
            return rows
        insert_rows(self.conn, s.events, rows)
        done = update_where(self.conn, s.runs, {
            "last_sequence": sequence, "last_digest": prev, "version": version,
            "updated_at": self.now}, id=run.id, last_sequence=run.last_sequence)
        if done != 1:
            raise errors.StaleVersion(f"run {run.id} changed while appending events")
        self.changed("run", run.id, run.id)
        for r in rows:
            self.changed("event", r["id"], run.id)
        return rows

    def run_event(self, run_id: str, type_: str, payload: Any, *,
                  status: RunStatus | None = None, actor: str | None = None) -> dict:
        return self.append_event(self.run_row(run_id), type_, payload, status=status, actor=actor)


def event_digest_body(row: dict, payload: Any) -> dict:
    return {"run_id": row["run_id"], "sequence": row["sequence"], "type": row["type"],
            "payload": payload, "created_at": row["created_at"]}


def audit_digest_body(row: Any) -> dict:
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    keys = ("sequence", "id", "actor", "action", "entity_kind", "entity_id", "run_id",
            "before", "after", "reason", "created_at")
    return {k: get(k) for k in keys}


class Journal:
    """An open journal. Thread-safe: every public call runs in its own transaction."""

    def __init__(self, path: Path, actor: Actor, *, read_only: bool, clock: Callable[[], float],
                 id_seed: int | None, busy_timeout: float,
                 synchronous: db.Synchronous = "FULL", signer: Any = None,
                 trust: Any = None) -> None:
        self.path = path
        self.actor = actor
        # signed decisions (docs/signed-decisions.md): the operator key that signs this
        # journal's operator decisions, and whom this process trusts (None: nobody asked)
        self.signer = signer
        self.trust = trust
        self.read_only = read_only
        self.clock = clock
        self.busy_timeout = busy_timeout
        self._rng = random.Random(id_seed) if id_seed is not None else None
        self._rng_lock = threading.Lock()
        self._recording = threading.local()  # .into: the list recording() fills, per thread
        self._writer = db.make_engine(path, read_only=read_only, immediate=True,
                                      timeout=busy_timeout, synchronous=synchronous)
        self._reader = db.make_engine(path, read_only=read_only, immediate=False,
                                      timeout=busy_timeout, synchronous=synchronous)
        self.schema_revision = db.SCHEMA_HEAD
        self.lost_tail: Any = None  # a witness.LostTail found at open
        from .services import attach_services

        attach_services(self)

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, url_or_path: str | os.PathLike[str], *, actor: Actor | str | None = None,
             read_only: bool = False, create: bool = True,
             on_old_schema: OldSchemaPolicy = "migrate",
             clock: Callable[[], float] | None = None, id_seed: int | None = None,
             busy_timeout: float = db.BUSY_TIMEOUT_S,
             synchronous: db.Synchronous = "FULL", signer: Any = None,
             trust: Any = None) -> Journal:
        """Open (or create) the journal at ``url_or_path``.

        ``signer``: an ``OperatorKey`` (proctor.core.keys) that signs every decision this
        operator makes. ``trust``: whom to trust (a trusted-operators file's path, a
        ``Trust``, or its document); None reads ``PROCTOR_TRUSTED_OPERATORS``. With trust,
        agent-side calls refuse any decision not signed by a trusted operator
        (``DecisionUnverified``); an unreadable or empty trust source trusts no one.

        ``synchronous="NORMAL"`` skips the fsync of each commit (WAL still never corrupts, but
        the last commits before a power loss may be gone): only for journals that can be
        rebuilt, such as a demo or benchmark journal being built. Everything else keeps FULL.
        """
        path = db.path_from_url(url_or_path)
        if isinstance(actor, str):
            actor = Actor.operator(actor)
        actor = actor or Actor.operator(default_operator_name())
        db.check_openable(path, read_only=read_only, create=create)
        try:
            if not read_only:
                created = db.prepare_file(path)
                if created:
                    db.enable_wal(path, busy_timeout)
            from .trust import resolve_trust

            journal = cls(path, actor, read_only=read_only, clock=clock or time.time,
                          id_seed=id_seed, busy_timeout=busy_timeout, synchronous=synchronous,
                          signer=signer, trust=resolve_trust(trust))
            try:
                journal._check_schema(on_old_schema)
            except BaseException:
                journal.close()
                raise
            from .witness import check

            # changes a desk saw that the journal lost (its -wal deleted): never raises
            journal.lost_tail = check(journal)
        except errors.StoreError as err:
            if isinstance(err, errors.Corrupt) and not isinstance(err, errors.NotAJournal):
                db.check_header(path)  # SQLite refused it: is it a database file at all?
            if str(path) in err.message:
                raise
            raise type(err)(f"{path}: {err.message}", hint=err.hint, **err.details) from err
        return journal

    def _check_schema(self, policy: OldSchemaPolicy) -> None:
        try:
            with self._reader.connect() as conn:
                revision = db.current_revision(conn)
                empty = revision is None and not conn.exec_driver_sql(
                    "SELECT 1 FROM sqlite_master WHERE type='table' LIMIT 1").first()
        except exc.DBAPIError as err:
            db.raise_translated(err)
            raise
        if revision == db.SCHEMA_HEAD:
            return
        if revision is not None and revision not in db.SCHEMA_REVISIONS:
            raise errors.SchemaTooNew(
                f"{self.path} has schema revision {revision}, newer than this Proctor knows "
                f"({db.SCHEMA_HEAD})")
        if revision is None and not empty:
            raise errors.NotAJournal(f"{self.path} is an SQLite file but not a Proctor journal")
        if self.read_only or (revision is not None and policy == "read_only"):
            if revision is None:
                raise errors.StoreReadOnly(f"{self.path} is empty and open read-only")
            self._become_read_only(revision)
            return
        if revision is not None and policy == "error":
            raise errors.SchemaTooOld(
                f"{self.path} has schema revision {revision}; this Proctor needs {db.SCHEMA_HEAD}")
        self.migrate(backup=revision is not None)

    def _become_read_only(self, revision: str) -> None:
        self.close()
        self.read_only = True
        self.schema_revision = revision
        self._writer = db.make_engine(self.path, read_only=True, immediate=False,
                                      timeout=self.busy_timeout)
        self._reader = db.make_engine(self.path, read_only=True, immediate=False,
                                      timeout=self.busy_timeout)

    def migrate(self, backup: bool = True) -> Path | None:
        """Upgrade the schema to head (after a VACUUM INTO backup when asked)."""
        from alembic import command
        from alembic.config import Config

        backup_path = None
        with self._writer.connect() as conn:
            if backup:
                backup_path = self.path.with_name(
                    f"{self.path.name}.backup-{time.strftime('%Y%m%d-%H%M%S')}")
                db.backup_to(conn, backup_path)
            cfg = Config()
            cfg.set_main_option("script_location", "proctor.core:migrations")
            cfg.attributes["connection"] = conn
            with conn.begin():
                command.upgrade(cfg, "head")
        return backup_path

    def close(self) -> None:
        self._writer.dispose()
        self._reader.dispose()
        if hasattr(self, "changes"):
            self.changes.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------ transactions
    def now(self) -> float:
        return self.clock()

    def new_id(self, prefix: str) -> str:
        if self._rng is None:
            return f"{prefix}_{uuid.uuid4().hex[:24]}"
        with self._rng_lock:
            return f"{prefix}_{self._rng.getrandbits(96):024x}"

    @contextmanager
    def recording(self, into: list[Change]) -> Iterator[list[Change]]:
        """Inside the block, each write this thread commits appends the change-feed rows it
        wrote to ``into`` (also when the write raises after its commit): the change set a
        caller's own writes made, without waiting for a watcher to read the feed."""
        before = getattr(self._recording, "into", None)
        self._recording.into = into
        try:
            yield into
        finally:
            self._recording.into = before

    def write(self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn`` inside one BEGIN IMMEDIATE transaction; commit whole or change nothing."""
        if self.read_only:
            raise errors.StoreReadOnly(f"{self.path} is open read-only; nothing was changed")
        into: list[Change] | None = getattr(self._recording, "into", None)
        written: list[Change] = []
        try:
            with self._writer.connect() as conn, conn.begin():
                tx = Tx(self, conn, self.now())
                first = _next_change_seq(conn) if into is not None else 0
                result = fn(tx)
                tx.flush()
                if into is not None:
                    written = _changes_from(conn, first)
        except exc.DBAPIError as err:
            if db.stale_files(err):
                self.reconnect()
            db.raise_translated(err)
            raise
        except UnicodeError as err:  # the driver cannot encode a lone surrogate
            raise errors.ValidationError(f"text must be valid Unicode: {err}") from err
        if into is not None:
            into.extend(written)
        if tx._after_commit is not None:
            raise tx._after_commit
        return result

    def write_then(self, fn: Callable[[Tx], Any], fetch: Callable[[Tx, Any], T]) -> T:
        """``write(fn)``, then ``fetch(tx, fn's result)`` in the same transaction: what a write
        returns is read where it was written (no second transaction). ``fetch`` is skipped when
        the write is to raise after its commit."""

        @functools.wraps(fn)  # names fn: what ran is fn, plus a read
        def both(tx: Tx) -> Any:
            result = fn(tx)
            return result if tx._after_commit is not None else fetch(tx, result)

        return self.write(both)

    def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in one short read transaction (never held across an event loop)."""
        try:
            return self._read_once(fn)
        except exc.DBAPIError as err:
            if not db.stale_files(err):
                db.raise_translated(err)
                raise
        self.reconnect()  # the -wal was deleted or replaced under our connections: once more
        try:
            return self._read_once(fn)
        except exc.DBAPIError as err:
            db.raise_translated(err)
            raise

    def _read_once(self, fn: Callable[[Connection], T]) -> T:
        try:
            with self._reader.connect() as conn, conn.begin():
                return fn(conn)
        except UnicodeError as err:  # the driver cannot encode a lone surrogate
            raise errors.ValidationError(f"text must be valid Unicode: {err}") from err

    def reconnect(self) -> None:
        """Drop pooled connections (the next call opens the journal's files afresh)."""
        self._writer.dispose()
        self._reader.dispose()
        if hasattr(self, "changes"):
            self.changes.close()

    def integrity_check(self, quick: bool = False) -> list[str]:
        return self.read(lambda conn: db.integrity_check(conn, quick))

    def missing_triggers(self) -> set[str]:
        """The immutability triggers the schema expects but the file lacks (empty when
        every one is in place)."""
        return db.expected_trigger_names(self.schema_revision) - self.read(db.trigger_names)

    @property
    def verifying(self) -> bool:
        """Trust is configured and this is an agent: what it reads of a decision must be
        proven (shared reads like ``interactions.get`` check only then)."""
        return self.trust is not None and self.actor.kind is ActorKind.AGENT

    def require_operator(self) -> None:
        if self.actor.kind is ActorKind.AGENT:
            raise errors.NotAllowed(
                f"{self.actor.label} is an agent; only an operator may decide",
                hint="Open the journal as an operator to decide.")


def default_operator_name() -> str:
    try:
        return os.environ.get("PROCTOR_OPERATOR") or getpass.getuser()
    except (KeyError, OSError):
        return "operator"


def _next_change_seq(conn: Connection) -> int:
    """The seq the next change row of this (write) transaction gets at least."""
    return int(conn.execute(select(func.max(s.changes.c.seq))).scalar() or 0) + 1


def _changes_from(conn: Connection, first: int) -> list[Change]:
    """The change rows this write transaction wrote (none can be written by another)."""
    stmt = select(s.changes).where(s.changes.c.seq >= first).order_by(s.changes.c.seq)
    return to_models(Change, conn.execute(stmt))
