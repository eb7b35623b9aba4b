"""Demo journals: realistic, deterministic, built through the public core API.

``small``: a few hundred runs, every kind of pending item (approvals of every safety
class, questions of every interaction type, memory conflicts, ambiguous effects) plus
finished history. ``large``: >= 1M events, >= 10k runs, >= 1k pending items, for
benchmarks and big-journal tests (batched ``runs.append_events`` writes).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.core import InboxKind

from . import content
from .demo_policy import add_policy_run
from .demo_runs import BASE_TIME, DemoClock, DemoWriter

Progress = Callable[[int, int, str], None]

# How many runs of each kind a journal gets.
SMALL_PLAN = {
    "history": 110,
    "pending_approval": 42,
    "pending_question": 32,
    "ambiguous": 8,
    "conflict": 12,
    "interrupted": 8,
    "parent_with_children": 5,
}
LARGE_PLAN = {
    "history": 300,
    "pending_approval": 520,
    "pending_question": 400,
    "ambiguous": 150,
    "conflict": 150,
    "interrupted": 60,
    "parent_with_children": 20,
    "bulk": 9400,
}
LARGE_MIN_EVENTS = 1_000_000
BULK_EVENTS = (60, 160)  # events per bulk run, uniform

KIND_METHOD = {
    "history": "history_run",
    "pending_approval": "pending_approval_run",
    "pending_question": "pending_question_run",
    "ambiguous": "ambiguous_run",
    "conflict": "conflict_run",
    "interrupted": "interrupted_run",
    "parent_with_children": "parent_with_children",
}


SMALL_SPAN_S = 28 * 3600  # the small demo's history spans about 27 hours of clock time


def recent_start(now: float | None = None) -> float:
    """A start time that makes a small demo's newest items a few minutes old."""
    return (now if now is not None else time.time()) - SMALL_SPAN_S


def build_demo_journal(
    path: str | os.PathLike[str],
    size: str = "small",
    seed: int = 0,
    progress: Progress | None = None,
    start_time: float | None = None,
    *,
    fill: bool = False,
    operator: str | None = None,
) -> dict:
    """Write a new demo journal at ``path`` and return its summary counts.

    ``progress(done, total, message)`` is called after each run (``done``/``total`` count
    runs). The same ``seed`` (and ``start_time``) gives the same journal: identical ids,
    times and digests. ``start_time`` defaults to a fixed date; ``proctor demo`` passes a
    recent one (see ``recent_start``) so ages in the desk look like a live morning.
    Raises FileExistsError if ``path`` already holds something; with ``fill`` it may hold
    a journal without runs (``proctor demo`` opens the desk on it first and fills it in
    behind the window). ``operator``: the desk's, put in the demo's ``ops`` group so the
    request halfway through its policy waits for them (sim/demo_policy.py).
    """
    if size not in ("small", "large"):
        raise ValueError("size must be 'small' or 'large'")
    target = Path(path)
    if target.exists() and target.stat().st_size > 0 and not (fill and has_no_runs(target)):
        raise FileExistsError(f"{target} already exists")
    started = time.monotonic()
    clock = DemoClock(start_time if start_time is not None else BASE_TIME)
    writer = DemoWriter(str(target), seed, clock)
    try:
        plan = dict(SMALL_PLAN if size == "small" else LARGE_PLAN)
        kinds = [kind for kind, count in plan.items() for _ in range(count)]
        random.Random(f"plan:{seed}").shuffle(kinds)
        bulk = BulkRuns(writer, seed)
        total = len(kinds)
        for done, kind in enumerate(kinds, start=1):
            if done == 12:
                writer.add_rules()
            if kind == "bulk":
                bulk.run()
            else:
                getattr(writer, KIND_METHOD[kind])()
            if progress and (done % 5 == 0 or done == total):
                progress(done, total, f"{writer.events:,} events")
        while size == "large" and writer.events < LARGE_MIN_EVENTS:
            bulk.run()
            total += 1
            if progress:
                progress(total, total, f"{writer.events:,} events")
        add_policy_run(writer, operator)
        summary = summarize(writer, target, size, seed)
    finally:
        writer.close()
    summary["seconds"] = round(time.monotonic() - started, 2)
    summary["bytes"] = sum(
        f.stat().st_size for f in (target, target.with_name(target.name + "-wal")) if f.exists()
    )
    return summary


def has_no_runs(path: Path) -> bool:
    """True for a Proctor journal that holds no run yet (read-only look)."""
    from proctor.core import Actor, Journal, errors

    try:
        journal = Journal.open(path, actor=Actor.agent("demo-builder"), read_only=True)
    except errors.ProctorError:
        return False
    try:
        return journal.runs.count() == 0
    finally:
        journal.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m proctor.sim.demo PATH [--seed K] [--start-time T] [--fill]``: build a demo
    journal, printing ``progress DONE TOTAL`` lines and a final ``done {summary}`` line (the
    protocol ``proctor demo``'s desk reads to show its progress)."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m proctor.sim.demo", allow_abbrev=False)
    parser.add_argument("path", type=Path)
    parser.add_argument("--size", choices=("small", "large"), default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start-time", type=float)
    parser.add_argument(
        "--fill", action="store_true", help="the path may hold a journal without runs: fill it in"
    )
    parser.add_argument("--operator", help="the desk's operator: one of the demo's ops group")
    args = parser.parse_args(argv)

    def report(done: int, total: int, _message: str) -> None:
        print(f"progress {done} {total}", flush=True)

    summary = build_demo_journal(
        args.path,
        args.size,
        args.seed,
        progress=report,
        start_time=args.start_time,
        fill=args.fill,
        operator=args.operator,
    )
    print("done " + json.dumps(summary), flush=True)
    return 0


class BulkRuns:
    """Plain finished runs with ~100 events each, appended in one batch per run."""

    def __init__(self, writer: DemoWriter, seed: int) -> None:
        self.w = writer
        self.rng = random.Random(f"bulk:{seed}")
        self.pool = [self._payload(i) for i in range(400)]

    def _payload(self, i: int) -> tuple[str, Any]:
        rng = self.rng
        kind = rng.choice(
            ["model.request", "model.response", "tool.output", "log", "agent.thought"]
        )
        if kind == "model.request":
            return kind, {
                "model": rng.choice(content.MODELS),
                "prompt_tokens": rng.randint(800, 30_000),
                "messages": rng.randint(3, 60),
                "temperature": 0.2,
            }
        if kind == "model.response":
            return kind, {
                "completion_tokens": rng.randint(20, 2000),
                "stop_reason": rng.choice(["tool_use", "end_turn"]),
                "text": rng.choice(content.THOUGHTS),
                "latency_ms": rng.randint(200, 12_000),
            }
        if kind == "tool.output":
            path = rng.choice(sorted(content.SOURCES))
            return kind, {
                "tool": rng.choice(["fs.read", "search.code", "shell.exec"]),
                "path": path,
                "exit_code": rng.choice([0, 0, 0, 1]),
                "excerpt": content.SOURCES[path][: rng.randint(80, 240)],
            }
        if kind == "log":
            return kind, {
                "level": rng.choice(["debug", "info", "info", "warning"]),
                "message": rng.choice(
                    [
                        "retrying request after 429 (attempt 2/5)",
                        "cache hit for embeddings of docs/quickstart.md",
                        f"loaded {rng.randint(1, 900)} rows from the export",
                        "context window 78% full; summarising older turns",
                    ]
                ),
            }
        return kind, {"thought": rng.choice(content.THOUGHTS), "index": i}

    def run(self) -> None:
        w, rng = self.w, self.rng
        aj = w.agent()
        project, space = content.pick_place(rng)
        run = aj.runs.start(
            project,
            content.run_title(rng, project),
            space=space,
            metadata={"model": rng.choice(content.MODELS), "demo": True},
        )
        count = rng.randint(*BULK_EVENTS)
        aj.runs.append_events(run.id, [rng.choice(self.pool) for _ in range(count)])
        if rng.random() < 0.07:
            done = aj.runs.fail(run.id, "gave up after 5 failed tool calls")
        else:
            done = aj.runs.complete(run.id, {"summary": "done", "events": count})
        w.events += done.last_sequence
        w.clock.advance(rng.uniform(30, 600))


def summarize(writer: DemoWriter, path: Path, size: str, seed: int) -> dict:
    j = writer.operators[0]
    counts = j.inbox.counts()
    pending = {kind.value: counts.get(kind, 0) for kind in InboxKind}
    return {
        "path": str(path),
        "size": size,
        "seed": seed,
        "runs": j.runs.count(),
        "events": writer.events,
        "pending": pending,
        "pending_total": sum(pending.values()),
        "memory_entries": j.memory.count(),
        "audit_rows": j.audit.count(),
    }


if __name__ == "__main__":  # pragma: no cover - run as a child process by `proctor demo`
    raise SystemExit(main())
