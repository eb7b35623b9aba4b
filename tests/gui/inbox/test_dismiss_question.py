"""Issue 37: the operator dismisses a question from the desk without answering it (the
detail's Dismiss button, or the command), with a reason; the agent process waiting on it
sees it dismissed, with that reason, and the detail says so."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.widgets.dialogs import ReasonDialog

from ..conftest import WAIT_MS, settled
from ..driver import LEFT, Desk
from ..runs.test_runs_detail import open_run

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1

QUESTION_AGENT = Path(__file__).parents[1] / "question_agent.py"


def test_dismiss_from_the_detail_reaches_the_waiting_agent(
    qtbot, journal_path, open_desk, agents, monkeypatch
):
    window = open_desk(journal_path)
    agent = agents(journal_path, script=QUESTION_AGENT)
    [line] = agent.wait_for(qtbot, "ASKED")
    qid = line.split()[1]
    asked: list[tuple] = []
    monkeypatch.setattr(
        ReasonDialog, "ask", lambda *a, **k: asked.append(a) or "the order was cancelled"
    )
    detail = Desk(qtbot, window).open_question(qid)
    button = detail.dismiss_button
    assert button.isVisible() and button.text().replace("&", "") == "Dismiss…"
    qtbot.waitUntil(button.isEnabled, timeout=WAIT_MS)
    settled(qtbot, detail)
    qtbot.mouseClick(button, LEFT)
    [got] = agent.wait_for(qtbot, "GOT")
    assert got == f"GOT {qid} dismissed dismissed by the operator: the order was cancelled"
    assert len(asked) == 1
    Desk(qtbot, window).wait_gone(window.inbox.model, f"question:{qid}")
    assert "Dismissed “Which warehouse ships the order?”" in window.inbox.message.text()
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        [decision] = j.approvals.decisions(qid)
    assert decision.actor == "operator:alice" and decision.reason == "the order was cancelled"


def test_the_dismiss_command_asks_a_reason_and_is_off_for_a_closed_question(
    qtbot, journal_path, open_desk, agents, monkeypatch
):
    window = open_desk(journal_path)
    agent = agents(journal_path, script=QUESTION_AGENT)
    qid = agent.wait_for(qtbot, "ASKED")[0].split()[1]
    monkeypatch.setattr(ReasonDialog, "ask", lambda *a, **k: None)  # the operator cancels
    detail = Desk(qtbot, window).open_question(qid)
    settled(qtbot, detail)
    qtbot.waitUntil(lambda: window.registry.action("inbox.dismiss").isEnabled(), timeout=WAIT_MS)
    window.registry.trigger("inbox.dismiss")
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        assert j.questions.get(qid).status.value in ("requested", "presented")
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        q = bob.questions.get(qid)
        bob.questions.dismiss(qid, "bob took it", expected_version=q.version)
    agent.wait_for(qtbot, "GOT")
    qtbot.waitUntil(lambda: "Dismissed by operator:bob" in detail.state.text(), timeout=WAIT_MS)
    assert "bob took it" in detail.closed.text()
    qtbot.waitUntil(lambda: not detail.dismiss_button.isEnabled(), timeout=WAIT_MS)


def test_dismiss_from_the_runs_waiting_tab(qtbot, populated, open_desk, monkeypatch):
    path, ids = populated
    qid = ids["question"]
    monkeypatch.setattr(ReasonDialog, "ask", lambda *a, **k: "handled on the phone")
    window = open_desk(path)
    window.go("runs")
    detail = open_run(qtbot, window, ids["run"])
    pending = detail.pending
    detail.tabs.setCurrentWidget(pending)
    qtbot.waitUntil(lambda: pending.count() == 3, timeout=WAIT_MS)
    row = next(r for r in range(3) if pending.items.item(r).data(ITEM_ROLE).id == qid)
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(lambda: widget.entity is not None and widget.entity.id == qid, timeout=WAIT_MS)
    qtbot.waitUntil(widget.dismiss_button.isEnabled, timeout=WAIT_MS)
    settled(qtbot, widget)
    qtbot.mouseClick(widget.dismiss_button, LEFT)
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        qtbot.waitUntil(lambda: j.questions.get(qid).status.value == "dismissed", timeout=WAIT_MS)
        assert j.questions.get(qid).dismissal == "dismissed by the operator: handled on the phone"
