"""SQLite engine setup: the only place with SQLite-specific SQL (a server journal's twin is
core/storage/pg.py; the kept connections, ``ThreadConnections``, and the trigger helpers here serve
both: a helper given a PostgreSQL connection renders the same trigger in PL/pgSQL).

WAL, synchronous=FULL, foreign_keys=ON, busy_timeout, and BEGIN IMMEDIATE for
every transaction that may write (the documented pysqlite recipe: the driver's
own transaction handling is switched off and the BEGIN is emitted by us).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event, exc, text
from sqlalchemy.pool import QueuePool

from proctor.core import errors

from . import census, pg, sql
from . import schema as _schema
from .schema import (
    IDENTITY_COLUMNS,
    IMMUTABLE_TABLES,
    KEY_KEYS,
    ORIGIN_TABLES,
    POLICY_TABLES,
    REQUEST_IDENTITY_COLUMNS,
    REQUEST_UNIQUE_KEYS,
    SIGNED_TABLES,
    UNIQUE_KEYS,
)

BUSY_TIMEOUT_S = 5.0
# A write waiting for another process's write lock (begin_polling; Journal.open's defaults)
# first sleeps in SQLite's busy handler for LOCK_PATIENCE_S, then tries its BEGIN IMMEDIATE
# every LOCK_POLL_S: a long waiter tries far more often than those that just came.
LOCK_POLL_S = 0.0005
LOCK_PATIENCE_S = 0.1


@dataclass(frozen=True)
class LockWait:
    """How a BEGIN IMMEDIATE waits for another process's write lock (begin_polling):
    ``patience`` seconds in SQLite's busy handler, then a try every ``poll`` seconds."""

    poll: float
    patience: float = 0.0


# Every revision this code knows, oldest first. A test checks it against Alembic.
SCHEMA_REVISIONS = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0005s",
    "0005r",
    "0005b",
    "0006o",
    "0006i",
    "0007t",
    "0007j",
    "0008x",
    "0009b",
    "0010k",
    "0011d",
    "0012w",
    "0013u",
    "0014p",
    "0014u",
    "0015u",
)
SCHEMA_HEAD = SCHEMA_REVISIONS[-1]
# The revision that added the identity/no-replace triggers and the effect and memory digests.
INTEGRITY_REVISION = "0005"


def has_integrity(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0005's triggers and digests."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index(INTEGRITY_REVISION)


def path_from_url(url_or_path: str | os.PathLike[str]) -> Path:
    raw = os.fspath(url_or_path)
    if raw.startswith("sqlite:///"):
        raw = raw[len("sqlite:///") :]
    elif "://" in raw:
        raise errors.StoreError(
            f"unsupported journal URL {pg.hide(raw)!r}: only sqlite:/// and "
            "postgresql+psycopg:// are supported"
        )
    elif raw.startswith(FOLDED_URLS):  # a URL passed through Path lost a slash of its "//"
        raise errors.StoreError(
            f"{pg.hide(raw)!r} looks like a server URL with one slash after its scheme, not a file",
            hint="Write it as postgresql+psycopg://user@host:port/db.",
        )
    return Path(raw).expanduser().absolute()


FOLDED_URLS = ("postgresql:/", "postgresql+psycopg:/", "postgres:/", "sqlite:/")


def location_from_url(url_or_path: str | os.PathLike[str]) -> Path | pg.ServerAddress:
    """A journal file's path, or a server journal's address (core/storage/pg.py)."""
    raw = os.fspath(url_or_path)
    if pg.is_url(raw):
        return pg.address(raw)
    return path_from_url(raw)


def on_server(location: object) -> bool:
    """True for a server journal's location (not a file)."""
    return isinstance(location, pg.ServerAddress)


def check_openable(path: Path, *, read_only: bool, create: bool) -> None:
    """Refuse, naming the file and writing nothing, what cannot be opened as asked: a
    folder, a missing or empty (0-byte) file unless creating, an unwritable file or folder
    unless read-only."""
    if path.is_dir():
        raise errors.StoreError(
            f"{path} is a folder, not a journal file", hint="Choose the journal file inside it."
        )
    exists = path.exists()
    if not exists and (read_only or not create):
        raise errors.NotFound(f"no journal at {path}", hint="Check the path, or create one.")
    if exists and (read_only or not create) and path.stat().st_size == 0:
        raise errors.Corrupt(
            f"{path} is empty (0 bytes), not a journal",
            hint="Restore it from a backup, or create a new journal there.",
        )
    if read_only:
        return
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folders to be made go into the nearest existing one
    folder_ok = os.access(folder, os.W_OK)
    if (exists and not os.access(path, os.W_OK)) or (
        not folder_ok and not Path(f"{path}-shm").exists()
    ):
        raise errors.StoreReadOnly(
            f"{path} cannot be written (a read-only file, folder or file system)",
            hint="Open it read-only to observe.",
        )


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_header(path: Path) -> None:
    """Refuse a non-empty file that does not start like an SQLite database: it is not a
    Proctor journal (a text file, an archive ...), whatever its name.

    Only after SQLite itself refused the file: closing any descriptor of a database file
    drops every POSIX lock this process holds on it (fcntl locks are per process), so
    reading the header of a journal that another connection of this process has open would
    let a second process delete the -wal under that connection (it then reads a stale
    snapshot forever)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except PermissionError as err:
        raise errors.StoreError(
            f"{path} cannot be read: permission denied",
            hint="Check the file's owner and permissions.",
        ) from err
    except OSError as err:
        raise errors.StoreError(f"{path} cannot be read: {err.strerror or err}") from err
    if head and head != SQLITE_MAGIC:
        raise errors.NotAJournal(
            f"{path} is not a Proctor journal (it is not an SQLite database file)"
        )


def _immutable(path: Path) -> bool:
    """A checkpointed journal in a folder nobody can write to (a read-only mount, a
    snapshot): SQLite cannot create the -shm it needs, so it is read as an unchanging file."""
    return (
        not os.access(path.parent, os.W_OK)
        and not Path(f"{path}-shm").exists()
        and not Path(f"{path}-wal").exists()
    )


def prepare_file(path: Path) -> bool:
    """Create the journal's folder (0700) and file (0600) if missing. True if created."""
    missing = [f for f in (path.parent, *path.parent.parents) if not f.exists()]
    for folder in reversed(missing):  # mkdir(parents=True) would make the upper ones 0777
        folder.mkdir(mode=0o700, exist_ok=True)
    if path.exists():
        return path.stat().st_size == 0
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    return True


Synchronous = Literal["FULL", "NORMAL"]


# Columns later revisions added to existing tables, with what an older journal means by their
# absence. A read-only connection to an older journal (the operator chose not to upgrade it)
# sees them through TEMP views, so every read works on any revision without writing a byte.
NO_TIME = "CAST(NULL AS DOUBLE PRECISION)"  # typed: a UNION of it and a REAL column works
ADDED_COLUMNS: dict[str, dict[str, str]] = {  # table -> column -> SQL value when absent
    "memory_entries": {"last_used_at": "0", "use_count": "0"},  # 0004
    "memory_reconciliations": {
        "incoming_kind": "NULL",
        "incoming_priority": "NULL",
        "incoming_trust": "NULL",
        "incoming_sensitivity": "NULL",
        "agent": "NULL",
        "origin": "NULL",
    },  # 0004, agent: 0005b
    "interactions": {
        "origin": "NULL",
        "waiter_seen_at": NO_TIME,
        "hold_until": NO_TIME,
        "taken_at": NO_TIME,
    },  # 0006o, 0012w, hold_until and taken_at: 0014u
    "memory_mutations": {
        "event_sequence": "NULL",  # 0004
        "prev_digest": "NULL",
        "digest": "NULL",
    },  # 0005
    "effects": {
        "action_digest": "NULL",
        "agent": "NULL",
        "origin": "NULL",
    },  # 0005, agent: 0005b, origin: 0006o
    "approval_rules": {"predicate": "NULL", "revoke_reason": "NULL"},  # 0005r
    "approvals": {
        "input_schema": "NULL",
        "approved_action": "NULL",
        "approved_digest": "NULL",
        "origin": "NULL",
        "waiter_seen_at": NO_TIME,
        "hold_until": NO_TIME,
    },  # 0005r, origin: 0006o, waiter_seen_at: 0012w, hold_until: 0013u
    "runs": {"retry_requested": "NULL", "retry_reason": "NULL"},  # 0013u
}


def add_compat_views(conn: sqlite3.Connection) -> list[str]:
    """On a read-only connection: a TEMP view per table that lacks ADDED_COLUMNS (an older
    journal), with the missing columns filled in. Returns the tables given a view."""
    viewed = []
    for table, added in ADDED_COLUMNS.items():
        have = {row[1] for row in conn.execute(f'PRAGMA main.table_info("{table}")')}
        missing = [f"{value} AS {name}" for name, value in added.items() if name not in have]
        if have and missing:
            conn.execute(
                f'CREATE TEMP VIEW "{table}" AS SELECT *, {", ".join(missing)} FROM main."{table}"'
            )
            viewed.append(table)
    for table, columns in ADDED_TABLES.items():
        if not conn.execute(
            "SELECT 1 FROM main.sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone():
            empty = ", ".join(f"NULL AS {name}" for name in columns)
            conn.execute(f'CREATE TEMP VIEW "{table}" AS SELECT {empty} WHERE 0')
            viewed.append(table)
    return viewed


# Tables a later revision added: an older journal opened read-only reads them as empty.
ADDED_TABLES: dict[str, tuple[str, ...]] = {
    "signatures": (
        "record_id",
        "record_kind",
        "key_id",
        "operator",
        "payload",
        "signature",
        "created_at",
    ),
    "operator_keys": ("key_id", "operator", "public_key", "first_seen_at"),
    "journal_meta": ("key", "value"),
    # 0014p: the policy tables (core/storage/schema.py, POLICY_TABLES)
    **{
        name: tuple(c.name for c in _schema.metadata.tables[name].columns) for name in POLICY_TABLES
    },
}


def _connect(
    path: Path,
    read_only: bool,
    timeout: float,
    synchronous: Synchronous = "FULL",
    autocheckpoint: bool = True,
) -> sqlite3.Connection:
    if read_only:
        uri = f"file:{quote(str(path))}?mode=ro" + ("&immutable=1" if _immutable(path) else "")
        conn = sqlite3.connect(
            uri, uri=True, timeout=timeout, check_same_thread=False, isolation_level=None
        )
    else:
        conn = sqlite3.connect(
            str(path), timeout=timeout, check_same_thread=False, isolation_level=None
        )
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA synchronous = {'NORMAL' if synchronous == 'NORMAL' else 'FULL'}")
    if not autocheckpoint:  # Store.checkpoint() does it, when the caller chooses
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    if read_only:
        add_compat_views(conn)
    return conn


def make_engine(
    path: Path,
    *,
    read_only: bool,
    immediate: bool,
    timeout: float = BUSY_TIMEOUT_S,
    synchronous: Synchronous = "FULL",
    autocheckpoint: bool = True,
    lock_wait: LockWait | None = None,
) -> Engine:
    """An engine whose transactions start with BEGIN IMMEDIATE (writes) or BEGIN (reads).
    ``lock_wait``: how a BEGIN IMMEDIATE waits for the write lock (``begin_polling``);
    None: in SQLite's busy handler only."""
    engine = create_engine(
        "sqlite://",
        creator=lambda: _connect(path, read_only, timeout, synchronous, autocheckpoint),
        poolclass=QueuePool,
        pool_size=4,
        max_overflow=-1,  # each thread keeps one (ThreadConnections): never wait for one
        pool_reset_on_return="rollback",
    )
    begin_sql = "BEGIN IMMEDIATE" if immediate and not read_only else "BEGIN"
    poll = lock_wait if begin_sql == "BEGIN IMMEDIATE" else None

    @event.listens_for(engine, "begin")
    def _begin(conn):  # SQLAlchemy event signature
        driver = conn.connection.driver_connection
        if driver.in_transaction:
            return  # ThreadConnections began it on the driver; SQLAlchemy only joins it
        if conn.dispatch.before_cursor_execute or conn.dispatch.after_cursor_execute:
            # something records statements: let it see this
            begin_polling(driver, lambda: conn.exec_driver_sql(begin_sql), poll, timeout)
            return
        try:  # straight to the driver: ~60 us less per transaction
            begin_polling(driver, lambda: driver.execute(begin_sql), poll, timeout)
        except sqlite3.Error as err:
            raise exc.DBAPIError.instance(
                begin_sql, (), err, sqlite3.Error, dialect=conn.dialect
            ) from err

    return engine


_RETIRED = -2  # a Link's generation once its connection is closed


def _busy(err: BaseException) -> bool:
    orig = getattr(err, "orig", err)
    return isinstance(orig, sqlite3.Error) and (
        getattr(orig, "sqlite_errorname", "") or ""
    ).startswith("SQLITE_BUSY")


def begin_polling(
    driver: sqlite3.Connection, begin: Any, wait: LockWait | None, timeout: float
) -> None:
    """Run ``begin()`` (a BEGIN IMMEDIATE on ``driver``); with ``wait``, while another
    process holds the write lock: first ``wait.patience`` seconds in SQLite's busy handler,
    then a try every ``wait.poll`` seconds, for up to ``timeout`` in all.

    SQLite's own busy handler (``busy_timeout``) sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25,
    50, ... 100 ms between tries. Behind agents committing a few ms apart, a write so waits
    for whole steps after the lock was freed (click → committed p95 35 ms in the desk
    bench: the desk polls at once), and under writers that never pause one waiter can lose
    every turn until its timeout (StoreBusy in test_contention): past its patience, a
    waiter polls, far more often than those that just came. The handler is off
    (``busy_timeout = 0``) while polling; every statement after the BEGIN keeps the
    connection's busy timeout."""
    if wait is None:
        begin()
        return
    start = time.monotonic()
    try:
        patience = min(wait.patience, timeout)
        if patience > 0:
            driver.execute(f"PRAGMA busy_timeout = {max(1, int(patience * 1000))}")
            try:
                begin()
                return
            except Exception as err:
                if not _busy(err):
                    raise
        driver.execute("PRAGMA busy_timeout = 0")
        while True:
            try:
                begin()
                return
            except Exception as err:
                waited = time.monotonic() - start
                if not _busy(err) or waited >= timeout:
                    raise
            time.sleep(wait.poll)
    finally:
        driver.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")


class ThreadConnections:
    """One connection per thread for one engine, kept open between transactions (no pool
    checkout, no SQLAlchemy transaction object per call). Each transaction starts and ends on
    the driver (``begin_sql``, COMMIT/ROLLBACK) unless something listens for statements: then
    it goes through SQLAlchemy so the listener sees BEGIN, each statement and the commit. A
    thread whose connection is already in a transaction (a nested call) borrows a pooled one
    for that call. ``reset`` (the files changed) retires every connection: idle ones now, busy
    ones when their transaction ends."""

    def __init__(
        self,
        engine: Engine,
        begin_sql: str,
        *,
        watch_runs: bool = False,
        keep_runs: bool = True,
        lock_wait: LockWait | None = None,
        busy_timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.engine = engine
        self.busy_timeout = busy_timeout
        self.begin_sql = begin_sql
        self.watch_runs = watch_runs
        # how a BEGIN IMMEDIATE waits for the write lock (begin_polling)
        self.lock_wait = lock_wait if begin_sql == "BEGIN IMMEDIATE" else None
        # a server journal keeps no run heads between statements (nothing calls back into
        # this process when another statement writes runs): each is read where it is needed
        self.keep_runs = keep_runs
        server = engine.dialect.name == "postgresql"
        self._server = server
        self._error: type[Exception] = pg.dbapi_error() if server else sqlite3.Error
        self._in_transaction = pg.in_transaction if server else _sqlite_in_transaction
        self._own: dict[threading.Thread, sql.Link] = {}
        self._lock = threading.RLock()  # reset retires under it; so may a releasing thread
        self._generation = 0

    def begin(self) -> sql.Link:
        thread = threading.current_thread()
        link = self._own.get(thread)
        if link is not None and (link.generation != self._generation or link.conn.invalidated):
            self._retire(thread, link)
            link = None
        if link is None:
            link = self._open(thread)
        elif link.busy:
            link = self._open(None)  # nested in this thread's own transaction: borrow one
        link.busy = True
        link.runs = {} if self.keep_runs else None
        link.touched = set()
        link.listened = sql.listened(link.conn)
        try:
            if link.listened:
                link.trans = link.conn.begin()
            else:
                link.trans = None
                begin_sql = (  # a team server's, if its connection found one (pg.begin_of)
                    link.conn.info.get("proctor_begin", self.begin_sql)
                    if self._server
                    else self.begin_sql
                )
                try:
                    if self.lock_wait is None or self._server:
                        link.driver.execute(begin_sql)
                    else:
                        driver = link.driver
                        begin_polling(
                            driver,
                            lambda: driver.execute(begin_sql),
                            self.lock_wait,
                            self.busy_timeout,
                        )
                except self._error as err:
                    raise exc.DBAPIError.instance(
                        begin_sql, (), err, self._error, dialect=link.dialect
                    ) from err
        except BaseException:
            self.rollback(link)  # a BEGIN that ran and then failed leaves it aborted
            raise
        return link

    def commit(self, link: sql.Link) -> None:
        try:
            if link.trans is not None:
                link.trans.commit()
            else:
                try:
                    link.driver.execute("COMMIT")
                except self._error as err:
                    raise exc.DBAPIError.instance(
                        "COMMIT", (), err, self._error, dialect=link.dialect
                    ) from err
                if link.conn.in_transaction():  # SQLAlchemy joined (a Core statement ran)
                    link.conn.rollback()  # forget it: the driver has nothing open
        except BaseException:
            self.rollback(link)
            raise
        self._release(link)

    def rollback(self, link: sql.Link) -> None:
        try:
            if link.trans is not None and link.trans.is_active:
                link.trans.rollback()
            if self._in_transaction(link.driver):
                link.driver.execute("ROLLBACK")
            if link.conn.in_transaction():
                link.conn.rollback()
        except Exception:  # noqa: BLE001 - a connection that cannot roll back is dropped
            link.generation = -1
        self._release(link)

    def reset(self) -> None:
        """Retire every connection (idle ones now); the next transaction opens afresh."""
        with self._lock:
            self._generation += 1
            for thread, link in list(self._own.items()):
                if not link.busy:
                    self._retire(thread, link)

    close = reset

    # -- plumbing
    def _open(self, thread: threading.Thread | None) -> sql.Link:
        conn = self.engine.connect()
        link = sql.bind(conn)
        if self.watch_runs:
            watch_runs(link)
        link.generation = self._generation
        link.owner = thread
        if thread is not None:
            with self._lock:
                for other, old in list(self._own.items()):  # threads that ended
                    if not other.is_alive() and not old.busy:
                        self._retire(other, old)
                self._own[thread] = link
        return link

    def _release(self, link: sql.Link) -> None:
        link.busy = False
        link.trans = None
        link.runs = {}
        link.touched = None
        if link.owner is None or link.generation != self._generation:
            self._retire(link.owner, link)

    def _retire(self, thread: threading.Thread | None, link: sql.Link) -> None:
        with self._lock:  # once, whoever gets here first (its thread, reset, a new thread)
            if link.generation == _RETIRED:
                return
            link.generation = _RETIRED
            if thread is not None and self._own.get(thread) is link:
                del self._own[thread]
        sql.unbind(link.conn)
        with contextlib.suppress(Exception):  # a broken connection: nothing to keep
            link.conn.close()


def _sqlite_in_transaction(driver: sqlite3.Connection) -> bool:
    return driver.in_transaction


def watch_runs(link: sql.Link) -> None:
    """Whatever writes to runs on this connection (the executor, a Core statement, raw SQL,
    a trigger) drops the run heads the unit of work keeps (tx.Tx.run_row): TEMP triggers,
    invisible to the journal file, call back into this process."""

    def written(run_id: str) -> None:
        if link.runs:
            link.runs.clear()
        if link.touched is not None:
            link.touched.add(run_id)

    driver = link.driver
    driver.create_function("proctor_runs_written", 1, written)
    for op, row in (("UPDATE", "NEW"), ("DELETE", "OLD")):
        driver.execute(
            f"CREATE TEMP TRIGGER IF NOT EXISTS proctor_runs_{op.lower()} "
            f"AFTER {op} ON main.runs BEGIN SELECT proctor_runs_written({row}.id); "
            "END"
        )


def enable_wal(path: Path, timeout: float = BUSY_TIMEOUT_S) -> None:
    conn = _connect(path, False, timeout)
    try:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise errors.StoreError(f"could not switch {path} to WAL (got {mode})")
    finally:
        conn.close()


def translate(err: BaseException) -> errors.ProctorError | None:
    """Map a DBAPI error to a typed Proctor error, or None if it is not a store fault (a
    trigger's refusal is ``Refused``; a constraint's stays the driver's IntegrityError)."""
    orig = getattr(err, "orig", err)
    if not isinstance(orig, sqlite3.Error):
        return None
    name = getattr(orig, "sqlite_errorname", "") or ""
    msg = str(orig)
    if name == "SQLITE_CONSTRAINT_TRIGGER":  # a trigger's RAISE(ABORT, ...)
        return errors.Refused(msg)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in msg:
        return errors.StoreBusy(
            "the journal is busy: another process held its write lock "
            "for longer than this one waits",
            sqlite=msg,
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in msg:
        return errors.StoreReadOnly(f"the journal is read-only: {msg}")
    if name == "SQLITE_IOERR_SHORT_READ":
        # the -wal index (-shm) names frames its -wal no longer has: deleted or replaced
        return errors.StoreIOError(
            f"the journal's -wal file was deleted or replaced while it was open ({msg}): "
            "what it held since the last checkpoint may be lost",
            hint="Nothing was changed by this call. Close every program that has the journal "
            "open (the desk, agents), check that nothing else deletes journal files, "
            "then reopen it and run `proctor verify`.",
        )
    if name.startswith("SQLITE_FULL") or name == "SQLITE_IOERR_WRITE":
        # a short write: ENOSPC, or EFBIG past a file-size limit (SQLite says IOERR_WRITE)
        return errors.StoreFull(f"the journal could not be written: {msg}")
    if name.startswith("SQLITE_IOERR"):
        return errors.StoreIOError(f"disk I/O error on the journal ({name}): {msg}")
    if "Could not decode to UTF-8" in msg:  # a stored text's bytes are not UTF-8
        column = msg.split("column '", 1)[-1].split("'", 1)[0] if "column '" in msg else "?"
        return errors.Damaged(f"a stored row, its {column}", "its text is not valid UTF-8")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in msg or "not a database" in msg:
        return errors.Corrupt(f"the journal file is damaged: {msg}")
    if name.startswith("SQLITE_CANTOPEN"):
        return errors.StoreError(
            f"the journal file cannot be opened: {msg}", hint="Check the path and its permissions."
        )
    return None


def stale_files(err: BaseException) -> bool:
    """True when a connection's view of the journal's files went stale (its ``-wal`` was
    deleted or replaced): a short read. Fresh connections see the files as they are now."""
    orig = getattr(err, "orig", err)
    return getattr(orig, "sqlite_errorname", "") == "SQLITE_IOERR_SHORT_READ"


def raise_translated(err: exc.DBAPIError | sqlite3.Error) -> None:
    typed = translate(err)
    if typed is not None:
        raise typed from err


def create_immutability_triggers(conn) -> None:  # Connection
    """UPDATE/DELETE on evidence tables abort (DESIGN invariant 8)."""
    if _server(conn):  # and the change feed's order and wake-up (core/storage/pg.py)
        pg.execute_all(conn, pg.immutable_trigger_sql(IMMUTABLE_TABLES))
        pg.execute_all(conn, pg.feed_trigger_sql())
        if conn.execute(text("SELECT to_regclass('signatures')")).scalar() is not None:
            create_signed_triggers(conn)
        return
    for table in IMMUTABLE_TABLES:
        for op in ("UPDATE", "DELETE"):
            conn.execute(
                text(
                    f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_{op.lower()} "
                    f"BEFORE {op} ON {table} BEGIN "
                    f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
                )
            )
    if conn.execute(
        text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='signatures'")
    ).first():
        create_signed_triggers(conn)


def integrity_trigger_sql() -> dict[str, str]:
    """Revision 0005's triggers by name: an UPDATE that changes an approval's or an effect's
    identity aborts, and an INSERT onto a key that exists aborts on every evidence table and
    on approvals and effects (INSERT OR REPLACE would delete the old row without firing a
    DELETE trigger, unless the writing connection turned ``recursive_triggers`` on, and an
    upsert's DO UPDATE would bypass the identity check). In the schema, whatever the
    connection's settings."""
    return identity_trigger_sql(IDENTITY_COLUMNS, UNIQUE_KEYS)


def request_trigger_sql() -> dict[str, str]:
    """Revision 0006i's triggers by name: the same two rules for questions and memory
    conflicts (what the operator answered or chose between cannot be rewritten, and INSERT OR
    REPLACE cannot swap a row for another), and a pending conflict cannot be replaced through
    the one-pending-per-entry index either (REPLACE would delete it without a trace)."""
    sql = identity_trigger_sql(REQUEST_IDENTITY_COLUMNS, REQUEST_UNIQUE_KEYS)
    table = "memory_reconciliations"
    sql[f"trg_{table}_no_replace_pending"] = (
        f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_replace_pending BEFORE INSERT ON {table} "
        f"WHEN NEW.status = 'pending' AND EXISTS (SELECT 1 FROM {table} "
        f"WHERE entry_id = NEW.entry_id AND status = 'pending') BEGIN "
        f"SELECT RAISE(ABORT, '{table}: that entry has a pending conflict'); END"
    )
    return sql


def identity_trigger_sql(
    identity: dict[str, tuple[str, ...]], keys_of: dict[str, tuple[tuple[str, ...], ...]]
) -> dict[str, str]:
    """``trg_<table>_identity`` (an UPDATE of any listed column aborts) and
    ``trg_<table>_no_replace`` (an INSERT onto an existing key aborts)."""
    sql = {}
    for table, columns in identity.items():
        changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns)
        sql[f"trg_{table}_identity"] = (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_identity BEFORE UPDATE ON {table} "
            f"WHEN {changed} BEGIN "
            f"SELECT RAISE(ABORT, '{table} identity columns are immutable'); END"
        )
    for table, keys in keys_of.items():
        exists = " OR ".join(
            "EXISTS (SELECT 1 FROM {t} WHERE {w})".format(
                t=table, w=" AND ".join(f"{c} = NEW.{c}" for c in key)
            )
            for key in keys
        )
        sql[f"trg_{table}_no_replace"] = (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_replace BEFORE INSERT ON {table} "
            f"WHEN {exists} BEGIN "
            f"SELECT RAISE(ABORT, '{table} rows are immutable: that key exists'); END"
        )
    return sql


def _server(conn) -> bool:  # Connection
    """True for a connection to a server journal: its triggers are PL/pgSQL (core/storage/pg.py),
    rendered from the same definitions, with the same names."""
    return conn.dialect.name == "postgresql"


def drop_trigger(conn, name: str, table: str) -> None:  # Connection
    if _server(conn):
        pg.drop_trigger(conn, name, table)
    else:
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_integrity_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.integrity_trigger_sql())
        return
    for statement in integrity_trigger_sql().values():
        conn.execute(text(statement))


def drop_integrity_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.integrity_trigger_sql())
        return
    for name in integrity_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_all_triggers(conn) -> None:  # Connection
    """Every trigger of the head schema (0001's, 0005's, 0005s's, 0006o's, 0006i's, 0007j's,
    0009b's and 0010k's)."""
    create_immutability_triggers(conn)
    create_integrity_triggers(conn)
    create_signed_triggers(conn)
    create_origin_triggers(conn)
    create_request_triggers(conn)
    create_signed_replace_triggers(conn)
    create_census_triggers(conn)
    create_key_triggers(conn)
    create_policy_triggers(conn)


def create_policy_triggers(conn) -> None:  # Connection
    """0014p's (core/storage/policy_sql.py)."""
    from . import policy_sql

    if _server(conn):
        pg.execute_all(conn, policy_sql.server_sql())
        return
    for statement in policy_sql.sqlite_sql().values():
        conn.execute(text(statement))


def guarded_before_census() -> dict[str, set[str]]:
    """The identity columns triggers older than 0009b guard (0005's, 0006i's, 0006o's)."""
    guarded: dict[str, set[str]] = {}
    for table, cols in (*IDENTITY_COLUMNS.items(), *REQUEST_IDENTITY_COLUMNS.items()):
        guarded.setdefault(table, set()).update(cols)
    for table in ORIGIN_TABLES:
        guarded.setdefault(table, set()).add("origin")
    return guarded


def census_checks(*, server: bool = False) -> list[census.Check]:
    """0009b's triggers (core/storage/census.py): every identity column older triggers left
    out is immutable, ``once`` columns are set once and never cleared, versions never step
    back, each status moves only along its state machine, a decision's columns are written
    with it and never after, and the columns that go with a move change only with one."""
    return census.checks(census.POSTGRESQL if server else census.SQLITE, guarded_before_census())


# The census's triggers 0013u added (undo within a hold, a failed run's retry).
CENSUS_0013U = (
    "trg_approvals_undo",
    "trg_approvals_held",
    "trg_runs_retry",
    "trg_runs_retry_reason_along",
)
# The census's triggers 0014u added (an answer or a dismissal undone within its hold).
CENSUS_0014U = ("trg_interactions_undo", "trg_interactions_held", "trg_interactions_once")


def census_trigger_sql() -> dict[str, str]:
    """The census's triggers by name, in SQLite, as the census builds them now (0009b
    installs a frozen copy of them; tests/core/test_census.py keeps the two equal)."""
    return {
        c.name: (
            f"CREATE TRIGGER IF NOT EXISTS {c.name} BEFORE UPDATE ON {c.table} "
            f"WHEN {c.refused} BEGIN SELECT RAISE(ABORT, '{c.message.replace(chr(39), chr(39) * 2)}'); END"
        )
        for c in census_checks()
    }


def create_census_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.census_trigger_sql(census_checks(server=True)))
        return
    for statement in census_trigger_sql().values():
        conn.execute(text(statement))


def drop_census_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.census_trigger_sql(census_checks(server=True)))
        return
    for name in census_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_request_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.request_trigger_sql())
        return
    for statement in request_trigger_sql().values():
        conn.execute(text(statement))


def drop_request_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.request_trigger_sql())
        return
    for name in request_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def origin_trigger_sql() -> dict[str, str]:
    """0006o's triggers by name: an UPDATE that changes a row's ``origin`` (where the agent
    said the request came from) aborts, on every table that has one."""
    return {
        f"trg_{table}_origin": (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_origin BEFORE UPDATE ON {table} "
            f"WHEN NEW.origin IS NOT OLD.origin BEGIN "
            f"SELECT RAISE(ABORT, '{table} origin is immutable'); END"
        )
        for table in ORIGIN_TABLES
    }


def create_origin_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.origin_trigger_sql())
        return
    for statement in origin_trigger_sql().values():
        conn.execute(text(statement))


def drop_origin_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.origin_trigger_sql())
        return
    for name in origin_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def has_revision(revision: str | None, wanted: str) -> bool:
    """True for a journal at ``revision`` (None: head) that has ``wanted`` applied."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index(wanted)


def has_origin(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0006o's origin columns."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index("0006o")


def trigger_names(conn) -> set[str]:
    if _server(conn):
        return pg.trigger_names(conn)
    rows = conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
    return {r[0] for r in rows}


def expected_trigger_names(revision: str | None = None, *, server: bool = False) -> set[str]:
    """The triggers a journal at ``revision`` (default: head) must have (``server``: a
    server journal, which also has pg.extra_trigger_names)."""
    names = pg.extra_trigger_names() if server else set()
    names |= {f"trg_{t}_no_{op}" for t in IMMUTABLE_TABLES for op in ("update", "delete")}
    if has_integrity(revision):
        names |= set(integrity_trigger_sql())
    if has_signatures(revision):
        names |= {f"trg_{t}_no_{op}" for t in SIGNED_TABLES for op in ("update", "delete")}
    if has_origin(revision):
        names |= set(origin_trigger_sql())
    if has_revision(revision, "0006i"):
        names |= set(request_trigger_sql())
    if has_revision(revision, "0007j"):
        names |= set(signed_replace_trigger_sql())
    if has_revision(revision, "0009b"):
        names |= set(census_trigger_sql())
        if not has_revision(revision, "0013u"):
            names -= set(CENSUS_0013U)
        if not has_revision(revision, "0014u"):
            names -= set(CENSUS_0014U)
    if has_revision(revision, "0010k"):
        names |= set(pg.key_trigger_sql() if server else key_trigger_sql())
    if has_revision(revision, "0014p"):
        from . import policy_sql

        names |= set(policy_sql.server_sql() if server else policy_sql.sqlite_sql())
    return names


def key_trigger_sql() -> dict[str, str]:
    """0010k's triggers by name: a recorded key is never deleted, nor replaced (INSERT OR
    REPLACE deletes without firing DELETE triggers); 0009b already refuses an UPDATE of it."""
    table = "operator_keys"
    return {
        f"trg_{table}_no_delete": (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_delete BEFORE DELETE ON {table} BEGIN "
            f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
        ),
        **identity_trigger_sql({}, KEY_KEYS),
    }


def create_key_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.key_trigger_sql())
        return
    for statement in key_trigger_sql().values():
        conn.execute(text(statement))


# 0007j: the keys an INSERT OR REPLACE could swap a signature or the journal's id through
SIGNED_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "signatures": (("record_id",),),
    "journal_meta": (("key",),),
}


def signed_replace_trigger_sql() -> dict[str, str]:
    """0007j's triggers by name: an INSERT onto an existing signature or journal fact aborts.
    0005s refused UPDATE and DELETE, but SQLite's REPLACE deletes without firing DELETE
    triggers, so another journal's id (and with it its signed decisions) could be put in."""
    return identity_trigger_sql({}, SIGNED_KEYS)


def create_signed_replace_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.identity_trigger_sql({}, SIGNED_KEYS))
        return
    for statement in signed_replace_trigger_sql().values():
        conn.execute(text(statement))


def drop_signed_replace_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.identity_trigger_sql({}, SIGNED_KEYS))
        return
    for name in signed_replace_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def has_signatures(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0005s's signature tables."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index("0005s")


def create_signed_triggers(conn) -> None:  # Connection
    """0005s: signatures and the journal's id refuse UPDATE and DELETE."""
    if _server(conn):
        pg.execute_all(conn, pg.immutable_trigger_sql(SIGNED_TABLES))
        return
    for table in SIGNED_TABLES:
        for op in ("UPDATE", "DELETE"):
            conn.execute(
                text(
                    f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_{op.lower()} "
                    f"BEFORE {op} ON {table} BEGIN "
                    f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
                )
            )


def current_revision(conn) -> str | None:
    if _server(conn):
        return pg.current_revision(conn)
    has = conn.execute(
        text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'")
    ).first()
    if not has:
        return None
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return row[0] if row else None


CHECK_STEPS = 20_000  # SQLite virtual-machine steps between two looks at ``cancelled``


def integrity_check(conn, quick: bool = False, cancelled: Any = None) -> list[str]:
    """PRAGMA integrity_check (quick_check with ``quick``): "ok", or the problems found.
    ``cancelled()`` (any thread may make it true) stops a long check: errors.Cancelled."""
    if _server(conn):
        return pg.integrity_check(conn, quick)
    pragma = "quick_check" if quick else "integrity_check"
    if cancelled is None:
        return [r[0] for r in conn.execute(text(f"PRAGMA {pragma}"))]
    if cancelled():
        raise errors.Cancelled("the check was cancelled")
    driver = conn.connection.driver_connection
    driver.set_progress_handler(lambda: 1 if cancelled() else 0, CHECK_STEPS)
    try:
        return [r[0] for r in conn.execute(text(f"PRAGMA {pragma}"))]
    except exc.DBAPIError as err:
        if cancelled():
            raise errors.Cancelled("the check was cancelled") from err
        raise
    finally:
        driver.set_progress_handler(None, 0)


def backup_to(conn, target: Path) -> None:
    """VACUUM INTO ``target`` (created 0600 first, like the journal). Call it on a fresh
    Connection, before any statement: VACUUM cannot run inside the BEGIN our engine emits."""
    fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    conn.connection.driver_connection.execute("VACUUM INTO ?", (str(target),))


def checkpoint(engine: Engine) -> None:
    """Copy the -wal's committed pages into the file, waiting for no reader or writer
    (PASSIVE: what readers still need stays in the -wal). Outside any transaction: it runs
    on the driver, not through SQLAlchemy's BEGIN."""
    with engine.connect() as conn:
        driver: Any = conn.connection.driver_connection
        driver.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
