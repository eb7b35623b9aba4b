"""Deterministic costs per unit of work: what each core write sends to SQLite and writes.

    uv run --extra bench python tests/bench/unit_costs.py [--units 200] [--json out.json]
                                                         [--compare before.json] [--tables]

Wall-clock figures drift on a loaded machine; these counts do not. For each workload of
bench_proctor (the ones the core benchmark times), on a fresh journal, one process:

- txns: write / read transactions per unit;
- stmts: statements sent to the driver per unit (BEGIN/COMMIT not counted), reads and writes;
- rows: rows changed per unit (``total_changes``, trigger writes included);
- idx: index entries written per unit (each inserted row: its table's b-tree plus every
  index; each updated row: the table's b-tree plus two entries, delete and insert, for every
  index over a changed column, partial indexes counted as full);
- wal pages: WAL frames appended per unit (auto-checkpoint off, so every frame is kept);
- bytes: database growth per unit after a full checkpoint (``page_count``);
- calls: Python function calls per unit (cProfile, a separate pass);
- cpu us: process CPU per unit, synchronous=OFF (a separate pass with no counting, the best
  of three rounds);
- raw us: the same statements (reads included, parameters as sent) replayed with raw
  sqlite3 on a copy of the journal, synchronous=OFF; py share = 1 - raw / cpu.

``--tables`` adds, per workload, the rows inserted per unit into each table and where the
bytes went (``dbstat``: growth of each table and index per unit).

The counting wraps the driver's connection class (``sqlite3.connect`` is patched in this
process only), so it sees every statement whichever layer sends it.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_common import Lap, load  # noqa: E402
from bench_data import EVENT_BATCH, is_write  # noqa: E402

WORKLOADS = [  # (name, bench_proctor class, needs a memory entry)
    ("effect reserve→begin→commit", "EffectLifecycle", False),
    ("approval request→decide→consume", "ApprovalCycle", False),
    ("governed action end to end", "GovernedAction", False),
    ("event append", "EventAppend", False),
    (f"event batch of {EVENT_BATCH}", "EventBatch", False),
    ("memory replace (expected version)", "MemoryReplace", True),
]

# ----------------------------------------------------------------- the counting driver
_REAL_CONNECT = sqlite3.connect
ROUNDS = 3
_MODE = {"count": False, "quiet": False}
LOG: list[tuple] = []  # (conn id, sql, params, many, rowcount, changes before)


class CountingCursor(sqlite3.Cursor):
    def execute(self, sql: str, params: Any = ()) -> Any:
        conn = self.connection
        before = conn.total_changes
        result = super().execute(sql, params)
        LOG.append(
            (
                id(conn),
                sql,
                tuple(params) if not isinstance(params, dict) else params,
                False,
                self.rowcount,
                conn.total_changes - before,
            )
        )
        return result

    def executemany(self, sql: str, seq: Any) -> Any:
        conn = self.connection
        rows = [tuple(p) if not isinstance(p, dict) else p for p in seq]
        before = conn.total_changes
        result = super().executemany(sql, rows)
        LOG.append((id(conn), sql, rows, True, self.rowcount, conn.total_changes - before))
        return result


class CountingConnection(sqlite3.Connection):
    def cursor(self, factory: Any = CountingCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.cursor().execute(_quiet(sql), params)

    def executemany(self, sql: str, seq: Any) -> Any:
        return self.cursor().executemany(sql, seq)

    def commit(self) -> None:
        if not self.in_transaction:
            return
        LOG.append((id(self), "COMMIT", (), False, -1, 0))
        super().commit()

    def rollback(self) -> None:
        if not self.in_transaction:
            return
        LOG.append((id(self), "ROLLBACK", (), False, -1, 0))
        super().rollback()


def _quiet(sql: str) -> str:
    """synchronous=OFF and no auto-checkpoint for every measuring connection."""
    if sql.lstrip().upper().startswith("PRAGMA SYNCHRONOUS"):
        return "PRAGMA synchronous = OFF"
    return sql


def _connect(*args: Any, **kw: Any) -> sqlite3.Connection:
    if _MODE["count"]:
        kw["factory"] = CountingConnection
    conn = _REAL_CONNECT(*args, **kw)
    if _MODE["count"] or _MODE["quiet"]:
        _REAL_EXEC(conn, "PRAGMA wal_autocheckpoint = 0")
    return conn


def _journal_connect(*args: Any, **kw: Any) -> sqlite3.Connection:
    """proctor.core.storage.db._connect, then synchronous=OFF when timing (the driver's own class,
    so the timed code runs exactly as it does in production)."""
    conn = _CORE_CONNECT(*args, **kw)
    if _MODE["quiet"]:
        _REAL_EXEC(conn, "PRAGMA synchronous = OFF")
    return conn


def _REAL_EXEC(conn: sqlite3.Connection, sql: str) -> None:  # noqa: N802 - named as the constant it stands in for
    sqlite3.Connection.execute(conn, sql)


sqlite3.connect = _connect  # every journal this process opens from now on
from proctor.core.storage import db as _core_db  # noqa: E402

_CORE_CONNECT = _core_db._connect
_core_db._connect = _journal_connect


# ----------------------------------------------------------------- schema facts
def schema_indexes(path: str) -> dict[str, list[set[str]]]:
    """table -> the column sets of its indexes (autoindexes of UNIQUE included)."""
    conn = _REAL_CONNECT(path)
    try:
        out: dict[str, list[set[str]]] = {}
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            cols = []
            for idx in conn.execute(f'PRAGMA index_list("{table}")'):
                cols.append({r[2] for r in conn.execute(f'PRAGMA index_info("{idx[1]}")')})
            out[table] = cols
        return out
    finally:
        conn.close()


INSERT_RE = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+\"?(\w+)\"?", re.I)
UPDATE_RE = re.compile(r"^\s*UPDATE\s+\"?(\w+)\"?\s+SET\s+(.*?)\s+WHERE", re.I | re.S)
DELETE_RE = re.compile(r"^\s*DELETE\s+FROM\s+\"?(\w+)\"?", re.I)


def index_entries(sql: str, changed: int, indexes: dict[str, list[set[str]]]) -> int:
    if changed <= 0:
        return 0
    m = INSERT_RE.match(sql)
    if m:
        return changed * (1 + len(indexes.get(m.group(1), [])))
    m = UPDATE_RE.match(sql)
    if m:
        cols = {c.split("=")[0].strip().strip('"') for c in m.group(2).split(",")}
        hit = sum(2 for ix in indexes.get(m.group(1), []) if ix & cols)
        return changed * (1 + hit)
    m = DELETE_RE.match(sql)
    if m:
        return changed * (1 + len(indexes.get(m.group(1), [])))
    return 0


def wal_pages(path: str) -> int:
    wal = Path(f"{path}-wal")
    if not wal.exists() or wal.stat().st_size < 32:
        return 0
    conn = _REAL_CONNECT(path)
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    return (wal.stat().st_size - 32) // (page + 24)


def checkpointed(path: str) -> tuple[int, dict[str, int]]:
    """(database bytes, bytes per table/index) after a full checkpoint."""
    conn = _REAL_CONNECT(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = (
            conn.execute("PRAGMA page_count").fetchone()[0]
            * conn.execute("PRAGMA page_size").fetchone()[0]
        )
        per = {
            name: n
            for name, n in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
        }
        return size, per
    finally:
        conn.close()


# ----------------------------------------------------------------- passes
def fresh(folder: Path, name: str, memory: bool) -> tuple[str, dict]:
    from bench_proctor import setup_journal

    path = str(folder / f"{name}.db")
    params = setup_journal(path, 1, memory=memory)[0]
    return path, params


def make(cls: str, path: str, params: dict) -> Any:
    import bench_proctor

    return getattr(bench_proctor, cls)(path, 0, params)


def count_pass(folder: Path, cls: str, memory: bool, units: int, warmup: int) -> dict:
    path, params = fresh(folder, f"count-{cls}", memory)
    indexes = schema_indexes(path)
    _MODE["count"] = True
    wl = make(cls, path, params)
    try:
        for i in range(warmup):
            wl.unit(wl.prepare(i), Lap())
        copy = folder / f"copy-{cls}.db"
        base = _REAL_CONNECT(path)
        target = _REAL_CONNECT(str(copy))
        base.backup(target)
        target.execute("PRAGMA journal_mode = WAL")
        target.close()
        base.close()
        size0, per0 = checkpointed(path)
        del LOG[:]
        for i in range(warmup, warmup + units):
            LOG.append((0, "--unit", (), False, 0, 0))
            wl.unit(wl.prepare(i), Lap())
        log = list(LOG)
        wal = wal_pages(path)
    finally:
        wl.close()
        _MODE["count"] = False
    size1, per1 = checkpointed(path)
    out: dict[str, Any] = {"wal_pages": wal / units, "bytes": (size1 - size0) / units}
    begins = commits = reads = writes = rows = idx = read_txns = 0
    by_table: Counter[str] = Counter()
    for _, sql, _, _, _, changed in log:
        head = sql.lstrip()[:16].upper()
        if sql == "--unit":
            continue
        if head.startswith("BEGIN"):
            begins += 1
            read_txns += "IMMEDIATE" not in head
            continue
        if head.startswith(("COMMIT", "ROLLBACK")):
            commits += 1
            continue
        if is_write(sql):
            writes += 1
            rows += changed
            idx += index_entries(sql, changed, indexes)
            m = INSERT_RE.match(sql)
            if m:
                by_table[m.group(1)] += changed
        else:
            reads += 1
    out.update(
        write_txns=(begins - read_txns) / units,
        read_txns=read_txns / units,
        stmts=(reads + writes) / units,
        reads=reads / units,
        writes=writes / units,
        rows=rows / units,
        idx=idx / units,
        inserted={k: v / units for k, v in sorted(by_table.items())},
        grew={
            k: (per1.get(k, 0) - per0.get(k, 0)) / units
            for k in sorted(set(per1) | set(per0))
            if per1.get(k, 0) != per0.get(k, 0)
        },
    )
    out["_log"], out["_copy"] = log, str(copy)
    return out


def profile_pass(folder: Path, cls: str, memory: bool, units: int, warmup: int) -> dict:
    path, params = fresh(folder, f"prof-{cls}", memory)
    _MODE["quiet"] = True
    wl = make(cls, path, params)
    try:
        for i in range(warmup):
            wl.unit(wl.prepare(i), Lap())
        inputs = [wl.prepare(i) for i in range(warmup, warmup + units)]
        prof = cProfile.Profile()
        prof.enable()
        for x in inputs:
            wl.unit(x, Lap())
        prof.disable()
    finally:
        wl.close()
        _MODE["quiet"] = False
    stats = pstats.Stats(prof)
    return {"calls": stats.total_calls / units, "_stats": stats}


def cpu_pass(folder: Path, cls: str, memory: bool, units: int, warmup: int) -> float:
    path, params = fresh(folder, f"cpu-{cls}", memory)
    _MODE["quiet"] = True
    wl = make(cls, path, params)
    try:
        for i in range(warmup):
            wl.unit(wl.prepare(i), Lap())
        best = float("inf")
        for r in range(ROUNDS):  # the best of a few rounds: CPU time still drifts with load
            first = warmup + r * units
            inputs = [wl.prepare(i) for i in range(first, first + units)]
            start = time.process_time()
            for x in inputs:
                wl.unit(x, Lap())
            best = min(best, time.process_time() - start)
        return best / units * 1e6
    finally:
        wl.close()
        _MODE["quiet"] = False


def raw_pass(log: list[tuple], copy: str, units: int) -> float:
    """Replay every logged statement on one raw connection (a copy of the copy taken before
    the counting pass), synchronous=OFF; CPU per unit, the best of ROUNDS replays."""
    best = float("inf")
    for r in range(ROUNDS):
        target = f"{copy}.{r}"
        shutil.copyfile(copy, target)
        best = min(best, _replay(log, target))
    return best / units * 1e6


def _replay(log: list[tuple], path: str) -> float:
    conn = _REAL_CONNECT(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    plan = [
        (sql, params, many, not is_write(sql) and not sql.startswith(("BEGIN", "COMMIT")))
        for _, sql, params, many, _, _ in log
        if sql != "--unit" and not sql.startswith("PRAGMA")
    ]
    start = time.process_time()
    for sql, params, many, is_read in plan:
        if sql == "ROLLBACK":
            conn.execute("ROLLBACK")
        elif many:
            conn.executemany(sql, params)
        elif is_read:
            conn.execute(sql, params).fetchall()
        else:
            conn.execute(sql, params)
    spent = time.process_time() - start
    conn.close()
    return spent


# ----------------------------------------------------------------- report
COLUMNS = [
    ("write_txns", "w txns", 1),
    ("read_txns", "r txns", 1),
    ("stmts", "stmts", 1),
    ("reads", "reads", 1),
    ("writes", "writes", 1),
    ("rows", "rows", 1),
    ("idx", "idx entries", 1),
    ("wal_pages", "wal pages", 1),
    ("bytes", "bytes", 0),
    ("calls", "py calls", 0),
    ("cpu_us", "cpu µs", 0),
    ("raw_us", "raw µs", 0),
    ("py_share", "py share", 2),
]


def table(results: dict[str, dict], before: dict[str, dict] | None = None) -> str:
    head = "| unit | " + " | ".join(c[1] for c in COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for name, r in results.items():
        cells = []
        for key, _, digits in COLUMNS:
            v = r.get(key)
            text = "—" if v is None else f"{v:,.{digits}f}"
            old = (before or {}).get(name, {}).get(key)
            if old is not None and v is not None and f"{old:,.{digits}f}" != text:
                text = f"{old:,.{digits}f} → {text}"
            cells.append(text)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--units", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--only", default="", help="comma-separated bench_proctor class names")
    p.add_argument("--json", type=Path, help="save the figures")
    p.add_argument("--compare", type=Path, help="a saved --json to show before → after")
    p.add_argument("--tables", action="store_true", help="rows and bytes per table")
    p.add_argument("--profile", type=int, default=0, help="print the top N functions")
    p.add_argument("--no-cpu", action="store_true", help="counts only (no timed passes)")
    args = p.parse_args(argv)
    wanted = {x for x in args.only.split(",") if x}
    folder = Path(tempfile.mkdtemp(prefix="proctor-costs-"))
    results: dict[str, dict] = {}
    extra: dict[str, dict] = defaultdict(dict)
    try:
        for name, cls, memory in WORKLOADS:
            if wanted and cls not in wanted:
                continue
            r = count_pass(folder, cls, memory, args.units, args.warmup)
            log, copy = r.pop("_log"), r.pop("_copy")
            extra[name].update(inserted=r.pop("inserted"), grew=r.pop("grew"))
            prof = profile_pass(folder, cls, memory, min(args.units, 100), args.warmup)
            stats = prof.pop("_stats")
            r.update(prof)
            if not args.no_cpu:
                r["cpu_us"] = cpu_pass(folder, cls, memory, args.units, args.warmup)
                r["raw_us"] = raw_pass(log, copy, args.units)
                r["py_share"] = 1 - r["raw_us"] / r["cpu_us"] if r["cpu_us"] else None
            results[name] = r
            print(f"  {name}: {r['stmts']:.1f} stmts, {r['rows']:.1f} rows", file=sys.stderr)
            if args.profile:
                stats.sort_stats("tottime").print_stats(args.profile)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    before = json.loads(args.compare.read_text())["results"] if args.compare else None
    print(
        f"per unit, 1 process, {args.units} units after {args.warmup} warm-up; "
        f"{load()}; cpu: synchronous=OFF\n"
    )
    print(table(results, before))
    if args.tables:
        for name, e in extra.items():
            print(
                f"\n{name}: rows inserted per unit "
                + ", ".join(f"{k} {v:g}" for k, v in e["inserted"].items())
            )
            print(
                "  bytes per unit by b-tree: "
                + ", ".join(
                    f"{k} {v:,.0f}" for k, v in sorted(e["grew"].items(), key=lambda kv: -kv[1])
                )
            )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"load": load(), "units": args.units, "results": results, "tables": extra}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
