"""An approval whose command is one 3 MB line cannot stop the desk (issue 33, target 3),
wherever it is shown: the inbox's action box, the run's "Waiting for you" tab, the
confirmation dialog, the bulk list, the run's facts and events, the JSON trees.

Two things froze the window for seconds, and each test checks the structure that rules
them out (tests never assert times; tests/bench/hostile_bench.py measures the gaps):

- a text layout given one unbroken line of 200,000 characters: every text document and
  label of the window holds lines of at most LINE_CHARS (or, for the paging viewer, CHUNK);
- escaping, bounding and dumping the whole 3 MB argument on the GUI thread: ``visible``
  (the one escaping function) never sees more than a box's head there, and the whole
  action is never turned into JSON on the GUI thread while a page shows it.

Checked against the code before the fix: the action box held a 200,000-character line, the
JSON tree, the facts table and the confirmation escaped all 3 MB on the GUI thread.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDialog, QLabel, QPlainTextEdit, QTextEdit, QWidget

from proctor.core import Actor, Journal
from proctor.core.kernel import safe_text
from proctor.core.models import ApprovalScope
from proctor.gui.decide import confirm as confirm_mod
from proctor.gui.inbox.bulk import BulkDecisionDialog
from proctor.gui.widgets import fmt, json_tree
from proctor.gui.widgets.action_text import BOX_CHARS
from proctor.gui.widgets.bounded_text import LINE_CHARS, longest_line
from proctor.gui.widgets.prepare import INLINE_CHARS, text_size

from .conftest import WAIT_MS, wait_presented
from .driver import Desk

HUGE = 3_000_000
COMMAND = "echo " + "A" * HUGE  # one line, no break anywhere
GUI_TEXT = BOX_CHARS  # the most agent text escaped in one piece on the GUI thread


class Recorder:
    """Every call of the escaping function and of the JSON dump the views use: the thread
    it ran on and how many characters it handled."""

    def __init__(self, monkeypatch) -> None:
        self.escaped: list[tuple[int, int]] = []
        self.dumped: list[tuple[int, int]] = []
        real_visible, real_dump = safe_text.visible, fmt.pretty_json

        def visible(text, **kw):
            self.escaped.append((threading.get_ident(), len(text)))
            return real_visible(text, **kw)

        def dump(value):
            out = real_dump(value)
            self.dumped.append((threading.get_ident(), len(out)))
            return out

        monkeypatch.setattr(safe_text, "visible", visible)
        monkeypatch.setattr(fmt, "pretty_json", dump)

    def most_escaped_on_gui(self) -> int:
        gui = threading.get_ident()
        return max((n for t, n in self.escaped if t == gui), default=0)

    def most_dumped_on_gui(self) -> int:
        gui = threading.get_ident()
        return max((n for t, n in self.dumped if t == gui), default=0)

    def escaped_elsewhere(self) -> int:
        gui = threading.get_ident()
        return max((n for t, n in self.escaped if t != gui), default=0)


def laid_out(root: QWidget) -> list[tuple[str, str]]:
    """(widget, text) of every text document and label under ``root`` that shows."""
    out = []
    for w in root.findChildren(QWidget):
        if not w.isVisibleTo(root) and w is not root:
            continue
        if isinstance(w, QTextEdit | QPlainTextEdit):
            out.append((w.accessibleName() or type(w).__name__, w.toPlainText()))
        elif isinstance(w, QLabel):
            out.append((w.accessibleName() or w.objectName(), w.text()))
    return out


def assert_short_lines(root: QWidget, limit: int = LINE_CHARS) -> None:
    long = [(name, longest_line(text)) for name, text in laid_out(root)]
    long = [(name, n) for name, n in long if n > limit]
    assert not long, f"laid out as one line: {long}"


@pytest.fixture
def huge(journal_path: Path) -> dict[str, str]:
    """A run with an approval whose command is one 3 MB line, a small approval beside it,
    and a tool call whose request is the same 3 MB line."""
    with Journal.open(journal_path, actor=Actor.agent("ops-bot")) as a:
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
        call = a.runs.record_tool_call(run.id, "shell.exec", {"command": COMMAND})
        a.runs.finish_tool_call(call.id, "succeeded", result={"out": "ok"})
    return {"run": run.id, "big": big.id, "small": small.id}


def test_the_inbox_action_box_lays_out_a_bounded_head_in_short_lines(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    window = open_desk(journal_path)
    seen = Recorder(monkeypatch)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{huge['big']}", presented=True)
    field = detail.action_text.field("command")
    assert field is not None and field.full == COMMAND  # Copy / Show all have it whole
    shown = field.box.toPlainText().replace("\n", "")
    assert COMMAND.startswith(shown) and len(shown) <= BOX_CHARS
    assert f"{HUGE + 5 - BOX_CHARS:,} more characters" in field.show_all.text()
    assert_short_lines(window)
    assert seen.most_escaped_on_gui() <= GUI_TEXT  # never the whole 3 MB
    assert seen.escaped_elsewhere() > 0  # the box's head and the tree's cells: on the pool
    assert seen.most_dumped_on_gui() < HUGE


def test_the_json_tree_of_a_huge_action_is_made_on_the_presentation_pool(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    threads: list[int] = []
    real = json_tree.tree_rows

    def rows(value):
        if text_size(value) > INLINE_CHARS:
            threads.append(threading.get_ident())
        return real(value)

    monkeypatch.setattr(json_tree, "tree_rows", rows)
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{huge['big']}", presented=True)
    assert threads and threading.get_ident() not in threads
    model = detail.args.model
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=WAIT_MS)
    cells = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert any(c.startswith("shell.exec") for c in cells)  # tool, then args (collapsed)
    args = model.item(next(r for r in range(model.rowCount()) if model.item(r, 0).text() == "args"))
    value = args.child(0, 1).text()
    assert value.startswith("echo AAAA") and len(value) <= json_tree.VALUE_MAX


def test_the_runs_waiting_tab_shows_the_huge_action_in_short_lines(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    window = open_desk(journal_path)
    seen = Recorder(monkeypatch)
    window.show_run(huge["run"])
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None, timeout=WAIT_MS)
    pending = detail.pending
    detail.tabs.setCurrentWidget(pending)
    qtbot.waitUntil(lambda: pending.count() == 2, timeout=WAIT_MS)
    row = next(
        r
        for r in range(pending.count())
        if pending.items.item(r).data(Qt.ItemDataRole.UserRole + 1).id == huge["big"]
    )
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == huge["big"], timeout=WAIT_MS
    )
    wait_presented(qtbot)
    assert widget.action_text.field("command") is not None
    assert_short_lines(window)
    assert seen.most_escaped_on_gui() <= GUI_TEXT


def test_the_run_facts_show_a_huge_tool_call_without_escaping_it_on_the_gui_thread(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    """The tool-call row's cell and tooltip are made where the facts were read; the
    selected row's JSON tree on the pool; painting and hovering the table use them."""
    window = open_desk(journal_path)
    seen = Recorder(monkeypatch)
    window.show_run(huge["run"])
    detail = window.runs.detail
    tab = next(t for t in detail.fact_tabs if t.name.startswith("Tool calls"))
    qtbot.waitUntil(lambda: tab.count() == 1, timeout=WAIT_MS)
    detail.tabs.setCurrentWidget(tab)
    tab.table.selectRow(0)
    wait_presented(qtbot)
    tab.table.viewport().repaint()
    cells = [tab.model.index(0, c).data() for c in range(tab.model.columnCount())]
    tips = [
        tab.model.index(0, c).data(Qt.ItemDataRole.ToolTipRole)
        for c in range(tab.model.columnCount())
    ]
    assert all(len(c) <= 200 for c in cells)
    assert any(t and "echo AAAA" in t and len(t) < 5000 for t in tips)  # the request
    assert_short_lines(window)
    assert seen.most_escaped_on_gui() <= GUI_TEXT
    assert seen.most_dumped_on_gui() < HUGE  # the request's JSON: made off the GUI thread


def test_the_confirmation_restates_the_huge_action_in_short_lines(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    window = open_desk(journal_path)
    Desk(qtbot, window).open_inbox_item(f"approval:{huge['big']}", presented=True)
    seen = Recorder(monkeypatch)
    dialogs: list[QDialog] = []

    def look(parent, what):
        dialog = confirm_mod.ConfirmApproval(parent, what)
        qtbot.addWidget(dialog)
        dialog.show()
        dialogs.append(dialog)
        return False

    monkeypatch.setattr(confirm_mod.ConfirmApproval, "ask", look)
    assert window.registry.trigger("inbox.approve")
    qtbot.waitUntil(lambda: bool(dialogs), timeout=WAIT_MS)
    shown = dialogs[0].action.toPlainText()
    assert "echo AAAA" in shown and "more characters" in shown.split("\n")[-1]
    assert_short_lines(dialogs[0])
    assert seen.most_escaped_on_gui() <= GUI_TEXT


def test_the_confirmation_of_a_huge_action_escapes_nothing_large_on_the_gui_thread(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    """The restated action (its pretty JSON's head, escaped, in display lines) is made on
    the presentation pool when the approval is shown: the click that opens the confirmation
    dumps and escapes none of the 3 MB (it escaped a 200,000-character head there)."""
    seen = Recorder(monkeypatch)
    window = open_desk(journal_path)
    Desk(qtbot, window).open_inbox_item(f"approval:{huge['big']}", presented=True)
    seen.escaped.clear()
    seen.dumped.clear()
    dialogs: list[QDialog] = []

    def look(parent, what):
        dialog = confirm_mod.ConfirmApproval(parent, what)
        qtbot.addWidget(dialog)
        dialog.show()
        dialogs.append(dialog)
        return False

    monkeypatch.setattr(confirm_mod.ConfirmApproval, "ask", look)
    assert window.registry.trigger("inbox.approve")
    qtbot.waitUntil(lambda: bool(dialogs), timeout=WAIT_MS)
    assert "echo AAAA" in dialogs[0].action.toPlainText()
    assert seen.most_escaped_on_gui() < 10_000  # short texts only, not the 200,000-char head
    assert seen.most_dumped_on_gui() < INLINE_CHARS


def test_the_bulk_list_never_lays_out_an_action_as_one_line(qtbot, journal_path, huge):
    """A 3 MB action is held back (not escaped only to be held back); one that fits the
    box but is one 150,000-character line is listed whole, in display lines."""
    with Journal.open(journal_path, actor=Actor.agent("ops-bot")) as a:
        wide = a.approvals.request(
            a.runs.get(huge["run"]).id,
            {"tool": "fs.write", "args": {"path": "/x", "text": "W" * 150_000}},
            reason="write",
        )
        approvals = [a.approvals.get(i) for i in (huge["big"], huge["small"], wide.id)]
    escaped: list[int] = []
    real = safe_text.visible

    def visible(text, **kw):
        escaped.append(len(text))
        return real(text, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(safe_text, "visible", visible)
        dialog = BulkDecisionDialog(
            None, approvals, approve=True, scope=ApprovalScope.ONCE, reason=""
        )
    qtbot.addWidget(dialog)
    dialog.show()
    assert [a.id for a in dialog.decided] == [huge["small"], wide.id]
    listed = dialog.listed()
    assert "W" * 150_000 in "".join(listed[1].split("\n")).replace(" ", "")
    assert_short_lines(dialog)
    assert max(escaped) <= GUI_TEXT


def test_the_events_raw_tab_shows_a_huge_payload_in_short_lines(
    qtbot, journal_path, huge, open_desk, monkeypatch
):
    with Journal.open(journal_path, actor=Actor.agent("ops-bot")) as a:
        a.runs.append_events(huge["run"], [("step", {"out": COMMAND})])
    window = open_desk(journal_path)
    seen = Recorder(monkeypatch)
    window.show_run(huge["run"])
    events = window.runs.detail.events_pane
    qtbot.waitUntil(lambda: events.model.rowCount() > 0, timeout=WAIT_MS)
    pane = events.detail
    last = events.model.rowCount() - 1
    events.table.setCurrentIndex(events.model.index(last, 0))
    qtbot.waitUntil(lambda: pane.shown is not None and pane.shown.type == "step", timeout=WAIT_MS)
    wait_presented(qtbot)
    raw = pane.raw.toPlainText()
    assert raw.startswith("{") and "more characters" in raw.split("\n")[-1]
    assert longest_line(raw) <= LINE_CHARS
    assert seen.most_escaped_on_gui() <= GUI_TEXT
    assert seen.most_dumped_on_gui() < HUGE
    assert json.loads(json.dumps(pane.shown.payload)) == {"out": COMMAND}  # the data itself


def test_timeline_bars_are_elided_once_and_painted_from_the_cache(qtbot, monkeypatch):
    """Repainting the timeline (a scroll, a hover, a live update) elides no bar's text
    again; only a zoom that changes a bar's width may."""
    from proctor.core.audit.timeline import RunTimeline, Span
    from proctor.gui.timeline.view import TimelineView

    t = 1_750_000_000.0
    spans = [
        Span(
            lane="tool",
            id=f"t{n}",
            label=f"tool call {n} " + "x" * 200,
            status="succeeded",
            start=t + n,
            end=t + n + 0.9,
            detail={},
        )
        for n in range(200)
    ]
    calls = {"n": 0}
    real = QFontMetrics.elidedText

    def counted(self, *args):
        calls["n"] += 1
        return real(self, *args)

    monkeypatch.setattr(QFontMetrics, "elidedText", counted)
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1200, 300)
    view.show()
    view.set_timeline(RunTimeline(run_id="r", start=t, end=t + 200, live=False, spans=spans))
    qtbot.waitUntil(lambda: not view.packing() and len(view.bars) == 200, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: view.fitted and view.pps > 0, timeout=WAIT_MS)
    fitted = view.pps
    view.zoom(30.0)  # bars of 0.9 s wide enough for their text
    qtbot.waitUntil(lambda: view.pps > 10 * fitted, timeout=WAIT_MS)

    def painted_with_text() -> bool:  # the bars in sight, once the zoom is laid out
        view.viewport().repaint()
        return calls["n"] > 0

    qtbot.waitUntil(painted_with_text, timeout=WAIT_MS)
    first = calls["n"]
    for _ in range(3):
        view.viewport().repaint()
    assert calls["n"] == first


def test_a_4000_line_diff_review_is_parsed_on_the_presentation_pool(qtbot, monkeypatch):
    """unidiff parsing a 4,000-line patch took the GUI thread for up to 0.8 s: the review
    says it is preparing, the patch is parsed on a presentation worker, then shown."""
    from proctor.core.models import Question
    from proctor.gui.forms import diff as diff_mod
    from proctor.gui.forms import review

    threads: list[int] = []
    real = diff_mod.from_unified

    def parse(text, path=""):
        threads.append(threading.get_ident())
        return real(text, path)

    monkeypatch.setattr(diff_mod, "from_unified", parse)
    patch = "--- a/big.txt\n+++ b/big.txt\n@@ -1,2000 +1,2000 @@\n" + "".join(
        f"-old line {n}\n+new line {n}\n" for n in range(2000)
    )
    question = Question.model_construct(
        id="q_big", kind="diff_review", request={"diff": patch, "path": "big.txt"}
    )
    view = review.diff_material(question)
    qtbot.addWidget(view)
    view.show()
    wait_presented(qtbot)
    assert threads and threading.get_ident() not in threads
    assert view.table.model().rowCount() > 2000 and "−2000 +2000" in view.head.text()
    assert "new line 1999" in view.unified.toPlainText()


def test_a_timeline_paint_touches_the_bars_in_sight_not_the_runs(qtbot, monkeypatch):
    """Each row is planned once per zoom (its bars walked once); a scroll or a repaint at
    that zoom reads the bars in sight from the plan. The old paint walked each row's bars,
    and from the first still-open bar of a crowded row on it walked all the rest, at every
    paint: 1.4 s on a 20,000-call run (tests/bench/freeze_bench.py)."""
    from proctor.core.audit.timeline import RunTimeline, Span
    from proctor.gui.timeline import view as view_mod

    t, calls = 1_750_000_000.0, 6000
    spans = [
        Span(
            lane="tool",
            id=f"t{n:05d}",
            label=f"call {n}",
            status="running" if n % 3 == 0 else "succeeded",
            start=t + n,
            end=None if n % 3 == 0 else t + n + 0.9,  # every third still open: to the end
            detail={},
        )
        for n in range(calls)
    ]
    touched = {"n": 0}
    slot = view_mod.Bar.span  # the slot a walk over a row's bars reads

    def get(bar):
        touched["n"] += 1
        return slot.__get__(bar)

    monkeypatch.setattr(view_mod.Bar, "span", property(get, slot.__set__))
    view = view_mod.TimelineView()
    view.clock = lambda: t + calls + 10
    qtbot.addWidget(view)
    view.resize(1200, 300)
    view.show()
    view.set_timeline(RunTimeline(run_id="r", start=t, end=t + calls, live=True, spans=spans))
    qtbot.waitUntil(lambda: not view.packing() and len(view.bars) == calls, timeout=WAIT_MS)
    view.zoom(200.0)  # about 40 s in sight: a few dozen bars
    view.viewport().repaint()  # the zoom's plan: every bar once
    bar = view.horizontalScrollBar()
    assert bar.maximum() > 0
    touched["n"] = 0
    for at in (0.2, 0.5, 0.8):  # scrolled, repainted, hovered
        bar.setValue(round(bar.maximum() * at))
        view.viewport().repaint()
        view.viewport().repaint()
    # a few reads per bar painted (~40 in sight), not one per bar of the run per paint
    assert touched["n"] < 6 * calls // 20, f"{touched['n']:,} bar reads in 6 paints"
    middle = view.item_for("t03001")  # the bar under a point is still found
    assert middle is not None
    view.center_on_time(middle.span.start + 0.5)
    point = view.mapFromScene(
        QPointF(view.x_of(middle.span.start + 0.5), middle.rect().center().y())
    )
    with qtbot.waitSignal(view.span_clicked) as clicked:
        view.click_at(QPointF(point))
    assert clicked.args[0].id == "t03001"


def test_a_4000_line_diff_review_makes_no_cell_per_line_on_the_gui_thread(qtbot, monkeypatch):
    """The side by side reads its cells from the parsed rows as they are painted: the old
    view made a table item per cell (8,000 for this patch) on the GUI thread, and sized
    the line-number columns by asking every row (0.1-0.3 s when the review was shown)."""
    from proctor.core.models import Question
    from proctor.gui.forms import review

    cells = {"n": 0}
    real_item = getattr(review, "QTableWidgetItem", None)  # (the old view's cells)
    if real_item is not None:

        class Counted(real_item):
            def __init__(self, *args):
                cells["n"] += 1
                super().__init__(*args)

        monkeypatch.setattr(review, "QTableWidgetItem", Counted)
    model = getattr(review, "DiffModel", None)
    if model is not None:
        real_data = model.data

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            cells["n"] += 1
            return real_data(self, index, role)

        monkeypatch.setattr(model, "data", data)
    patch = "--- a/big.txt\n+++ b/big.txt\n@@ -1,2000 +1,2000 @@\n" + "".join(
        f"-old line {n}\n+new line {n}\n" for n in range(2000)
    )
    question = Question.model_construct(
        id="q_big", kind="diff_review", request={"diff": patch, "path": "big.txt"}
    )
    view = review.diff_material(question)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    wait_presented(qtbot)
    view.repaint()
    rows = view.table.model().rowCount()
    assert rows > 2000
    assert cells["n"] < 2000, f"{cells['n']:,} cells made or read for {rows:,} rows"
    last = view.table.model().index(rows - 1, 3)
    assert last.data() == "new line 1999"  # every row is there, read when asked
