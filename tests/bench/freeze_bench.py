"""No event-loop gap over 100 ms on any agent data (issue 33, target 3): every case the issue
names, in one offscreen desk, each row the longest time the GUI thread stood still.

    uv run python tests/bench/freeze_bench.py [--repeat 3] [--only WORD] [--before COMMIT]

A QTimer heartbeat ticks every 5 ms on the GUI thread; the longest interval between two
ticks while an item is opened, shown, painted (and the presentation pool has delivered) is
the longest the window stood still. The rows, each on its own copy of one journal:

- inbox: an approval whose command is one 3 MB line, selected (action box, JSON tree);
- waiting tab: the same approval in its run's "Waiting for you" tab;
- confirmation: the confirmation dialog restating it, shown;
- bulk list: the bulk-approve dialog listing it, a small action and a 150,000-char line;
- run detail: the run opened (its facts hold a tool call with 3 MB arguments, its events
  a 3 MB payload), then the Tool calls tab and the event's raw tab shown;
- timeline: a run with 100,000 events and 20,000 tool calls, its timeline fitted, zoomed
  in, scrolled across in 40 steps, each painted;
- diff review: a question reviewing a 4,000-line diff, selected;
- choice: a question with 10,000 options, selected, then filtered;
- bidi: an approval whose command is one 3 MB line of mixed left-to-right and right-to-left
  text (Latin, Hebrew, CJK) with bidi overrides, selected, then its confirmation shown.

Prints per row the median over --repeat of the longest gap and its ratio to 100 ms (the
target: <= 1.00), the most CPU time the GUI thread used within one gap (on a loaded machine
a wall gap also holds the time the thread waited for a core: the control row shows how
much), and the machine's load average (os.getloadavg) before each run. ``--before COMMIT``
measures that commit's desk too (``git archive`` into a temporary folder, first on the
import path of a child process; this tree in another), the runs interleaved. ``--blame``
samples the GUI thread's stack while the heartbeat is late. A benchmark, not a test: it
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

HUGE = 3_000_000
COMMAND = "echo " + "A" * HUGE
TARGET_MS = 100.0
TICK_MS = 5
TIMELINE_EVENTS, TIMELINE_CALLS = 100_000, 20_000
DIFF_LINES, OPTIONS = 4_000, 10_000


def bidi_line(size: int) -> str:
    """One unbroken line of mixed scripts with right-to-left overrides and isolates."""
    piece = "lorem ipsum \u202eשלום עולם\u202c 会议在东京举行 \u2067مرحبا بالعالم\u2069 "
    return (piece * (size // len(piece) + 1))[:size]


# ---------------------------------------------------------------- the journals


def build(path: Path) -> dict[str, str]:
    from proctor.core import Actor, Journal

    patch = "--- a/big.txt\n+++ b/big.txt\n@@ -1,2000 +1,2000 @@\n" + "".join(
        f"-old line {n}\n+new line {n}\n" for n in range(DIFF_LINES // 2)
    )
    with Journal.open(path, actor=Actor.agent("ops-bot")) as a:
        run = a.runs.start("infra", "Deploy", agent="ops-bot")
        ids = {"run": run.id}
        ids["big"] = a.approvals.request(
            run.id,
            {"tool": "shell.exec", "args": {"command": COMMAND}},
            reason="deploy",
            safety_class="destructive",
        ).id
        ids["small"] = a.approvals.request(
            run.id, {"tool": "db.query", "args": {"table": "orders"}}, reason="look"
        ).id
        ids["wide"] = a.approvals.request(
            run.id, {"tool": "fs.write", "args": {"path": "/x", "text": "W" * 150_000}}, reason="w"
        ).id
        other = a.runs.start("infra", "Translate", agent="ops-bot")
        ids["bidi_run"] = other.id
        ids["bidi"] = a.approvals.request(
            other.id,
            {"tool": "shell.exec", "args": {"command": bidi_line(HUGE)}},
            reason="translate",
        ).id
        call = a.runs.record_tool_call(run.id, "shell.exec", {"command": COMMAND})
        a.runs.finish_tool_call(call.id, "succeeded", result=None)
        a.runs.append_events(run.id, [("step", {"out": COMMAND})])
        ids["diff"] = a.questions.ask(
            other.id, "diff_review", "Review the patch", request={"diff": patch, "path": "big.txt"}
        ).id
        ids["choice"] = a.questions.ask(
            other.id,
            "choice",
            "Which host?",
            options=[f"host-{n:05d}.example.internal" for n in range(OPTIONS)],
        ).id
    return ids


# ---------------------------------------------------------------- measuring


class Blame:
    """With --blame: a thread that, while the heartbeat is late by more than BLAME_MS,
    samples the GUI thread's stack; the most sampled lines are printed (where the gaps are)."""

    def __init__(self) -> None:
        import threading

        self.gui = threading.get_ident()
        self.samples: Counter[str] = Counter()
        self.beat: Heartbeat | None = None
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self) -> None:
        import traceback

        while True:
            time.sleep(0.01)
            beat = self.beat
            if beat is None or not beat.running:
                continue
            if time.monotonic() - beat.last < BLAME_MS / 1000:
                continue
            frame = sys._current_frames().get(self.gui)
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)[-9:]
            self.samples[
                " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack))
            ] += 1

    def report(self) -> None:
        for stack, count in self.samples.most_common(12):
            print(f"{count * 10:>6} ms  {stack}")


BLAME: Blame | None = None
BLAME_MS = 40


Gap = tuple[float, float]  # (longest wall gap, most GUI-thread CPU in one gap), ms


class Heartbeat:
    """The longest interval between two ticks of a TICK_MS timer on the GUI thread (wall
    clock), and the most CPU time the GUI thread used within one interval (its own work,
    whatever the machine's load: on a loaded machine a wall gap also holds the time the
    thread waited for a core)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        if BLAME is not None:
            BLAME.beat = self
        self.longest, self.last = 0.0, time.monotonic()
        self.busiest, self.last_cpu = 0.0, time.thread_time()
        self.running = False  # (read by Blame's thread, which never touches Qt)
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)

    def tick(self) -> None:
        now, cpu = time.monotonic(), time.thread_time()
        self.longest, self.last = max(self.longest, now - self.last), now
        self.busiest, self.last_cpu = max(self.busiest, cpu - self.last_cpu), cpu

    def __enter__(self) -> Heartbeat:
        self.last, self.last_cpu = time.monotonic(), time.thread_time()
        self.timer.start()
        self.running = True
        return self

    def __exit__(self, *_: object) -> None:
        self.running = False
        self.tick()
        self.timer.stop()


def spin(done: Callable[[], bool], limit_s: float = 120.0) -> None:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    end = time.monotonic() + limit_s
    while not done() and time.monotonic() < end:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
    if not done():
        raise TimeoutError("the case did not finish")
    for _ in range(20):  # painted and settled
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)


def turn() -> None:
    """Back to the event loop between two steps (as between two events of a person's)."""
    spin(lambda: True)


def idle() -> bool:
    from proctor.gui.infra.tasks import PresentationPool

    return PresentationPool.instance().pending() == 0


class Desk:
    """One offscreen desk window on a fresh copy of a journal."""

    def __init__(self, source: Path) -> None:
        from tests.bench.timeline_bench import open_window

        copy = Path(tempfile.mkdtemp(prefix="freeze-bench-")) / "journal.db"
        shutil.copyfile(source, copy)
        self.folder = copy.parent
        _app, self.window, self.journal, self.runner = open_window(copy)
        spin(lambda: self.runner.pending() == 0 and idle())

    def gap(self, steps: Callable[[], None]) -> Gap:
        """Milliseconds: the longest gap while ``steps`` runs (it spins until it is done),
        and the most GUI-thread CPU time within one gap."""
        with Heartbeat() as beat:
            steps()
            spin(lambda: idle() and self.runner.pending() == 0)
        return beat.longest * 1000, beat.busiest * 1000

    def close(self) -> None:
        self.window.close()
        self.journal.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ------------------------------------------------------------ steps
    def select(self, kind: str, item_id: str) -> None:
        inbox = self.window.inbox
        self.window.go("inbox")
        key = f"{kind}:{item_id}"
        spin(lambda: inbox.model.row_of(key) >= 0)
        inbox.set_current_row(inbox.model.row_of(key))

        def shown() -> bool:
            c = inbox.detail.current()
            entity = getattr(c, "entity", None)
            return entity is not None and getattr(entity, "id", None) == item_id

        spin(shown)
        inbox.detail.repaint()

    def confirm(self) -> None:
        """Approve pressed on the approval shown: the desk's own path to its confirmation
        (the dialog shown without a nested event loop, then cancelled), painted, closed."""
        from proctor.gui.decide import confirm

        shown: list[Any] = []

        def look(parent: Any, what: Any) -> bool:
            dialog = confirm.ConfirmApproval(parent, what)
            dialog.show()
            shown.append(dialog)
            return False  # cancelled: nothing is approved

        real = confirm.ConfirmApproval.__dict__["ask"]
        confirm.ConfirmApproval.ask = look  # type: ignore[method-assign,assignment]
        try:
            self.window.registry.trigger("inbox.approve")
            spin(lambda: bool(shown) and shown[0].isVisible())
            shown[0].repaint()
            turn()
            shown[0].close()
        finally:
            confirm.ConfirmApproval.ask = real  # type: ignore[method-assign]


def control_row(d: Desk, _ids: dict[str, str]) -> Gap:
    """The desk left alone for 2 s: what the machine's load alone makes of the gap."""
    return d.gap(lambda: idle_for(2.0))


def idle_for(seconds: float) -> None:
    end = time.monotonic() + seconds
    spin(lambda: time.monotonic() >= end, seconds + 1)


def inbox_row(d: Desk, ids: dict[str, str]) -> Gap:
    return d.gap(lambda: d.select("approval", ids["big"]))


def waiting_row(d: Desk, ids: dict[str, str]) -> Gap:
    detail = d.window.runs.detail

    def steps() -> None:
        d.window.show_run(ids["run"])
        spin(lambda: detail.run is not None and detail.pending.count() == 3)
        pending = detail.pending
        detail.tabs.setCurrentWidget(pending)
        row = next(
            r
            for r in range(pending.count())
            if pending.items.item(r).data(0x0100 + 1).id == ids["big"]
        )
        pending.list.setCurrentIndex(pending.items.index(row, 0))

        def shown() -> bool:
            c = pending.detail.current()
            return c is not None and c.entity is not None and c.entity.id == ids["big"]

        spin(shown)
        pending.repaint()

    return d.gap(steps)


def confirmation_row(d: Desk, ids: dict[str, str]) -> Gap:
    d.select("approval", ids["big"])
    spin(idle)
    return d.gap(d.confirm)


def bulk_row(d: Desk, ids: dict[str, str]) -> Gap:
    from proctor.core.models import ApprovalScope
    from proctor.gui.inbox.bulk import BulkDecisionDialog

    approvals = [d.journal.approvals.get(ids[k]) for k in ("big", "small", "wide")]

    def steps() -> None:
        dialog = BulkDecisionDialog(
            d.window, approvals, approve=True, scope=ApprovalScope.ONCE, reason=""
        )
        dialog.show()
        spin(dialog.isVisible)
        dialog.repaint()
        turn()
        dialog.close()

    return d.gap(steps)


def run_detail_row(d: Desk, ids: dict[str, str]) -> Gap:
    detail = d.window.runs.detail

    def steps() -> None:
        d.window.show_run(ids["run"])
        tab = next(t for t in detail.fact_tabs if t.name.startswith("Tool calls"))
        spin(lambda: detail.run is not None and tab.count() == 1)
        detail.tabs.setCurrentWidget(tab)
        turn()
        tab.table.selectRow(0)
        turn()
        tab.table.viewport().repaint()
        for c in range(tab.model.columnCount()):
            tab.model.index(0, c).data(3)  # the tooltip
        events = detail.events_pane
        turn()
        detail.tabs.setCurrentWidget(events)
        spin(lambda: events.model.rowCount() > 0)
        events.table.setCurrentIndex(events.model.index(events.model.rowCount() - 1, 0))
        spin(lambda: events.detail.shown is not None and events.detail.shown.type == "step")
        events.repaint()

    return d.gap(steps)


def timeline_row(d: Desk, ids: dict[str, str]) -> Gap:
    detail = d.window.runs.detail
    view = detail.timeline.view

    def steps() -> None:
        d.window.show_run(ids["timeline"])
        spin(
            lambda: (
                view.timeline is not None
                and view.timeline.run_id == ids["timeline"]
                and not view.packing()
                and d.runner.pending() == 0
            )
        )
        view.viewport().repaint()
        turn()
        view.zoom(40.0)
        turn()
        view.viewport().repaint()
        bar = view.horizontalScrollBar()
        for n in range(41):  # each position one step: scrolled, then painted
            bar.setValue(round(bar.maximum() * n / 40))
            turn()
            view.viewport().repaint()
            turn()
        view.fit()
        turn()
        view.viewport().repaint()

    return d.gap(steps)


def diff_row(d: Desk, ids: dict[str, str]) -> Gap:
    return d.gap(lambda: d.select("question", ids["diff"]))


def choice_row(d: Desk, ids: dict[str, str]) -> Gap:
    def steps() -> None:
        d.select("question", ids["choice"])
        detail = d.window.inbox.detail.current()
        spin(lambda: detail.view is not None and detail.view.list is not None)
        view = detail.view
        for text in ("host-0", "host-09", "host-0999", ""):
            view.filter.setText(text)
            turn()
            view.repaint()
            turn()

    return d.gap(steps)


def bidi_row(d: Desk, ids: dict[str, str]) -> Gap:
    def steps() -> None:
        d.select("approval", ids["bidi"])
        spin(idle)
        d.confirm()

    return d.gap(steps)


ROWS: list[tuple[str, str, Callable[[Desk, dict[str, str]], Gap]]] = [
    ("control", "control: the desk idle for 2 s", control_row),
    ("inbox", "inbox: 3 MB one-line action selected", inbox_row),
    ("waiting", "waiting tab: the same action selected", waiting_row),
    ("confirm", "confirmation dialog of it shown", confirmation_row),
    ("bulk", "bulk list with it shown", bulk_row),
    ("detail", "run detail: 3 MB arguments and payload", run_detail_row),
    ("timeline", "timeline: 100k events, 20k calls, scrolled", timeline_row),
    ("diff", "diff review: 4,000 lines selected", diff_row),
    ("choice", "choice: 10,000 options, filtered", choice_row),
    ("bidi", "bidi: 3 MB mixed-direction line + confirm", bidi_row),
]


def measure(journal: Path, many: Path, ids: dict[str, str], keys: list[str]) -> dict[str, Gap]:
    out: dict[str, Gap] = {}
    for key, _name, row in ROWS:
        if key not in keys:
            continue
        desk = Desk(many if key == "timeline" else journal)
        try:
            out[key] = row(desk, ids)
        finally:
            desk.close()
    return out


def child(tree: Path, journal: Path, many: Path, ids: dict[str, str], keys: list[str]) -> dict:
    """The rows measured in a fresh offscreen process whose ``proctor`` is ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    args = [str(journal), str(many), json.dumps(ids), ",".join(keys)]
    out = subprocess.run(
        [sys.executable, __file__, "--measure", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(next(x for x in out.stdout.splitlines() if x.startswith("{")))


def print_table(names: dict[str, str], seen: dict[str, dict[str, list[Gap]]], repeat: int) -> None:
    print(f"longest event-loop gap, ms (median of {repeat}; heartbeat every {TICK_MS} ms);")
    print("cpu: the most GUI-thread CPU time within one gap (its own work, whatever the load)")
    trees = list(seen)
    head = "".join(f" {t + ' gap':>11} {'/100ms':>6} {'cpu':>5} {'/100ms':>6}" for t in trees)
    print(f"{'case':44}{head}")
    for key, name in names.items():
        cells = ""
        for tree in trees:
            gap = statistics.median(g for g, _ in seen[tree][key])
            cpu = statistics.median(c for _, c in seen[tree][key])
            cells += f" {gap:>11.0f} {gap / TARGET_MS:>6.2f} {cpu:>5.0f} {cpu / TARGET_MS:>6.2f}"
        print(f"{name:44}{cells}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", help="rows whose key or name contains this")
    p.add_argument("--blame", action="store_true", help="sample the GUI thread in long gaps")
    p.add_argument(
        "--before",
        metavar="COMMIT",
        help="also measure the desk of COMMIT (git archive), interleaved with this tree's, "
        "each in fresh processes",
    )
    p.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:
        journal, many, ids_text, keys = a.measure
        gaps = measure(Path(journal), Path(many), json.loads(ids_text), keys.split(","))
        print(json.dumps(gaps))
        return 0
    global BLAME
    if a.blame:
        BLAME = Blame()
    from tests.gui.test_hostile_freeze import big_run_with_tool_calls

    work = Path(tempfile.mkdtemp(prefix="freeze-bench-work-"))
    journal = work / "journal.db"
    ids = build(journal)
    rows = [r for r in ROWS if not a.only or a.only in r[0] or a.only in r[1]]
    keys = [key for key, _, _ in rows]
    many = work / "many.db"
    if "timeline" in keys:
        big_run_with_tool_calls(many, "run_many_calls", TIMELINE_EVENTS, TIMELINE_CALLS)
    ids["timeline"] = "run_many_calls"
    trees: dict[str, Path | None] = {"now": None}
    if a.before:
        from tests.bench.hostile_desk_bench import before_tree, tree_of

        trees = {"before": before_tree(a.before, work), "after": tree_of(ROOT, work / "after")}
    seen: dict[str, dict[str, list[Gap]]] = {t: {key: [] for key in keys} for t in trees}
    loads: list[tuple[float, float, float]] = []
    for _ in range(a.repeat):  # interleaved: before, after, before, after …
        for name, tree in trees.items():
            loads.append(os.getloadavg())
            gaps = (
                measure(journal, many, ids, keys)
                if tree is None
                else child(tree, journal, many, ids, keys)
            )
            for key in keys:
                seen[name][key].append(tuple(gaps[key]))
    loads.append(os.getloadavg())
    print("load average (1, 5, 15 min) before each run and at the end: ", end="")
    print(", ".join("/".join(f"{x:.2f}" for x in load) for load in loads))
    if a.before:
        print(f"before = {a.before}, after = this worktree")
    print_table({key: name for key, name, _ in rows}, seen, a.repeat)
    if BLAME is not None:
        print(f"the GUI thread's stack in gaps over {BLAME_MS} ms (10 ms samples):")
        BLAME.report()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
