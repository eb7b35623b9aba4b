"""Issue 32 item 10: banners on the Run and Memory pages close by themselves and belong to
the page and the item they were raised for. A run's "Approved …" never shows on another run
(switching runs, and switching before the decision's write returned); a memory entry's
"Saved" never shows on another entry. The close timeout is injected
(``MessageBar.success_close_ms``): no test waits ten seconds."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QWidget

from proctor.core import Actor, Journal
from proctor.gui.widgets.message_bar import MessageBar

from .conftest import WAIT_MS, settled
from .memory.test_memory_flow import open_entry

LEFT = Qt.MouseButton.LeftButton
LONG_MS = 3_600_000  # "never" within a test


def shown_banners(page: QWidget) -> list[str]:
    return [bar.text() for bar in page.findChildren(MessageBar) if bar.isVisible() and bar.text()]


def says(page: QWidget, text: str) -> bool:
    """A banner on ``page`` holds ``text`` ("Approved" begins "Approved fs.write …")."""
    return any(text in shown for shown in shown_banners(page))


def two_runs(path: Path) -> dict[str, str]:
    ids: dict[str, str] = {}
    with Journal.open(path, actor=Actor.agent("bot")) as a:
        for name in ("a", "b"):
            run = a.runs.start("shop", f"run {name}", agent="bot")
            ids[name] = run.id
            ids[f"approval_{name}"] = a.approvals.request(
                run.id,
                {"tool": "fs.write", "args": {"path": f"{name}.txt"}},
                reason="write it",
                safety_class="idempotent_write",
            ).id
    return ids


def open_pending(qtbot, window, run_id: str, approval_id: str):
    window.show_run(run_id)
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == run_id, timeout=WAIT_MS)
    detail.tabs.setCurrentWidget(detail.pending)
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 1, timeout=WAIT_MS)
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == approval_id, timeout=WAIT_MS
    )
    settled(qtbot, widget)
    return pending, widget


def approve_button(widget: QWidget) -> QAbstractButton:
    return next(
        b
        for b in widget.findChildren(QAbstractButton)
        if b.isVisible() and b.accessibleName().replace("&", "") == "Approve"
    )


def test_a_runs_approved_banner_stays_on_its_run(qtbot, journal_path, open_desk, monkeypatch):
    monkeypatch.setattr(MessageBar, "success_close_ms", LONG_MS, raising=False)
    ids = two_runs(journal_path)
    window = open_desk(journal_path)
    _pending, widget = open_pending(qtbot, window, ids["a"], ids["approval_a"])
    qtbot.mouseClick(approve_button(widget), LEFT)
    qtbot.waitUntil(lambda: says(window.runs, "Approved"), timeout=WAIT_MS)
    open_pending(qtbot, window, ids["b"], ids["approval_b"])
    assert not says(window.runs, "Approved")  # nothing was approved on run b


def test_a_decision_returning_after_the_switch_is_not_said_on_the_next_run(
    qtbot, journal_path, open_desk, monkeypatch
):
    monkeypatch.setattr(MessageBar, "success_close_ms", LONG_MS, raising=False)
    ids = two_runs(journal_path)
    window = open_desk(journal_path)
    pending, widget = open_pending(qtbot, window, ids["a"], ids["approval_a"])
    service = pending.ctx.journal.approvals._service
    real, gate, entered = service.decide, threading.Event(), threading.Event()

    def slow(*a, **k):
        entered.set()
        gate.wait(WAIT_MS / 1000)
        return real(*a, **k)

    monkeypatch.setattr(service, "decide", slow)
    qtbot.mouseClick(approve_button(widget), LEFT)
    qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
    window.show_run(ids["b"])  # the operator moves on while run a's decision is written
    detail = window.runs.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == ids["b"], timeout=WAIT_MS)
    gate.set()
    runner = window.services.runner
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.approvals.get(ids["approval_a"]).status.value == "approved"
    assert not says(window.runs, "Approved")


@pytest.mark.parametrize("page_name", ["runs", "memory"])
def test_banners_close_by_themselves(qtbot, journal_path, open_desk, monkeypatch, page_name):
    monkeypatch.setattr(MessageBar, "success_close_ms", 150, raising=False)
    window = open_desk(journal_path)
    if page_name == "runs":
        ids = two_runs(journal_path)
        _pending, widget = open_pending(qtbot, window, ids["a"], ids["approval_a"])
        qtbot.mouseClick(approve_button(widget), LEFT)
        said = "Approved"
        page: QWidget = window.runs
    else:
        with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
            entry = a.memory.add("project", "shop", "Cache TTL", "The cache lives for 60 s.")
        window.go("memory")
        page = window.memory
        open_entry(qtbot, page, entry.id)
        detail = page.entry
        qtbot.mouseClick(detail.edit_button, LEFT)
        detail.editor.setPlainText("The cache lives for 300 s.")
        qtbot.keyClicks(detail.edit_reason, "measured")
        qtbot.keyClick(detail.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        said = "Saved: “Cache TTL” is now version 2."
    window.cursor().setPos(0, 0)  # the pointer is not resting on the banner
    qtbot.waitUntil(lambda: says(page, said), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not says(page, said), timeout=WAIT_MS)
