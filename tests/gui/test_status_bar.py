"""The status bar tells the truth about the write lock: after a write was refused because
another process held the lock, "store: busy" stays while reads keep succeeding, and goes
back to "store: ok" only once the lock is seen free (no decision needed for that)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors
from proctor.gui.shell.mainwindow import MainWindow, write_lock_free

from .conftest import WAIT_MS

BUSY_TIMEOUT_S = 1.0  # how long a refused write waits for the lock (not a race: it only
# decides when the refusal comes, every assertion waits on a condition)


@pytest.fixture
def desk(desks) -> Iterator:
    """desk(path) -> a started MainWindow whose journal waits BUSY_TIMEOUT_S for the lock."""
    desks.wait_ms = WAIT_MS
    yield lambda path: desks.open(path, busy_timeout=BUSY_TIMEOUT_S, exposed=False)
    for violations in desks.close_all():
        assert violations == []


@pytest.fixture
def pending(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "deploy")
        approval = agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
    return path, approval.id


class LockHolder:
    """Another writer: holds the journal's write lock until released."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.conn.close()


def decisions(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    finally:
        conn.close()


def refused_write(qtbot, window: MainWindow, approval_id: str) -> list[BaseException]:
    """Approve while the lock is held; returns once the write was refused (StoreBusy)."""
    refused: list[BaseException] = []
    approvals = window.journal.approvals
    with qtbot.waitSignal(window.services.runner.store_failed, timeout=WAIT_MS):
        window.services.runner.run(
            lambda: approvals.decide(approval_id, True, expected_version=1),
            on_error=refused.append,
            owner=window,
            write=True,
        )
    qtbot.waitUntil(lambda: bool(refused), timeout=WAIT_MS)
    return refused


def read_once(qtbot, window: MainWindow) -> int:
    """One successful store read through the runner (after it, the runner has reported
    the store healthy again)."""
    done: list[int] = []
    window.services.runner.run(window.journal.changes.latest, on_done=done.append, owner=window)
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
    return done[0]


def test_busy_stays_while_the_lock_is_held_and_clears_when_it_is_free(qtbot, pending, desk):
    path, approval_id = pending
    window = desk(path)
    assert window.status.state.text() == "store: ok"
    holder = LockHolder(path)
    try:
        [refusal] = refused_write(qtbot, window, approval_id)
        assert isinstance(refusal, errors.StoreBusy)
        assert window.status.state.text() == "store: busy"
        # reads keep working while the other process holds the lock ...
        assert read_once(qtbot, window) > 0
        qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=WAIT_MS)
        window.refresh_all()
        assert read_once(qtbot, window) > 0
        # ... and do not make the store look writable
        assert window.status.state.text() == "store: busy"
        assert "writes wait" in window.status.state.toolTip()
    finally:
        holder.release()
    # the lock is free: the desk sees it by itself, without a decision
    qtbot.waitUntil(lambda: window.status.state.text() == "store: ok", timeout=WAIT_MS)
    assert decisions(path) == 0


def test_a_write_after_the_lock_is_free_succeeds(qtbot, pending, desk):
    path, approval_id = pending
    window = desk(path)
    holder = LockHolder(path)
    try:
        refused_write(qtbot, window, approval_id)
    finally:
        holder.release()
    done = []
    approvals = window.journal.approvals
    window.services.runner.run(
        lambda: approvals.decide(approval_id, True, expected_version=1),
        on_done=done.append,
        owner=window,
        write=True,
    )
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.status.state.text() == "store: ok", timeout=WAIT_MS)
    assert decisions(path) == 1


def test_the_lock_check_writes_nothing(pending):
    path, _ = pending
    with Journal.open(path, actor=Actor.operator("alice"), busy_timeout=BUSY_TIMEOUT_S) as j:
        before = j.changes.latest()
        assert write_lock_free(j)
        holder = LockHolder(path)
        try:
            assert not write_lock_free(j)
        finally:
            holder.release()
        assert write_lock_free(j)
        assert j.changes.latest() == before
    with Journal.open(path, read_only=True) as j:
        assert write_lock_free(j)  # nothing to wait for in a read-only journal
