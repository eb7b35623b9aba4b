"""Shared machinery for tests/bench: workloads, the timing loop, process fan-out, results.

A *workload* is a class ``Workload(path, worker, params)`` with:

- ``prepare(i) -> inputs``: untimed; builds what unit ``i`` needs (ids, payloads). No store access.
- ``unit(inputs, lap)``: timed; performs one unit of work on the store. ``lap("name")`` marks
  the end of a named step (per-step latency, optional).
- ``rows() -> int | None``: rows changed on this worker's connection(s) so far (rows/unit).
- ``info() -> dict``: facts to report (e.g. the ``synchronous`` level actually in force).
- ``close()``.

``measure()`` runs a workload in one process (in this interpreter) or in N processes started
with the ``spawn`` context (never fork), each with ``warmup`` untimed units, then a barrier,
then ``n`` timed units. Throughput is total timed units over the wall-clock window from the
first worker's start to the last worker's end; latencies are pooled over all workers.

A *figure* (``Figure``) is one row of the result table: Proctor's number, each peer's number
on the same work, the floor, and the ratios. Suites (``bench_*.py`` / ``desk_*.py`` modules
with a ``run(ctx) -> list[Figure]``) return figures; ``run.py`` prints and saves them.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROCTOR = "proctor"
FLOOR = "floor"


# --------------------------------------------------------------------------- results
@dataclass
class Measure:
    """One system's number for one figure, or why there is none (``na``)."""

    units_per_s: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    n: int = 0
    rows_per_unit: float | None = None
    cpu_ms_per_unit: float | None = None  # this process's CPU only: robust to other load
    txns_per_unit: float | None = None
    steps_p50_ms: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    na: str | None = None

    @classmethod
    def not_available(cls, reason: str) -> Measure:
        return cls(na=reason)

    @property
    def ok(self) -> bool:
        return self.na is None

    def speed(self) -> float | None:
        """Higher is faster: units/s when known, else 1/p50."""
        if not self.ok:
            return None
        if self.units_per_s:
            return self.units_per_s
        return 1000.0 / self.p50_ms if self.p50_ms else None


@dataclass
class Figure:
    """One table row. ``systems`` maps "proctor", peer names and "floor" to a Measure."""

    suite: str
    id: str
    title: str
    what: str
    unit: str
    procs: int
    systems: dict[str, Measure]
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def ratio(self, other: str) -> float | None:
        """Proctor's speed over ``other``'s (>1: Proctor is faster)."""
        mine = self.systems.get(PROCTOR)
        theirs = self.systems.get(other)
        if mine is None or theirs is None:
            return None
        a, b = mine.speed(), theirs.speed()
        return a / b if a and b else None

    def to_json(self) -> dict:
        out = asdict(self)
        out["ratios"] = {
            f"proctor_vs_{name}": self.ratio(name) for name in self.systems if name != PROCTOR
        }
        return out


# --------------------------------------------------------------------------- timing
class Lap:
    """Per-step stopwatch used inside ``unit()``: ``lap("reserve")`` ends the step."""

    __slots__ = ("_last", "marks")

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.marks.append((name, now - self._last))
        self._last = now


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


BUSY_RETRIES = 5
_busy = {"retries": 0}


def is_busy(err: BaseException) -> bool:
    """SQLite's write lock was not granted within busy_timeout (Proctor: StoreBusy; the
    peers and the floor: sqlite3.OperationalError 'database is locked')."""
    return type(err).__name__ == "StoreBusy" or "database is locked" in str(err)


def busy(fn: Any, *args: Any, **kw: Any) -> Any:
    """Call ``fn``; when the write lock was not granted in time, retry as an agent would
    (nothing was written) and count it. Every workload routes its store calls through this."""
    for attempt in range(BUSY_RETRIES + 1):
        try:
            return fn(*args, **kw)
        except Exception as err:
            if attempt == BUSY_RETRIES or not is_busy(err):
                raise
            _busy["retries"] += 1
    raise AssertionError("unreachable")


def load_workload(module: str, name: str, path: str, worker: int, params: dict) -> Any:
    cls = getattr(importlib.import_module(module), name)
    return cls(path, worker, params)


def run_job(job: dict, barrier: Any = None) -> dict:
    """Warm up, wait at the barrier, run the timed units; returns raw samples."""
    wl = load_workload(
        job["module"], job["workload"], job["path"], job["worker"], job.get("params", {})
    )
    _busy["retries"] = 0
    try:
        warmup, n, first = job["warmup"], job["n"], job.get("offset", 0)
        for i in range(first, first + warmup):
            wl.unit(wl.prepare(i), Lap())
        rows0 = wl.rows()
        inputs = [wl.prepare(first + warmup + i) for i in range(n)]
        if barrier is not None:
            barrier.wait()
        latencies: list[float] = []
        steps: dict[str, list[float]] = defaultdict(list)
        start, cpu = time.monotonic(), time.process_time()
        for item in inputs:
            lap = Lap()
            t0 = lap._last
            wl.unit(item, lap)
            latencies.append(time.perf_counter() - t0)
            for name, secs in lap.marks:
                steps[name].append(secs)
        end, cpu = time.monotonic(), time.process_time() - cpu
        rows1 = wl.rows()
        rows = None if rows0 is None or rows1 is None else rows1 - rows0
        return {
            "start": start,
            "end": end,
            "latencies": latencies,
            "steps": dict(steps),
            "rows": rows,
            "info": wl.info(),
            "busy_retries": _busy["retries"],
            "cpu": cpu,
        }
    finally:
        wl.close()


def run_round(
    module: str,
    workload: str,
    path: str | Path,
    *,
    procs: int,
    n: int,
    warmup: int,
    params: dict | list[dict] | None = None,
    offset: int = 0,
) -> list[dict]:
    """One round: ``procs`` workers each run units ``offset`` .. ``offset + warmup + n - 1``
    (the first ``warmup`` untimed) of ``workload`` on ``path``. Returns raw samples.

    ``params`` is one dict for every worker, or a list with one dict per worker. One process
    runs here; more run in a pool of spawned worker processes (started once per size)."""
    per_worker = params if isinstance(params, list) else [params or {}] * procs
    jobs = [
        {
            "module": module,
            "workload": workload,
            "path": str(path),
            "worker": w,
            "n": n,
            "warmup": warmup,
            "offset": offset,
            "params": per_worker[w],
        }
        for w in range(procs)
    ]
    return [run_job(jobs[0])] if procs == 1 else pool(procs).run(jobs)


def measure(
    module: str,
    workload: str,
    path: str | Path,
    *,
    procs: int,
    n: int,
    warmup: int,
    params: dict | list[dict] | None = None,
    txns_per_unit: float | None = None,
    rounds: int = 1,
) -> Measure:
    """``rounds`` rounds of ``run_round`` back to back, summarized. To interleave systems
    (fairer on a noisy machine), call ``run_round`` yourself and ``summarize`` the rounds."""
    per_round = []
    for r in range(rounds):
        per_round.append(
            run_round(
                module,
                workload,
                path,
                procs=procs,
                n=n,
                warmup=warmup,
                params=params,
                offset=r * (warmup + n),
            )
        )
    return summarize(per_round, txns_per_unit)


class WorkerPool:
    """``size`` long-lived processes (spawn context, never fork) that run one job each per
    ``run()`` and meet at a shared barrier between warm-up and the timed units."""

    BARRIER_TIMEOUT = 600.0

    def __init__(self, size: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.barrier = ctx.Barrier(size)
        self.inboxes = [ctx.Queue() for _ in range(size)]
        self.outbox = ctx.Queue()
        self.workers = [
            ctx.Process(
                target=_serve,
                args=(q, self.outbox, self.barrier),
                daemon=True,
                name=f"bench-worker-{i}",
            )
            for i, q in enumerate(self.inboxes)
        ]
        for w in self.workers:
            w.start()

    def run(self, jobs: list[dict]) -> list[dict]:
        if len(jobs) != len(self.workers):
            raise ValueError(f"{len(jobs)} jobs for a pool of {len(self.workers)}")
        for inbox, job in zip(self.inboxes, jobs, strict=True):
            inbox.put(job)
        replies = [self.outbox.get() for _ in jobs]
        errors = [r["error"] for r in replies if "error" in r]
        if errors:
            self.barrier.reset()
            raise RuntimeError("a bench worker failed:\n" + "\n".join(errors))
        return sorted(replies, key=lambda r: r["worker"])

    def close(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for w in self.workers:
            w.join(timeout=10)


def _serve(inbox: Any, outbox: Any, barrier: Any) -> None:
    class Bounded:  # the barrier, with a timeout so a failed sibling cannot hang us
        def wait(self) -> None:
            barrier.wait(WorkerPool.BARRIER_TIMEOUT)

    while (job := _next_job(inbox)) is not None:
        try:
            result = run_job(job, Bounded())
            result["worker"] = job["worker"]
        except BaseException:  # noqa: BLE001 - report, and release the siblings waiting at the barrier
            import traceback

            barrier.abort()
            result = {"worker": job["worker"], "error": traceback.format_exc()}
        outbox.put(result)


def _next_job(inbox: Any) -> dict | None:
    """The next job, or None when told to stop or when the parent is gone."""
    import queue

    parent = multiprocessing.parent_process()
    while True:
        try:
            return inbox.get(timeout=2.0)
        except queue.Empty:
            if parent is None or not parent.is_alive():
                return None


_POOLS: dict[int, WorkerPool] = {}


def pool(size: int) -> WorkerPool:
    if size not in _POOLS:
        _POOLS[size] = WorkerPool(size)
    return _POOLS[size]


def close_pools() -> None:
    while _POOLS:
        _POOLS.popitem()[1].close()


def summarize(rounds: list[list[dict]], txns_per_unit: float | None = None) -> Measure:
    """Throughput: the median over rounds of (timed units / wall window from the first
    worker's start to the last worker's end). Latencies: pooled over rounds and workers."""
    results = [r for one in rounds for r in one]
    latencies = [x for r in results for x in r["latencies"]]
    rates = []
    for one in rounds:
        window = max(r["end"] for r in one) - min(r["start"] for r in one)
        if window > 0:
            rates.append(sum(len(r["latencies"]) for r in one) / window)
    steps: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for name, values in r["steps"].items():
            steps[name].extend(values)
    rows = [r["rows"] for r in results]
    total_rows = None if any(x is None for x in rows) else sum(rows)
    info = dict(results[0]["info"])
    retries = sum(r.get("busy_retries", 0) for r in results)
    if retries:
        info["busy_retries"] = retries
    if len(rates) > 1:
        info["rounds_units_per_s"] = [round(x, 1) for x in rates]
    return Measure(
        units_per_s=statistics.median(rates) if rates else None,
        p50_ms=percentile(latencies, 50) * 1000,
        p95_ms=percentile(latencies, 95) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        n=len(latencies),
        rows_per_unit=None if total_rows is None else total_rows / len(latencies),
        cpu_ms_per_unit=sum(r.get("cpu", 0.0) for r in results) / len(latencies) * 1000,
        txns_per_unit=txns_per_unit,
        steps_p50_ms={k: round(statistics.median(v) * 1000, 3) for k, v in steps.items()},
        info=info,
    )


# --------------------------------------------------------------------------- context
@dataclass
class BenchContext:
    """What every suite gets: mode, sizes, a scratch folder on the measured file system."""

    quick: bool
    workdir: Path
    procs: tuple[int, ...] = (1, 4)
    keep: bool = False  # keep the measured files (for inspection)
    on_figure: Any = None  # callback(Figure) as each figure completes

    def progress(self, figure: Figure) -> None:
        if self.on_figure is not None:
            self.on_figure(figure)

    def n_units(self, procs: int, heavy: bool = False) -> int:
        """Timed units per worker per round. ``heavy``: a unit of 4+ transactions."""
        sizes = {True: (50, 25), False: (1000, 400)}[self.quick]
        base = sizes[0] if procs == 1 else sizes[1]
        total = max(10, base // 2) if heavy else base
        return max(5, total // self.rounds())

    def rounds(self) -> int:
        """Rounds per figure; systems take turns each round so drift hits them alike."""
        return 1 if self.quick else 3

    def warmup(self) -> int:
        return 5 if self.quick else 20

    def fresh(self, name: str) -> Path:
        """A new, empty folder for one measurement's files."""
        folder = self.workdir / name
        folder.mkdir(parents=True, exist_ok=False)
        return folder


def filesystem_of(path: Path) -> str:
    """'ext4 on /dev/vda' style description of the file system holding ``path``."""
    try:
        out = (
            subprocess.run(["df", "-T", str(path)], capture_output=True, text=True, check=True)
            .stdout.splitlines()[-1]
            .split()
        )
        return f"{out[1]} on {out[0]}"
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def load() -> str:
    """Load average and I/O pressure now: other work on the machine skews every figure."""
    parts = ["loadavg " + " ".join(f"{x:.2f}" for x in os.getloadavg())]
    try:
        some = Path("/proc/pressure/io").read_text().split()[1]
        parts.append("io-pressure " + some)
    except (OSError, IndexError):
        pass
    return ", ".join(parts)


def machine(workdir: Path) -> dict:
    import sqlite3

    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "load": load(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "filesystem": filesystem_of(workdir),
        "workdir": str(workdir),
        "executable": sys.executable,
    }
