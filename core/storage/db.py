"""SQLite engine setup: the only place with SQLite-specific SQL (a server journal's twin is
core/storage/pg.py; the kept connections, ``ThreadConnections``, and the trigger helpers
(core/storage/triggers.py) serve both: a helper given a PostgreSQL connection renders the
same trigger in PL/pgSQL).

WAL, synchronous=FULL, foreign_keys=ON, busy_timeout, and BEGIN IMMEDIATE for
every transaction that may write (the documented pysqlite recipe: the driver's
own transaction handling is switched off and the BEGIN is emitted by us).

The schema's revisions and what each added live in core/storage/revisions.py, the triggers
in core/storage/triggers.py; both are re-exported here (``db.SCHEMA_REVISIONS``, ...).
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

from . import pg, sql
from .revisions import (  # noqa: F401 - re-exported: callers import these from here
    ADDED_COLUMNS,
    ADDED_TABLES,
    INTEGRITY_REVISION,
    NO_TIME,
    SCHEMA_HEAD,
    SCHEMA_REVISIONS,
    _server,
    add_compat_views,
    current_revision,
    has_integrity,
    has_origin,
    has_revision,
    has_signatures,
)
from .triggers import (  # noqa: F401 - re-exported: callers import these from here
    CENSUS_0013U,
    CENSUS_0014U,
    SIGNED_KEYS,
    census_checks,
    census_trigger_sql,
    create_all_triggers,
    create_census_triggers,
    create_immutability_triggers,
    create_integrity_triggers,
    create_key_triggers,
    create_origin_triggers,
    create_policy_triggers,
    create_request_triggers,
    create_signed_replace_triggers,
    create_signed_triggers,
    drop_census_triggers,
    drop_integrity_triggers,
    drop_origin_triggers,
    drop_request_triggers,
    drop_signed_replace_triggers,
    drop_trigger,
    expected_trigger_names,
    guarded_before_census,
    identity_trigger_sql,
    integrity_trigger_sql,
    key_trigger_sql,
    origin_trigger_sql,
    request_trigger_sql,
    signed_replace_trigger_sql,
    trigger_names,
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
