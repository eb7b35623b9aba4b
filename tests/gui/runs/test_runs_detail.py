"""The run detail: live tail without moving the operator's scroll, tampering shown at the
right sequence, deciding the run's waiting items here, request cancel, jump to time,
find in payloads, type filter, copy as JSON, export -> import with the same digests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading

import pytest
from PySide6.QtCore import QDateTime, Qt
from PySide6.QtGui import QGuiApplication

from proctor.core import Actor, Journal
from proctor.core.audit import timeline
from proctor.core.audit.verify import verify
from proctor.core.models import InboxKind
from proctor.core.ops.transfer import import_run, read_export
from proctor.gui.widgets.dialogs import ReasonDialog
from proctor.gui.widgets.export import SaveDialog

from ..conftest import WAIT_MS
from ..data import agent
from ..timeline_data import T0, add_big_run

MID = "run_mid000000000000000001"

APPEND = """
import sys
from proctor.core import Actor, Journal
j = Journal.open(sys.argv[1], actor=Actor.agent("live-agent"))
run_id, n = sys.argv[2], int(sys.argv[3])
for k in range(0, n, 10):
    j.runs.append_events(run_id, [("log", {"k": k + i}) for i in range(min(10, n - k))])
j.close()
print("DONE", flush=True)
"""


def append_in_process(path, run_id: str, n: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", APPEND, str(path), run_id, str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def open_run(qtbot, window, run_id: str):
    window.show_run(run_id)
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == run_id, timeout=WAIT_MS)
    return detail


@pytest.fixture
def live_run(journal_path):
    with agent(journal_path, "live-agent") as a:
        run = a.runs.start("shop", "A live run", agent="live-agent")
        a.runs.append_events(run.id, [("step", {"n": n}) for n in range(300)])
    return run.id


def test_live_events_keep_the_scroll_unless_following(qtbot, journal_path, live_run, open_desk):
    detail = open_run(qtbot, open_desk(journal_path), live_run)
    pane, model = detail.events_pane, detail.events
    assert pane.follow.isChecked()  # a live run opens following its tail
    pane.select_sequence(40)  # the operator reads something: following stops
    assert not pane.follow.isChecked()
    bar = pane.table.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and pane.detail.shown is not None, timeout=WAIT_MS)
    where, rows = bar.value(), model.rowCount()
    proc = append_in_process(journal_path, live_run, 50)
    qtbot.waitUntil(lambda: model.rowCount() == rows + 50, timeout=WAIT_MS)
    assert proc.wait(30) == 0
    assert bar.value() == where  # not moved
    assert pane.current_sequence() == 40 and pane.detail.shown.sequence == 40
    pane.follow.setChecked(True)  # now follow the tail
    proc = append_in_process(journal_path, live_run, 30)
    qtbot.waitUntil(lambda: model.rowCount() == rows + 80, timeout=WAIT_MS)
    assert proc.wait(30) == 0
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=WAIT_MS)
    last = model.index(model.rowCount() - 1, 0)
    assert pane.table.viewport().rect().intersects(pane.table.visualRect(last))
    qtbot.waitUntil(lambda: model.is_loaded(model.rowCount() - 1), timeout=WAIT_MS)


def test_tampered_event_shows_the_broken_link_at_its_sequence(
    qtbot, journal_path, live_run, open_desk
):
    conn = sqlite3.connect(str(journal_path), isolation_level=None)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f'DROP TRIGGER "{name}"')
    conn.execute(
        'UPDATE events SET payload = \'{"n":"forged"}\' WHERE run_id = ? AND sequence = 123',
        (live_run,),
    )
    conn.close()
    detail = open_run(qtbot, open_desk(journal_path), live_run)
    detail.tabs.setCurrentWidget(detail.integrity)  # verifying starts when shown
    pane = detail.integrity
    qtbot.waitUntil(lambda: pane.status is not None, timeout=WAIT_MS)
    assert pane.status.broken_sequence == 123 and not pane.status.ok
    assert "broken at event #123" in pane.result.text()
    assert "#1–#122 verify" in pane.result.text()
    assert "evidence triggers are missing" in pane.result.text()
    assert [pane.around.event_at(r).sequence for r in range(pane.around.rowCount())] == [
        121,
        122,
        123,
        124,
        125,
    ]
    qtbot.mouseClick(pane.show_button, Qt.MouseButton.LeftButton)
    assert detail.tabs.currentWidget() is detail.events_pane
    qtbot.waitUntil(
        lambda: (
            detail.events_pane.detail.shown is not None
            and detail.events_pane.detail.shown.sequence == 123
        ),
        timeout=WAIT_MS,
    )
    assert detail.events_pane.detail.shown.payload == {"n": "forged"}


def test_an_intact_run_verifies(qtbot, journal_path, live_run, open_desk):
    detail = open_run(qtbot, open_desk(journal_path), live_run)
    detail.tabs.setCurrentWidget(detail.integrity)
    qtbot.waitUntil(lambda: detail.integrity.status is not None, timeout=WAIT_MS)
    assert detail.integrity.status.ok and detail.integrity.status.checked_events == 301
    assert "The chain verifies" in detail.integrity.result.text()


def test_decide_the_runs_waiting_items_here(qtbot, populated, open_desk):
    path, ids = populated
    detail = open_run(qtbot, open_desk(path), ids["run"])
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 3, timeout=WAIT_MS)
    assert [pending.items.item(r).data(Qt.ItemDataRole.UserRole + 1).kind for r in range(3)] == [
        InboxKind.APPROVAL,
        InboxKind.APPROVAL,
        InboxKind.QUESTION,
    ]
    assert "Waiting for you (3)" in detail.tabs.tabText(detail.tabs.indexOf(pending))
    row = next(
        r
        for r in range(3)
        if pending.items.item(r).data(Qt.ItemDataRole.UserRole + 1).id == ids["approval"]
    )
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == ids["approval"], timeout=WAIT_MS
    )
    qtbot.keyClicks(widget.reason, "fix verified locally")
    assert pending.registry.trigger("inbox.approve")
    qtbot.waitUntil(lambda: pending.count() == 2, timeout=WAIT_MS)
    with Journal.open(path, actor=Actor.operator("check")) as j:
        approval = j.approvals.get(ids["approval"])
    assert approval.status.value == "approved" and approval.decided_by == "operator:alice"
    assert approval.decision_reason == "fix verified locally"
    # the window's own approve shortcut still belongs to the inbox (no ambiguity)
    assert pending.registry.action("inbox.approve").shortcuts() == []


def test_request_cancel_with_a_reason(qtbot, journal_path, live_run, open_desk, monkeypatch):
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda cls, *a, **k: "wrong branch"))
    detail = open_run(qtbot, open_desk(journal_path), live_run)
    assert detail.cancel_button.isEnabled()
    qtbot.mouseClick(detail.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: detail.run.cancel_requested, timeout=WAIT_MS)
    assert not detail.cancel_button.isEnabled()
    assert "Cancel requested: wrong branch" in detail.ending.text()
    with Journal.open(journal_path, actor=Actor.operator("check")) as j:
        [entry] = j.audit.list(action_prefix="run.cancel").items
        assert entry.actor == "operator:alice" and entry.reason == "wrong branch"
        assert j.runs.events(live_run, descending=True, limit=1)[0].type == "run.cancel_requested"


def test_a_cancel_asked_while_the_agent_writes_is_not_stale(
    qtbot, journal_path, live_run, open_desk, monkeypatch
):
    """The agent appends events while the operator types the reason (every event steps the
    run's version): the cancel goes through, not "stale" (6 of 17 tries in the scripted
    operator session were refused so)."""

    def typed_while_the_agent_works(cls, *args, **kwargs):
        with agent(journal_path, "bot") as a:
            a.runs.append_events(live_run, [("step", {"n": n}) for n in range(3)])
        return "wrong branch"

    monkeypatch.setattr(ReasonDialog, "ask", classmethod(typed_while_the_agent_works))
    detail = open_run(qtbot, open_desk(journal_path), live_run)
    qtbot.mouseClick(detail.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: detail.run.cancel_requested, timeout=WAIT_MS)
    assert "Cancel requested: wrong branch" in detail.ending.text()


def test_a_failed_run_says_why_and_shows_its_last_event(qtbot, journal_path, open_desk):
    with agent(journal_path, "tester") as a:
        run = a.runs.start("shop", "Migrate the orders table", agent="tester")
        a.runs.append_events(run.id, [("step", {"n": n}) for n in range(40)])
        a.runs.fail(run.id, "migration 0042 failed: column exists")
    detail = open_run(qtbot, open_desk(journal_path), run.id)
    assert detail.ending.text() == "Failed: migration 0042 failed: column exists"
    assert detail.status_text.text() == "failed"
    qtbot.mouseClick(detail.show_end, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: detail.events_pane.detail.shown is not None, timeout=WAIT_MS)
    shown = detail.events_pane.detail.shown
    assert shown.type == "run.failed" and shown.sequence == 42
    # a failed run cannot be cancelled: the header's button is its Retry (0013u), not a cancel
    assert not detail.can_cancel() and detail.can_retry()


def test_the_timeline_keeps_its_lanes_when_the_page_changes_height(qtbot, journal_path, open_desk):
    """The timeline gets the height its lanes need (up to half the page) whenever the
    page's height changes — a first fit made while the window was small, or a message
    shown above it, never leaves it squeezed to one lane."""
    with agent(journal_path, "tester") as a:
        run = a.runs.start("shop", "A run with every lane", agent="tester")
        a.approvals.request(run.id, {"tool": "deploy", "args": {}}, reason="ship it")
        a.runs.append_events(run.id, [("step", {"n": n}) for n in range(10)])
    window = open_desk(journal_path)
    window.resize(900, 420)  # small while the timeline is first fitted
    detail = open_run(qtbot, window, run.id)
    qtbot.waitUntil(lambda: detail.timeline.view.timeline is not None, timeout=WAIT_MS)
    window.resize(1300, 1000)
    detail.message.show_message("one message")  # and a second line above the split

    def fitted() -> bool:
        top, bottom = detail.splitter.sizes()
        want = min(detail.timeline.preferred_height(), (top + bottom) // 2)
        return abs(top - want) <= 2

    qtbot.waitUntil(fitted, timeout=WAIT_MS)
    assert detail.splitter.sizes()[0] >= detail.timeline.preferred_height() - 2


@pytest.fixture
def mid_path(journal_path):
    add_big_run(journal_path, MID, 1_000, title="A middling run")
    return journal_path


def test_type_filter_jump_to_time_and_find(qtbot, mid_path, open_desk):
    detail = open_run(qtbot, open_desk(mid_path), MID)
    pane = detail.events_pane
    qtbot.waitUntil(lambda: pane.type_filter.count() > 2, timeout=WAIT_MS)
    index = pane.type_filter.findData(["log"])
    assert pane.type_filter.itemText(index).startswith("log (")
    pane.type_filter.setCurrentIndex(index)
    pane.type_filter.activated.emit(index)
    qtbot.waitUntil(lambda: pane.model.rowCount() == 200, timeout=WAIT_MS)
    assert "200 events of log" in pane.note.text()
    pane.when.setDateTime(QDateTime.fromMSecsSinceEpoch(int((T0 + 6) * 1000)))
    qtbot.mouseClick(pane.go_time, Qt.MouseButton.LeftButton)  # jumping drops the filter
    qtbot.waitUntil(lambda: pane.current_sequence() == 600, timeout=WAIT_MS)
    assert pane.model.rowCount() == 1_000 and pane.type_filter.currentIndex() == 0
    pane.find_box.setText('"needle":true')
    qtbot.keyClick(pane.find_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pane.current_sequence() == 500, timeout=WAIT_MS)
    pane.find_next.click()  # the only match: wraps around to itself
    qtbot.waitUntil(lambda: "wrapped" in pane.note.text(), timeout=WAIT_MS)
    pane.find_box.setText("no such text anywhere")
    pane.find_next.click()
    qtbot.waitUntil(lambda: "No event contains" in pane.note.text(), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: pane.detail.shown is not None and pane.detail.shown.sequence == 500, timeout=WAIT_MS
    )
    pane.detail.copy_event.click()
    copied = json.loads(QGuiApplication.clipboard().text())
    assert copied["sequence"] == 500 and copied["payload"]["needle"] is True
    assert copied["digest"] == pane.detail.shown.digest
    assert json.loads(pane.detail.raw.toPlainText()) == pane.detail.shown.payload


def test_clicking_a_bar_selects_its_event(qtbot, journal_path, open_desk):
    with agent(journal_path, "tester") as a:
        run = a.runs.start("shop", "Tools", agent="tester")
        a.runs.append_events(run.id, [("step", {"n": n}) for n in range(20)])
        call = a.runs.record_tool_call(run.id, "fs.read", {"path": "a.py"})
        a.runs.append_events(run.id, [("step", {"n": n}) for n in range(20)])
        a.runs.finish_tool_call(call.id, "succeeded", result={"bytes": 3})
    detail = open_run(qtbot, open_desk(journal_path), run.id)
    view = detail.timeline.view
    qtbot.waitUntil(lambda: view.item_for(call.id) is not None, timeout=WAIT_MS)
    bar = view.item_for(call.id)
    point = view.mapFromScene(bar.rect().center())
    with qtbot.waitSignal(detail.timeline.sequence_chosen, timeout=WAIT_MS) as chosen:
        view.click_at(point.toPointF())
    assert chosen.args == [22]  # the tool.called event
    qtbot.waitUntil(
        lambda: (
            detail.events_pane.detail.shown is not None
            and detail.events_pane.detail.shown.type == "tool.called"
        ),
        timeout=WAIT_MS,
    )
    assert "fs.read" in detail.timeline.info.text()


def test_export_from_the_desk_imports_with_the_same_digests(
    qtbot, populated, open_desk, tmp_path, monkeypatch, template_target
):
    path, ids = populated
    out = tmp_path / "run.json"
    monkeypatch.setattr(SaveDialog, "ask", classmethod(lambda cls, *a: str(out)))
    detail = open_run(qtbot, open_desk(path), ids["run2"])
    detail._export_json()
    qtbot.waitUntil(lambda: "Wrote" in detail.message.text(), timeout=WAIT_MS)
    with Journal.open(template_target, actor=Actor.operator("importer")) as target:
        report = import_run(target, read_export(out))
        assert report.verify.ok
        theirs = target.runs.events(ids["run2"], limit=1000)
        assert verify(target).ok
    with Journal.open(path, actor=Actor.operator("check")) as source:
        ours = source.runs.events(ids["run2"], limit=1000)
    assert [(e.id, e.sequence, e.digest) for e in theirs] == [
        (e.id, e.sequence, e.digest) for e in ours
    ]


@pytest.fixture
def template_target(tmp_path):
    target = tmp_path / "target.db"
    Journal.open(target).close()  # a fresh, empty journal
    return target


def held_first_call(monkeypatch, module, name: str):
    """Patch ``module.name`` so that its first call, once it has read, waits for ``release``."""
    read, release = threading.Event(), threading.Event()
    real = getattr(module, name)

    def held(*args, **kw):
        found = real(*args, **kw)
        if not read.is_set():
            read.set()
            release.wait(WAIT_MS / 1000)
        return found

    monkeypatch.setattr(module, name, held)
    return read, release


@pytest.mark.parametrize("search", ["find", "time"])
def test_a_search_of_the_run_shown_before_is_not_delivered_to_the_next(
    qtbot, mid_path, live_run, open_desk, monkeypatch, search
):
    window = open_desk(mid_path)
    pane = open_run(qtbot, window, MID).events_pane
    runner = pane.ctx.runner
    if search == "find":
        read, release = held_first_call(monkeypatch, timeline, "find_event")
        pane.find_box.setText('"needle":true')
        pane.find_next.click()
    else:
        read, release = held_first_call(monkeypatch, timeline, "sequence_at")
        pane.when.setDateTime(QDateTime.fromMSecsSinceEpoch(int((T0 + 6) * 1000)))
        pane.go_time.click()
    assert read.wait(WAIT_MS / 1000)  # run A's search has read its answer (#500 / #600)
    open_run(qtbot, window, live_run)
    release.set()
    qtbot.waitUntil(lambda: not runner.keyed(search, pane), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    assert pane.run.id == live_run
    assert pane.note.text() == ""
    assert pane._pending_sequence is None
    assert pane.current_sequence() not in (500, 600)


def test_opening_another_run_while_one_verifies_verifies_the_new_one(
    qtbot, mid_path, live_run, open_desk, monkeypatch
):
    window = open_desk(mid_path)
    detail = open_run(qtbot, window, MID)
    read, release = held_first_call(monkeypatch, timeline, "chain_status")
    detail.tabs.setCurrentWidget(detail.integrity)
    assert read.wait(WAIT_MS / 1000)  # run A's check is in flight
    open_run(qtbot, window, live_run)
    release.set()
    qtbot.waitUntil(lambda: detail.integrity.status is not None, timeout=WAIT_MS)
    assert detail.integrity.run_id == live_run
    assert detail.integrity.status.ok and detail.integrity.status.checked_events == 301
    assert "The chain verifies" in detail.integrity.result.text()
