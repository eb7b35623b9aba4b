"""Issue 37: every path that decides, on every page that decides, holds the decision for the
"Undo window" and offers "Undo (N s)": Approve, Deny, Edit-then-approve, an answer and a
dismissal, in the Inbox and on a run's "Waiting for you" tab. Generated over both lists,
through the real widgets: the click is held (the agent still sees the item open), the bar
comes on that page, and its button takes the decision back (the item open again, the undo
a decision of its own)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from proctor.core import Actor, Journal
from proctor.core.models import ApprovalStatus, QuestionStatus
from proctor.gui.decide.edit_action import EditActionDialog
from proctor.gui.widgets.dialogs import ReasonDialog

from .conftest import WAIT_MS, settled
from .driver import LEFT, Desk

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1
ACTION = {"tool": "deploy", "args": {"env": "staging"}}
EDITED = {"tool": "deploy", "args": {"env": "canary"}}
PROMPT = "Which warehouse ships the order?"


@dataclass
class Shown:
    """The item on screen: its page's detail widget, the page's registry and undo bar."""

    widget: Any
    registry: Any
    bar: Any


def approve(qtbot, shown: Shown) -> None:
    assert shown.registry.trigger("inbox.approve")


def deny(qtbot, shown: Shown) -> None:
    shown.widget.reason.setPlainText("not in this release")
    assert shown.registry.trigger("inbox.deny")


def edit(qtbot, shown: Shown) -> None:
    settled(qtbot, shown.widget)
    qtbot.mouseClick(shown.widget.edit_button, LEFT)


def answer(qtbot, shown: Shown) -> None:
    detail = shown.widget
    qtbot.waitUntil(lambda: detail.view is not None, timeout=WAIT_MS)
    [field] = [
        w for w in detail.view.findChildren(QWidget) if isinstance(w, QLineEdit | QPlainTextEdit)
    ]
    qtbot.keyClicks(field, "the north one")
    Desk(qtbot, detail.window()).answer(detail)


def dismiss(qtbot, shown: Shown) -> None:
    qtbot.waitUntil(shown.widget.dismiss_button.isEnabled, timeout=WAIT_MS)
    settled(qtbot, shown.widget)
    qtbot.mouseClick(shown.widget.dismiss_button, LEFT)


# every deciding path: (how the operator decides, is it a question)
PATHS = {"approve": approve, "deny": deny, "edit": edit, "answer": answer, "dismiss": dismiss}
QUESTION_PATHS = ("answer", "dismiss")


def on_inbox(qtbot, window, run_id: str, key: str) -> Shown:
    widget = Desk(qtbot, window).open_inbox_item(key, presented=True)
    return Shown(widget, window.registry, window.inbox.undo_bar)


def on_run(qtbot, window, run_id: str, key: str) -> Shown:
    window.show_run(run_id)
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == run_id, timeout=WAIT_MS)
    pending = detail.pending
    detail.tabs.setCurrentWidget(pending)
    qtbot.waitUntil(lambda: pending.count() == 1, timeout=WAIT_MS)
    pending.list.setCurrentIndex(pending.items.index(0, 0))
    widget = pending.detail.current()
    item_id = key.split(":", 1)[1]
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == item_id, timeout=WAIT_MS
    )
    return Shown(widget, pending.registry, pending.undo_bar)


PAGES = {"inbox": on_inbox, "run": on_run}


def filed(path, question: bool) -> tuple[str, str]:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "ship it", agent="bot")
        if question:
            return run.id, f"question:{agent.questions.ask(run.id, 'question', PROMPT).id}"
        return run.id, f"approval:{agent.approvals.request(run.id, ACTION, reason='ship').id}"


def as_the_agent_sees(path, key: str) -> str:
    kind, item_id = key.split(":", 1)
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        if kind == "question":
            return agent.questions.get(item_id).status.value
        return agent.approvals.get(item_id).as_agent_sees(time.time()).status.value


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_deciding_path_on_every_page_is_held_and_undone_from_its_bar(
    qtbot, journal_path, open_desk, settings, monkeypatch, page, path
):
    settings.undo_seconds = 30
    monkeypatch.setattr("proctor.gui.decide.approval.confirmed", lambda *a, **k: True)
    monkeypatch.setattr(EditActionDialog, "ask", classmethod(lambda cls, *a: EDITED))
    monkeypatch.setattr(ReasonDialog, "ask", lambda *a, **k: "handled on the phone")
    question = path in QUESTION_PATHS
    run_id, key = filed(journal_path, question)
    window = open_desk(journal_path)
    shown = PAGES[page](qtbot, window, run_id, key)
    assert not shown.bar.isVisible()
    PATHS[path](qtbot, shown)
    qtbot.waitUntil(shown.bar.isVisible, timeout=WAIT_MS)
    assert shown.bar.button.text() in ("Undo (30 s)", "Undo (29 s)")
    item_id = key.split(":", 1)[1]
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        stored = j.questions.get(item_id) if question else j.approvals.get(item_id)
    assert stored.hold_until is not None  # held, by the preference, on this path too
    assert as_the_agent_sees(journal_path, key) == ("presented" if question else "pending")
    qtbot.mouseClick(shown.bar.button, LEFT)
    qtbot.waitUntil(lambda: not shown.bar.isVisible(), timeout=WAIT_MS)
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        back = j.questions.get(item_id) if question else j.approvals.get(item_id)
        decisions = j.approvals.decisions(item_id)
    assert back.status == (QuestionStatus.PRESENTED if question else ApprovalStatus.PENDING)
    assert back.hold_until is None
    assert [d.decision.get("undone", False) for d in decisions] == [False, True]
    assert decisions[1].actor == "operator:alice"
    back_on_page[page](qtbot, window, key)  # the page lists it again, to decide anew


def back_in_inbox(qtbot, window, key: str) -> None:
    Desk(qtbot, window).wait_row(window.inbox.model, key)
    assert "the agent was not told" in window.inbox.message.text()


def back_on_run(qtbot, window, key: str) -> None:
    pending = window.runs.detail.pending
    qtbot.waitUntil(lambda: pending.count() == 1, timeout=WAIT_MS)
    assert pending.items.item(0).data(ITEM_ROLE).id == key.split(":", 1)[1]
    assert "the agent was not told" in pending.message.text()


back_on_page = {"inbox": back_in_inbox, "run": back_on_run}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_ctrl_z_takes_back_the_decision_of_the_bar_on_screen(
    qtbot, journal_path, open_desk, settings, monkeypatch, page
):
    """Ctrl+Z is the Undo of whichever page's bar is on screen; a held decision of a page
    not shown is not taken back by a key pressed on another."""
    settings.undo_seconds = 30
    monkeypatch.setattr("proctor.gui.decide.approval.confirmed", lambda *a, **k: True)
    run_id, key = filed(journal_path, False)
    window = open_desk(journal_path)
    shown = PAGES[page](qtbot, window, run_id, key)
    approve(qtbot, shown)
    qtbot.waitUntil(shown.bar.isVisible, timeout=WAIT_MS)
    undo = window.registry.action("inbox.undo")
    qtbot.waitUntil(undo.isEnabled, timeout=WAIT_MS)
    window.go("memory")  # another page: its key must not take back what is not shown
    qtbot.waitUntil(lambda: not undo.isEnabled(), timeout=WAIT_MS)
    assert not window.registry.trigger("inbox.undo")
    window.go("inbox" if page == "inbox" else "runs")  # back where it was decided
    qtbot.waitUntil(undo.isEnabled, timeout=WAIT_MS)
    focus = window.inbox.table if page == "inbox" else window.runs.detail.pending.list
    focus.setFocus()
    qtbot.keyClick(focus, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not shown.bar.isVisible(), timeout=WAIT_MS)
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        assert j.approvals.get(key.split(":", 1)[1]).status == ApprovalStatus.PENDING
