"""The run's "Waiting for you" pane offers Approve / Deny only as the Inbox does: not for an
approval already decided (by another operator), not for one rewritten outside Proctor
(tampered), and not while its own decision is being written."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS
from ..inbox.test_inbox_tampered import LS, RM, rewrite_action

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1


def request(path) -> tuple[str, str]:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "clean up")
        return run.id, agent.approvals.request(run.id, RM, reason="tidy the disk").id


def shown_approval(qtbot, window, run_id: str, approval_id: str):
    window.show_run(run_id)
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == run_id, timeout=WAIT_MS)
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 1, timeout=WAIT_MS)
    pending.list.setCurrentIndex(pending.items.index(0, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == approval_id, timeout=WAIT_MS
    )
    return pending, widget


def test_an_approval_decided_by_another_operator_cannot_be_approved_here(
    qtbot, journal_path, open_desk
):
    run_id, approval_id = request(journal_path)
    window = open_desk(journal_path)
    pending, widget = shown_approval(qtbot, window, run_id, approval_id)
    assert pending.registry.action("inbox.approve").isEnabled()
    window.services.watcher.pause()  # the run list has not caught up yet
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        a = bob.approvals.get(approval_id)
        bob.approvals.decide(approval_id, False, expected_version=a.version, reason="no")
    widget.reload()  # the detail reads it again: denied by bob
    qtbot.waitUntil(lambda: not widget.is_pending(), timeout=WAIT_MS)
    assert not pending.registry.action("inbox.approve").isEnabled()
    assert not pending.registry.trigger("inbox.approve")
    assert not pending.registry.trigger("inbox.deny")


def test_a_tampered_approval_cannot_be_approved_from_the_run(qtbot, journal_path, open_desk):
    run_id, approval_id = request(journal_path)
    rewrite_action(journal_path, approval_id, LS)
    window = open_desk(journal_path)
    pending, widget = shown_approval(qtbot, window, run_id, approval_id)
    assert widget.is_tampered()
    assert not pending.registry.action("inbox.approve").isEnabled()
    assert not pending.registry.trigger("inbox.approve")


def test_approve_is_off_while_the_pane_writes_the_decision(
    qtbot, journal_path, open_desk, monkeypatch
):
    run_id, approval_id = request(journal_path)
    window = open_desk(journal_path)
    pending, widget = shown_approval(qtbot, window, run_id, approval_id)
    monkeypatch.setattr("proctor.gui.decide.approval.confirmed", lambda *a, **k: True)
    service = pending.ctx.journal.approvals._service
    real, gate, entered = service.decide, threading.Event(), threading.Event()

    def slow(*a, **k):
        entered.set()
        gate.wait(WAIT_MS / 1000)
        return real(*a, **k)

    monkeypatch.setattr(service, "decide", slow)
    try:
        qtbot.keyClicks(widget.reason, "checked")
        assert pending.registry.trigger("inbox.approve")
        qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
        assert not pending.registry.action("inbox.approve").isEnabled()
        assert not pending.registry.trigger("inbox.deny")
    finally:
        gate.set()
    qtbot.waitUntil(lambda: pending.count() == 0, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.approvals.get(approval_id).status.value == "approved"
