"""Raw-SQL helpers for core tests: count rows, look under the API, tamper on purpose.

On a server journal (``path`` a postgresql URL) ``raw`` gives a ``ServerRaw``: a psycopg
connection that takes the same SQL (``?`` placeholders) and raises sqlite3's exception
classes, so one test body asserts the same refusal on both stores: a trigger's refusal is
``sqlite3.IntegrityError`` on either."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proctor.core import errors

T0 = 1_700_000_000.0


class FakeClock:
    """A clock the test moves by hand: pass it as ``clock=`` to Journal.open."""

    def __init__(self, start: float = T0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> float:
        self.t += seconds
        return self.t


ACTION = {"tool": "shell", "args": {"command": "rm -rf build"}}
SKIP_TABLES = {"alembic_version", "sqlite_sequence"}


def on_server(path: object) -> bool:
    """True for a server journal's URL (the postgresql backend's journal_path)."""
    return isinstance(path, str) and path.startswith("postgresql")


def to_server_sql(sql: str) -> str:
    """SQLite's dialect of a test's raw statement in PostgreSQL's: ``?`` placeholders become
    ``%s`` (outside quotes), ``INSERT OR REPLACE`` a plain INSERT (onto an existing key: the
    server has no REPLACE, and an INSERT onto a key is what the no-replace triggers refuse)."""
    sql = sql.replace("INSERT OR REPLACE INTO", "INSERT INTO")
    out, quote = [], None
    for ch in sql:
        if quote:
            out.append(ch)
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


class ServerRaw:
    """A raw connection to a server journal, in autocommit mode, shaped like sqlite3's."""

    def __init__(self, url: str) -> None:
        import psycopg
        from sqlalchemy.engine import make_url

        u = make_url(getattr(url, "url", url))  # a Journal's path hides the password
        self.conn = psycopg.connect(
            host=u.host,
            port=u.port,
            user=u.username,
            password=u.password,
            dbname=u.database,
            autocommit=True,
        )

    def execute(self, sql: str, params: tuple | list | None = None):
        import psycopg

        try:
            return self.conn.execute(
                to_server_sql(sql)
                if params
                else sql.replace("INSERT OR REPLACE INTO", "INSERT INTO"),
                tuple(params) if params else None,
            )
        except psycopg.IntegrityError as err:
            raise sqlite3.IntegrityError(str(err)) from err
        except psycopg.Error as err:
            raise sqlite3.OperationalError(str(err)) from err

    def executemany(self, sql: str, rows: list) -> None:
        for row in rows:
            self.execute(sql, row)

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def raw(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection in autocommit mode, closed afterwards (a ServerRaw on a
    server journal)."""
    conn: Any = (
        ServerRaw(path)
        if on_server(path)
        else sqlite3.connect(str(path), isolation_level=None, timeout=5)
    )
    try:
        yield conn
    finally:
        conn.close()


def table_names(path: Path) -> list[str]:
    with raw(path) as conn:
        if on_server(path):
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            ).fetchall()
        else:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return sorted(r[0] for r in rows if r[0] not in SKIP_TABLES)


def row_counts(path: Path) -> dict[str, int]:
    """Rows per table: compare before/after a call to prove it wrote nothing (or exactly N)."""
    with raw(path) as conn:
        return {
            t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in table_names(path)
        }


def snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table (sorted), each as its (column, value) pairs: equality proves
    nothing changed at all."""
    out: dict[str, list[tuple]] = {}
    with raw(path) as conn:
        for t in table_names(path):
            cur = conn.execute(f'SELECT * FROM "{t}"')
            names = [d[0] for d in cur.description]
            pairs = (
                sorted(zip(names, row, strict=True), key=lambda p: p[0]) for row in cur.fetchall()
            )
            rows = (tuple(pair) for pair in pairs)
            out[t] = sorted(rows, key=repr)
    return out


def as_downgraded(before: dict[str, list[tuple]], after: dict[str, list[tuple]]) -> dict:
    """``before`` with only the columns ``after`` has, table by table (a downgrade drops the
    columns later revisions added: the rest must be as it was), and without the empty tables
    ``after`` lacks (a later revision's tables, dropped with it; a table with rows must stay)."""
    out = {}
    for t, rows in before.items():
        if t not in after and not rows:
            continue
        kept = {c for c, _ in after[t][0]} if after.get(t) else None
        out[t] = sorted(
            (tuple(p for p in row if kept is None or p[0] in kept) for row in rows), key=repr
        )
    return out


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Only the tables whose row count changed, with the change."""
    return {t: after[t] - before.get(t, 0) for t in after if after[t] != before.get(t, 0)}


def drop_trigger(conn: Any, name: str, table: str) -> None:
    """DROP TRIGGER in either store's words (the server's names the table)."""
    conn.execute(
        f"DROP TRIGGER {name} ON {table}" if isinstance(conn, ServerRaw) else f"DROP TRIGGER {name}"
    )


def drop_immutability_triggers(conn: sqlite3.Connection) -> None:
    if isinstance(conn, ServerRaw):
        rows = conn.execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgname LIKE 'trg_%%' AND t.tgname NOT LIKE "
            "'trg_changes_%%' AND t.tgname NOT LIKE 'trg_runs_watch_%%'"
        ).fetchall()
        for name, table in rows:
            conn.execute(f'DROP TRIGGER "{name}" ON "{table}"')
        return
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'trg_%'"
        )
    ]
    for name in names:
        conn.execute(f'DROP TRIGGER "{name}"')


def events_of(path: Path, run_id: str) -> list[tuple]:
    with raw(path) as conn:
        return conn.execute(
            "SELECT sequence, type FROM events WHERE run_id = ? ORDER BY sequence", (run_id,)
        ).fetchall()


class Boom(RuntimeError):
    """Raised by an injected fault in the middle of a write."""


def executing(agent, key="fx-1", lease=5.0, owner="w1", run_id=None):  # an agent's Journal
    """An effect reserved and begun under a lease: executing."""
    agent.effects.reserve(key, tool="pay", owner=owner, lease_seconds=lease, run_id=run_id)
    return agent.effects.begin(key, owner=owner)


def boom(*_args, **_kwargs):
    raise Boom("injected fault mid-transaction")


def assert_no_open_transaction(journal) -> None:  # a Journal
    """Every pooled connection of ``journal`` is idle, and another connection can write."""
    for engine in (journal._writer, journal._reader):
        for record in list(engine.pool._pool.queue):
            conn = record.dbapi_connection
            if journal.server:
                from proctor.core.storage.pg import in_transaction

                assert conn is None or not in_transaction(conn), "pooled conn left in a tx"
            else:
                assert conn is None or not conn.in_transaction, "pooled connection left in a tx"
    if journal.server:
        from proctor.core.storage import pg

        for link in [*journal._writes._own.values(), *journal._reads._own.values()]:
            assert not link.busy and not pg.in_transaction(link.driver), "kept conn in a tx"
        with raw(journal.path.url) as conn:  # times out if the write lock leaked
            conn.execute("SET lock_timeout = 200")
            conn.execute("BEGIN")
            conn.execute(pg.LOCK_SQL)
            conn.execute("ROLLBACK")
        return
    with raw(journal.path) as conn:
        conn.execute("PRAGMA busy_timeout = 200")
        conn.execute("BEGIN IMMEDIATE")  # fails with 'database is locked' if a lock leaked
        conn.execute("ROLLBACK")


def populate(agent, operator, clock) -> dict:  # journals and a FakeClock
    """A busy journal: a row in every table, through the public API only."""
    runs = [agent.runs.start("proj", f"run {i}") for i in range(3)]
    r0, r1, r2 = (r.id for r in runs)
    for i in range(5):
        agent.runs.append_event(runs[i % 3].id, "step", {"i": i, "text": "ünïcode ✓"})
    agent.runs.append_events(r1, [("batch", {"n": n}) for n in range(4)])
    call = agent.runs.record_tool_call(r0, "http.get", {"url": "https://x"})
    agent.runs.finish_tool_call(call.id, "succeeded", result={"status": 200})
    approved = agent.approvals.request(r0, ACTION, reason="clean")
    operator.approvals.decide(approved.id, True, expected_version=1, scope="run")
    agent.approvals.consume_and_reserve(approved.id, approved.action_digest, "fx-1", owner="w")
    agent.effects.begin("fx-1", owner="w")
    agent.effects.commit("fx-1", {"ok": True}, owner="w", external_id="ext-1")
    denied = agent.approvals.request(r1, {"tool": "pay"}, reason="pay")
    operator.approvals.decide(denied.id, False, expected_version=1, reason="no")
    agent.approvals.request(r2, {"tool": "mail"}, reason="mail", expires_in=5)
    question = agent.questions.ask(r1, "choice", "which?", options=["a", "b"])
    operator.questions.answer(question.id, {"choice": "a"}, expected_version=1)
    agent.effects.reserve("fx-2", tool="pay", run_id=r2, owner="w", lease_seconds=5)
    clock.advance(10)
    agent.approvals.expire_due()
    with contextlib.suppress(errors.EffectAmbiguous):  # the lapsed lease turns ambiguous
        agent.effects.reserve("fx-2", tool="pay", run_id=r2, owner="w2")
    operator.effects.resolve("fx-2", "failed", reason="never sent", expected_version=2)
    entry = agent.memory.add("project", "proj", "db", "db1", run_id=r0)
    conflict = agent.memory.record_conflict(entry.id, "db2", incoming_source="sync", run_id=r0)
    operator.memory.resolve(conflict.id, "accepted_incoming", expected_version=1, reason="checked")
    operator.runs.request_cancel(r2, "stop", expected_version=agent.runs.get(r2).version)
    agent.runs.cancel(r2, "asked to")
    agent.runs.complete(r0, {"done": True})
    return {"runs": [r0, r1, r2]}
