"""First-hour benchmarks (issue 23; not run by pytest, never asserted by a test).

    uv run python tests/bench/first_hour_bench.py                      # both parts
    uv run python tests/bench/first_hour_bench.py window --reps 5
    uv run python tests/bench/first_hour_bench.py overview --events 1000000
    uv run python tests/bench/first_hour_bench.py overview --journal BIG.db

1. ``window``: the window comes first. A fresh process runs ``proctor demo`` (offscreen,
   ``--no-agents``, a scratch folder) and reports when the desk's window is shown (the demo's
   own ``on_window`` hook, called right after ``window.show()``) and when the demo journal is
   full behind it (``DemoFill.filled``). Side by side, in alternating rounds of the same run:
   a bare ``python -c 'import PySide6.QtWidgets'`` and a bare Qt window (QApplication + a
   shown QWidget). Target: window within 3 s.
2. ``overview``: ``journal.overview.facts()`` (every chart of the Overview page, one read
   transaction) on a big journal and on the small demo journal, with a project and an agent
   filter; side by side with the inbox's counts and the runs page's first page on the same
   journal. The big journal is the small demo (recent clock, so its decisions fall in the
   24-hour window) grown through the public API to ``--events`` (default 1M) by the scale
   suite's populator (bench_scale.Populator); it is cached by size in the temp folder.

Prints the load average before and after: other work on the machine skews every figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

CACHE = Path(tempfile.gettempdir()) / "proctor-bench"
BARE_IMPORT = "import PySide6.QtWidgets"
BARE_WINDOW = (
    "import sys, time\n"
    "from PySide6.QtWidgets import QApplication, QWidget\n"
    "app = QApplication([])\n"
    "w = QWidget(); w.resize(1360, 860); w.show(); w.repaint()\n"
    "print(f'shown {time.time():.6f}', flush=True)\n"
)


def load() -> str:
    return "loadavg " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def child_env(scratch: Path) -> dict[str, str]:
    """Offscreen, bytecode cached like an installed package, settings in a scratch folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **env,
        "QT_QPA_PLATFORM": "offscreen",
        "PROCTOR_OPERATOR": "bench",
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_STATE_HOME": str(scratch / "state"),
    }


def stats(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.2f} s  min {min(values):6.2f}  "
        f"max {max(values):6.2f}  (n={len(values)})"
    )


# ---------------------------------------------------------------- 1. window first


def demo_child(folder: str) -> int:
    """In the measured process: ``proctor demo``, printing when the window is shown and when
    the journal is full, then quitting."""
    from PySide6.QtWidgets import QApplication

    import proctor.gui.shell.app as app
    from proctor.cli import main
    from proctor.gui.shell import demo_fill

    run_desk = app.run_desk

    def measured(path, **kw):
        inner = kw["on_window"]

        def on_window(window):
            window.repaint()
            print(f"shown {time.time():.6f}", flush=True)
            inner(window)

        kw["on_window"] = on_window
        return run_desk(path, **kw)

    start = demo_fill.DemoFill.start

    def fill_start(self):
        def filled() -> None:
            print(f"filled {time.time():.6f}", flush=True)
            QApplication.instance().quit()

        self.filled.connect(filled)
        self.failed.connect(
            lambda why: (print(f"failed {why}", flush=True), QApplication.instance().quit())
        )
        start(self)

    app.run_desk = measured
    demo_fill.DemoFill.start = fill_start
    return main(["demo", "--no-agents", "--dir", folder])


def spawn(argv: list[str], env: dict[str, str]) -> tuple[float, dict[str, float]]:
    """(seconds from spawn to exit, {mark: seconds from spawn}) of one child process."""
    t0 = time.time()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    end = time.time() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{argv[:3]} exited {out.returncode}: {out.stderr[-2000:]}")
    marks = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("shown", "filled"):
            marks[parts[0]] = float(parts[1]) - t0
    return end, marks


def window_first(reps: int) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="first-hour-"))
    env = child_env(scratch)
    py = sys.executable
    spawn([py, "-c", BARE_IMPORT], env)  # warm: bytecode and the page cache
    spawn([py, str(Path(__file__)), "--demo-child", str(scratch / "demos")], env)
    rows: dict[str, list[float]] = {
        "import": [],
        "bare_window": [],
        "demo_shown": [],
        "demo_filled": [],
    }
    try:
        for _ in range(reps):  # alternating: a change in load hits every column alike
            rows["import"].append(spawn([py, "-c", BARE_IMPORT], env)[0])
            rows["bare_window"].append(spawn([py, "-c", BARE_WINDOW], env)[1]["shown"])
            _, marks = spawn([py, str(Path(__file__)), "--demo-child", str(scratch / "demos")], env)
            rows["demo_shown"].append(marks["shown"])
            rows["demo_filled"].append(marks["filled"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base = statistics.median(rows["import"])
    bare = statistics.median(rows["bare_window"])
    shown = statistics.median(rows["demo_shown"])
    print("\n## Window first: `proctor demo` (offscreen, --no-agents) vs bare Qt\n")
    print(f"  python -c '{BARE_IMPORT}' (to exit)   {stats(rows['import'])}")
    print(f"  bare Qt window shown                     {stats(rows['bare_window'])}")
    print(f"  proctor demo: window shown               {stats(rows['demo_shown'])}")
    print(f"  proctor demo: journal full behind it     {stats(rows['demo_filled'])}")
    print(
        f"  ratio demo shown / bare import: {shown / base:.2f}x; "
        f"demo shown / bare window: {shown / bare:.2f}x; "
        f"target window <= 3 s: {'met' if shown <= 3.0 else 'NOT met'} (p50 {shown:.2f} s)"
    )


# ---------------------------------------------------------------- 2. overview read


def big_journal(events: int) -> Path:
    """The small demo (recent clock) grown to ``events`` events through the public API."""
    target = CACHE / f"overview-{events}.db"
    if target.exists():
        return target
    from bench_scale import Populator

    from proctor.sim.demo import build_demo_journal, recent_start

    CACHE.mkdir(exist_ok=True)
    partial = target.with_name(target.name + ".building")
    for leftover in CACHE.glob(partial.name + "*"):
        leftover.unlink()
    started = time.monotonic()
    print(f"building {target} ({events:,} events; minutes at 1M) …", file=sys.stderr, flush=True)
    build_demo_journal(partial, size="small", seed=1, start_time=recent_start())
    grower = Populator(str(partial))
    try:
        step = max(10_000, events // 20)
        while grower.events < events:
            grower.grow_to(min(events, grower.events + step))
            print(
                f"  {grower.events:,} events, {time.monotonic() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        grower.close()
    for suffix in ("-wal", "-shm"):
        extra = partial.with_name(partial.name + suffix)
        if extra.exists():
            extra.rename(target.with_name(target.name + suffix))
    partial.rename(target)
    print(f"built in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return target


def small_journal() -> Path:
    target = CACHE / "overview-small.db"
    if not target.exists():
        from proctor.sim.demo import build_demo_journal, recent_start

        CACHE.mkdir(exist_ok=True)
        build_demo_journal(target, size="small", seed=1, start_time=recent_start())
    return target


def timed_ms(call, reps: int) -> list[float]:
    call()  # warm: the page cache and SQLite's statement cache
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        out.append((time.perf_counter() - t) * 1000)
    return out


def overview_reads(events: int, journal: Path | None, reps: int) -> None:
    from proctor.core import Journal

    paths = {"small demo": small_journal(), "big": journal or big_journal(events)}
    results: dict[str, dict[str, list[float]]] = {}
    facts_of: dict[str, str] = {}
    opened = {name: Journal.open(p, read_only=True) for name, p in paths.items()}
    try:
        for name, j in opened.items():
            n = j.read(lambda c: c.exec_driver_sql("select count(*) from events").scalar())
            runs = j.runs.count()
            facts = j.overview.facts()
            facts_of[name] = (
                f"{n:,} events, {runs:,} runs; {len(facts.projects)} projects, "
                f"{len(facts.agents)} agents, {facts.manual} manual and "
                f"{facts.automatic} automatic decisions in the window"
            )
            project, agent = facts.projects[0], facts.agents[0]
            results[name] = {
                "overview.facts()": [],
                f"overview.facts(project={project!r})": [],
                f"overview.facts(agent={agent!r})": [],
                "inbox.counts()": [],
                "runs.list(limit=50)": [],
            }
            calls = {
                "overview.facts()": lambda j=j: j.overview.facts(),
                f"overview.facts(project={project!r})": lambda j=j, p=project: j.overview.facts(
                    project=p
                ),
                f"overview.facts(agent={agent!r})": lambda j=j, a=agent: j.overview.facts(agent=a),
                "inbox.counts()": lambda j=j: j.inbox.counts(),
                "runs.list(limit=50)": lambda j=j: j.runs.list(limit=50),
            }
            for _round in range(reps):  # the reads take turns within each round
                for label, call in calls.items():
                    results[name][label].extend(timed_ms(call, 1))
    finally:
        for j in opened.values():
            j.close()
    print(
        f"\n## Overview read (`journal.overview.facts()`, p50 ms over {reps} rounds, 1 process)\n"
    )
    for name in paths:
        print(f"  {name}: {facts_of[name]}")
    for name, reads in results.items():
        facts_p50 = statistics.median(reads["overview.facts()"])
        print(f"\n  {name}:")
        for label, values in reads.items():
            p50 = statistics.median(values)
            print(
                f"    {label:<48} p50 {p50:8.2f}  max {max(values):8.2f}  "
                f"facts/this {facts_p50 / p50:6.2f}x"
            )
    small = statistics.median(results["small demo"]["overview.facts()"])
    big = statistics.median(results["big"]["overview.facts()"])
    print(f"\n  growth: overview.facts() big / small demo = {big / small:.2f}x")


# ---------------------------------------------------------------- command


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", nargs="?", choices=("window", "overview", "all"), default="all")
    p.add_argument("--reps", type=int, default=5, help="rounds per figure (default 5)")
    p.add_argument(
        "--events",
        type=int,
        default=1_000_000,
        help="events in the big journal (default 1,000,000)",
    )
    p.add_argument("--journal", type=Path, help="use this big journal instead of building one")
    p.add_argument("--demo-child", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.demo_child:
        return demo_child(args.demo_child)
    print(f"first-hour bench: {load()} at start", flush=True)
    if args.part in ("window", "all"):
        window_first(args.reps)
    if args.part in ("overview", "all"):
        overview_reads(args.events, args.journal, max(args.reps, 20))
    print(f"\n{load()} at end", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
