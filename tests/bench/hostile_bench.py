"""Hostile-data responsiveness benchmark (not run by pytest): the longest event-loop gap
while the largest agent items are opened, and the CPU a bounded diff takes.

    uv run python tests/bench/hostile_bench.py

A QTimer ticks every 10 ms on the GUI thread; the longest time between two ticks is the
longest the window stood still. Each row opens one item the way the desk does:

- "Show all" on a 1 MB single line (TextViewer);
- a memory history diff of 50 KB base64 → 50 KB base64, and of 40 KB YAML-like text
  (DiffView.compare: the diff on the presentation pool, the result filled on the GUI thread);
- a 60 KB conflict pair diffed with the default budget (CPU seconds, level reached);
- the run page opened on a run with 20 000 tool calls and 10 000 events (an offscreen desk:
  the visual timeline's bars packed and painted, the facts and the events shown).

Then a memory row: peak RSS (VmHWM) before and after an approval's action text shows a
3 MB single-line value (laid out whole, it froze the desk for minutes and held gigabytes).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from tests.gui.hostile_data import blob, one_line, yaml_like


class Gap:
    def __init__(self) -> None:
        self.longest, self.last = 0.0, time.monotonic()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)

    def tick(self) -> None:
        now = time.monotonic()
        self.longest, self.last = max(self.longest, now - self.last), now


def spin(done, limit_s: float = 120.0) -> None:
    loop_end = time.monotonic() + limit_s
    while not done() and time.monotonic() < loop_end:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    for _ in range(20):  # painted and settled
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)


def measure(name: str, open_it, done) -> tuple[str, float, float]:
    gap = Gap()
    gap.timer.start()
    start = time.monotonic()
    opened = open_it()
    spin(lambda: done(opened))
    gap.tick()
    gap.timer.stop()
    return name, time.monotonic() - start, gap.longest


def big_run_row() -> tuple[str, float, float]:
    """The run page on a run with 20 000 tool calls, in an offscreen desk window."""
    import tempfile

    from tests.bench.timeline_bench import open_window
    from tests.gui.test_hostile_freeze import big_run_with_tool_calls

    path = Path(tempfile.mkdtemp(prefix="proctor-hostile-bench-")) / "journal.db"
    big_run_with_tool_calls(path, "run_many_calls", 10_000, 20_000)
    _app, window, _journal, runner = open_window(path)
    view = window.runs.detail.timeline.view

    def shown(_opened: object) -> bool:
        return (
            view.timeline is not None
            and not view.packing()
            and runner.pending() == 0
            and window.runs.detail.run is not None
        )

    return measure("run page: 20,000 tool calls", lambda: window.show_run("run_many_calls"), shown)


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def action_text_memory() -> tuple[str, float, float]:
    from proctor.gui.widgets.action_text import ActionText

    before = peak_mb()
    view = ActionText()
    view.resize(900, 600)
    view.show()
    view.set_action({"tool": "deploy", "args": {"body": "B" * 3_000_000}})
    spin(lambda: True)
    return "action text: 3 MB single line", before, peak_mb()


def main() -> None:
    QApplication.instance() or QApplication([])
    from proctor.gui.widgets.bounded_text import TextViewer
    from proctor.gui.widgets.text_diff import DiffView, diff_texts

    def viewer(text: str):
        v = TextViewer(None, "bench", text)
        v.show()
        return v

    def history(old: str, new: str):
        view = DiffView("bench")
        view.resize(900, 600)
        view.show()
        view.compare(old, new)
        return view

    rows = [
        measure("Show all: 1 MB single line", lambda: viewer(one_line()), lambda v: True),
        measure(
            "history diff: 50 KB base64",
            lambda: history(blob(1, 50_000), blob(2, 50_000)),
            lambda v: v.diff is not None,
        ),
        measure(
            "history diff: 40 KB YAML-like",
            lambda: history(yaml_like(3, 40_000), yaml_like(4, 40_000)),
            lambda v: v.diff is not None,
        ),
        big_run_row(),
    ]
    memory = action_text_memory()
    print(f"{'item':34} {'shown after':>12} {'longest event-loop gap':>24}")
    for name, total, longest in rows:
        print(f"{name:34} {total:>10.2f} s {longest * 1000:>21.0f} ms")
    for name, old, new in (
        ("conflict: 60 KB YAML-like", yaml_like(5, 60_000), yaml_like(6, 60_000)),
        ("conflict: 60 KB base64", blob(7, 60_000), blob(8, 60_000)),
    ):
        start = time.process_time()
        result = diff_texts(old, new)
        print(
            f"{name:34} diff CPU {time.process_time() - start:.2f} s, level {result.level}, "
            f"{result.steps:,} steps"
        )
    name, before, after = memory
    print(f"{name:34} peak RSS {before:,.0f} MB before, {after:,.0f} MB after")


if __name__ == "__main__":
    main()
