"""The desk's click -> committed (issue 24): a decision is not queued behind the desk's
reads, its "Approving…" note shows only when the write is slow (no repaint while a quick
write runs), and the actions' enablement asks what the selection is once per refresh.
Real journal files, an agent process, real widgets; reads are held on events."""

from __future__ import annotations

import threading

from ..conftest import WAIT_MS
from .test_decide_guard import clock, idle, shown, status  # noqa: F401 - clock is a fixture
from .test_inbox_flow import select


def requested(qtbot, journal_path, agents) -> tuple[object, str]:
    agent = agents(
        journal_path, "--tool", "payments.refund", "--args", '{"account": "acct_9", "amount": 120}'
    )
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    return agent, approval_id


def on_screen(qtbot, window, approval_id: str, clock) -> object:  # noqa: F811
    select(qtbot, window, approval_id)
    detail = shown(qtbot, window, f"approval:{approval_id}")
    idle(qtbot, window)
    clock.step(5)  # the operator has read it
    return detail


def held(gate: threading.Event, started: list):
    def fn():
        started.append(1)
        assert gate.wait(120)  # longer than any wait of the test: held until it opens

    return fn


def test_approve_is_not_queued_behind_reads_that_hold_every_worker(
    qtbot,
    journal_path,
    open_desk,
    agents,
    clock,  # noqa: F811 - a pytest fixture, imported for its name
):
    window = open_desk(journal_path)
    agent, approval_id = requested(qtbot, journal_path, agents)
    on_screen(qtbot, window, approval_id, clock)
    runner, gate, started = window.services.runner, threading.Event(), []
    try:
        threads = runner._pool.maxThreadCount()
        for _ in range(threads + 2):  # every read worker busy, more reads waiting
            runner.run(held(gate, started))
        qtbot.waitUntil(lambda: len(started) == threads, timeout=WAIT_MS)
        with qtbot.waitSignal(window.inbox.decider.done, timeout=WAIT_MS):
            assert window.registry.trigger("inbox.approve")
        assert status(journal_path, approval_id) == "approved"
    finally:
        gate.set()
    [line] = agent.wait_for(qtbot, "STATUS")
    assert line.split()[2:4] == ["approved", "operator:alice"]


def test_approving_note_shows_only_while_the_write_is_slow(
    qtbot,
    journal_path,
    open_desk,
    agents,
    clock,  # noqa: F811 - a pytest fixture, imported for its name
):
    window = open_desk(journal_path)
    _agent, approval_id = requested(qtbot, journal_path, agents)
    detail = on_screen(qtbot, window, approval_id, clock)
    runner, gate, started = window.services.runner, threading.Event(), []
    try:
        runner.run(held(gate, started), write=True)  # a write ahead of the click's
        qtbot.waitUntil(lambda: started == [1], timeout=WAIT_MS)
        assert window.registry.trigger("inbox.approve")
        assert "Approving" not in detail.message.text()  # not at once: no flash, no repaint
        qtbot.waitUntil(lambda: "Approving" in detail.message.text(), timeout=WAIT_MS)
        assert status(journal_path, approval_id) == "pending"
    finally:
        gate.set()
    qtbot.waitUntil(lambda: status(journal_path, approval_id) == "approved", timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: "payments.refund acct_9" in window.inbox.message.text(), timeout=WAIT_MS
    )
    assert "Approving" not in detail.message.text()


def test_enablement_asks_for_the_targets_once_per_refresh(
    qtbot,
    journal_path,
    open_desk,
    agents,
    clock,  # noqa: F811 - a pytest fixture, imported for its name
    monkeypatch,
):
    window = open_desk(journal_path)
    _agent, approval_id = requested(qtbot, journal_path, agents)
    on_screen(qtbot, window, approval_id, clock)
    asked: list[int] = []
    real = window.inbox.targets
    monkeypatch.setattr(window.inbox, "targets", lambda: asked.append(1) or real())
    window.registry.refresh()
    assert len(asked) == 1
    assert window.registry.action("inbox.approve").isEnabled()
    window.registry.refresh()  # a second refresh asks again (nothing is kept between them)
    assert len(asked) == 2


def test_closing_the_window_never_drops_a_decision_waiting_on_the_lane(
    qtbot,
    journal_path,
    open_desk,
    agents,
    clock,  # noqa: F811 - a pytest fixture, imported for its name
):
    """The operator approves while an earlier write still runs, then closes the window: the
    journal closes after the approval is committed, never before it ran."""
    window = open_desk(journal_path)
    agent, approval_id = requested(qtbot, journal_path, agents)
    on_screen(qtbot, window, approval_id, clock)
    runner, gate, started = window.services.runner, threading.Event(), []
    try:
        runner.run(held(gate, started), write=True)  # a write ahead of the click's
        qtbot.waitUntil(lambda: started == [1], timeout=WAIT_MS)
        assert window.registry.trigger("inbox.approve")  # queued behind it
        window.close()
    finally:
        gate.set()
    qtbot.waitUntil(lambda: window.journal.calls.closed and runner.pending() == 0, timeout=WAIT_MS)
    assert status(journal_path, approval_id) == "approved"
    [line] = agent.wait_for(qtbot, "STATUS")
    assert line.split()[2:4] == ["approved", "operator:alice"]
