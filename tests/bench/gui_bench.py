"""What the desk suites share: a desk bench runs in its own offscreen process, and its
figures come back to run.py as JSON (Qt never loads in the process that measures the core).

- ``spawn_figures(script, args, ctx)``: run ``script --figures OUT ...`` offscreen and read
  the figures it wrote; its output goes to stderr (run.py's stdout is the table).
- ``latency(values_ms)``: a ``Measure`` of latencies (p50/p95/p99).
- ``ReadRecorder``: the read statements an engine finished, with the time each finished.
- ``replay_reads(path, statements)``: those statements alone, by raw sqlite3 (the floor).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench_common import FLOOR, PROCTOR, BenchContext, Figure, Measure, percentile

HERE = Path(__file__).resolve().parent


def offscreen_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "QT_QPA_PLATFORM": "offscreen", "PROCTOR_OPERATOR": "bench"}


def spawn_figures(script: str, args: list[str], ctx: BenchContext, timeout: float) -> list[Figure]:
    """Run ``tests/bench/<script> --figures OUT args`` and load the figures it saved."""
    out = ctx.fresh(Path(script).stem) / "figures.json"
    subprocess.run(
        [sys.executable, str(HERE / script), "--figures", str(out), *args],
        stdout=sys.stderr,
        env=offscreen_env(),
        timeout=timeout,
        check=True,
    )
    figures = [figure_of(d) for d in json.loads(out.read_text())]
    for f in figures:
        ctx.progress(f)
    return figures


def save_figures(path: Path, figures: list[Figure]) -> None:
    path.write_text(json.dumps([asdict(f) for f in figures], indent=1, default=str))


def figure_of(data: dict) -> Figure:
    systems = {name: Measure(**m) for name, m in data.pop("systems").items()}
    data.pop("ratios", None)
    return Figure(systems=systems, **data)


def latency(values_ms: list[float], cpu_ms: list[float] | None = None) -> Measure:
    """p50/p95/p99 of ``values_ms``; n/a when there are none."""
    if not values_ms:
        return Measure.not_available("no sample")
    cpu = percentile(cpu_ms, 50) if cpu_ms else None
    return Measure(
        p50_ms=percentile(values_ms, 50),
        p95_ms=percentile(values_ms, 95),
        p99_ms=percentile(values_ms, 99),
        n=len(values_ms),
        cpu_ms_per_unit=cpu,
    )


def desk_figure(
    suite: str,
    fid: str,
    title: str,
    what: str,
    unit: str,
    desk_ms: list[float],
    floor_ms: list[float] | Measure,
    notes: list[str] | None = None,
    **extra: Any,
) -> Figure:
    """A desk figure: the desk's latencies ("proctor") against the same SQL alone ("floor")."""
    floor = floor_ms if isinstance(floor_ms, Measure) else latency(floor_ms)
    return Figure(
        suite=suite,
        id=fid,
        title=title,
        what=what,
        unit=unit,
        procs=1,
        systems={PROCTOR: latency(desk_ms), FLOOR: floor},
        notes=notes or [],
        extra=extra,
    )


def is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper().startswith(("SELECT", "WITH"))


class ReadRecorder:
    """(finished at, sql, params) of every read statement the engines finished while ``on``."""

    def __init__(self, engines: list[Any]) -> None:
        from sqlalchemy import event

        self.on = False
        self.statements: list[tuple[float, str, Any]] = []
        for engine in engines:
            event.listen(engine, "after_cursor_execute", self._record)

    def _record(self, _conn, _cursor, sql, params, _context, many) -> None:
        if self.on and not many and is_read(sql):
            self.statements.append((time.time(), sql, params))

    def take(self) -> list[tuple[float, str, Any]]:
        taken, self.statements = self.statements, []
        return taken

    def between(self, start: float, end: float) -> list[tuple[str, Any]]:
        return [(sql, params) for t, sql, params in self.statements if start <= t <= end]


def replay_reads(conn: sqlite3.Connection, statements: list[tuple[str, Any]]) -> float:
    """Milliseconds to run ``statements`` serially on ``conn``, one read transaction each,
    fetching every row."""
    started = time.perf_counter()
    for sql, params in statements:
        conn.execute("BEGIN")
        conn.execute(sql, params).fetchall()
        conn.execute("COMMIT")
    return (time.perf_counter() - started) * 1000


def reader(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


FLOOR_PROCESS = """
import pickle, sqlite3, sys
statements = pickle.load(open(sys.argv[2], "rb"))
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for sql, params in statements:
    conn.execute("BEGIN")
    conn.execute(sql, params).fetchall()
    conn.execute("COMMIT")
print("done", flush=True)
"""


def floor_process_ms(path: Path, statements_file: Path) -> float:
    """Wall ms of a fresh Python process that runs the statements by raw sqlite3."""
    started = time.time()
    subprocess.run(
        [sys.executable, "-c", FLOOR_PROCESS, str(path), str(statements_file)],
        check=True,
        capture_output=True,
        timeout=120,
        env=offscreen_env(),
    )
    return (time.time() - started) * 1000
