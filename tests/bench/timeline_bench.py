"""Runs page and run timeline benchmarks (not run by pytest), each against its floor.

    uv run python tests/bench/timeline_bench.py --journal /tmp/large.db
    uv run python tests/bench/timeline_bench.py --journal /tmp/large.db --shots docs/screenshots

The large journal (``proctor demo-journal PATH --size large``) is copied, and one run with
100 000 events is imported into the copy. Then, in one offscreen desk:

1. runs page first paint: the run list queried again until its rows are painted;
2. open the 100k-event run: the run detail shown until the visible event rows are loaded
   and painted (header, facts, visual timeline and type counts load alongside);
3. scroll from top to bottom: page by page through all 100 000 rows, each page loaded and
   painted before the next;
4. filter by event type: one type chosen until the filtered rows are painted.

The floor of each figure is the same SQL alone: every statement the desk had completed
during the operation (recorded on the journal's read engine) replayed serially with raw
sqlite3, fetching every row. ratio = desk / floor. Median of --repeat runs (scrolls: one).
The scroll figures paint every position, so their desk time is mostly Qt painting.

``--events N`` sizes the big run; ``run(ctx)`` is suite "timeline" of tests/bench/run.py (a
child process with ``--figures OUT``; --quick: the small journal and a 10k-event run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

N_EVENTS = 100_000  # the big run's events (--events)
BIG = f"run_bench{N_EVENTS:016d}"


def set_events(count: int) -> None:
    global N_EVENTS, BIG
    N_EVENTS, BIG = count, f"run_bench{count:016d}"


# ---------------------------------------------------------------- recording the SQL


class Recorder:
    """Collects (sql, params) of the statements an engine *finished* while ``on``: the SQL
    the desk had done by the time the operation was on screen (reads still running for
    other panes, e.g. the facts tabs, are not part of the figure)."""

    def __init__(self, engine) -> None:  # a SQLAlchemy Engine
        from sqlalchemy import event

        self.on = False
        self.statements: list[tuple[str, object]] = []
        event.listen(engine, "after_cursor_execute", self._record)

    def _record(self, _conn, _cursor, sql, params, _context, _many) -> None:
        if self.on and "FROM changes" not in sql and not sql.startswith(("BEGIN", "PRAGMA")):
            self.statements.append((sql, params))

    def take(self) -> list[tuple[str, object]]:
        taken, self.statements = self.statements, []
        return taken


def floor_seconds(path: Path, statements: list[tuple[str, object]]) -> float:
    """The statements alone on a raw sqlite3 connection (one read transaction each)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    started = time.perf_counter()
    for sql, params in statements:
        conn.execute("BEGIN")
        conn.execute(sql, params).fetchall()
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


# ---------------------------------------------------------------- the desk


def wait(app, cond: Callable[[], bool], timeout: float = 120.0) -> None:
    """Run the event loop until ``cond()`` holds, checking every millisecond. The loop
    sleeps in Qt between checks (the GIL is free for the task runner's threads), as the
    desk's own event loop does; a busy Python loop here would slow the workers down."""
    from PySide6.QtCore import QEventLoop, QTimer

    if cond():
        return
    loop = QEventLoop()
    deadline = time.monotonic() + timeout
    failed = []

    def check() -> None:
        if cond():
            loop.quit()
        elif time.monotonic() > deadline:
            failed.append(True)
            loop.quit()

    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()
    if failed:
        raise TimeoutError("the desk did not get there in time")


def visible_rows_loaded(pane) -> bool:  # an EventsPane
    table, model = pane.table, pane.model
    if model.rowCount() == 0:
        return True
    top = table.rowAt(0)
    bottom = table.rowAt(table.viewport().height() - 1)
    bottom = model.rowCount() - 1 if bottom < 0 else bottom
    return top >= 0 and all(model.is_loaded(r) for r in range(top, bottom + 1))


def prepare(source: Path, work: Path) -> None:
    from proctor.core import Actor, Journal
    from proctor.core.ops.transfer import import_run
    from tests.gui.timeline_data import big_run_bundle

    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    print(f"copying {source} ({source.stat().st_size / 1e6:.0f} MB) …", flush=True)
    shutil.copy2(source, work)
    started = time.perf_counter()
    with Journal.open(work, actor=Actor.operator("bench")) as j:
        import_run(
            j,
            big_run_bundle(
                BIG,
                N_EVENTS,
                t0=time.time() - 3600,
                step=0.03,
                title=f"Bench: a run with {N_EVENTS:,} events",
            ),
            verify=False,
        )
    print(f"imported a {N_EVENTS:,}-event run in {time.perf_counter() - started:.1f} s", flush=True)


def open_window(path: Path):
    from PySide6.QtCore import QSettings

    from proctor.core import Actor, Journal
    from proctor.gui.infra.settings import DeskSettings
    from proctor.gui.infra.tasks import TaskRunner
    from proctor.gui.infra.theme import Theme, ThemeMode
    from proctor.gui.shell.app import build_window, make_app

    app = make_app()
    Theme(app, ThemeMode.LIGHT)
    journal = Journal.open(path, actor=Actor.operator("bench"))
    runner = TaskRunner()
    ini = Path(tempfile.gettempdir()) / "proctor-timeline-bench.ini"
    settings = DeskSettings(QSettings(str(ini), QSettings.Format.IniFormat))
    window = build_window(journal, runner=runner, settings=settings, strict=True)
    window.resize(1400, 900)
    window.show()
    window.start()
    wait(app, lambda: window.inbox.model.has_loaded)
    return app, window, journal, runner


# ---------------------------------------------------------------- figures


def runs_first_paint(app, window) -> None:
    page = window.runs
    page.show_list()
    page.list.apply_query()
    wait(
        app,
        lambda: page.model.has_loaded and not page.model.is_loading() and page.model.rowCount() > 0,
    )
    page.table.viewport().repaint()


def open_big_run(app, window) -> None:
    detail = window.runs.detail
    detail.run_id = None  # open afresh every time
    window.show_run(BIG)
    wait(app, lambda: detail.run is not None and detail.events.rowCount() == N_EVENTS)
    pane = detail.events_pane
    wait(app, lambda: visible_rows_loaded(pane))
    pane.table.viewport().repaint()


def settle(app, window) -> None:
    """Let the run detail's other reads (facts, timeline, density) finish."""
    runner = window.services.runner
    wait(app, lambda: runner.pending() == 0)


def scroll_all(app, window) -> None:
    pane = window.runs.detail.events_pane
    table, bar = pane.table, pane.table.verticalScrollBar()
    bar.setValue(0)
    page = max(1, bar.pageStep())
    value = 0
    while True:
        bar.setValue(value)
        wait(app, lambda: visible_rows_loaded(pane))
        table.viewport().repaint()
        if value >= bar.maximum():
            return
        value = min(value + page, bar.maximum())


def drag_all(app, window, positions: int = 200) -> None:
    """The scroll bar dragged from top to bottom: each position loaded and painted."""
    pane = window.runs.detail.events_pane
    bar = pane.table.verticalScrollBar()
    for n in range(positions + 1):
        bar.setValue(round(bar.maximum() * n / positions))
        wait(app, lambda: visible_rows_loaded(pane))
        pane.table.viewport().repaint()


def to_top(app, window) -> None:
    window.runs.detail.events_pane.table.verticalScrollBar().setValue(0)
    wait(app, lambda: visible_rows_loaded(window.runs.detail.events_pane))


def all_types(app, window) -> None:
    pane = window.runs.detail.events_pane
    pane.set_types(None)
    wait(app, lambda: pane.model.types is None and pane.model.rowCount() == N_EVENTS)


def filter_type(app, window) -> None:
    pane = window.runs.detail.events_pane
    pane.set_types(["log"])
    wait(app, lambda: pane.model.types == ["log"] and 0 < pane.model.rowCount() < N_EVENTS)
    wait(app, lambda: visible_rows_loaded(pane))
    pane.table.viewport().repaint()


def measure(
    app,
    window,
    recorder,
    path: Path,
    name: str,
    fn: Callable[..., object],
    repeat: int,
    before: Callable[..., object] | None = None,
) -> tuple[str, float, float, int, list[float], list[float]]:
    """Desk time of ``fn`` and the floor of the SQL it had sent by the time it was done:
    (name, median desk s, median floor s, statements, desk samples s, floor samples s)."""
    desk, floor, count = [], [], 0
    for n in range(repeat + 1):  # the first run warms caches and is not counted
        if before is not None:
            before(app, window)
        settle(app, window)
        recorder.take()
        recorder.on = True
        started = time.perf_counter()
        fn(app, window)
        elapsed = time.perf_counter() - started
        recorder.on = False
        statements = recorder.take()
        if n == 0 and repeat > 0:
            continue
        desk.append(elapsed)
        floor.append(floor_seconds(path, statements))
        count = len(statements)
    return name, statistics.median(desk), statistics.median(floor), count, desk, floor


class Clock:
    def __init__(self, start: float) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def at(self, offset: float, base: float) -> None:
        self.t = base + offset


def scenario_run(path: Path) -> str:
    """A refund run with every lane busy: a retried attempt, overlapping tool calls, a
    denied and an approved approval, an effect left ambiguous, an open question."""
    import contextlib

    from proctor.core import Actor, Journal, errors

    base = time.time() - 180
    clock = Clock(base)
    agent = Journal.open(path, actor=Actor.agent("billing-bot"), clock=clock)
    person = Journal.open(path, actor=Actor.operator("alice"), clock=clock)
    try:
        run = agent.runs.start(
            "billing-service",
            "Refund order #4411 and tell the customer",
            space="prod",
            agent="billing-bot",
        )
        for n in range(0, 170, 2):
            clock.at(n + 0.5, base)
            agent.runs.append_events(
                run.id,
                [("model.request", {"step": n}), ("log", {"message": f"thinking, step {n}"})],
            )
        clock.at(5, base)
        look = agent.runs.record_tool_call(run.id, "orders.lookup", {"order": 4411})
        clock.at(9, base)
        agent.runs.finish_tool_call(look.id, "succeeded", result={"total": 120.0})
        clock.at(12, base)
        pay = agent.runs.record_tool_call(
            run.id, "payments.refund", {"amount": 1200}, safety_class="financial"
        )
        clock.at(13, base)
        first = agent.approvals.request(
            run.id,
            {"tool": "payments.refund", "amount": 1200},
            reason="Refund the order",
            safety_class="financial",
            tool_call_id=pay.id,
        )
        clock.at(40, base)
        person.approvals.decide(
            first.id, False, expected_version=1, reason="1200 is ten times the order total"
        )
        clock.at(41, base)
        agent.runs.finish_tool_call(pay.id, "failed", error="denied")
        clock.at(46, base)
        agent.runs.start_attempt(run.id, "retry with the order total")
        clock.at(50, base)
        pay = agent.runs.record_tool_call(
            run.id, "payments.refund", {"amount": 120}, safety_class="financial"
        )
        clock.at(52, base)
        second = agent.approvals.request(
            run.id,
            {"tool": "payments.refund", "amount": 120},
            reason="Refund the order total",
            safety_class="financial",
            tool_call_id=pay.id,
        )
        clock.at(60, base)
        mail = agent.runs.record_tool_call(run.id, "email.draft", {"to": "customer"})
        clock.at(70, base)
        person.approvals.decide(second.id, True, expected_version=1, reason="matches")
        clock.at(71, base)
        key = f"refund:4411:{run.id[-6:]}"
        agent.approvals.consume_and_reserve(
            second.id, second.action_digest, key, owner="w", lease_seconds=20
        )
        clock.at(72, base)
        agent.effects.begin(key, owner="w")
        clock.at(78, base)
        agent.runs.finish_tool_call(mail.id, "succeeded", result={"draft": "d-1"})
        clock.at(100, base)
        with contextlib.suppress(errors.ProctorError):
            agent.effects.mark_ambiguous(key, "gateway timed out", owner="w")
        clock.at(101, base)
        agent.runs.finish_tool_call(pay.id, "outcome_unknown", error="gateway timed out")
        clock.at(110, base)
        agent.questions.ask(
            run.id,
            "question",
            "Did the customer get the refund? The gateway timed out after the charge was sent.",
        )
        clock.at(170, base)
        agent.runs.append_event(run.id, "log", {"message": "waiting for a person"})
        return run.id
    finally:
        agent.close()
        person.close()


def shots(app, window, folder: Path) -> None:
    """Screenshots: the run list, a failed run's detail, the visual timeline of a run with
    every lane busy (``scenario_run``)."""
    folder.mkdir(parents=True, exist_ok=True)
    from proctor.core.audit import timeline

    journal = window.journal.unguarded
    candidates = journal.runs.list(status=["failed"], limit=300).items
    if not candidates:
        return

    def variety(run_id: str) -> tuple[int, int]:
        spans = timeline.timeline(journal, run_id).spans
        return len({s.lane for s in spans}), len(spans)

    run = max(candidates, key=lambda r: variety(r.id))
    window.go("runs")
    window.runs.show_list()
    window.runs.list.apply_query()
    wait(app, lambda: window.runs.model.has_loaded and not window.runs.model.is_loading())
    settle(app, window)
    window.grab().save(str(folder / "runs.png"))
    window.show_run(run.id)
    detail = window.runs.detail
    wait(app, lambda: detail.facts is not None and detail.run is not None)
    settle(app, window)
    detail.show_last_event()
    wait(app, lambda: detail.events_pane.detail.shown is not None)
    wait(app, lambda: detail.timeline.view._density is not None)
    settle(app, window)
    window.grab().save(str(folder / "run-detail.png"))
    story = scenario_run(Path(str(window.journal.path)))
    window.show_run(story)
    wait(
        app, lambda: detail.facts is not None and detail.run is not None and detail.run.id == story
    )
    view = detail.timeline.view
    wait(
        app,
        lambda: (
            view.timeline is not None
            and view.timeline.run_id == story
            and view._density is not None
        ),
    )
    settle(app, window)
    ambiguous = next(b for b in view.bars if b.span.lane == "effect")
    view.set_hovered(ambiguous.span)
    detail.timeline.resize(1200, detail.timeline.preferred_height())
    detail.timeline.grab().save(str(folder / "visual-timeline.png"))
    print(f"screenshots in {folder}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--journal",
        type=Path,
        default=Path("/tmp/large.db"),
        help="the large demo journal (proctor demo-journal PATH --size large)",
    )
    p.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "proctor-timeline-bench.db"
    )
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--shots", type=Path, help="also save screenshots into this folder")
    p.add_argument("--reuse", action="store_true", help="reuse --work if it exists")
    p.add_argument("--no-figures", action="store_true", help="only the screenshots")
    p.add_argument("--events", type=int, default=N_EVENTS, help="events in the big run")
    p.add_argument("--positions", type=int, default=200, help="scroll bar drag positions")
    p.add_argument(
        "--figures",
        type=Path,
        help="run.py's mode: measure, then save the figures (JSON) to this file",
    )
    p.add_argument(
        "--size",
        choices=("small", "large"),
        help="with --figures: the cached demo journal to use instead of --journal",
    )
    args = p.parse_args(argv)
    set_events(args.events)
    if args.size:
        import desk_bench

        args.journal = (
            desk_bench.small_journal() if args.size == "small" else desk_bench.large_journal(None)
        )
    if not (args.reuse and args.work.exists()):
        if not args.journal.exists():
            print(
                f"no journal at {args.journal}; build one with "
                "`uv run proctor demo-journal PATH --size large`",
                file=sys.stderr,
            )
            return 2
        prepare(args.journal, args.work)
    app, window, journal, runner = open_window(args.work)
    recorder = Recorder(journal._reader)
    counts = journal.runs.count()
    print(f"journal: {counts:,} runs; run {BIG}: {N_EVENTS:,} events", flush=True)
    if args.no_figures:
        shots(app, window, args.shots or Path("docs/screenshots"))
        window.close()
        runner.shutdown()
        journal.close()
        return 0
    rows = [
        measure(
            app, window, recorder, args.work, "runs page first paint", runs_first_paint, args.repeat
        ),
        measure(
            app,
            window,
            recorder,
            args.work,
            f"open the {N_EVENTS:,}-event run",
            open_big_run,
            args.repeat,
        ),
    ]
    opened = window.runs.detail.events.fetched_rows
    rows += [
        measure(
            app,
            window,
            recorder,
            args.work,
            f"drag scroll bar top to bottom ({args.positions})",
            lambda a, w: drag_all(a, w, args.positions),
            0,
            before=to_top,
        ),
        measure(
            app,
            window,
            recorder,
            args.work,
            f"page down top to bottom ({N_EVENTS:,} rows)",
            scroll_all,
            0,
            before=to_top,
        ),
        measure(
            app,
            window,
            recorder,
            args.work,
            "filter by event type",
            filter_type,
            args.repeat,
            before=all_types,
        ),
    ]
    if args.figures is not None:
        save_suite(args.figures, rows, counts, opened, args)
    print(f"\n{'figure':36} {'desk ms':>10} {'floor ms':>10} {'ratio':>7} {'statements':>11}")
    for name, desk, floor, count, *_ in rows:
        ratio = desk / floor if floor > 0 else float("inf")
        print(f"{name:36} {desk * 1000:10.1f} {floor * 1000:10.1f} {ratio:7.1f} {count:11,}")
    detail = window.runs.detail
    table = detail.events_pane.table
    print(
        f"\nevent rows read to open the run: {opened:,} of {N_EVENTS:,}; rows on screen: "
        f"{table.verticalScrollBar().pageStep()}; blocks cached now: "
        f"{len(detail.events._blocks)}"
    )
    if args.shots:
        shots(app, window, args.shots)
    window.close()
    runner.shutdown()
    journal.close()
    return 0


# ---------------------------------------------------------------- run.py's suite "timeline"

SUITE = "timeline"
IDS = ("runs_first_paint", "open_big_run", "drag_scroll", "page_down_all", "filter_type")
WHAT = (
    "the run list queried again until its first page of rows is painted",
    "run detail shown until the visible event rows are loaded and painted (header, facts, "
    "visual timeline and type counts load alongside)",
    "scroll bar dragged top to bottom: each position's rows loaded and painted",
    "page by page through every row of the run, each page loaded and painted before the next",
    "one event type chosen until the filtered rows are painted",
)


def run(ctx):  # (BenchContext) -> list[Figure]
    """Suite "timeline" for run.py: measured in an offscreen child process. --quick: the small
    demo journal and a 10k-event run; full: the >=1M-event journal and a 100k-event run."""
    from gui_bench import spawn_figures

    work = ctx.fresh("timeline-work") / "journal.db"
    args = (
        ["--size", "small", "--events", "10000", "--repeat", "2", "--positions", "50"]
        if ctx.quick
        else ["--size", "large", "--events", "100000", "--repeat", "5"]
    )
    return spawn_figures(
        "timeline_bench.py", [*args, "--work", str(work)], ctx, timeout=600 if ctx.quick else 3600
    )


def save_suite(
    path: Path, rows: list[tuple], runs: int, opened: int, args: argparse.Namespace
) -> None:
    from gui_bench import desk_figure, save_figures

    facts = f"{runs:,} runs; the big run has {N_EVENTS:,} events"
    figures = []
    for fid, what, (name, _, _, count, desk, floor) in zip(IDS, WHAT, rows, strict=True):
        extra = {"statements": count}
        if fid == "open_big_run":
            extra["event_rows_read"] = opened
        figures.append(
            desk_figure(
                SUITE,
                fid,
                name,
                f"{what} ({facts}; median of {len(desk)})",
                "operation",
                [d * 1000 for d in desk],
                [f * 1000 for f in floor],
                notes=[
                    "timeline floor = every statement the desk had completed during the "
                    "operation (recorded on the journal's read engine), replayed serially by "
                    "raw sqlite3 fetching every row; scroll figures paint every position, so "
                    "their desk time is mostly Qt painting."
                ],
                **extra,
            )
        )
    save_figures(path, figures)


if __name__ == "__main__":
    sys.exit(main())
