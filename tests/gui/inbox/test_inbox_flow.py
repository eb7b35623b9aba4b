"""End to end: an agent process asks, the operator decides from the keyboard, the agent
sees the decision and consumes it. Real journal file, real window, no sleeps."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from proctor.core import Actor, Journal
from proctor.gui.inbox.bulk import BulkDecisionDialog
from proctor.gui.widgets.dialogs import ReasonDialog, SnoozeDialog

from ..conftest import WAIT_MS
from ..data import expire_later
from ..driver import Desk


def wait_row(qtbot, window, approval_id: str) -> None:
    """Wait until the approval is a row; held behind the "N new" bar (a key was pressed a
    moment ago), the operator lets it in as a person would, with the bar's Show."""
    Desk(qtbot, window).inbox_row(f"approval:{approval_id}")


def select(qtbot, window, approval_id: str) -> None:
    Desk(qtbot, window).open_inbox_item(f"approval:{approval_id}")


def press(qtbot, window, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.waitUntil(window.isActiveWindow)
    window.inbox.table.setFocus()
    qtbot.keyClick(window.inbox.table, key, modifier)


def test_keyboard_approve_reaches_agent(qtbot, journal_path, open_desk, agents):
    window = open_desk(journal_path)
    agent = agents(journal_path)
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    press(qtbot, window, Qt.Key.Key_A)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status.split()[2:4] == ["approved", "operator:alice"]
    assert agent.wait_for(qtbot, "CONSUMED") == [f"CONSUMED {approval_id} reserved"]
    model = window.inbox.model
    Desk(qtbot, window).wait_gone(model, f"approval:{approval_id}")


def test_keyboard_deny_with_typed_reason(qtbot, journal_path, open_desk, agents):
    window = open_desk(journal_path)
    agent = agents(journal_path)
    [approval_id] = agent.requested() or [
        line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")
    ]
    select(qtbot, window, approval_id)
    reason_box = window.inbox.detail.current().reason
    qtbot.keyClicks(reason_box, "staging is frozen")
    press(qtbot, window, Qt.Key.Key_D)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status.split()[2:4] == ["denied", "operator:alice"]
    assert status.endswith("staging is frozen")
    assert not agent.found("CONSUMED")


def test_deny_without_reason_asks_for_one(qtbot, journal_path, open_desk, agents, monkeypatch):
    window = open_desk(journal_path)
    agent = agents(journal_path)
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    asked = []
    monkeypatch.setattr(
        ReasonDialog, "ask", lambda *a, **k: asked.append(a) or "not during the freeze"
    )
    press(qtbot, window, Qt.Key.Key_D)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert len(asked) == 1
    assert "denied" in status and status.endswith("not during the freeze")


def test_snooze_hides_until_woken_then_approve(qtbot, journal_path, open_desk, agents, monkeypatch):
    window = open_desk(journal_path)
    agent = agents(journal_path)
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    monkeypatch.setattr(SnoozeDialog, "ask", lambda *a, **k: time.time() + 3600)
    press(qtbot, window, Qt.Key.Key_S)
    model, key = window.inbox.model, f"approval:{approval_id}"
    qtbot.waitUntil(lambda: model.row_of(key) < 0, timeout=WAIT_MS)
    assert not agent.found("STATUS")  # snoozing is not a decision
    window.inbox.filters.snoozed.setChecked(True)
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    assert "snoozed" in model.index(model.row_of(key), 4).data()
    select(qtbot, window, approval_id)
    press(qtbot, window, Qt.Key.Key_A)
    assert agent.wait_for(qtbot, "CONSUMED") == [f"CONSUMED {approval_id} reserved"]


def test_bulk_approve_confirms_the_count(qtbot, journal_path, open_desk, agents, monkeypatch):
    window = open_desk(journal_path)
    agent = agents(journal_path, "--count", "3")
    ids = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED", 3)]
    for approval_id in ids:
        wait_row(qtbot, window, approval_id)
    confirmations = []
    monkeypatch.setattr(
        BulkDecisionDialog,
        "exec",
        lambda dialog: confirmations.append(dialog.windowTitle()) or QDialog.DialogCode.Accepted,
    )
    window.inbox.set_current_row(0)
    for _ in ids:
        press(qtbot, window, Qt.Key.Key_X)
        press(qtbot, window, Qt.Key.Key_J)
    assert len(window.inbox.targets()) == 3
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: len(confirmations) == 1, timeout=WAIT_MS)
    assert "Approve 3 approvals" in confirmations[0]
    consumed = agent.wait_for(qtbot, "CONSUMED", 3)
    assert sorted(line.split()[1] for line in consumed) == sorted(ids)
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 0, timeout=WAIT_MS)


def test_bulk_cancelled_decides_nothing(qtbot, journal_path, open_desk, agents, monkeypatch):
    window = open_desk(journal_path)
    agent = agents(journal_path, "--count", "2", "--wait", "3")
    ids = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED", 2)]
    for approval_id in ids:
        wait_row(qtbot, window, approval_id)
    asked = []
    monkeypatch.setattr(
        BulkDecisionDialog,
        "exec",
        lambda dialog: asked.append(dialog) or QDialog.DialogCode.Rejected,
    )
    window.inbox.table.selectAll()
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=WAIT_MS)
    statuses = agent.wait_for(qtbot, "STATUS", 2)
    assert all(line.split()[2] == "pending" for line in statuses)


def typed_then_bob_decides(qtbot, journal_path, window, agents):
    """An agent's approval is shown with a reason typed; then bob approves it in another
    process while this desk's watcher is paused (the desk has not seen it: a click now is
    stale). Returns (agent, approval_id, the detail widget)."""
    agent = agents(journal_path)
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    detail = window.inbox.detail.current()
    qtbot.keyClicks(detail.reason, "looks fine to me")
    window.services.watcher.pause()
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        bob.approvals.decide(approval_id, True, expected_version=1, reason="bob was quicker")
    return agent, approval_id, detail


def test_stale_click_after_second_operator_keeps_reason(qtbot, journal_path, open_desk, agents):
    window = open_desk(journal_path)
    agent, approval_id, detail = typed_then_bob_decides(qtbot, journal_path, window, agents)
    watcher = window.services.watcher
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: "operator:bob" in detail.message.text(), timeout=WAIT_MS)
    assert "already approved" in detail.message.text()
    assert detail.reason.toPlainText() == "looks fine to me"
    watcher.start(watcher.last_seq)  # now the desk sees bob's decision too
    qtbot.waitUntil(lambda: "operator:bob" in detail.state.text(), timeout=WAIT_MS)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status.split()[2:4] == ["approved", "operator:bob"]
    assert window.inbox.detail.current_item().id == approval_id  # still shown, not replaced


def test_stale_click_after_expiry_keeps_reason(qtbot, journal_path, open_desk, agents):
    window = open_desk(journal_path)
    agent = agents(journal_path, "--expires", "3600")
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    detail = window.inbox.detail.current()
    qtbot.keyClicks(detail.reason, "ok once")
    assert expire_later(journal_path) == 1  # expires while the operator looks at it
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status.split()[2] == "expired"
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") < 0, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: detail.state.text().startswith("Expired"), timeout=WAIT_MS)
    assert window.inbox.detail.current_item().id == approval_id
    # the desk saw the expiry: Approve is off at once (issue 16), and a press does nothing
    qtbot.waitUntil(
        lambda: not window.registry.action("inbox.approve").isEnabled(), timeout=WAIT_MS
    )
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert detail.reason.toPlainText() == "ok once"
    assert not agent.found("CONSUMED")


def test_stale_click_refused_after_the_desk_saw_the_other_decision(
    qtbot, journal_path, open_desk, agents, monkeypatch
):
    """The click is on its way when the desk sees that bob decided: the item stays shown
    (the desk cannot know yet whose decision it was), and the refusal lands next to the
    operator's reason."""
    window = open_desk(journal_path)
    _agent, approval_id, detail = typed_then_bob_decides(qtbot, journal_path, window, agents)
    watcher = window.services.watcher
    approvals = window.journal.unguarded.approvals
    decide, gate = approvals.decide, threading.Event()

    def held(*args, **kwargs):  # the click waits for the gate
        gate.wait(WAIT_MS / 1000)
        return decide(*args, **kwargs)

    monkeypatch.setattr(approvals, "decide", held)
    press(qtbot, window, Qt.Key.Key_A)
    assert window.inbox.decider.busy(f"approval:{approval_id}")
    watcher.start(watcher.last_seq)  # the desk sees bob's decision while the click waits
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(f"approval:{approval_id}") < 0, timeout=WAIT_MS)
    gate.set()
    qtbot.waitUntil(lambda: "operator:bob" in detail.message.text(), timeout=WAIT_MS)
    assert "already approved" in detail.message.text()
    assert window.inbox.detail.current_item().id == approval_id
    assert detail.reason.toPlainText() == "looks fine to me"
