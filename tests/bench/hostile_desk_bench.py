"""An approval whose command is one 3 MB line, shown everywhere the desk shows it: the longest
event-loop gap of each, before and after (issue 33 target 3), side by side in one run.

    uv run python tests/bench/hostile_desk_bench.py [--before COMMIT] [--repeat 3]

The same measuring code runs twice, in fresh offscreen processes: once on the source tree
of ``--before`` (default: the commit before issue 33's desk work, extracted with
``git archive`` into a temporary folder and put first on the import path), once on this
worktree. A QTimer ticks every 10 ms on the GUI thread; the longest time between two ticks
while the item is opened and shown (and the presentation pool has delivered) is the longest
the window stood still. Each row, in its own desk window on a copy of one journal:

- inbox: the approval selected in the inbox (action box, JSON tree);
- waiting tab: the same approval in its run's "Waiting for you" tab;
- confirmation: the confirmation dialog restating it, shown;
- bulk list: the bulk-approve dialog with it, a small one and a 150,000-character line;
- facts: the run's "Tool calls" tab with a tool call whose request is the 3 MB line,
  selected, painted, its tooltip read;
- events raw: an event whose payload holds the 3 MB line, selected (tree and raw tabs);
- timeline repaint: a 20,000-tool-call run's timeline zoomed in, repainted 5 times.

Medians of --repeat, milliseconds. The load average is printed with the table: on a shared
machine the figures move with it; the ratio before / after is the figure to read.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "1f07b0b"  # the branch point of issue 33's desk work
HUGE = 3_000_000
COMMAND = "echo " + "A" * HUGE


# ---------------------------------------------------------------- the source trees


def tree_of(source: Path, into: Path) -> Path:
    """A folder holding ``proctor`` laid out as installed (cli/ -> proctor, core/ ->
    proctor.core, ...), made of symlinks into ``source`` (as .ci/mypy does)."""
    pkg = into / "proctor"
    pkg.mkdir(parents=True)
    for item in (source / "cli").iterdir():
        (pkg / item.name).symlink_to(item)
    for name in ("core", "gui", "sim", "resources"):
        (pkg / name).symlink_to(source / name)
    return into


def before_tree(commit: str, work: Path) -> Path:
    src = work / "before-src"
    src.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return tree_of(src, work / "before")


# ---------------------------------------------------------------- the journal


def build(path: Path) -> dict[str, str]:
    from proctor.core import Actor, Journal

    with Journal.open(path, actor=Actor.agent("ops-bot")) as a:
        run = a.runs.start("infra", "Deploy", agent="ops-bot")
        big = a.approvals.request(
            run.id,
            {"tool": "shell.exec", "args": {"command": COMMAND}},
            reason="deploy",
            safety_class="destructive",
        )
        small = a.approvals.request(
            run.id, {"tool": "db.query", "args": {"table": "orders"}}, reason="look"
        )
        wide = a.approvals.request(
            run.id, {"tool": "fs.write", "args": {"path": "/x", "text": "W" * 150_000}}, reason="w"
        )
        call = a.runs.record_tool_call(run.id, "shell.exec", {"command": COMMAND})
        a.runs.finish_tool_call(call.id, "succeeded", result=None)
        a.runs.append_events(run.id, [("step", {"out": COMMAND})])
    return {"run": run.id, "big": big.id, "small": small.id, "wide": wide.id}


# ---------------------------------------------------------------- measuring (child process)


def measure_all(journal: Path, ids: dict[str, str], many_calls: Path) -> dict[str, float]:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    sys.path.insert(0, str(ROOT))
    from proctor.gui.decide import confirm
    from proctor.gui.inbox.bulk import BulkDecisionDialog
    from proctor.gui.infra.tasks import PresentationPool
    from tests.bench.hostile_bench import Gap, spin
    from tests.bench.timeline_bench import open_window

    def idle() -> bool:
        return PresentationPool.instance().pending() == 0

    def gap_of(act, done) -> float:
        gap = Gap()
        gap.timer.start()
        opened = act()
        spin(lambda: done(opened) and idle())
        gap.tick()
        gap.timer.stop()
        return gap.longest * 1000

    def fresh(path: Path) -> Path:
        copy = Path(tempfile.mkdtemp(prefix="hostile-desk-")) / "journal.db"
        shutil.copyfile(path, copy)
        return copy

    out: dict[str, float] = {}
    _app, window, journal_, runner = open_window(fresh(journal))
    inbox = window.inbox

    def select(key: str):
        def act():
            spin(lambda: inbox.model.row_of(f"approval:{ids[key]}") >= 0)
            inbox.set_current_row(inbox.model.row_of(f"approval:{ids[key]}"))
            return inbox.detail

        return act

    def shown_of(key: str):
        def shown(detail) -> bool:
            c = detail.current()
            return c is not None and c.entity is not None and c.entity.id == ids[key]

        return shown

    big_shown = shown_of("big")
    # control rows: the same steps on a small approval (what does not depend on the data)
    out["control: inbox, a small approval"] = gap_of(select("small"), shown_of("small"))
    out["inbox: the approval selected"] = gap_of(select("big"), big_shown)
    approval = journal_.approvals.get(ids["big"])
    little = journal_.approvals.get(ids["small"])
    others = [journal_.approvals.get(ids[k]) for k in ("small", "wide")]

    def confirm_dialog(a):
        def act():
            found = confirm.risks(a, a.requested_scope, frozenset(), time.time())
            what = confirm.restate(a, a.requested_scope, "", found)
            dialog = confirm.ConfirmApproval(window, what)
            dialog.show()
            return dialog

        return act

    out["control: confirmation, small action"] = gap_of(
        confirm_dialog(little), lambda d: d.isVisible()
    )
    out["confirmation dialog shown"] = gap_of(confirm_dialog(approval), lambda d: d.isVisible())

    def bulk_dialog():
        from proctor.core.models import ApprovalScope

        dialog = BulkDecisionDialog(
            window, [approval, *others], approve=True, scope=ApprovalScope.ONCE, reason=""
        )
        dialog.show()
        return dialog

    out["bulk list shown"] = gap_of(bulk_dialog, lambda d: d.isVisible())

    detail = window.runs.detail

    def waiting_tab():
        window.show_run(ids["run"])
        spin(lambda: detail.run is not None and detail.pending.count() == 3)
        pending = detail.pending
        detail.tabs.setCurrentWidget(pending)
        row = next(
            r
            for r in range(pending.count())
            if pending.items.item(r).data(0x0100 + 1).id == ids["big"]
        )
        pending.list.setCurrentIndex(pending.items.index(row, 0))
        return pending.detail

    out["waiting tab: the approval selected"] = gap_of(waiting_tab, big_shown)

    def facts_tab():
        tab = next(t for t in detail.fact_tabs if t.name.startswith("Tool calls"))
        spin(lambda: tab.count() == 1)
        detail.tabs.setCurrentWidget(tab)
        tab.table.selectRow(0)
        for _ in range(3):
            tab.table.viewport().repaint()
            for c in range(tab.model.columnCount()):
                tab.model.index(0, c).data(3)  # the tooltip
        return tab

    out["facts: 3 MB tool call shown"] = gap_of(facts_tab, lambda t: True)

    def events_raw():
        events = detail.events_pane
        detail.tabs.setCurrentWidget(events)
        spin(lambda: events.model.rowCount() > 0)
        events.table.setCurrentIndex(events.model.index(events.model.rowCount() - 1, 0))
        return events.detail

    out["events: 3 MB payload selected"] = gap_of(
        events_raw, lambda d: d.shown is not None and d.shown.type == "step"
    )
    window.close()

    _app, window, _j, runner = open_window(fresh(many_calls))
    view = window.runs.detail.timeline.view
    window.show_run("run_many_calls")
    spin(lambda: view.timeline is not None and not view.packing() and runner.pending() == 0)
    view.zoom(40.0)
    spin(lambda: False, 1.0)

    def repaint():
        for _ in range(5):
            view.viewport().repaint()
        return view

    out["timeline: 20,000 calls repainted x5"] = gap_of(repaint, lambda v: True)
    window.close()
    return out


# ---------------------------------------------------------------- the comparison


def child(tree: Path, args: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, __file__, "--measure", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    line = next(x for x in out.stdout.splitlines() if x.startswith("{"))
    return json.loads(line)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default=BEFORE, help="the commit measured as 'before'")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--measure", nargs=3, metavar=("JOURNAL", "IDS", "MANY"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:
        journal, ids, many = a.measure
        print(json.dumps(measure_all(Path(journal), json.loads(ids), Path(many))))
        return 0
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="hostile-desk-bench-"))
    journal = work / "journal.db"
    ids = build(journal)
    many = work / "many.db"
    from tests.gui.test_hostile_freeze import big_run_with_tool_calls

    big_run_with_tool_calls(many, "run_many_calls", 10_000, 20_000)
    trees = {"before": before_tree(a.before, work), "after": tree_of(ROOT, work / "after")}
    args = [str(journal), json.dumps(ids), str(many)]
    seen: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    loads = []
    for _ in range(a.repeat):  # interleaved: before, after, before, after …
        for name, tree in trees.items():
            loads.append(os.getloadavg()[0])
            seen[name].append(child(tree, args))
    rows = list(seen["after"][0])
    print(f"load average (1 min) during the runs: {', '.join(f'{x:.1f}' for x in loads)}")
    print(f"longest event-loop gap, ms (median of {a.repeat}); before = {a.before}")
    print(f"{'shown':40} {'before':>9} {'after':>9} {'before/after':>13}")
    for row in rows:
        b = statistics.median(r[row] for r in seen["before"])
        f = statistics.median(r[row] for r in seen["after"])
        print(f"{row:40} {b:>9.0f} {f:>9.0f} {b / max(f, 1e-9):>12.1f}x")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
