"""Desk benchmarks (not run by pytest): start-up, agent commit -> row visible, click -> commit.

    uv run python tests/bench/desk_bench.py                 # builds/reuses a >=1M-event journal
    uv run python tests/bench/desk_bench.py --journal BIG.db --requests 200 --clicks 200

1. Start-up: a fresh process (``python -m proctor.gui.app PATH --bench-paint``) until the
   inbox has painted its first page; small journal vs the large one (nothing at start-up
   may grow with the journal).
2. Visible: an agent *process* files approval requests 50-150 ms apart and prints the wall
   time right after each commit; the desk notes when the row is inserted in the inbox model
   and when the table next paints. Latency = paint - commit.
3. Clicks: while simulated agent processes write continuously, the desk approves the current
   row (the registry's "inbox.approve", as the A key does) and waits for the commit to come
   back on the GUI thread; the next click follows. Latency = commit delivered - click.

Prints one table; times are milliseconds unless marked. Offscreen Qt platform.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
CACHE = Path(tempfile.gettempdir()) / "proctor-bench"
MARK = "bench-request"  # in every benchmark approval's reason (the click bench searches it)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary(values: list[float]) -> str:
    return (f"n={len(values)}  p50 {pct(values, 50):.1f}  p95 {pct(values, 95):.1f}  "
            f"p99 {pct(values, 99):.1f}  max {max(values):.1f}")


# ---------------------------------------------------------------- journals


def large_journal(path: Path | None) -> Path:
    if path is not None:
        return path
    target = CACHE / "large.db"
    if not target.exists():
        from proctor.sim.demo import build_demo_journal

        CACHE.mkdir(exist_ok=True)
        print(f"building a large demo journal at {target} (minutes) …", flush=True)
        build_demo_journal(target, size="large", seed=1,
                           progress=lambda d, t, m: print(f"  {d}/{t} runs, {m}", flush=True)
                           if d % 1000 == 0 else None)
    return target


def small_journal() -> Path:
    target = CACHE / "small.db"
    if not target.exists():
        from proctor.sim.demo import build_demo_journal

        CACHE.mkdir(exist_ok=True)
        build_demo_journal(target, size="small", seed=1)
    return target


def scratch_copy(path: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="desk-bench-"))
    target = folder / "journal.db"
    shutil.copyfile(path, target)
    return target


def journal_facts(path: Path) -> str:
    from proctor.core import Journal

    with Journal.open(path, read_only=True) as j:
        runs = j.runs.count()
        waiting = sum(j.inbox.counts().values())
        events = j.read(lambda c: c.exec_driver_sql("select count(*) from events").scalar())
    size = path.stat().st_size / 1e6
    return f"{events:,} events, {runs:,} runs, {waiting:,} waiting, {size:,.0f} MB"


# ---------------------------------------------------------------- 1. start-up


def startup_env() -> dict[str, str]:
    """A normal user's environment: bytecode is cached (an installed package has .pyc files;
    some shells set PYTHONDONTWRITEBYTECODE, which would recompile every module each start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PROCTOR_OPERATOR": "bench"}


def startup_seconds(path: Path) -> tuple[float, float]:
    """(wall seconds from spawn to inbox painted, CPU seconds the process used in total)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    out = subprocess.run([sys.executable, "-m", "proctor.gui.app", str(path), "--bench-paint"],
                         capture_output=True, text=True, timeout=120, check=True,
                         env=startup_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next(x for x in out.stdout.splitlines() if x.startswith("painted"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(line.split()[1]) - t0, cpu


# ---------------------------------------------------------------- agent processes


def requester(journal: str, count: int, low: float, high: float) -> int:
    """Agent role: file ``count`` approval requests ``low``-``high`` s apart; print commit times."""
    from proctor.core import Actor, Journal

    rng = random.Random(7)
    with Journal.open(journal, actor=Actor.agent("bench-agent")) as j:
        run = j.runs.start("bench", "desk latency run", agent="bench-agent")
        print("READY", flush=True)
        for n in range(count):
            if high:
                time.sleep(rng.uniform(low, high))
            a = j.approvals.request(run.id, {"tool": "deploy", "args": {"n": n}},
                                    reason=f"{MARK} {n}")
            print(f"C {a.id} {time.time():.6f}", flush=True)
    return 0


class Lines:
    """Collects a child process's stdout lines on a thread."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE,
                                     text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


# ---------------------------------------------------------------- the desk in-process


def open_desk(path: Path):  # noqa: ANN201 - (app, window, runner)
    from PySide6.QtCore import QSettings

    from proctor.core import Actor, Journal
    from proctor.gui.app import build_window, make_app
    from proctor.gui.settings import DeskSettings
    from proctor.gui.tasks import TaskRunner

    app = make_app()
    settings = DeskSettings(QSettings(str(path) + ".ini", QSettings.Format.IniFormat))
    runner = TaskRunner()
    journal = Journal.open(path, actor=Actor.operator("bench-operator"))
    window = build_window(journal, runner=runner, settings=settings, strict=False)
    window.resize(1400, 900)
    window.show()
    window.start()
    return app, window, runner


def run_until(app, done, timeout: float) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() >= deadline:
            return False
        app.processEvents()
        time.sleep(0.0005)
    return True


def ready(inbox) -> bool:  # noqa: ANN001
    """The current row is an approval nobody decided yet."""
    item = inbox.current_item()
    return item is not None and item.kind.value == "approval" \
        and f"approval:{item.id}" not in inbox.decided \
        and not inbox.decider.busy(f"approval:{item.id}")


def bench_visible(path: Path, requests: int) -> list[float]:
    from PySide6.QtCore import QEvent, QObject

    from proctor.gui.widgets.paged_model import KEY_ROLE

    app, window, runner = open_desk(path)
    model, table = window.inbox.model, window.inbox.table
    run_until(app, lambda: model.has_loaded, 30)
    inserted: dict[str, float] = {}
    painted: dict[str, float] = {}

    def on_rows(_parent, first, last) -> None:  # noqa: ANN001
        now = time.time()
        for row in range(first, last + 1):
            inserted.setdefault(str(model.index(row, 0).data(KEY_ROLE)), now)

    class PaintSpy(QObject):
        def eventFilter(self, _obj, event) -> bool:  # noqa: ANN001, N802
            if event.type() == QEvent.Type.Paint:
                now = time.time()
                for key in inserted.keys() - painted.keys():
                    painted[key] = now
            return False

    spy = PaintSpy()
    table.viewport().installEventFilter(spy)
    model.rowsInserted.connect(on_rows)
    agent = Lines(["--role", "requester", "--journal", str(path), "--count", str(requests),
                   "--low", "0.05", "--high", "0.15"])
    commits = lambda: [x.split() for x in agent.lines if x.startswith("C ")]  # noqa: E731
    run_until(app, lambda: len(commits()) >= requests
              and all(f"approval:{c[1]}" in painted for c in commits()), 120 + requests * 0.3)
    agent.stop()
    latencies = [(painted[f"approval:{aid}"] - float(t)) * 1000 for _, aid, t in commits()
                 if f"approval:{aid}" in painted]
    window.close()
    runner.shutdown()
    return latencies


def bench_clicks(path: Path, clicks: int, agents: int) -> list[float]:
    from proctor.sim.agents import start_agents

    filler = Lines(["--role", "requester", "--journal", str(path), "--count", str(clicks + 20),
                    "--low", "0", "--high", "0"])
    filler.proc.wait()
    sim = start_agents(path, agents=agents, rate=4.0, seed=3)
    app, window, runner = open_desk(path)
    inbox = window.inbox
    run_until(app, lambda: inbox.model.has_loaded, 30)
    inbox.filters.search.setText(MARK)  # only the filler's approvals (no expiry)
    inbox.filters._emit()
    run_until(app, lambda: inbox.model.rowCount() >= clicks and not inbox.model.is_loading(), 60)
    latencies: list[float] = []
    state = {"t0": 0.0, "done": False}

    def on_done(_key: str, _result: object) -> None:
        latencies.append((time.perf_counter() - state["t0"]) * 1000)
        state["done"] = True

    def on_refused(_key: str, exc: object) -> None:
        state["done"] = True
        print(f"  refused: {exc}", flush=True)

    inbox.decider.done.connect(on_done)
    inbox.decider.refused.connect(on_refused)
    for _ in range(clicks):
        if not run_until(app, lambda: ready(inbox), 10):
            item = inbox.current_item()
            print(f"  no approval to click: current {item and item.id}, rows "
                  f"{inbox.model.rowCount()}, decided {len(inbox.decided)}, "
                  f"pinned {inbox.pinned}", flush=True)
            break
        state["done"] = False
        state["t0"] = time.perf_counter()
        window.registry.trigger("inbox.approve")
        run_until(app, lambda: state["done"], 30)
    sim.stop()
    window.close()
    runner.shutdown()
    return latencies


# ---------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--journal", type=Path, help="a large journal (default: build/reuse one)")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--clicks", type=int, default=200)
    p.add_argument("--agents", type=int, default=3, help="simulated agents during clicks")
    p.add_argument("--startups", type=int, default=3)
    p.add_argument("--only", default="startup,visible,clicks",
                   help="comma-separated parts to run (default: all)")
    p.add_argument("--role", help=argparse.SUPPRESS)
    p.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--low", type=float, default=0.05, help=argparse.SUPPRESS)
    p.add_argument("--high", type=float, default=0.15, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.role == "requester":
        return requester(str(a.journal), a.count, a.low, a.high)
    big, small = large_journal(a.journal), small_journal()
    print(f"large journal: {journal_facts(big)}")
    print(f"small journal: {journal_facts(small)}", flush=True)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    rows = []
    parts = set(a.only.split(","))
    if "startup" in parts:
        rows += startup_rows(small, big, a.startups)
    if "visible" in parts:
        visible = bench_visible(scratch_copy(big), a.requests)
        rows.append(("agent commit -> row painted (ms)", summary(visible)))
        print(rows[-1], flush=True)
    if "clicks" in parts:
        clicks = bench_clicks(scratch_copy(big), a.clicks, a.agents)
        rows.append((f"click -> commit, {a.agents} agents writing (ms)", summary(clicks)))
    print("\n| measure | result |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


def startup_rows(small: Path, big: Path, count: int) -> list[tuple[str, str]]:
    rows = []
    startup_seconds(small)  # warm: bytecode written, files in the page cache
    for name, path in (("small", small), ("large", big)):
        runs = [startup_seconds(path) for _ in range(count)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        rows.append((f"start-up to inbox painted, {name} journal (s)",
                     f"wall {', '.join(f'{t:.2f}' for t in walls)} (median "
                     f"{statistics.median(walls):.2f}); CPU of the whole process median "
                     f"{statistics.median(cpus):.2f}"))
        print(rows[-1], flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
