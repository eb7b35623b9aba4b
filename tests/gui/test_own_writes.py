"""The desk's own writes reach its views through the change feed's dispatcher: at once (no
file watcher, no poll), once per change row, and without hiding other processes' rows."""

from __future__ import annotations

import threading

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.models import Approval, InboxFilter
from proctor.gui.infra.guard import GuardedJournal, ThreadGuard

from .conftest import WAIT_MS
from .data import agent, request


def inbox_item(window, approval_id: str):
    items = window.journal.unguarded.inbox.list(InboxFilter()).items
    return next(i for i in items if i.id == approval_id)


def test_a_desk_decision_reaches_the_views_without_the_file_watcher(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    watcher.pause()  # no file events, no polls: only the write itself can tell the views
    seen: list = []
    watcher.changed.connect(lambda cs: seen.extend(cs.changes))
    key = f"approval:{ids['approval']}"
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    window.inbox.decider.deny(inbox_item(window, ids["approval"]), reason="not now")
    qtbot.waitUntil(lambda: model.row_of(key) < 0, timeout=WAIT_MS)  # patched from the feed
    assert ("approval", ids["approval"]) in {(c.entity_kind, c.entity_id) for c in seen}
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        written = bob.changes.since(0).changes
    mine = [c.seq for c in seen]
    assert mine == [c.seq for c in written if c.seq in set(mine)]  # the rows, as stored


def test_the_watcher_reports_each_row_once_and_keeps_other_processes_rows(
    qtbot, populated, open_desk
):
    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    watcher.pause()
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    seen: list = []
    watcher.changed.connect(lambda cs: seen.extend(cs.changes))
    with agent(path, "coder") as a:  # another process, before the desk's write: a lower seq
        theirs = request(a, ids["run"], "late", {}, "from elsewhere")
    window.inbox.decider.deny(inbox_item(window, ids["approval"]), reason="not now")
    qtbot.waitUntil(lambda: any(c.entity_id == ids["approval"] for c in seen), timeout=WAIT_MS)
    assert theirs not in {c.entity_id for c in seen}  # not read yet: nothing watched
    watcher.refresh_now()  # the feed read returns both: only the other process's rows are new
    qtbot.waitUntil(lambda: theirs in {c.entity_id for c in seen}, timeout=WAIT_MS)
    watcher.refresh_now()
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    seqs = [c.seq for c in seen]
    assert len(seqs) == len(set(seqs))
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        assert set(seqs) == {c.seq for c in bob.changes.since(0).changes if c.seq > min(seqs) - 1}


def on_a_worker(call):
    """``call()`` on a thread of its own (a guarded journal refuses the GUI thread)."""
    out: dict = {}

    def run() -> None:
        try:
            out["result"] = call()
        except Exception as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(30)
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_the_guard_hands_each_commit_its_own_change_set_and_a_refusal_none(populated):
    """What the watcher is given of a desk call is the change set its write committed (as
    stored), from the write itself: a refused call gives nothing, the call's result is the
    service's own."""
    path, ids = populated
    journal = Journal.open(path, actor=Actor.operator("alice"))
    guarded = GuardedJournal(journal, ThreadGuard(strict=True))
    handed: list = []
    guarded.written.sink = handed.append
    try:
        approval = on_a_worker(lambda: guarded.approvals.get(ids["approval"]))
        before = on_a_worker(guarded.changes.latest)
        with pytest.raises(errors.StaleVersion):
            on_a_worker(
                lambda: guarded.approvals.decide(
                    approval.id, False, expected_version=approval.version + 3, reason="no"
                )
            )
        assert handed == []
        decided = on_a_worker(
            lambda: guarded.approvals.decide(
                approval.id, False, expected_version=approval.version, reason="no"
            )
        )
        assert isinstance(decided, Approval) and decided.status == "denied"
        with Journal.open(path, actor=Actor.operator("bob")) as bob:
            written = bob.changes.since(before)
        assert len(handed) == 1 and handed[0].changes == written.changes
    finally:
        journal.close()


def status_in_the_file_alone(path, approval_id: str, tmp_path) -> str:
    """The approval's status as the journal file itself holds it: a copy of the file without
    its -wal (what a checkpoint has copied in, nothing more)."""
    import shutil
    import sqlite3

    alone = tmp_path / "alone.db"
    shutil.copy(path, alone)
    conn = sqlite3.connect(alone)
    try:
        return conn.execute("SELECT status FROM approvals WHERE id = ?", (approval_id,)).fetchone()[
            0
        ]
    finally:
        conn.close()


def test_a_desk_write_is_checkpointed_after_its_commit_not_in_it(
    qtbot, populated, open_desk, tmp_path
):
    """The desk's commits leave the -wal alone (no click pays for SQLite's auto-checkpoint)
    and its watcher copies them into the file a moment later, off the click's path."""
    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    with Journal.open(path, actor=Actor.operator("bob")) as bob:  # the file holds it pending
        bob.checkpoint()
    assert status_in_the_file_alone(path, ids["approval"], tmp_path) == "pending"
    from proctor.gui.shell.app import open_for_desk  # the fixture opens it the same way

    with open_for_desk(path, Actor.operator("carol"), False) as desk_journal:
        assert desk_journal.autocheckpoint is False
    model = window.inbox.model
    key = f"approval:{ids['approval']}"
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    window.inbox.decider.deny(inbox_item(window, ids["approval"]), reason="not now")
    qtbot.waitUntil(lambda: watcher.checkpoints > 0, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert status_in_the_file_alone(path, ids["approval"], tmp_path) == "denied"


def test_the_desk_waits_for_an_agents_write_lock_by_polling(tmp_path):
    """The desk's journal waits for another process's write lock by trying again every
    LOCK_POLL_S, not in SQLite's 1-25 ms busy-handler steps (tests/core/test_lock_poll.py
    has the rule): a click commits as soon as the agent holding the lock has."""
    from proctor.gui.shell.app import LOCK_POLL_S, open_for_desk

    with open_for_desk(tmp_path / "j.db", Actor.operator("carol"), False) as desk_journal:
        from proctor.core.storage.db import LockWait

        assert desk_journal.lock_wait == desk_journal._writes.lock_wait == LockWait(LOCK_POLL_S)
        assert LOCK_POLL_S < 0.001  # below SQLite's first busy-handler step
