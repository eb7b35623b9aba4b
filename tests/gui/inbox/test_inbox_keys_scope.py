"""The inbox's keys act on the inbox only while it is on screen: on another page, `a`
approves nothing nobody sees, `j` moves nothing, Escape does not clear the inbox."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS


def test_inbox_keys_do_nothing_on_other_pages(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    inbox = window.inbox
    key = f"approval:{ids['approval']}"
    qtbot.waitUntil(lambda: inbox.model.row_of(key) >= 0, timeout=WAIT_MS)
    inbox.set_current_row(inbox.model.row_of(key))
    current = inbox.current_item()
    assert current is not None and current.id == ids["approval"]
    window.go("runs")
    qtbot.waitUntil(lambda: window.runs.isVisible(), timeout=WAIT_MS)
    for action_id in ("inbox.approve", "inbox.next", "inbox.back", "inbox.deny"):
        assert not window.registry.trigger(action_id), action_id
    qtbot.keyClick(window.runs.table, Qt.Key.Key_A)
    qtbot.keyClick(window.runs.table, Qt.Key.Key_J)
    qtbot.keyClick(window.runs.table, Qt.Key.Key_Escape)
    with Journal.open(path, actor=Actor.operator("check")) as j:
        assert j.approvals.get(ids["approval"]).status.value == "pending"
    window.go("inbox")
    assert inbox.current_item() is not None and inbox.current_item().id == current.id
    assert window.registry.trigger("inbox.next")  # back on the inbox, the keys work again
