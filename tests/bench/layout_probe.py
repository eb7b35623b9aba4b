"""What a schema layout would save, before anyone writes its migration: the statements each
core write sends (recorded as ``unit_costs.py`` records them), replayed with raw sqlite3 on
copies of the same journal, each copy changed to one candidate layout by plain DDL.

    uv run --extra bench python tests/bench/layout_probe.py [--units 200] [--only EventAppend]

For each workload and layout, per unit: WAL frames appended (auto-checkpoint off), database
growth after a full checkpoint, and the replay's CPU (synchronous=OFF, the best of three).
Frames are what a durable commit writes and syncs; they do not drift with load.

The layouts (each on top of the current one; ``all`` is every one together):

- ``events_keyed``: events ``WITHOUT ROWID`` keyed by ``(run_id, sequence)``, ``id`` UNIQUE:
  one b-tree fewer per event (the rowid table and the (run_id, sequence) index are one);
- ``head_unindexed``: ``ix_runs_updated`` and ``ix_runs_events`` dropped: what moving the
  run head (version, updated_at, last_sequence, last_digest) into a narrow table of its own
  saves per event (the runs row and its indexes stay still; the head's own row is one leaf);
- ``approvals_merged``: ``ix_approvals_run`` (run_id, created_at) and
  ``ix_approvals_run_status`` (run_id, status) merged into one (run_id, status, created_at).

Nothing here is a migration: the triggers are carried over as they are, the statements are
Proctor's own, so a layout that breaks one of them fails the probe (sqlite3 raises).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import unit_costs as uc  # noqa: E402 - patches sqlite3.connect for the counting pass
from bench_common import load  # noqa: E402
from bench_data import is_write  # noqa: E402

REAL_CONNECT = uc._REAL_CONNECT


def events_keyed(conn: sqlite3.Connection) -> None:
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
    keep = conn.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'events' AND sql IS NOT NULL "
        "AND type IN ('index', 'trigger')"
    ).fetchall()
    new = sql.replace("CREATE TABLE events", "CREATE TABLE events_keyed", 1)
    new = new.replace("PRIMARY KEY (id)", "UNIQUE (id)")
    new = re.sub(
        r"CONSTRAINT uq_events_run_sequence UNIQUE \(run_id, sequence\)",
        "PRIMARY KEY (run_id, sequence)",
        new,
    )
    if "PRIMARY KEY (run_id, sequence)" not in new:
        raise RuntimeError("events is not the table this probe knows")
    conn.execute(new.rstrip() + " WITHOUT ROWID")
    conn.execute("INSERT INTO events_keyed SELECT * FROM events")
    conn.execute("DROP TABLE events")
    conn.execute("ALTER TABLE events_keyed RENAME TO events")
    for (ddl,) in keep:
        conn.execute(ddl)


def head_unindexed(conn: sqlite3.Connection) -> None:
    conn.execute("DROP INDEX ix_runs_updated")
    conn.execute("DROP INDEX ix_runs_events")


def approvals_merged(conn: sqlite3.Connection) -> None:
    conn.execute("DROP INDEX ix_approvals_run")
    conn.execute("DROP INDEX ix_approvals_run_status")
    conn.execute("CREATE INDEX ix_approvals_run_status ON approvals (run_id, status, created_at)")


LAYOUTS = {
    "current": [],
    "events_keyed": [events_keyed],
    "head_unindexed": [head_unindexed],
    "approvals_merged": [approvals_merged],
    "all": [events_keyed, head_unindexed, approvals_merged],
}


def changed_copy(source: str, target: str, steps: list) -> None:
    shutil.copyfile(source, target)
    conn = REAL_CONNECT(target, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA legacy_alter_table = ON")  # a rename rewrites no trigger
        conn.execute("BEGIN")
        for step in steps:
            step(conn)
        conn.execute("COMMIT")
        conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def replay(log: list[tuple], path: str) -> tuple[float, int]:
    """Every logged statement on one raw connection: its CPU, and the WAL frames it appended
    (counted before the connection closes: the last one to close checkpoints the WAL)."""
    conn = REAL_CONNECT(path, isolation_level=None, check_same_thread=False)
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
        if many:
            conn.executemany(sql, params)
        elif is_read or "RETURNING" in sql:
            conn.execute(sql, params).fetchall()
        else:
            conn.execute(sql, params)
    spent = time.process_time() - start
    frames = uc.wal_pages(path)
    conn.close()
    return spent, frames


def probe(folder: Path, cls: str, memory: bool, units: int, warmup: int) -> dict[str, dict]:
    counted = uc.count_pass(folder, cls, memory, units, warmup)
    log, copy = counted["_log"], counted["_copy"]
    out = {}
    for name, steps in LAYOUTS.items():
        base = str(folder / f"{cls}-{name}.db")
        changed_copy(copy, base, steps)
        frames, grew, cpu = [], [], []
        for r in range(uc.ROUNDS):
            target = f"{base}.{r}"
            shutil.copyfile(base, target)
            size0, _ = uc.checkpointed(target)
            spent, appended = replay(log, target)
            cpu.append(spent)
            frames.append(appended)
            size1, _ = uc.checkpointed(target)
            grew.append(size1 - size0)
        out[name] = {
            "wal": frames[0] / units,
            "bytes": grew[0] / units,
            "cpu_us": min(cpu) / units * 1e6,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--units", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--only", default="", help="comma-separated bench_proctor class names")
    args = p.parse_args(argv)
    wanted = {x for x in args.only.split(",") if x}
    folder = Path(tempfile.mkdtemp(prefix="proctor-layout-"))
    try:
        results = {
            name: probe(folder, cls, memory, args.units, args.warmup)
            for name, cls, memory in uc.WORKLOADS
            if not wanted or cls in wanted
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"per unit, replayed raw, {args.units} units after {args.warmup}; {load()}\n")
    print("| unit | " + " | ".join(f"{k}: wal / bytes / raw µs" for k in LAYOUTS) + " |")
    print("|---|" + "---|" * len(LAYOUTS))
    for name, by in results.items():
        cells = [f"{v['wal']:.1f} / {v['bytes']:,.0f} / {v['cpu_us']:,.0f}" for v in by.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
