"""Issue 37: after Approve on the desk, with the "Undo window" preference on, a bar offers
"Undo (N s)" counting down; Ctrl+Z (or its button) takes the decision back before the
agent acts. Through a real agent process waiting on the approval and the real window: the
agent never sees the approval, the approval is pending again (the undo a decision of its
own), and the list does not move when the bar comes and goes (its room is kept)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.shell.preferences import PreferencesDialog, prefs_from

from ..conftest import WAIT_MS
from ..driver import Desk

AGENT = Path(__file__).parents[1] / "agent_proc.py"


def test_ctrl_z_within_the_window_undoes_the_approval_before_the_agent_acts(
    qtbot, journal_path, open_desk, agents, settings
):
    settings.undo_seconds = 30
    window = open_desk(journal_path)
    agent = agents(journal_path, "--wait", "90", script=AGENT)
    [line] = agent.wait_for(qtbot, "REQUESTED")
    aid = line.split()[1]
    desk = Desk(qtbot, window)
    bar, table = window.inbox.undo_bar, window.inbox.table
    desk.open_inbox_item(f"approval:{aid}", presented=True)
    where = table.geometry()
    assert not bar.isVisible() and bar.height() > 0  # its room is there before it shows
    assert window.registry.trigger("inbox.approve")
    qtbot.waitUntil(bar.isVisible, timeout=WAIT_MS)
    assert bar.button.text() in ("Undo (30 s)", "Undo (29 s)")
    assert "Approved deploy" in bar.text() and "the agent acts on it in" in bar.text()
    assert table.geometry() == where  # nothing moved under the pointer
    first = bar.button.text()
    qtbot.waitUntil(lambda: bar.button.text() != first, timeout=WAIT_MS)  # it counts down
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        assert j.approvals.get(aid).status == "approved"
    qtbot.waitUntil(lambda: window.registry.action("inbox.undo").isEnabled(), timeout=WAIT_MS)
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=WAIT_MS)
    assert table.geometry() == where
    desk.wait_row(window.inbox.model, f"approval:{aid}")  # back in the inbox
    assert "pending again" in window.inbox.message.text()
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        back = bob.approvals.get(aid)
        assert back.status == "pending" and back.decided_by is None
        bob.approvals.decide(aid, False, expected_version=back.version, reason="not now")
        decisions = bob.approvals.decisions(aid)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status == f"STATUS {aid} denied operator:bob not now"
    assert not agent.found("CONSUMED")
    assert [d.decision.get("undone", False) for d in decisions] == [False, True, False]
    assert decisions[1].actor == "operator:alice"


def test_with_the_window_off_there_is_no_undo_and_the_agent_acts_at_once(
    qtbot, journal_path, open_desk, agents, settings
):
    assert settings.undo_seconds == 0
    window = open_desk(journal_path)
    agent = agents(journal_path, script=AGENT)
    aid = agent.wait_for(qtbot, "REQUESTED")[0].split()[1]
    assert Desk(qtbot, window).decide(aid)
    [status] = agent.wait_for(qtbot, "CONSUMED")
    assert status == f"CONSUMED {aid} reserved"
    assert not window.inbox.undo_bar.isVisible()
    assert not window.registry.action("inbox.undo").isEnabled()


def test_the_undo_window_is_a_preference(qtbot, settings):
    settings.undo_seconds = 7
    dialog = PreferencesDialog(None, prefs_from(settings))
    qtbot.addWidget(dialog)
    assert dialog.undo_seconds.value() == 7
    dialog.undo_seconds.setValue(0)
    assert dialog.undo_seconds.text() == "Off"
    assert dialog.value().undo_seconds == 0
    settings.q.remove("decide/undo_seconds")
    assert settings.undo_seconds == 5  # the default when nothing is stored


def test_the_bar_counts_to_the_stores_hold_not_from_when_the_result_arrived(
    qtbot, journal_path, open_desk
):
    """A result that reaches the bar late (a loaded desk, a slow write lane) offers only
    the hold that is left: the store refuses an undo after ``hold_until``, so the bar must
    not count past it (it counted the whole hold from the result's arrival)."""
    import time

    window = open_desk(journal_path)
    with Journal.open(journal_path, actor=Actor.agent("bot")) as a:
        run = a.runs.start("shop", "late result")
        pending = a.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
    late = Journal.open(journal_path, actor=Actor.operator("alice"), clock=lambda: time.time() - 20)
    with late:  # decided 20 s ago with a 30 s hold: 10 s are left
        decided = late.approvals.decide(pending.id, True, expected_version=pending.version, hold=30)
    bar = window.inbox.undo_bar
    bar.offer(decided)
    assert bar.isVisible() and 0 < bar.remaining() <= 10.5
    assert bar.button.text() in ("Undo (10 s)", "Undo (9 s)")
