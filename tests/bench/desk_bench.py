"""Desk benchmarks (not run by pytest): start-up, agent commit -> row visible, click -> commit.

    uv run python tests/bench/desk_bench.py                 # builds/reuses a >=1M-event journal
    uv run python tests/bench/desk_bench.py --journal BIG.db --requests 200 --clicks 200

1. Start-up: a fresh process (``python -m proctor.gui.shell.app PATH --bench-paint``) until the
   inbox has painted its first page; small journal vs the large one (nothing at start-up
   may grow with the journal).
2. Visible: an agent *process* files approval requests 50-150 ms apart and prints the wall
   time right after each commit; the desk notes when the row is inserted in the inbox model
   and when the table next paints. Latency = paint - commit.
3. Clicks: while agent processes write continuously (``--agents``, each appending a run event
   every 10-30 ms in its own transaction: about 50 writes/s each), the desk approves the current
   row (the registry's "inbox.approve", as the A key does) and waits for the commit to come
   back on the GUI thread; the next click follows. Latency = commit delivered - click.

Prints one table; times are milliseconds unless marked. Offscreen Qt platform.

``run(ctx)`` is suite "desk" of tests/bench/run.py: the same three figures in a child process
(``--figures OUT``), 4 writing agents during the clicks, each against the same SQL alone.
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
    return (
        f"n={len(values)}  p50 {pct(values, 50):.1f}  p95 {pct(values, 95):.1f}  "
        f"p99 {pct(values, 99):.1f}  max {max(values):.1f}"
    )


# ---------------------------------------------------------------- journals


def large_journal(path: Path | None) -> Path:
    if path is not None:
        return path
    target = CACHE / "large.db"
    if not target.exists():
        from proctor.sim.demo import build_demo_journal

        CACHE.mkdir(exist_ok=True)
        print(f"building a large demo journal at {target} (minutes) …", flush=True)
        build_demo_journal(
            target,
            size="large",
            seed=1,
            progress=lambda d, t, m: (
                print(f"  {d}/{t} runs, {m}", flush=True) if d % 1000 == 0 else None
            ),
        )
    return target


def small_journal() -> Path:
    target = CACHE / "small.db"
    if not target.exists():
        from proctor.sim.demo import build_demo_journal

        CACHE.mkdir(exist_ok=True)
        build_demo_journal(target, size="small", seed=1)
    return target


def scratch_copy(path: Path, under: Path | None = None) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="desk-bench-", dir=under))
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
    out = subprocess.run(
        [sys.executable, "-m", "proctor.gui.shell.app", str(path), "--bench-paint"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=startup_env(),
    )
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
            a = j.approvals.request(
                run.id, {"tool": "deploy", "args": {"n": n}}, reason=f"{MARK} {n}"
            )
            print(f"C {a.id} {time.time():.6f}", flush=True)
    return 0


def writer(journal: str, low: float, high: float) -> int:
    """Agent role: append run events (a ~300-byte payload) ``low``-``high`` s apart, one per
    transaction, until killed; print a line per 50 written (the desk bench's writing agents)."""
    from proctor.core import Actor, Journal

    rng = random.Random(os.getpid())
    with Journal.open(journal, actor=Actor.agent(f"bench-writer-{os.getpid()}")) as j:
        run = j.runs.start("bench", "desk bench writer", agent="bench-writer")
        print("READY", flush=True)
        n = 0
        while True:
            time.sleep(rng.uniform(low, high))
            j.runs.append_event(run.id, "tool.output", {"n": n, "text": "x" * 280})
            n += 1
            if n % 50 == 0:
                print(f"W {n}", flush=True)


class Lines:
    """Collects a child process's stdout lines on a thread."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True
        )
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


def open_desk(path: Path, before_start=None):  # (app, window, runner)
    from PySide6.QtCore import QSettings

    from proctor.core import Actor, Journal
    from proctor.gui.infra.settings import DeskSettings
    from proctor.gui.infra.tasks import TaskRunner
    from proctor.gui.shell.app import LOCK_POLL_S, build_window, make_app

    app = make_app()
    settings = DeskSettings(QSettings(str(path) + ".ini", QSettings.Format.IniFormat))
    runner = TaskRunner()
    # as the desk opens it (gui/shell/app.py open_for_desk, without the signing key): its
    # watcher checkpoints the -wal, and its writes poll for an agent's write lock
    journal = Journal.open(
        path,
        actor=Actor.operator("bench-operator"),
        autocheckpoint=False,
        lock_poll=LOCK_POLL_S,
        lock_patience=0.0,
    )
    window = build_window(journal, runner=runner, settings=settings, strict=False)
    window.resize(1400, 900)
    window.show()
    if before_start is not None:
        before_start(journal)
    window.start()
    return app, window, runner


def run_until(app, done, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() >= deadline:
            return False
        app.processEvents()
        time.sleep(0.0005)
    return True


def ready(inbox) -> bool:
    """The current row is an approval nobody decided yet, and it has been on screen long
    enough for a decision on it to count (gui/decide/settle.py: the desk advanced to it, so
    a click sooner would be held, not decided)."""
    item = inbox.current_item()
    key = f"approval:{item.id}" if item is not None else ""
    return (
        item is not None
        and item.kind.value == "approval"
        and key not in inbox.decided
        and not inbox.decider.busy(key)
        and not inbox.settle.too_soon(key)
    )


def bench_visible(path: Path, requests: int, floors: list[float] | None = None) -> list[float]:
    """Latencies (ms); with ``floors``, also appends to it, per request, the ms the read SQL
    the desk finished between the commit and the paint takes alone (raw sqlite3)."""
    from gui_bench import ReadRecorder
    from PySide6.QtCore import QEvent, QObject

    from proctor.gui.widgets.paged_model import KEY_ROLE

    hooked: dict[str, ReadRecorder] = {}

    def record(journal) -> None:
        hooked["r"] = ReadRecorder([journal._writer, journal._reader])

    app, window, runner = open_desk(path, before_start=record if floors is not None else None)
    model, table = window.inbox.model, window.inbox.table
    run_until(app, lambda: model.has_loaded, 30)
    inserted: dict[str, float] = {}
    painted: dict[str, float] = {}

    def on_rows(_parent, first, last) -> None:
        now = time.time()
        for row in range(first, last + 1):
            inserted.setdefault(str(model.index(row, 0).data(KEY_ROLE)), now)

    class PaintSpy(QObject):
        def eventFilter(self, _obj, event) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                now = time.time()
                for key in inserted.keys() - painted.keys():
                    painted[key] = now
            return False

    spy = PaintSpy()
    table.viewport().installEventFilter(spy)
    model.rowsInserted.connect(on_rows)
    agent = Lines(
        [
            "--role",
            "requester",
            "--journal",
            str(path),
            "--count",
            str(requests),
            "--low",
            "0.05",
            "--high",
            "0.15",
        ]
    )
    commits = lambda: [x.split() for x in agent.lines if x.startswith("C ")]  # noqa: E731
    if "r" in hooked:
        hooked["r"].on = True
    run_until(
        app,
        lambda: (
            len(commits()) >= requests and all(f"approval:{c[1]}" in painted for c in commits())
        ),
        120 + requests * 0.3,
    )
    agent.stop()
    latencies = [
        (painted[f"approval:{aid}"] - float(t)) * 1000
        for _, aid, t in commits()
        if f"approval:{aid}" in painted
    ]
    window.close()
    runner.shutdown()
    if "r" in hooked:
        from gui_bench import reader, replay_reads

        conn = reader(path)
        floors += [
            replay_reads(conn, hooked["r"].between(float(t), painted[f"approval:{aid}"]))
            for _, aid, t in commits()
            if f"approval:{aid}" in painted
        ]
        conn.close()
    return latencies


def bench_clicks(
    path: Path, clicks: int, agents: int, floors: list[float] | None = None
) -> list[float]:
    """Latencies (ms); with ``floors``, also appends to it, per click, the ms the desk's
    write statements for that click take alone: replayed by raw sqlite3 (same pragmas, one
    BEGIN IMMEDIATE ... COMMIT per desk transaction) on a copy taken before the clicks."""

    filler = Lines(
        [
            "--role",
            "requester",
            "--journal",
            str(path),
            "--count",
            str(clicks + 20),
            "--low",
            "0",
            "--high",
            "0",
        ]
    )
    filler.proc.wait()
    copy = backup(path, path.with_name("before-clicks.db")) if floors is not None else None
    # the agents writing meanwhile: each appends an event every 10-30 ms (50/s), one
    # transaction each, so the desk's clicks contend for the write lock and its feed moves
    writers = [
        Lines(["--role", "writer", "--journal", str(path), "--low", "0.01", "--high", "0.03"])
        for _ in range(agents)
    ]
    hooked: dict[str, object] = {}

    def record(journal) -> None:
        from bench_proctor import Recorder

        hooked["r"] = Recorder([journal])

    app, window, runner = open_desk(path, before_start=record if floors is not None else None)
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
            print(
                f"  no approval to click: current {item and item.id}, rows "
                f"{inbox.model.rowCount()}, decided {len(inbox.decided)}, "
                f"pinned {inbox.pinned}",
                flush=True,
            )
            break
        state["done"] = False
        if "r" in hooked:
            hooked["r"].new_unit()
        state["t0"] = time.perf_counter()
        window.registry.trigger("inbox.approve")
        run_until(app, lambda: state["done"], 30)
    for w in writers:
        w.stop()
    written = sum(
        int(line.split()[1]) for w in writers for line in w.lines[-1:] if line.startswith("W ")
    )
    print(
        f"  {agents} writing agents appended about {written:,} events during the clicks", flush=True
    )
    window.close()
    runner.shutdown()
    if copy is not None and "r" in hooked:
        floors += replay_writes(copy, hooked["r"].units)
    return latencies


def backup(path: Path, target: Path) -> Path:
    """A consistent copy of a journal in WAL mode (sqlite3's backup API)."""
    import sqlite3

    src, dst = sqlite3.connect(str(path)), sqlite3.connect(str(target))
    src.backup(dst)
    dst.execute("PRAGMA journal_mode = WAL")
    src.close()
    dst.close()
    return target


def replay_writes(path: Path, units: list[list[dict]]) -> list[float]:
    """Per unit, ms to replay its write transactions by raw sqlite3 on ``path``."""
    from bench_floor import compile_stream, connect, run_txns

    conn = connect(str(path))
    out = []
    for txns in compile_stream(units, "writes"):
        if not txns:
            continue
        started = time.perf_counter()
        run_txns(conn, txns)
        out.append((time.perf_counter() - started) * 1000)
    conn.close()
    return out


# ---------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--journal", type=Path, help="a large journal (default: build/reuse one)")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--clicks", type=int, default=200)
    p.add_argument("--agents", type=int, default=3, help="simulated agents during clicks")
    p.add_argument("--startups", type=int, default=3)
    p.add_argument(
        "--only",
        default="startup,visible,clicks",
        help="comma-separated parts to run (default: all)",
    )
    p.add_argument(
        "--figures",
        type=Path,
        help="run.py's mode: measure, then save the figures (JSON) to this file",
    )
    p.add_argument("--quick", action="store_true", help="with --figures: the small journal")
    p.add_argument("--work", type=Path, help="with --figures: folder for the scratch copies")
    p.add_argument("--role", help=argparse.SUPPRESS)
    p.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--low", type=float, default=0.05, help=argparse.SUPPRESS)
    p.add_argument("--high", type=float, default=0.15, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.role == "requester":
        return requester(str(a.journal), a.count, a.low, a.high)
    if a.role == "writer":
        return writer(str(a.journal), a.low, a.high)
    if a.figures is not None:
        from gui_bench import save_figures

        save_figures(a.figures, figures(a))
        return 0
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
        rows.append(
            (
                f"start-up to inbox painted, {name} journal (s)",
                f"wall {', '.join(f'{t:.2f}' for t in walls)} (median "
                f"{statistics.median(walls):.2f}); CPU of the whole process median "
                f"{statistics.median(cpus):.2f}",
            )
        )
        print(rows[-1], flush=True)
    return rows


# ---------------------------------------------------------------- run.py's suite "desk"

SUITE = "desk"
SIZES = {
    True: {"requests": 20, "clicks": 20, "startups": 3},
    False: {"requests": 200, "clicks": 200, "startups": 5},
}
AGENTS = 4  # writing agent processes during the clicks (the figure)


def run(ctx):  # (BenchContext) -> list[Figure]
    """Suite "desk" for run.py: measured in an offscreen child process (Qt stays out of the
    process that measures the core); --quick uses the small demo journal."""
    from gui_bench import spawn_figures

    sizes = SIZES[ctx.quick]
    args = [
        "--requests",
        str(sizes["requests"]),
        "--clicks",
        str(sizes["clicks"]),
        "--startups",
        str(sizes["startups"]),
        "--agents",
        str(AGENTS),
        "--work",
        str(ctx.fresh("desk-work")),
    ]
    return spawn_figures(
        "desk_bench.py",
        args + (["--quick"] if ctx.quick else []),
        ctx,
        timeout=600 if ctx.quick else 3600,
    )


def figures(a: argparse.Namespace) -> list:
    """The desk figures, each against the same SQL alone (raw sqlite3, no Qt)."""
    from gui_bench import desk_figure

    journal = a.journal or (small_journal() if a.quick else large_journal(None))
    facts = journal_facts(journal)
    print(f"desk suite on {journal}: {facts}", flush=True)
    out = []
    try:
        out.append(startup_figure(journal, facts, a.startups))
    except (StopIteration, subprocess.SubprocessError) as err:  # one broken figure must
        print(f"start-up figure failed: {err!r}", flush=True)  # not hide the other two
    visible_floor: list[float] = []
    visible = bench_visible(scratch_copy(journal, a.work), a.requests, visible_floor)
    out.append(
        desk_figure(
            SUITE,
            "request_visible",
            "new request → row painted in the inbox",
            "an agent process "
            f"files approval requests 50-150 ms apart ({facts}); time from its commit to the "
            "inbox table's next paint showing the row (change feed poll + inbox refresh + paint)",
            "request",
            visible,
            visible_floor,
            notes=[
                "desk figures: floor = the read statements the desk finished between the "
                "agent's commit and the paint, replayed alone by raw sqlite3 (the desk's wait "
                "for its change-feed poll is not in the floor)."
            ],
        )
    )
    click_floor: list[float] = []
    clicks = bench_clicks(scratch_copy(journal, a.work), a.clicks, a.agents, click_floor)
    out.append(
        desk_figure(
            SUITE,
            "click_commit",
            f"click Approve → committed, {a.agents} agents writing",
            f"the desk approves the current row (registry 'inbox.approve', as the A key) while "
            f"{a.agents} simulated agent processes write; time until the commit is back on the "
            "GUI thread",
            "click",
            clicks,
            click_floor,
            notes=[
                "click floor = the desk's write statements for each click, one BEGIN "
                "IMMEDIATE … COMMIT per desk transaction (WAL, synchronous=FULL), replayed by "
                "raw sqlite3 on a copy taken before the clicks, without the agents."
            ],
        )
    )
    return out


def startup_figure(path: Path, facts: str, count: int):  # Figure
    """Fresh process to inbox painted vs a fresh process running the same reads raw."""
    import pickle

    from gui_bench import ReadRecorder, desk_figure, floor_process_ms

    hooked: dict[str, ReadRecorder] = {}

    def record(journal) -> None:
        hooked["r"] = ReadRecorder([journal._writer, journal._reader])
        hooked["r"].on = True

    app, window, runner = open_desk(path, before_start=record)
    run_until(app, lambda: window.inbox.model.has_loaded, 60)
    window.inbox.table.viewport().repaint()
    statements = [(sql, params) for _, sql, params in hooked["r"].take()]
    window.close()
    runner.shutdown()
    saved = Path(tempfile.mkdtemp(prefix="desk-bench-")) / "startup.pickle"
    saved.write_bytes(pickle.dumps(statements))
    startup_seconds(path)  # warm: bytecode written, files in the page cache
    floor_process_ms(path, saved)
    runs = [startup_seconds(path) for _ in range(count)]
    floors = [floor_process_ms(path, saved) for _ in range(count)]
    shutil.rmtree(saved.parent, ignore_errors=True)
    figure = desk_figure(
        SUITE,
        "startup_inbox",
        "start-up → inbox first page painted (fresh process)",
        f"`python -m proctor.gui.shell.app PATH --bench-paint` from spawn until the inbox has painted "
        f"its first page ({facts}); CPU ms = the whole process",
        "start",
        [w * 1000 for w, _ in runs],
        floors,
        notes=[
            f"start-up floor = a fresh Python process running, by raw sqlite3, the "
            f"{len(statements)} read statements the desk had finished when the inbox "
            f"painted (no Qt, no imports of Proctor)."
        ],
    )
    figure.systems["proctor"].cpu_ms_per_unit = statistics.median(c * 1000 for _, c in runs)
    return figure


if __name__ == "__main__":
    sys.exit(main())
