"""An approval whose stored action was rewritten outside Proctor (raw SQL, triggers dropped)
is shown as tampered, and the desk offers no way to decide it: the buttons and the
approve/deny commands are disabled, the keys decide nothing (issue 15, [integrity])."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.kernel.canonical import canonical_json

from ..conftest import WAIT_MS

LS = {"tool": "shell", "args": {"command": "ls"}}
RM = {"tool": "shell", "args": {"command": "rm -rf /"}}


def request(path, action: dict) -> str:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "clean up")
        return agent.approvals.request(run.id, action, reason="tidy the disk").id


def rewrite_action(path, approval_id: str, action: dict) -> None:
    """What a same-user process can do: drop the triggers, rewrite the row."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute(
            "UPDATE approvals SET action = ? WHERE id = ?", (canonical_json(action), approval_id)
        )
    finally:
        conn.close()


def show(qtbot, window, approval_id: str):
    inbox = window.inbox
    key = f"approval:{approval_id}"
    qtbot.waitUntil(lambda: inbox.model.row_of(key) >= 0, timeout=WAIT_MS)
    inbox.set_current_row(inbox.model.row_of(key))
    qtbot.waitUntil(
        lambda: (
            inbox.detail.current() is not None
            and inbox.detail.current().entity is not None
            and inbox.detail.current().entity.id == approval_id
        ),
        timeout=WAIT_MS,
    )
    return inbox.detail.current()


def test_a_tampered_approval_is_shown_as_such_and_cannot_be_decided(qtbot, journal_path, open_desk):
    approval_id = request(journal_path, RM)
    rewrite_action(journal_path, approval_id, LS)  # the operator would see `ls`
    window = open_desk(journal_path)
    detail = show(qtbot, window, approval_id)
    assert detail.entity.tampered and detail.entity.action == LS
    qtbot.waitUntil(detail.tampered.isVisible, timeout=WAIT_MS)
    assert detail.tampered.text().startswith("Tampered with")
    assert not detail.approve_button.isEnabled() and not detail.deny_button.isEnabled()
    assert not window.registry.is_enabled("inbox.approve")
    assert not window.registry.is_enabled("inbox.deny")
    assert not window.registry.trigger("inbox.approve")
    qtbot.keyClicks(detail.reason, "looks fine")
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    window.inbox.table.setFocus()
    qtbot.keyClick(window.inbox.table, Qt.Key.Key_A)
    qtbot.keyClick(detail.reason, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        assert j.approvals.get(approval_id).status.value == "pending"
        assert j.approvals.decisions(approval_id) == []


def test_an_honest_approval_next_to_it_is_still_decidable(qtbot, journal_path, open_desk):
    tampered_id = request(journal_path, RM)
    rewrite_action(journal_path, tampered_id, LS)
    honest_id = request(journal_path, LS)
    window = open_desk(journal_path)
    show(qtbot, window, tampered_id)
    detail = show(qtbot, window, honest_id)  # from a tampered item to an honest one
    assert not detail.entity.tampered and detail.tampered.isHidden()
    qtbot.waitUntil(lambda: window.registry.is_enabled("inbox.approve"), timeout=WAIT_MS)
    assert detail.approve_button.isEnabled()
    assert window.registry.trigger("inbox.approve")
    with Journal.open(journal_path, actor=Actor.operator("check")) as j:
        qtbot.waitUntil(
            lambda: j.approvals.get(honest_id).status.value == "approved", timeout=WAIT_MS
        )
