"""The floor: the rows Proctor wrote, written again by raw ``sqlite3``.

A recording pass (``bench_proctor.record``) captures, per unit of work, every statement
Proctor sent to SQLite with its parameters. ``Replay`` executes them against a copy of the
journal taken before that pass (same schema, indexes and triggers, same starting rows):

- ``mode="writes"`` (the floor): only the INSERT/UPDATE/DELETE statements of each write
  transaction, one ``BEGIN IMMEDIATE ... COMMIT`` per Proctor transaction. That is the same
  rows in the same number of durable commits with no reads and no Python beyond the loop:
  what SQLite itself allows on this disk for this evidence.
- ``mode="all"`` (diagnostic "Proctor's SQL alone"): every statement, reads included, each
  read transaction as ``BEGIN ... COMMIT``. The gap between this and Proctor is the time
  spent in Python (SQLAlchemy, pydantic, digests) rather than in SQLite.

Pragmas are Proctor's own (``core/storage/db.py``): WAL, synchronous=FULL, foreign_keys=ON,
busy_timeout=5000, ``isolation_level=None``.
"""

from __future__ import annotations

import pickle
import sqlite3
from typing import Any

from bench_common import busy
from bench_data import is_write


def connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise RuntimeError(f"floor database is not in WAL mode ({mode})")
    return conn


def compile_stream(units: list[list[dict]], mode: str) -> list[list[tuple]]:
    """Per unit, the transactions to run: ``(begin_sql, [(sql, params, many, is_read)])``."""
    out = []
    for unit in units:
        txns = []
        for txn in unit:
            if mode == "writes":
                if txn["kind"] != "write":
                    continue
                stmts = [(s[0], s[1], s[2], False) for s in txn["stmts"] if is_write(s[0])]
                if stmts:
                    txns.append(("BEGIN IMMEDIATE", stmts))
            else:
                begin = "BEGIN IMMEDIATE" if txn["kind"] == "write" else "BEGIN"
                txns.append((begin, [(s[0], s[1], s[2], not is_write(s[0])) for s in txn["stmts"]]))
        out.append(txns)
    return out


def run_txns(conn: sqlite3.Connection, txns: list[tuple]) -> None:
    """Execute compiled transactions (``compile_stream`` output for one unit)."""
    for begin, stmts in txns:
        busy(conn.execute, begin)  # a BEGIN refused for the lock wrote nothing: retry it
        try:
            for sql, params, many, is_read in stmts:
                if many:
                    conn.executemany(sql, params)
                elif is_read:
                    conn.execute(sql, params).fetchall()
                else:
                    conn.execute(sql, params)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


class Replay:
    """Workload: replay worker ``worker``'s recorded stream (``params["stream"]``)."""

    def __init__(self, path: str, worker: int, params: dict) -> None:
        with open(params["stream"], "rb") as fh:
            self.units = compile_stream(pickle.load(fh), params.get("mode", "writes"))
        self.conn = connect(path)

    def prepare(self, i: int) -> Any:
        return self.units[i]

    def unit(self, txns: list[tuple], lap: Any) -> None:
        run_txns(self.conn, txns)

    def rows(self) -> int:
        return self.conn.total_changes

    def info(self) -> dict:
        sync = self.conn.execute("PRAGMA synchronous").fetchone()[0]
        return {
            "synchronous": {1: "NORMAL", 2: "FULL"}.get(sync, sync),
            "journal_mode": self.conn.execute("PRAGMA journal_mode").fetchone()[0],
        }

    def close(self) -> None:
        self.conn.close()
