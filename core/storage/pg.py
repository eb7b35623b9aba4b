"""PostgreSQL engine setup (team mode): the only place with PostgreSQL-specific SQL.

The twin of ``db.py`` for a journal on a server (``postgresql+psycopg://user:pw@host/db``):

- **Serialisation.** PostgreSQL has no ``BEGIN IMMEDIATE``. Every write transaction begins
  ``READ COMMITTED`` and takes one transaction-scoped advisory lock (``WRITE_LOCK``) before
  its first statement, so writers on every host run one at a time, as SQLite's single writer
  does: one winner per reservation, gapless per-run sequences, CAS on versions. Each of its
  statements then sees everything committed before it got the lock. The busy timeout is the
  session's ``lock_timeout``; a writer that waits longer gets ``StoreBusy``, as on SQLite.
  On a team server (``proctor team init``) the lock is taken through ``proctor_write_lock``
  instead (``TEAM_LOCK_SQL``, found when a connection opens), which also keeps an agent or
  observer login from holding it hostage (core/ops/team_access.py). Reads run ``REPEATABLE READ READ ONLY``: one snapshot per read, as SQLite's deferred BEGIN.
- **The change feed never skips.** A trigger on ``changes`` takes the same lock and numbers
  each row (max + 1) under it, so even a writer that bypasses the store (raw SQL) commits its
  rows in ``seq`` order: ``changes.since(seq)`` can never pass a row that commits later. A
  statement trigger ``NOTIFY proctor_changes`` (payload: the newest seq) on each write; it is
  delivered at commit (``Listener``).
- **Triggers.** The immutability / identity / no-replace / origin triggers are rendered in
  PL/pgSQL from the same definitions as SQLite's (``core/storage/schema.py``), with the same names and
  messages; a refusal raises SQLSTATE 23000 (``integrity_constraint_violation``), which a
  store call turns into ``errors.Refused`` with the trigger's words, as it does SQLite's
  ``RAISE(ABORT)``.
  Evidence tables also refuse TRUNCATE.
- **Errors.** Every psycopg error a store call can meet is translated into the typed errors
  of ``core/errors.py`` (``translate``); a connection that cannot be made says why in a
  sentence, never as a raw driver error.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import threading
import time
import weakref
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Engine, String, create_engine, event, exc, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import QueuePool

from proctor.core import errors

from .schema import (
    IDENTITY_COLUMNS,
    IMMUTABLE_TABLES,
    KEY_KEYS,
    ORIGIN_TABLES,
    REQUEST_IDENTITY_COLUMNS,
    REQUEST_UNIQUE_KEYS,
    SIGNED_TABLES,
    UNIQUE_KEYS,
    for_postgresql,
)

SCHEMES = ("postgresql://", "postgresql+psycopg://", "postgres://")
# the one advisory lock every write transaction takes first ('proc' 'tor!' as two int4s)
WRITE_LOCK = (0x70726F63, 0x746F7221)
LOCK_SQL = f"SELECT pg_advisory_xact_lock({WRITE_LOCK[0]}, {WRITE_LOCK[1]})"
WRITE_BEGIN = f"BEGIN ISOLATION LEVEL READ COMMITTED; {LOCK_SQL}"
# a team server's (core/ops/team_access.py lock_sql): the lock, waited for at most N ms, with
# an agent or observer login that keeps it from others ended
TEAM_LOCK_SQL = "SELECT proctor_write_lock({ms})"
TEAM_LOCK_PROBE = (
    "SELECT p IS NOT NULL AND has_function_privilege(p, 'EXECUTE') "
    "FROM to_regprocedure('proctor_write_lock(integer)') p"
)
READ_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
READ_ONLY_BEGIN = READ_BEGIN
CHANNEL = "proctor_changes"
CONNECT_TIMEOUT_S = 10
# a client that died (or whose network dropped) inside a write must not keep the write lock:
# the server ends a transaction left idle this long, and TCP keepalives find a dead peer
IDLE_IN_TRANSACTION_MS = 60_000
KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}


def is_url(raw: str) -> bool:
    return raw.startswith(SCHEMES)


class ServerAddress(str):
    """A server journal's address as it is shown (the URL without its password); ``url`` is
    the full URL the engine connects with. Stands where a file journal has its Path."""

    url: str
    name: str

    def __new__(cls, raw: str) -> ServerAddress:
        try:
            url = make_url(raw).set(drivername="postgresql+psycopg")
        except Exception as err:  # noqa: BLE001 - sqlalchemy.exc.ArgumentError and kin
            raise errors.StoreError(f"not a PostgreSQL URL: {hide(raw)!r} ({err})") from None
        if not url.database:
            raise errors.StoreError(
                f"{hide(raw)}: the URL names no database",
                hint="Write it as postgresql+psycopg://user@host:port/db.",
            )
        shown = url.render_as_string(hide_password=True)
        self = super().__new__(cls, shown)
        self.url = url.render_as_string(hide_password=False)
        self.name = url.database
        return self


def hide(raw: str) -> str:
    """``raw`` with the password of a URL-like text (any scheme, also one that lost a slash
    of its "//") shown as ``***``: for messages."""
    parts = urlsplit(raw)
    if parts.password:
        return raw.replace(f":{parts.password}@", ":***@", 1)
    return _USERINFO.sub(r"\1:***@", raw, count=1)


# scheme:, its slashes, the user, then ":password@" (up to the last "@": over-hide, never under)
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:/*[^/:@]*):.*@", re.DOTALL)


def address(raw: str) -> ServerAddress:
    where = ServerAddress(raw)
    require_driver(where)
    return where


def require_driver(where: ServerAddress) -> None:
    """A server journal needs psycopg (the ``team`` extra): say so, not ModuleNotFoundError."""
    try:
        import psycopg  # noqa: F401
    except ImportError as err:
        raise errors.StoreError(
            f"{where}: a journal on a PostgreSQL server needs the psycopg driver, which is not "
            "installed",
            hint="Install Proctor's team extra: pip install 'proctor[team]'.",
        ) from err


def libpq_url(where: ServerAddress) -> str:
    """The address as libpq's own URL (for a connection made without SQLAlchemy)."""
    return make_url(where.url).set(drivername="postgresql").render_as_string(hide_password=False)


# ---------------------------------------------------------------- engine
def make_engine(
    where: ServerAddress,
    *,
    read_only: bool,
    immediate: bool,
    timeout: float,
    synchronous: str = "FULL",
    autocheckpoint: bool = True,
) -> Engine:
    """An engine whose transactions start with ``WRITE_BEGIN`` (writes) or ``READ_BEGIN``.

    The driver runs in autocommit mode and the BEGIN is emitted by us (as db.make_engine
    does for SQLite). ``synchronous="NORMAL"`` sets ``synchronous_commit = off`` (a crash
    may lose the last commits, never corrupt): only for journals that can be rebuilt."""
    url = make_url(where.url)
    options = (
        f"-c lock_timeout={max(1, int(timeout * 1000))}"
        f" -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
    )
    if synchronous == "NORMAL":
        options += " -c synchronous_commit=off"
    given = url.query.get("options")  # the URL's own (?options=-csearch_path%3Dteam) first
    if given:
        options = f"{given if isinstance(given, str) else ' '.join(given)} {options}"
    for_postgresql()  # the partial indexes' WHERE, before any DDL or comparison
    engine = create_engine(
        url,
        poolclass=QueuePool,
        pool_size=4,
        max_overflow=-1,  # each thread keeps one (ThreadConnections): never wait for one
        pool_reset_on_return="rollback",
        isolation_level="AUTOCOMMIT",
        connect_args={
            "options": options,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": url.query.get("application_name", "proctor"),
            **KEEPALIVES,
        },
    )
    begin_sql = begin_for(read_only=read_only, immediate=immediate)
    if read_only:
        event.listen(engine, "connect", _compat_on_connect)
    elif immediate:
        team_begin = (
            f"BEGIN ISOLATION LEVEL READ COMMITTED; "
            f"{TEAM_LOCK_SQL.format(ms=max(1, int(timeout * 1000)))}"
        )

        @event.listens_for(engine, "connect")
        def _probe_team_lock(driver: Any, record: Any) -> None:
            row = driver.execute(TEAM_LOCK_PROBE).fetchone()
            if not driver.autocommit:
                driver.commit()
            if row is not None and row[0]:
                record.info["proctor_begin"] = team_begin

    @event.listens_for(engine, "begin")
    def _begin(conn):  # SQLAlchemy event signature
        if in_transaction(conn.connection.driver_connection):
            return  # ThreadConnections began it on the driver; SQLAlchemy only joins it
        for statement in begin_of(conn, begin_sql).split("; "):  # a listener sees each
            conn.exec_driver_sql(statement)

    return engine


def _compat_on_connect(driver: Any, _record: Any) -> None:
    """A read-only connection to an older server journal reads it as if it were at head:
    TEMP views with the columns and tables later revisions added (db.ADDED_COLUMNS), made
    when the connection opens (a READ ONLY transaction may not CREATE). TEMP objects are
    searched first and vanish with the connection: the server's schema is untouched."""
    add_compat_views(driver)
    if not driver.autocommit:
        driver.commit()


def add_compat_views(driver: Any) -> list[str]:
    from .revisions import ADDED_COLUMNS, ADDED_TABLES

    schema = driver.execute("SELECT current_schema()").fetchone()[0]
    rows = driver.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s",
        (schema,),
    ).fetchall()
    have: dict[str, set[str]] = {}
    for table, column in rows:
        have.setdefault(table, set()).add(column)
    viewed = []
    for table, added in ADDED_COLUMNS.items():
        missing = [
            f"{value} AS {name}"
            for name, value in added.items()
            if name not in have.get(table, {name})
        ]
        if table in have and missing:
            driver.execute(
                f'CREATE TEMP VIEW "{table}" AS SELECT *, {", ".join(missing)} '
                f'FROM "{schema}"."{table}"'
            )
            viewed.append(table)
    for table, columns in ADDED_TABLES.items():
        if table not in have:
            empty = ", ".join(f"NULL AS {name}" for name in columns)
            driver.execute(f'CREATE TEMP VIEW "{table}" AS SELECT {empty} WHERE false')
            viewed.append(table)
    return viewed


def begin_of(conn: Any, default: str) -> str:
    """The BEGIN a connection's write transactions send: a team server's, if it has one."""
    return str(conn.info.get("proctor_begin", default))


def begin_for(*, read_only: bool, immediate: bool) -> str:
    if read_only:
        return READ_ONLY_BEGIN
    return WRITE_BEGIN if immediate else READ_BEGIN


def in_transaction(driver: Any) -> bool:
    from psycopg.pq import TransactionStatus

    return driver.info.transaction_status != TransactionStatus.IDLE


def executemany(driver: Any, sql: str, params: Any) -> Any:
    cursor = driver.cursor()
    cursor.executemany(sql, params)
    return cursor


def dbapi_error() -> type[Exception]:
    import psycopg

    return psycopg.Error


# ---------------------------------------------------------------- column types
@compiles(String, "postgresql")
def _unbounded_string(type_: String, compiler: Any, **kw: Any) -> str:
    """A String(n) column is VARCHAR without a length on the server: SQLite stores a longer
    value as it is, so the server must too (the lengths in core/storage/schema.py are documentation,
    the limits are core/kernel/limits.py's). Text's own rendering is unchanged."""
    if type(type_) is not String:  # a subclass (Enum, ...) renders as it would
        return compiler.visit_string(type_, **kw)
    return "VARCHAR"


# ---------------------------------------------------------------- schema facts
def current_revision(conn: Any) -> str | None:
    if conn.execute(text("SELECT to_regclass('alembic_version')")).scalar() is None:
        return None
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return row[0] if row else None


def is_empty(conn: Any) -> bool:
    """True if the database's schema has no table at all (a new server journal)."""
    return (
        conn.execute(
            text(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
                "LIMIT 1"
            )
        ).first()
        is None
    )


def trigger_names(conn: Any) -> set[str]:
    rows = conn.execute(
        text(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' "
            "AND c.relnamespace = current_schema()::regnamespace"
        )
    )
    return {r[0] for r in rows}


def extra_trigger_names() -> set[str]:
    """The triggers only a server journal has (TRUNCATE refusals, the feed's order)."""
    names = {f"trg_{t}_no_truncate" for t in (*IMMUTABLE_TABLES, *SIGNED_TABLES)}
    return names | set(feed_trigger_sql())


def integrity_check(conn: Any, quick: bool = False) -> list[str]:
    """The server checks its own pages; what is left to ask is that it answers."""
    conn.execute(text("SELECT 1"))
    return ["ok"]


def runs_written(conn: Any) -> set[str]:
    """The runs whose row this transaction changed other than by moving its head (the
    server-side twin of db.watch_runs: ``trg_runs_watch_*`` note them in a local setting)."""
    import psycopg

    from .sql import link_of

    link = link_of(conn)
    driver = link.driver if link is not None else conn.connection.driver_connection
    query = "SELECT current_setting('proctor.runs_written', true)"
    try:
        value = driver.execute(query).fetchone()[0]
    except psycopg.Error as err:  # as the executor does: the store translates a DBAPIError
        raise exc.DBAPIError.instance(query, (), err, psycopg.Error, dialect=conn.dialect) from err
    return {v for v in (value or "").split("\x1f") if v}


# ---------------------------------------------------------------- triggers
SCHEMA = "@journal_schema@"  # execute_all puts the journal's schema here


def _function(name: str, body: str) -> str:
    """A trigger function whose tables are the journal's schema's, whoever calls it: its
    search_path is pinned, pg_temp last (by default a session's TEMP tables are searched
    first: a TEMP table named like a journal table would otherwise stand in for it)."""
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
        f"SET search_path = {SCHEMA}, pg_catalog, pg_temp AS $fn$ BEGIN {body} END $fn$"
    )


REFUSED = "23000"  # integrity_constraint_violation: only the journal's triggers raise it bare


def _refuse(message: str) -> str:
    quoted = message.replace("'", "''")
    return f"RAISE EXCEPTION '{quoted}' USING ERRCODE = 'integrity_constraint_violation';"


def _trigger(name: str, table: str, when: str, body: str, *, row: bool = True) -> list[str]:
    level = "ROW" if row else "STATEMENT"
    return [
        _function(name, body),
        f"CREATE OR REPLACE TRIGGER {name} {when} ON {table} FOR EACH {level} "
        f"EXECUTE FUNCTION {name}()",
    ]


def immutable_trigger_sql(tables: tuple[str, ...]) -> dict[str, list[str]]:
    """UPDATE, DELETE and TRUNCATE on each of ``tables`` abort (db.create_immutability_
    triggers' rule)."""
    sql = {}
    for table in tables:
        message = f"{table} rows are immutable"
        for op in ("UPDATE", "DELETE"):
            sql[f"trg_{table}_no_{op.lower()}"] = _trigger(
                f"trg_{table}_no_{op.lower()}", table, f"BEFORE {op}", _refuse(message)
            )
        sql[f"trg_{table}_no_truncate"] = _trigger(
            f"trg_{table}_no_truncate", table, "BEFORE TRUNCATE", _refuse(message), row=False
        )
    return sql


def identity_trigger_sql(
    identity: dict[str, tuple[str, ...]], keys_of: dict[str, tuple[tuple[str, ...], ...]]
) -> dict[str, list[str]]:
    """db.identity_trigger_sql's rules in PL/pgSQL: an UPDATE of any identity column aborts,
    and an INSERT onto an existing key aborts (an upsert's DO UPDATE also goes through the
    UPDATE triggers)."""
    sql = {}
    for table, columns in identity.items():
        changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in columns)
        sql[f"trg_{table}_identity"] = _trigger(
            f"trg_{table}_identity",
            table,
            "BEFORE UPDATE",
            f"IF {changed} THEN {_refuse(f'{table} identity columns are immutable')} END IF; "
            "RETURN NEW;",
        )
    for table, keys in keys_of.items():
        exists = " OR ".join(
            "EXISTS (SELECT 1 FROM {t} WHERE {w})".format(
                t=table, w=" AND ".join(f"{c} = NEW.{c}" for c in key)
            )
            for key in keys
        )
        sql[f"trg_{table}_no_replace"] = _trigger(
            f"trg_{table}_no_replace",
            table,
            "BEFORE INSERT",
            f"IF {exists} THEN {_refuse(f'{table} rows are immutable: that key exists')} "
            "END IF; RETURN NEW;",
        )
    return sql


def integrity_trigger_sql() -> dict[str, list[str]]:
    return identity_trigger_sql(IDENTITY_COLUMNS, UNIQUE_KEYS)


def request_trigger_sql() -> dict[str, list[str]]:
    sql = identity_trigger_sql(REQUEST_IDENTITY_COLUMNS, REQUEST_UNIQUE_KEYS)
    table = "memory_reconciliations"
    name = f"trg_{table}_no_replace_pending"
    sql[name] = _trigger(
        name,
        table,
        "BEFORE INSERT",
        f"IF NEW.status = 'pending' AND EXISTS (SELECT 1 FROM {table} WHERE entry_id = "
        f"NEW.entry_id AND status = 'pending') THEN "
        f"{_refuse(f'{table}: that entry has a pending conflict')} END IF; RETURN NEW;",
    )
    return sql


def origin_trigger_sql() -> dict[str, list[str]]:
    return {
        f"trg_{table}_origin": _trigger(
            f"trg_{table}_origin",
            table,
            "BEFORE UPDATE",
            f"IF NEW.origin IS DISTINCT FROM OLD.origin THEN "
            f"{_refuse(f'{table} origin is immutable')} END IF; RETURN NEW;",
        )
        for table in ORIGIN_TABLES
    }


def key_trigger_sql() -> dict[str, list[str]]:
    """db.key_trigger_sql's rules for the server: a recorded key is never deleted (nor
    truncated away) nor put again under its id (an upsert's DO UPDATE meets 0009b's)."""
    table = "operator_keys"
    refuse = _refuse(f"{table} rows are immutable")
    return {
        f"trg_{table}_no_delete": _trigger(
            f"trg_{table}_no_delete", table, "BEFORE DELETE", refuse
        ),
        f"trg_{table}_no_truncate": _trigger(
            f"trg_{table}_no_truncate", table, "BEFORE TRUNCATE", refuse, row=False
        ),
        **identity_trigger_sql({}, KEY_KEYS),
    }


def census_trigger_sql(checks: list[Any]) -> dict[str, list[str]]:
    """0009b's triggers (db.census_checks, rendered for the server): each refuses an UPDATE
    whose condition holds. AFTER the row is written (still inside the statement: a refusal
    undoes it), so team mode's role checks (BEFORE) answer first and a login that may not
    write the row is told so (``NotAllowed``)."""
    return {
        c.name: _trigger(
            c.name,
            c.table,
            "AFTER UPDATE",
            f"IF {c.refused} THEN {_refuse(c.message)} END IF; RETURN NULL;",
        )
        for c in checks
    }


def feed_trigger_sql() -> dict[str, list[str]]:
    """The change feed's order (each row numbered under the write lock, whoever inserts it)
    and its wake-up (NOTIFY at commit), and the run watch (runs_written)."""
    append = (
        "PERFORM set_config('proctor.runs_written', coalesce(current_setting("
        "'proctor.runs_written', true), '') || chr(31) || OLD.id, true); RETURN NULL;"
    )
    return {
        "trg_changes_ordered": _trigger(
            "trg_changes_ordered",
            "changes",
            "BEFORE INSERT",
            f"PERFORM pg_advisory_xact_lock({WRITE_LOCK[0]}, {WRITE_LOCK[1]}); "
            "NEW.seq := coalesce((SELECT max(seq) FROM changes), 0) + 1; RETURN NEW;",
        ),
        "trg_changes_notify": _trigger(
            "trg_changes_notify",
            "changes",
            "AFTER INSERT",
            f"PERFORM pg_notify('{CHANNEL}', (SELECT coalesce(max(seq), 0) FROM changes)"
            "::text); RETURN NULL;",
            row=False,
        ),
        "trg_runs_watch_update": [
            _function("trg_runs_watch_update", append),
            "CREATE OR REPLACE TRIGGER trg_runs_watch_update AFTER UPDATE ON runs FOR EACH ROW "
            "WHEN (OLD.last_sequence IS NOT DISTINCT FROM NEW.last_sequence) "
            "EXECUTE FUNCTION trg_runs_watch_update()",
        ],
        "trg_runs_watch_delete": _trigger("trg_runs_watch_delete", "runs", "AFTER DELETE", append),
    }


def execute_all(conn: Any, sql: dict[str, list[str]]) -> None:
    schema = conn.execute(text("SELECT current_schema()")).scalar()
    quoted = '"' + schema.replace('"', '""') + '"'
    for statements in sql.values():
        for statement in statements:
            conn.execute(text(statement.replace(SCHEMA, quoted)))


def drop_all(conn: Any, sql: dict[str, list[str]]) -> None:
    for name, statements in sql.items():
        table = statements[-1].split(" ON ", 1)[1].split()[0]
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name} ON {table}"))
        conn.execute(text(f"DROP FUNCTION IF EXISTS {name}()"))


def drop_trigger(conn: Any, name: str, table: str) -> None:
    conn.execute(text(f"DROP TRIGGER IF EXISTS {name} ON {table}"))


# ---------------------------------------------------------------- errors
def translate(err: BaseException) -> errors.ProctorError | None:
    """Map a psycopg error to a typed Proctor error, or None when it is not a store fault
    (a trigger's refusal is ``Refused``; a constraint's stays ``sqlalchemy.exc.IntegrityError``,
    as on SQLite)."""
    try:
        import psycopg
        from psycopg import errors as pe
    except ImportError:  # pragma: no cover - no psycopg: no server journal either
        return None
    orig = getattr(err, "orig", err)
    if not isinstance(orig, psycopg.Error):
        return None
    msg = (getattr(orig.diag, "message_primary", None) if hasattr(orig, "diag") else None) or str(
        orig
    ).strip()
    if getattr(orig, "sqlstate", None) == REFUSED:  # one of the journal's triggers (_refuse)
        return errors.Refused(msg)
    if isinstance(orig, pe.IntegrityError):
        return None
    if isinstance(orig, pe.LockNotAvailable | pe.DeadlockDetected | pe.SerializationFailure):
        return errors.StoreBusy(
            "the journal is busy: another writer held the server's write "
            "lock for longer than this one waits",
            postgresql=msg,
        )
    if isinstance(orig, pe.QueryCanceled):
        return errors.StoreBusy(f"the server cancelled the statement: {msg}", postgresql=msg)
    if isinstance(orig, pe.ReadOnlySqlTransaction):
        return errors.StoreReadOnly(f"the journal is read-only: {msg}")
    if isinstance(orig, pe.InsufficientPrivilege):
        return errors.NotAllowed(
            f"the server refused this for the role connected: {msg}",
            hint="Connect as a role that may do this.",
        )
    if isinstance(orig, pe.DiskFull | pe.OutOfMemory | pe.ProgramLimitExceeded):
        return errors.StoreFull(f"the server could not store this: {msg}")
    if isinstance(orig, pe.StringDataRightTruncation):
        return errors.ValidationError(f"a value is longer than the journal stores: {msg}")
    if isinstance(orig, pe.DataError):
        return errors.ValidationError(f"the server refused a value: {msg}")
    if isinstance(orig, pe.InvalidCatalogName):
        return errors.StoreError(
            f"the server has no such database: {msg}",
            hint="Create it first (createdb), or check the URL.",
        )
    if isinstance(orig, pe.InvalidAuthorizationSpecification | pe.InvalidPassword):
        return errors.StoreError(
            f"the server refused the login: {msg}", hint="Check the user name and password."
        )
    if isinstance(orig, psycopg.OperationalError):
        return errors.StoreError(_connection_sentence(msg), hint=_connection_hint(msg))
    if isinstance(orig, psycopg.InterfaceError):
        return errors.StoreError(f"the connection to the server is unusable: {msg}")
    if isinstance(orig, psycopg.InternalError | psycopg.DatabaseError):
        return errors.StoreError(f"the server refused this: {msg}")
    return None


def _connection_hint(msg: str) -> str:
    """What to check for a connection that failed: TLS has its own causes."""
    if "certificate" in msg or "SSL" in msg:
        return (
            "The server's TLS certificate could not be checked: give the CA that signed it "
            "with sslrootcert=FILE (or in ~/.postgresql/root.crt), and connect by the host "
            "name or address the certificate names."
        )
    return "Check that the server runs and the URL's host and port."


def _connection_sentence(msg: str) -> str:
    lowered = msg.lower()
    if "password authentication failed" in lowered or "authentication" in lowered:
        return f"the server refused the login: {msg}"
    if "does not exist" in lowered and "database" in lowered:
        return f"the server has no such database: {msg}"
    if (
        "refused" in lowered
        or "could not connect" in lowered
        or "timeout" in lowered
        or "timed out" in lowered
        or "no route" in lowered
        or "resolve" in lowered
    ):
        return f"cannot reach the PostgreSQL server: {msg}"
    return f"the connection to the PostgreSQL server failed: {msg}"


def lost_connection(err: BaseException) -> bool:
    """True when the connection under a call broke (the server restarted, the network
    dropped): fresh connections are made for the next call."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        return False
    if getattr(err, "connection_invalidated", False):
        return True
    orig = getattr(err, "orig", err)
    if not isinstance(orig, psycopg.Error):
        return False
    state = orig.sqlstate or ""
    if state.startswith("08") or state in _SHUT_DOWN:
        return True
    # no SQLSTATE: the driver's own (a closed or broken connection, no server reply); a
    # lock timeout, a deadlock, a cancelled query or a full disk is the server's answer on
    # a connection that still works
    return not state and isinstance(orig, psycopg.OperationalError | psycopg.InterfaceError)


# admin_shutdown, crash_shutdown, cannot_connect_now: the server is going or not yet there
_SHUT_DOWN = frozenset({"57P01", "57P02", "57P03"})


def raise_translated(err: BaseException) -> None:
    typed = translate(err)
    if typed is not None:
        raise typed from err


# ---------------------------------------------------------------- process exit
_OPEN: weakref.WeakSet[Any] = weakref.WeakSet()


def track(store: Any) -> None:
    """Close ``store`` at interpreter exit if it is still open: a kept server connection
    collected after psycopg's own modules are torn down prints a traceback, not a close."""
    if not _OPEN:
        atexit.register(_close_open)
    _OPEN.add(store)


def _close_open() -> None:
    for store in list(_OPEN):
        with contextlib.suppress(Exception):
            store.close()


# ---------------------------------------------------------------- change notifications
class Listener:
    """One autocommit connection that LISTENs on ``proctor_changes``: ``wait(timeout)`` is
    True when a write committed since the last call (or the connection cannot tell: the
    caller's poll is the safety net)."""

    def __init__(self, where: ServerAddress) -> None:
        self.where = where
        self._conn: Any = None
        self._lock = threading.Lock()
        self.latest = 0
        self._closed = False  # close() ran: wait() returns False and connects no more

    def _connection(self) -> Any:
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                libpq_url(self.where),
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="proctor-listen",
                **KEEPALIVES,
            )
            self._conn.execute(f"LISTEN {CHANNEL}")
        return self._conn

    def wait(self, timeout: float) -> bool:
        with self._lock:
            if self._closed:
                return False
            try:
                conn = self._connection()
                got = False
                for note in conn.notifies(timeout=max(0.0, timeout), stop_after=1):
                    got = True
                    with contextlib.suppress(ValueError):
                        self.latest = max(self.latest, int(note.payload))
                if got:  # drain what else is queued, without waiting
                    for note in conn.notifies(timeout=0.0):
                        with contextlib.suppress(ValueError):
                            self.latest = max(self.latest, int(note.payload))
                return got
            except Exception:  # noqa: BLE001 - cannot listen: say "maybe", the poll decides
                self.close_unlocked()
                time.sleep(min(timeout, 0.5))
                return True

    def close_unlocked(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self.close_unlocked()
