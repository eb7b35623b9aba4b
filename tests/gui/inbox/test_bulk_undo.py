"""Issue 37: a bulk approve from the desk is held by the operator's "Undo window" like one
decision, and the Undo bar takes the whole batch back in one click while it is held."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ..conftest import WAIT_MS
from .test_inbox_bulk import decided, press, record_dialog, select_all_by_keys, three_approvals


def test_the_undo_bar_undoes_a_held_bulk_approval(
    qtbot, journal_path, open_desk, monkeypatch, settings
):
    settings.undo_seconds = 30
    ids = three_approvals(journal_path)
    window = open_desk(journal_path)
    select_all_by_keys(qtbot, window, ids)
    record_dialog(monkeypatch)
    bar = window.inbox.undo_bar
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(bar.isVisible, timeout=WAIT_MS)
    assert "Approved 3 requests" in bar.text() and "acts on them in" in bar.text()
    held = decided(journal_path, ids)
    assert {a.status.value for a in held} == {"approved"}
    assert all(a.hold_until is not None for a in held)
    qtbot.waitUntil(lambda: window.registry.action("inbox.undo").isEnabled(), timeout=WAIT_MS)
    bar.button.click()
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: "3 requests pending again" in window.inbox.message.text(), timeout=WAIT_MS
    )
    assert {a.status.value for a in decided(journal_path, ids)} == {"pending"}
