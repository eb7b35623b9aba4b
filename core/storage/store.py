"""The store: the journal's connections, one read or write transaction at a time, and the
translation of the engine's errors into typed Proctor errors. Below every service.

A journal is a file (SQLite, core/storage/db.py) or a database on a PostgreSQL server (core/storage/pg.py):
what differs between the two lives in those modules; the store picks one by its location."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Connection, exc

from proctor.core import errors
from proctor.core.models import Actor, ActorKind, Change, ChangeSet

from . import db, pg
from .tx import Tx

T = TypeVar("T")

OldSchemaPolicy = Literal["migrate", "read_only", "error"]


class Store:
    """An open journal file, as the services see it: who writes (``actor``), the clock, ids,
    and one transaction per call. Thread-safe."""

    def __init__(
        self,
        path: Path | pg.ServerAddress,
        actor: Actor,
        *,
        read_only: bool,
        clock: Callable[[], float],
        id_seed: int | None,
        busy_timeout: float,
        synchronous: db.Synchronous = "FULL",
        signer: Any = None,
        trust: Any = None,
        autocheckpoint: bool = True,
        lock_wait: db.LockWait | None = None,
    ) -> None:
        self.path = path
        self.autocheckpoint = autocheckpoint
        # how a write waits for another process's write lock (Journal.open's doc)
        self.lock_wait = lock_wait
        # a journal on a PostgreSQL server (``path`` is its pg.ServerAddress), not a file
        self.server = db.on_server(path)
        self.synchronous = synchronous
        self.actor = actor
        # signed decisions (docs/signed-decisions.md): the operator key that signs this
        # journal's operator decisions, and whom this process trusts (None: nobody asked)
        self.signer = signer
        self.trust = trust
        # damage a read or write of this journal ran into (errors.Corrupt): once known,
        # nothing more is decided on it (decisions/writer.py refuses)
        self.damage: errors.Corrupt | None = None
        self.read_only = read_only
        self.clock = clock
        self.busy_timeout = busy_timeout
        self._rng = random.Random(id_seed) if id_seed is not None else None
        self._rng_lock = threading.Lock()
        # handed the change set of each transaction that committed change rows, on the
        # thread that committed it, before its write returns (or raises after its commit);
        # what it raises, that write raises. The desk's own writes reach its views so
        # (gui/infra/guard.py WriteFeed)
        self.on_commit: Callable[[ChangeSet], None] | None = None
        self._engines()
        self._threads()
        self.schema_revision = db.SCHEMA_HEAD
        if self.server:
            pg.track(self)

    def _engines(self) -> None:
        make: Any = pg.make_engine if self.server else db.make_engine
        self._writer = make(
            self.path,
            read_only=self.read_only,
            immediate=True,
            timeout=self.busy_timeout,
            synchronous=self.synchronous,
            autocheckpoint=self.autocheckpoint,
            **({} if self.server or self.read_only else {"lock_wait": self.lock_wait}),
        )
        self._reader = make(
            self.path,
            read_only=self.read_only,
            immediate=False,
            timeout=self.busy_timeout,
            synchronous=self.synchronous,
            autocheckpoint=self.autocheckpoint,
        )

    def _threads(self) -> None:
        """One kept connection per thread for writes and one for reads (db.ThreadConnections)."""
        if self.server:
            self._writes = db.ThreadConnections(
                self._writer,
                pg.begin_for(read_only=self.read_only, immediate=True),
                keep_runs=False,
            )
            self._reads = db.ThreadConnections(self._reader, pg.READ_BEGIN, keep_runs=False)
            return
        self._writes = db.ThreadConnections(
            self._writer,
            "BEGIN" if self.read_only else "BEGIN IMMEDIATE",
            watch_runs=not self.read_only,
            lock_wait=None if self.read_only else self.lock_wait,
            busy_timeout=self.busy_timeout,
        )
        self._reads = db.ThreadConnections(self._reader, "BEGIN")

    def _raise_translated(self, err: BaseException) -> None:
        typed = (pg if self.server else db).translate(err)
        if typed is not None:
            self.note_damage(typed)
            raise typed from err

    def note_damage(self, err: BaseException) -> None:
        """Remember the first damage seen (not: a file that is no journal at all)."""
        if (
            isinstance(err, errors.Corrupt)
            and not isinstance(err, errors.NotAJournal)
            and self.damage is None
        ):
            self.damage = err

    def _stale(self, err: BaseException) -> bool:
        """The connections under a call went stale (a file journal's -wal replaced, a server
        connection lost): the next call opens fresh ones."""
        return pg.lost_connection(err) if self.server else db.stale_files(err)

    # ------------------------------------------------------------ schema
    def _check_schema(self, policy: OldSchemaPolicy) -> None:
        try:
            with self._reader.connect() as conn:
                revision = db.current_revision(conn)
                empty = revision is None and self._empty(conn)
        except exc.DBAPIError as err:
            self._raise_translated(err)
            raise
        if revision == db.SCHEMA_HEAD:
            return
        if revision is not None and revision not in db.SCHEMA_REVISIONS:
            raise errors.SchemaTooNew(
                f"{self.path} has schema revision {revision}, newer than this Proctor knows "
                f"({db.SCHEMA_HEAD})"
            )
        if revision is None and not empty:
            what = "a PostgreSQL database" if self.server else "an SQLite file"
            raise errors.NotAJournal(f"{self.path} is {what} but not a Proctor journal")
        if self.read_only or (revision is not None and policy == "read_only"):
            if revision is None:
                raise errors.StoreReadOnly(f"{self.path} is empty and open read-only")
            self._become_read_only(revision)
            return
        if revision is not None and policy == "error":
            raise errors.SchemaTooOld(
                f"{self.path} has schema revision {revision}; this Proctor needs {db.SCHEMA_HEAD}"
            )
        try:
            self.migrate(backup=revision is not None and not self.server)
        except exc.DBAPIError as err:  # another process migrating holds the lock too long...
            self._raise_translated(err)
            raise

    def _empty(self, conn: Connection) -> bool:
        if self.server:
            return pg.is_empty(conn)
        return not conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type='table' LIMIT 1"
        ).first()

    def _become_read_only(self, revision: str) -> None:
        self.close()
        self.read_only = True
        self.schema_revision = revision
        self.synchronous = "FULL"
        self._engines()
        self._threads()

    def migrate(self, backup: bool = True) -> Path | None:
        """Upgrade the schema to head (after a VACUUM INTO backup when asked; a server
        journal's backups are the server's: pg_dump)."""
        from alembic import command
        from alembic.config import Config

        backup_path = None
        with self._writer.connect() as conn:
            if backup and isinstance(self.path, Path):  # a file: a server keeps its own
                backup_path = self.path.with_name(
                    f"{self.path.name}.backup-{time.strftime('%Y%m%d-%H%M%S')}"
                )
                db.backup_to(conn, backup_path)
            cfg = Config()
            cfg.set_main_option("script_location", "proctor.core.storage:migrations")
            cfg.attributes["connection"] = conn
            with conn.begin():
                command.upgrade(cfg, "head")
        return backup_path

    def checkpoint(self) -> None:
        """Copy the -wal's committed pages into the file now, waiting for nobody (SQLite's
        PASSIVE checkpoint). A journal opened with ``autocheckpoint=False`` (the desk) calls
        this off the path of its writes: otherwise the commit that takes the -wal past 1,000
        pages copies them, tens of milliseconds inside that one commit. Nothing to do on a
        server or read-only."""
        if not self.server and not self.read_only:
            try:
                db.checkpoint(self._writer)
            except exc.DBAPIError as err:
                self._raise_translated(err)
                raise

    def close(self) -> None:
        self._writes.close()
        self._reads.close()
        self._writer.dispose()
        self._reader.dispose()

    # ------------------------------------------------------------ transactions
    def now(self) -> float:
        return self.clock()

    def new_id(self, prefix: str) -> str:
        if self._rng is None:  # 96 random bits, 24 hex digits (a UUID's build costs 10x)
            return f"{prefix}_{os.urandom(12).hex()}"
        with self._rng_lock:
            return f"{prefix}_{self._rng.getrandbits(96):024x}"

    def write(self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn`` inside one BEGIN IMMEDIATE transaction; commit whole or change nothing."""
        return self._write(fn, False)[0]

    def write_changes(self, fn: Callable[[Tx], T]) -> tuple[T, ChangeSet]:
        """``write(fn)``, and the change set its transaction committed: exactly the change-feed
        rows it wrote, as the INSERT numbered them (nothing is read back). A write that
        changed nothing gives ``ChangeSet(since=0, until=0, changes=[])``; one that raises
        after its commit returns nothing (its change set goes to ``on_commit``)."""
        result, changes = self._write(fn, True)
        assert changes is not None
        return result, changes

    def _write(self, fn: Callable[[Tx], T], wanted: bool) -> tuple[T, ChangeSet | None]:
        """The write path: ``fn``'s result and its transaction's change set (None unless
        ``wanted`` or someone listens: ``on_commit`` is handed each one that holds rows)."""
        if self.read_only:
            raise errors.StoreReadOnly(f"{self.path} is open read-only; nothing was changed")
        try:
            link = self._begin_write()
            try:
                tx = Tx(self, link.conn, self.clock(), link)
                result = fn(tx)
                if self.server and link.touched is not None:  # db.watch_runs' twin
                    link.touched.update(pg.runs_written(link.conn))
                rows = tx.flush()
            except BaseException as err:
                self._writes.rollback(link)
                self.note_damage(err)
                raise
            self._writes.commit(link)
        except exc.DBAPIError as err:
            if self._stale(err):
                self.reconnect()
            self._raise_translated(err)
            raise
        except UnicodeError as err:  # the driver cannot encode a lone surrogate
            raise errors.ValidationError(f"text must be valid Unicode: {err}") from err
        told = self.on_commit
        changes = None
        if wanted or told is not None:
            changes = change_set(rows)
            if told is not None and rows:
                told(changes)
        if tx._after_commit is not None:
            raise tx._after_commit
        return result, changes

    def _begin_write(self) -> Any:
        """This thread's write connection, in a new transaction. A server connection found
        dead before anything began (the server restarted, the network dropped) is made anew
        once: nothing was sent, so nothing can be applied twice."""
        try:
            return self._writes.begin()
        except exc.DBAPIError as err:
            if not (self.server and pg.lost_connection(err)):
                raise
        self.reconnect()
        return self._writes.begin()

    def write_then(self, fn: Callable[[Tx], Any], fetch: Callable[[Tx, Any], T]) -> T:
        """``write(fn)``, then ``fetch(tx, fn's result)`` in the same transaction: what a write
        returns is read where it was written (no second transaction). ``fetch`` is skipped when
        the write is to raise after its commit."""

        def both(tx: Tx) -> Any:
            result = fn(tx)
            return result if tx._after_commit is not None else fetch(tx, result)

        # named as fn (what ran is fn, plus a read), without functools.wraps' copying
        both.__qualname__ = getattr(fn, "__qualname__", both.__qualname__)
        return self.write(both)

    def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in one short read transaction (never held across an event loop)."""
        try:
            return self._read_fresh(fn)
        except errors.Damaged as err:  # a stored value that does not decode
            self.note_damage(err)
            raise

    def _read_fresh(self, fn: Callable[[Connection], T]) -> T:
        try:
            return self._read_once(fn)
        except exc.DBAPIError as err:
            if not self._stale(err):
                self._raise_translated(err)
                raise
        self.reconnect()  # the -wal was replaced, the server connection lost: once more
        try:
            return self._read_once(fn)
        except exc.DBAPIError as err:
            self._raise_translated(err)
            raise

    def _read_once(self, fn: Callable[[Connection], T]) -> T:
        try:
            link = self._reads.begin()
            try:
                result = fn(link.conn)
            except BaseException:
                self._reads.rollback(link)
                raise
            self._reads.commit(link)
            return result
        except UnicodeError as err:  # the driver cannot encode a lone surrogate
            raise errors.ValidationError(f"text must be valid Unicode: {err}") from err

    def reconnect(self) -> None:
        """Drop pooled connections (the next call opens the journal's files afresh)."""
        self._writes.reset()
        self._reads.reset()
        self._writer.dispose()
        self._reader.dispose()

    def integrity_check(
        self, quick: bool = False, cancelled: Callable[[], bool] | None = None
    ) -> list[str]:
        """The file's damage check ("ok" or the problems); ``cancelled()`` stops it
        (errors.Cancelled). A problem found is remembered as damage seen: nothing more is
        decided on this journal (as after a read that ran into it)."""
        lines = self.read(lambda conn: db.integrity_check(conn, quick, cancelled))
        problems = [line for line in lines if line != "ok"]
        if problems:
            self.note_damage(errors.Corrupt(f"the journal file is damaged: {problems[0]}"))
        return lines

    def missing_triggers(self) -> set[str]:
        """The immutability triggers the schema expects but the file lacks (empty when
        every one is in place)."""
        expected = db.expected_trigger_names(self.schema_revision, server=self.server)
        return expected - self.read(db.trigger_names)

    def altered_triggers(self) -> dict[str, str]:
        """The triggers present under an expected name whose definition is not the one the
        migrations install (name -> what is wrong); compared on SQLite journals (a server's
        are by name only)."""
        if self.server:
            return {}
        from . import trigger_defs

        revision = self.schema_revision or db.SCHEMA_HEAD
        return self.read(lambda conn: trigger_defs.altered(conn, revision))

    @property
    def verifying(self) -> bool:
        """Trust is configured and this is an agent: what it reads of a decision must be
        proven (shared reads like ``interactions.get`` check only then)."""
        return self.trust is not None and self.actor.kind is ActorKind.AGENT

    def require_operator(self) -> None:
        if self.actor.kind is ActorKind.AGENT:
            raise errors.NotAllowed(
                f"{self.actor.label} is an agent; only an operator may decide",
                hint="Open the journal as an operator to decide.",
            )


__all__ = ["OldSchemaPolicy", "Store"]


def change_set(rows: list[dict]) -> ChangeSet:
    """The change set of one transaction's change rows (``Tx.flush``), in seq order."""
    changes = [Change(**row) for row in rows]
    if not changes:
        return ChangeSet(since=0, until=0, changes=[])
    return ChangeSet(since=changes[0].seq - 1, until=changes[-1].seq, changes=changes)
