"""Suite "scale": reads and writes on a journal that grows to 10k, 100k and 1M events
(--quick: 10k and 40k).

One journal is populated through the core API only (``runs.start``, batched
``runs.append_events``, ``approvals.request``, ``interactions.ask``, ``runs.complete``):
runs of 100 events across 7 projects and 13 agents, every 10th run waiting on an approval,
every 25th on a question, most of the rest completed, plus one long run that holds 10% of
all events. At each size the same figures are measured (1 process):

- reads: inbox first page, inbox counts, runs first page, a keyset page of 200 events in the
  middle of the long run, the first page of a typical run, the change feed's last 100 changes;
  each also as "the same SQL alone" (the statements the call sent, replayed by raw sqlite3);
- writes: event append, effect lifecycle, approval cycle (as in the core suite).

Growth factor = p50 at the largest size over p50 at the smallest: ~1 where an index serves
the query.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import sys
import time
from dataclasses import asdict
from typing import Any

from bench_common import PROCTOR, BenchContext, Figure, Measure, measure, percentile
from bench_data import action_of, payload_of
from bench_floor import compile_stream, connect, run_txns
from bench_proctor import Recorder, setup_journal

from proctor.core import Actor, InteractionKind, Journal

RUN_EVENTS = 100
LONG_SHARE = 0.10
BATCH = 500
FLOOR_LABEL = "floor"


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size >= 1_000_000 else f"{size // 1000}k"


class Populator:
    """Grows one journal through the public API; tracks what the reads need."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.j = Journal.open(path, actor=Actor.agent("bulk-agent"))
        self.k = 0
        self.events = 0
        self.runs: list[str] = []
        self.long_run = self.j.runs.start("bench", "the long run", agent="agent-long").id
        self.events += 1

    def grow_to(self, target: int) -> None:
        long_goal = int(target * LONG_SHARE)
        while self.events < target:
            self._one_run()
            done = self.j.runs.get(self.long_run).last_sequence
            if done < long_goal:
                n = min(BATCH, long_goal - done)
                self.j.runs.append_events(self.long_run, [
                    ("tool.output", payload_of(0, done + i)) for i in range(n)])
                self.events += n

    def _one_run(self) -> None:
        k, j = self.k, self.j
        self.k += 1
        run = j.runs.start(f"project-{k % 7}", f"nightly task {k}", agent=f"agent-{k % 13}")
        j.runs.append_events(run.id, [("tool.output", payload_of(k, i))
                                      for i in range(RUN_EVENTS - 2)])
        self.runs.append(run.id)
        self.events += RUN_EVENTS - 1
        if k % 10 == 0:
            j.approvals.request(run.id, action_of(k, 0), reason="publish the release notes")
        elif k % 25 == 1:
            j.interactions.ask(run.id, InteractionKind.QUESTION, "Which branch should I use?")
        elif k % 3:
            j.runs.complete(run.id, {"ok": True})
        else:
            j.runs.append_event(run.id, "tool.output", payload_of(k, RUN_EVENTS))
        self.events += 1

    def count_events(self) -> int:
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute("SELECT count(*) FROM events").fetchone()[0]
        finally:
            conn.close()

    def close(self) -> None:
        self.j.close()


def read_calls(op: Journal, pop: Populator, rng: random.Random) -> dict[str, tuple]:
    """id -> (title, what, call). Calls take the journal so they can be recorded elsewhere."""
    mid = pop.j.runs.get(pop.long_run).last_sequence // 2
    typical = rng.choice(pop.runs[len(pop.runs) // 2:] or pop.runs)
    latest = op.changes.latest()
    return {
        "inbox_page": ("Inbox first page (50, default order)",
                       "inbox.list(limit=50): pending approvals/questions/memory/effects "
                       "across runs, joined with their runs",
                       lambda j: j.inbox.list(limit=50)),
        "inbox_counts": ("Inbox counts by kind", "inbox.counts()",
                         lambda j: j.inbox.counts()),
        "runs_page": ("Runs first page (50, newest first)", "runs.list(limit=50)",
                      lambda j: j.runs.list(limit=50)),
        "long_run_page": ("Keyset page of 200 events mid-way through the long run",
                          "runs.events(long_run, after=middle, limit=200)",
                          lambda j: j.runs.events(pop.long_run, after=mid, limit=200)),
        "run_first_page": ("First page of a typical run's events",
                           "runs.events(run, limit=200) for a 100-event run",
                           lambda j: j.runs.events(typical, limit=200)),
        "changes_tail": ("Change feed: the last 100 changes",
                         "changes.since(latest - 100)",
                         lambda j: j.changes.since(max(0, latest - 100))),
    }


def time_call(call: Any, j: Journal, reps: int) -> Measure:
    call(j)  # warm
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call(j)
        samples.append(time.perf_counter() - t0)
    return latency_measure(samples)


def latency_measure(samples: list[float]) -> Measure:
    return Measure(p50_ms=percentile(samples, 50) * 1000, p95_ms=percentile(samples, 95) * 1000,
                   p99_ms=percentile(samples, 99) * 1000, n=len(samples))


def time_sql_alone(call: Any, rec_journal: Journal, recorder: Recorder, path: str,
                   reps: int) -> Measure:
    """The statements ``call`` sent (recorded on ``rec_journal``), replayed raw ``reps`` times."""
    recorder.new_unit()
    call(rec_journal)
    txns = compile_stream([recorder.units[-1]], "all")[0]
    conn = connect(path)
    try:
        run_txns(conn, txns)
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter()
            run_txns(conn, txns)
            samples.append(time.perf_counter() - t0)
    finally:
        conn.close()
    return latency_measure(samples)


WRITES = {
    "write_event_append": ("EventAppend", "Event append at size", "event"),
    "write_effect_lifecycle": ("EffectLifecycle", "Effect lifecycle at size", "lifecycle"),
    "write_approval_cycle": ("ApprovalCycle", "Approval cycle at size", "approval"),
}


def measure_size(ctx: BenchContext, pop: Populator, size: int, rng: random.Random) -> dict:
    """{figure id: (title, what, unit, proctor Measure, floor Measure | None)} at this size."""
    reps = 30 if ctx.quick else 200
    out: dict[str, tuple] = {}
    with Journal.open(pop.path, actor=Actor.operator("bench-reader")) as op, \
            Journal.open(pop.path, actor=Actor.operator("bench-recorder")) as rec_j:
        recorder = Recorder([rec_j])
        for fid, (title, what, call) in read_calls(op, pop, rng).items():
            proctor = time_call(call, op, reps)
            floor = time_sql_alone(call, rec_j, recorder, pop.path, reps)
            out[fid] = (title, what, "read", proctor, floor)
    n = 40 if ctx.quick else 300
    for fid, (workload, title, unit) in WRITES.items():
        params = [dict(p, prefix=f"{label(size)}-") for p in setup_journal(pop.path, 1)]
        m = measure("bench_proctor", workload, pop.path, procs=1, n=n, warmup=ctx.warmup(),
                    params=params)
        out[fid] = (title, f"bench_proctor.{workload} (1 process) on the grown journal",
                    unit, m, None)
    return out


def run(ctx: BenchContext) -> list[Figure]:
    sizes = (10_000, 40_000) if ctx.quick else (10_000, 100_000, 1_000_000)
    folder = ctx.fresh("scale")
    pop = Populator(str(folder / "scale.db"))
    rng = random.Random(7)
    by_size: dict[str, dict] = {}
    actual: dict[str, int] = {}
    try:
        for size in sizes:
            t0 = time.monotonic()
            pop.grow_to(size)
            actual[label(size)] = pop.count_events()
            took = time.monotonic() - t0
            by_size[label(size)] = measure_size(ctx, pop, size, rng)
            print(f"  scale: {actual[label(size)]:,} events (grown in {took:.0f} s), "
                  f"{len(pop.runs):,} runs; measured", flush=True, file=sys.stderr)
    finally:
        pop.close()
        if not ctx.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return figures_from(by_size, actual)


def figures_from(by_size: dict[str, dict], actual: dict[str, int]) -> list[Figure]:
    labels = list(by_size)
    first, last = labels[0], labels[-1]
    figures = []
    for fid in by_size[first]:
        title, what, unit, _, _ = by_size[last][fid]
        top, floor = by_size[last][fid][3], by_size[last][fid][4]
        growth = (top.p50_ms / by_size[first][fid][3].p50_ms
                  if by_size[first][fid][3].p50_ms else None)
        systems = {PROCTOR: top}
        if floor is not None:
            systems[FLOOR_LABEL] = floor
        extra = {"by_size": {lab: asdict(by_size[lab][fid][3]) for lab in labels},
                 "floor_by_size": {lab: asdict(by_size[lab][fid][4]) for lab in labels
                                   if by_size[lab][fid][4] is not None},
                 "growth_p50": growth, "events": actual}
        figures.append(Figure(suite="scale", id=fid, title=title, what=what, unit=unit,
                              procs=1, systems=systems, extra=extra,
                              notes=["journal sizes (events): "
                                     + ", ".join(f"{k} = {v:,}" for k, v in actual.items())]))
    return figures
