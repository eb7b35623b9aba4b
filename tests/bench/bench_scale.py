"""Suite "scale": reads and writes on a journal that grows to 10k, 100k and 1M events
(--quick: 10k and 40k). A copy is frozen at each size; the sizes are then measured in rounds,
taking turns, so a change in background load does not masquerade as growth.

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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench_common import PROCTOR, BenchContext, Figure, Measure, percentile, run_round, summarize
from bench_core import snapshot
from bench_data import action_of, payload_of
from bench_floor import compile_stream, connect, run_txns
from bench_proctor import Recorder, setup_journal

from proctor.core import Actor, Journal, QuestionKind

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
                self.j.runs.append_events(
                    self.long_run, [("tool.output", payload_of(0, done + i)) for i in range(n)]
                )
                self.events += n

    def _one_run(self) -> None:
        k, j = self.k, self.j
        self.k += 1
        run = j.runs.start(f"project-{k % 7}", f"nightly task {k}", agent=f"agent-{k % 13}")
        j.runs.append_events(
            run.id, [("tool.output", payload_of(k, i)) for i in range(RUN_EVENTS - 2)]
        )
        self.runs.append(run.id)
        self.events += RUN_EVENTS - 1
        if k % 10 == 0:
            j.approvals.request(run.id, action_of(k, 0), reason="publish the release notes")
        elif k % 25 == 1:
            j.questions.ask(run.id, QuestionKind.QUESTION, "Which branch should I use?")
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


@dataclass
class Sized:
    """One journal size, frozen as its own file: what the reads need to address it."""

    label: str
    path: str
    events: int
    long_run: str
    typical_run: str


def read_calls(j: Journal, sized: Sized) -> dict[str, tuple]:
    """id -> (title, what, call(journal)); positions computed on this size's journal."""
    mid = j.runs.get(sized.long_run).last_sequence // 2
    latest = j.changes.latest()
    return {
        "inbox_page": (
            "Inbox first page (50, default order)",
            "inbox.list(limit=50): pending approvals/questions/memory/effects "
            "across runs, joined with their runs",
            lambda j: j.inbox.list(limit=50),
        ),
        "inbox_counts": ("Inbox counts by kind", "inbox.counts()", lambda j: j.inbox.counts()),
        "runs_page": (
            "Runs first page (50, newest first)",
            "runs.list(limit=50)",
            lambda j: j.runs.list(limit=50),
        ),
        "long_run_page": (
            "Keyset page of 200 events mid-way through the long run",
            "runs.events(long_run, after=middle, limit=200)",
            lambda j: j.runs.events(sized.long_run, after=mid, limit=200),
        ),
        "run_first_page": (
            "First page of a typical run's events",
            "runs.events(run, limit=200) for a 100-event run",
            lambda j: j.runs.events(sized.typical_run, limit=200),
        ),
        "changes_tail": (
            "Change feed: the last 100 changes",
            "changes.since(latest - 100)",
            lambda j: j.changes.since(max(0, latest - 100)),
        ),
    }


def timed(call: Any, j: Journal, reps: int) -> list[float]:
    call(j)  # warm
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call(j)
        samples.append(time.perf_counter() - t0)
    return samples


def latency_measure(samples: list[float]) -> Measure:
    return Measure(
        p50_ms=percentile(samples, 50) * 1000,
        p95_ms=percentile(samples, 95) * 1000,
        p99_ms=percentile(samples, 99) * 1000,
        n=len(samples),
    )


def timed_sql_alone(
    call: Any, rec_journal: Journal, recorder: Recorder, path: str, reps: int
) -> list[float]:
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
    return samples


WRITES = {
    "write_event_append": ("EventAppend", "Event append at size", "event"),
    "write_effect_lifecycle": ("EffectLifecycle", "Effect lifecycle at size", "lifecycle"),
    "write_approval_cycle": ("ApprovalCycle", "Approval cycle at size", "approval"),
}


class Samples:
    """Everything measured at one size, accumulated over rounds."""

    def __init__(self) -> None:
        self.titles: dict[str, tuple[str, str, str]] = {}
        self.reads: dict[str, list[float]] = {}
        self.sql: dict[str, list[float]] = {}
        self.writes: dict[str, list[list[dict]]] = {}

    def figure(self, fid: str) -> tuple[str, str, str, Measure, Measure | None]:
        title, what, unit = self.titles[fid]
        if fid in self.writes:
            return title, what, unit, summarize(self.writes[fid]), None
        return (title, what, unit, latency_measure(self.reads[fid]), latency_measure(self.sql[fid]))


def measure_round(ctx: BenchContext, sized: Sized, acc: Samples, r: int) -> None:
    """One round at one size: every read (reps/rounds) and every write (n/rounds)."""
    reps = max(10, (30 if ctx.quick else 200) // ctx.rounds())
    with (
        Journal.open(sized.path, actor=Actor.operator("bench-reader")) as op,
        Journal.open(sized.path, actor=Actor.operator("bench-recorder")) as rec_j,
    ):
        recorder = Recorder([rec_j])
        for fid, (title, what, call) in read_calls(op, sized).items():
            acc.titles[fid] = (title, what, "read")
            acc.reads.setdefault(fid, []).extend(timed(call, op, reps))
            acc.sql.setdefault(fid, []).extend(
                timed_sql_alone(call, rec_j, recorder, sized.path, reps)
            )
    n = max(10, (40 if ctx.quick else 300) // ctx.rounds())
    for fid, (workload, title, unit) in WRITES.items():
        params = [dict(p, prefix=f"{sized.label}-r{r}-") for p in setup_journal(sized.path, 1)]
        acc.titles[fid] = (
            title,
            f"bench_proctor.{workload} (1 process) on the grown journal",
            unit,
        )
        acc.writes.setdefault(fid, []).append(
            run_round(
                "bench_proctor",
                workload,
                sized.path,
                procs=1,
                n=n,
                warmup=ctx.warmup(),
                params=params,
            )
        )


def grow(ctx: BenchContext, folder: Any, sizes: tuple[int, ...]) -> list[Sized]:
    """Grow one journal through the API; freeze a copy at each size (the last is the live
    file). Measuring happens afterwards, so every size is measured under the same load."""
    live = str(folder / "scale.db")
    pop = Populator(live)
    rng = random.Random(7)
    out = []
    try:
        for i, size in enumerate(sizes):
            t0 = time.monotonic()
            pop.grow_to(size)
            path = live if i == len(sizes) - 1 else str(folder / f"scale-{label(size)}.db")
            if path != live:
                snapshot(Path(live), Path(path))
            typical = rng.choice(pop.runs[len(pop.runs) // 2 :] or pop.runs)
            out.append(Sized(label(size), path, pop.count_events(), pop.long_run, typical))
            print(
                f"  scale: grew to {out[-1].events:,} events, {len(pop.runs):,} runs "
                f"({time.monotonic() - t0:.0f} s)",
                flush=True,
                file=sys.stderr,
            )
    finally:
        pop.close()
    return out


def run(ctx: BenchContext) -> list[Figure]:
    sizes = (10_000, 40_000) if ctx.quick else (10_000, 100_000, 1_000_000)
    folder = ctx.fresh("scale")
    try:
        journals = grow(ctx, folder, sizes)
        acc = {s.label: Samples() for s in journals}
        for r in range(ctx.rounds()):  # sizes take turns, so drift in load hits all alike
            for sized in journals[r % len(journals) :] + journals[: r % len(journals)]:
                measure_round(ctx, sized, acc[sized.label], r)
        by_size = {lab: {fid: a.figure(fid) for fid in a.titles} for lab, a in acc.items()}
    finally:
        if not ctx.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return figures_from(by_size, {s.label: s.events for s in journals})


def figures_from(by_size: dict[str, dict], actual: dict[str, int]) -> list[Figure]:
    labels = list(by_size)
    first, last = labels[0], labels[-1]
    figures = []
    for fid in by_size[first]:
        title, what, unit, _, _ = by_size[last][fid]
        top, floor = by_size[last][fid][3], by_size[last][fid][4]
        growth = (
            top.p50_ms / by_size[first][fid][3].p50_ms if by_size[first][fid][3].p50_ms else None
        )
        systems = {PROCTOR: top}
        if floor is not None:
            systems[FLOOR_LABEL] = floor
        extra = {
            "by_size": {lab: asdict(by_size[lab][fid][3]) for lab in labels},
            "floor_by_size": {
                lab: asdict(by_size[lab][fid][4])
                for lab in labels
                if by_size[lab][fid][4] is not None
            },
            "growth_p50": growth,
            "events": actual,
        }
        figures.append(
            Figure(
                suite="scale",
                id=fid,
                title=title,
                what=what,
                unit=unit,
                procs=1,
                systems=systems,
                extra=extra,
                notes=[
                    "journal sizes (events): "
                    + ", ".join(f"{k} = {v:,}" for k, v in actual.items())
                ],
            )
        )
    return figures
