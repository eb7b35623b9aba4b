"""Opening an open question in the desk marks it presented, once (issue 5): from the
Inbox or from the run's "Waiting for you" tab, never from a read-only desk, and the
operator's answer is not made stale by it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS, settled
from ..driver import Desk
from ..runs.test_runs_detail import open_run

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1


def read(path, fn):
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        return fn(j)


def presented_events(path, run_id: str, qid: str) -> list:
    events = read(path, lambda j: j.runs.events(run_id, types=["interaction.presented"]))
    return [e for e in events if e.payload.get("interaction_id") == qid]


def status(path, qid: str) -> str:
    return read(path, lambda j: j.questions.get(qid).status.value)


def open_in_inbox(qtbot, window, qid: str):
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(f"question:{qid}") >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(f"question:{qid}"))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.id == qid
        ),
        timeout=WAIT_MS,
    )
    return pane.current()


def select_item(qtbot, window, key: str) -> None:
    Desk(qtbot, window).select_inbox_item(key)


def test_opening_a_question_in_the_inbox_marks_it_presented_once(qtbot, populated, open_desk):
    path, ids = populated
    qid = ids["question"]
    assert status(path, qid) == "requested"
    window = open_desk(path)
    detail = open_in_inbox(qtbot, window, qid)
    qtbot.waitUntil(lambda: status(path, qid) == "presented", timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: (
            "Seen by operator:alice at" in detail.seen.text()
            and detail.entity.status.value == "presented"
        ),
        timeout=WAIT_MS,
    )
    [event] = presented_events(path, ids["run"], qid)
    assert event.actor == "operator:alice"
    select_item(qtbot, window, f"approval:{ids['approval']}")  # away and back again
    qtbot.waitUntil(
        lambda: (
            window.inbox.detail.current().entity is not None
            and window.inbox.detail.current().entity.id == ids["approval"]
        ),
        timeout=WAIT_MS,
    )
    detail = open_in_inbox(qtbot, window, qid)
    qtbot.waitUntil(lambda: "Seen by operator:alice" in detail.seen.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert len(presented_events(path, ids["run"], qid)) == 1
    # the answer passes the version this desk loaded: being seen did not make it stale
    qtbot.waitUntil(window.isActiveWindow)
    detail.view.buttons[0].setFocus()
    qtbot.keyClick(detail.view.buttons[0], Qt.Key.Key_2)
    qtbot.waitUntil(detail.submit_button.isEnabled, timeout=WAIT_MS)
    settled(qtbot, window)  # read it first: a click on what just appeared does nothing
    qtbot.mouseClick(detail.submit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: status(path, qid) == "resolved", timeout=WAIT_MS)
    answered = read(path, lambda j: j.questions.get(qid))
    assert answered.response == {"choice": "USD"} and answered.resolved_by == "operator:alice"


def test_the_runs_waiting_tab_marks_it_only_when_the_question_is_shown(qtbot, populated, open_desk):
    path, ids = populated
    qid = ids["question"]
    window = open_desk(path)
    window.go("runs")
    detail = open_run(qtbot, window, ids["run"])
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 3, timeout=WAIT_MS)
    row = next(r for r in range(3) if pending.items.item(r).data(ITEM_ROLE).id == qid)
    pending.list.setCurrentIndex(pending.items.index(row, 0))  # chosen, tab not shown yet
    widget = pending.detail.current()
    qtbot.waitUntil(lambda: widget.entity is not None and widget.entity.id == qid, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert status(path, qid) == "requested"  # loaded on a hidden tab: nobody saw it
    detail.tabs.setCurrentWidget(pending)
    qtbot.waitUntil(lambda: status(path, qid) == "presented", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "Seen by operator:alice" in widget.seen.text(), timeout=WAIT_MS)
    assert len(presented_events(path, ids["run"], qid)) == 1


def test_a_read_only_desk_does_not_mark_it(qtbot, populated, open_desk):
    path, ids = populated
    qid = ids["question"]
    window = open_desk(path, read_only=True)
    detail = open_in_inbox(qtbot, window, qid)
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert status(path, qid) == "requested"
    assert presented_events(path, ids["run"], qid) == []
    assert "Seen by" not in detail.seen.text()
    assert detail.message.text() == ""  # nothing refused was shown to the operator
