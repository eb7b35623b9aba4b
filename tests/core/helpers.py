"""Raw-SQLite helpers for core tests: count rows, look under the API, tamper on purpose."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

ACTION = {"tool": "shell", "args": {"command": "rm -rf build"}}
SKIP_TABLES = {"alembic_version", "sqlite_sequence"}


@contextlib.contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection in autocommit mode, closed afterwards."""
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=5)
    try:
        yield conn
    finally:
        conn.close()


def table_names(path: Path) -> list[str]:
    with raw(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return sorted(r[0] for r in rows if r[0] not in SKIP_TABLES)


def row_counts(path: Path) -> dict[str, int]:
    """Rows per table: compare before/after a call to prove it wrote nothing (or exactly N)."""
    with raw(path) as conn:
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
                for t in table_names(path)}


def snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table (sorted): equality proves nothing changed at all."""
    with raw(path) as conn:
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
                for t in table_names(path)}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Only the tables whose row count changed, with the change."""
    return {t: after[t] - before.get(t, 0) for t in after if after[t] != before.get(t, 0)}


def drop_immutability_triggers(conn: sqlite3.Connection) -> None:
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'trg_%'")]
    for name in names:
        conn.execute(f'DROP TRIGGER "{name}"')


def events_of(path: Path, run_id: str) -> list[tuple]:
    with raw(path) as conn:
        return conn.execute(
            "SELECT sequence, type FROM events WHERE run_id = ? ORDER BY sequence",
            (run_id,)).fetchall()


class Boom(RuntimeError):
    """Raised by an injected fault in the middle of a write."""


def boom(*_args, **_kwargs):
    raise Boom("injected fault mid-transaction")


def assert_no_open_transaction(journal) -> None:  # noqa: ANN001 - a Journal
    """Every pooled connection of ``journal`` is idle, and another connection can write."""
    for engine in (journal._writer, journal._reader):
        for record in list(engine.pool._pool.queue):
            conn = record.dbapi_connection
            assert conn is None or not conn.in_transaction, "pooled connection left in a tx"
    with raw(journal.path) as conn:
        conn.execute("PRAGMA busy_timeout = 200")
        conn.execute("BEGIN IMMEDIATE")  # fails with 'database is locked' if a lock leaked
        conn.execute("ROLLBACK")
