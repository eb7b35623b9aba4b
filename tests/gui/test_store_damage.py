"""The journal's files damaged under the desk (issue 17 items 7 and 8, [hostile]): a -wal
deleted while the journal is open, pages of the journal overwritten. The desk says so in one
clear state with the next step; it never claims "store: ok", never shows a traceback dialog
and never leaves an item on "Approving…"."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal, errors
from proctor.core.storage import db as core_db
from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.shell.app import DeskApp
from proctor.gui.widgets.status import StoreState

from .conftest import WAIT_MS

PAGE = 4096


def request(path: Path, tool: str = "deploy") -> tuple[str, str]:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "ship it")
        return run.id, agent.approvals.request(run.id, {"tool": tool}, reason="ship").id


def root_page(path: Path, table: str) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        assert page_size == PAGE
        return conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()[0]
    finally:
        conn.close()


def overwrite_page(path: Path, page: int) -> None:
    """Garbage over one page in the middle of the file; the header (page 1) is kept."""
    assert page > 1
    with open(path, "r+b") as f:  # the journal is closed: no lock of anyone's is at stake
        f.seek((page - 1) * PAGE)
        f.write(b"\xa5" * PAGE)


@pytest.fixture
def no_dialogs(monkeypatch) -> list:
    shown: list = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    return shown


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


# ---------------------------------------------------------------- item 7: the -wal deleted


def test_a_wal_deleted_under_the_desk_is_reported_not_store_ok(
    qtbot, journal_path, open_desk, no_dialogs
):
    window = open_desk(journal_path)
    watcher = window.services.watcher
    qtbot.waitUntil(watcher.watching_wal, timeout=WAIT_MS)
    _run, approval_id = request(journal_path)  # acknowledged, in the -wal, not checkpointed
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") >= 0, timeout=WAIT_MS
    )
    wal = Path(f"{journal_path}-wal")
    assert wal.stat().st_size > 0
    wal.unlink()  # no checkpoint first
    qtbot.waitUntil(
        lambda: window.status.current_state() is StoreState.WAL_DELETED, timeout=WAIT_MS
    )
    assert window.status.state.text() == "store: -wal deleted"
    assert "reopen" in window.status.state.toolTip()
    notice = window.notice.text()
    assert "-wal" in notice and "reopen the journal" in notice
    assert "nothing else deletes journal files" in notice
    window.refresh_all()  # later successful calls do not turn it back into "ok"
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    assert window.status.current_state() is StoreState.WAL_DELETED
    assert no_dialogs == []


AGENT_REQUEST = """
import json, sys
from proctor.core import Actor, Journal
with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
    run = j.runs.start("shop", "ship it")
    print(json.dumps({"run": run.id, "approval": j.approvals.request(
        run.id, {"tool": "deploy"}, reason="ship").id}))
"""


def test_a_wal_lost_under_the_desk_is_named_by_verify_and_the_next_open(
    qtbot, journal_path, open_desk, desks, no_dialogs, monkeypatch
):
    """The tail the deleted -wal held is gone once the desk lets go (nothing else can
    checkpoint it): the witness the desk keeps beside the journal lets `proctor verify` and
    the next desk name what is missing."""
    import json
    import subprocess
    import sys

    from proctor.core.audit.verify import verify
    from proctor.core.audit.witness import witness_path
    from proctor.gui.infra import watcher as desk_watcher

    # the -wal is deleted before anything copied the request into the file: the desk's own
    # checkpoint (a second after it opens, and after its writes) is held off for this one
    monkeypatch.setattr(desk_watcher, "CHECKPOINT_MS", 3_600_000)
    window = open_desk(journal_path)
    qtbot.waitUntil(window.services.watcher.watching_wal, timeout=WAIT_MS)
    out = subprocess.run(
        [sys.executable, "-c", AGENT_REQUEST, str(journal_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ids = json.loads(out.stdout)  # acknowledged to the agent, in the -wal only
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{ids['approval']}") >= 0, timeout=WAIT_MS
    )
    subprocess.run(["rm", f"{journal_path}-wal"], check=True)  # no checkpoint first
    qtbot.waitUntil(
        lambda: window.status.current_state() is StoreState.WAL_DELETED, timeout=WAIT_MS
    )
    assert witness_path(journal_path).exists()
    first, runner = desks.opened.pop()  # the desk lets go of the journal
    first.close()
    assert runner.shutdown(WAIT_MS) and first.services.guard.violations == []

    with Journal.open(journal_path, actor=Actor.operator("auditor"), read_only=True) as j:
        with pytest.raises(errors.NotFound):  # the acknowledged request is gone
            j.approvals.get(ids["approval"])
        report = verify(j)
        lost = j.lost_tail
    assert lost is not None and f"approval {ids['approval']}" in lost.lost
    assert lost.wal_lost_at is not None and "deleted while a desk had it open" in lost.sentence
    assert not report.ok and report.problems[0].what == "changes missing"
    cli = subprocess.run(
        [sys.executable, "-m", "proctor", "verify", str(journal_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode != 0 and "Traceback" not in cli.stderr
    assert "FAILED: changes missing" in cli.stdout and ids["approval"] in cli.stdout

    again = open_desk(journal_path)  # the next open says so, and it stays
    assert again.status.current_state() is StoreState.TAIL_LOST
    assert again.status.state.text() == "store: changes missing"
    notice = again.notice.text()
    assert ids["approval"] in notice and "backup" in notice
    again.refresh_all()
    qtbot.waitUntil(lambda: again.services.runner.pending() == 0, timeout=WAIT_MS)
    assert again.status.current_state() is StoreState.TAIL_LOST
    assert no_dialogs == []


def test_disk_io_errors_are_not_called_a_full_disk():
    err = sqlite3.OperationalError("disk I/O error")
    err.sqlite_errorname = "SQLITE_IOERR_FSTAT"
    typed = core_db.translate(err)
    assert isinstance(typed, errors.StoreIOError) and not isinstance(typed, errors.StoreFull)
    assert "disk full" not in f"{typed} {typed.hint}" and "free space" not in typed.hint
    assert "reopen" in typed.hint
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorname = "SQLITE_FULL"
    assert isinstance(core_db.translate(full), errors.StoreFull)


# ---------------------------------------------------------------- item 8: a damaged journal


def damaged_copy(journal_path: Path, tmp_path: Path) -> tuple[Path, str]:
    _run, approval_id = request(journal_path)
    copy = tmp_path / "damaged.db"
    copy.write_bytes(journal_path.read_bytes())  # closed journal: no -wal left
    assert not Path(f"{journal_path}-wal").exists()
    overwrite_page(copy, root_page(copy, "decisions"))
    return copy, approval_id


def test_a_damaged_journal_opens_in_the_desk_as_damaged(
    qtbot, journal_path, tmp_path, settings, no_dialogs
):
    path, _approval = damaged_copy(journal_path, tmp_path)
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="dana")
        window = desk.window
        # the damage check runs after the window is up; its result shows when it arrives
        qtbot.waitUntil(
            lambda: window.status.current_state() is StoreState.DAMAGED, timeout=WAIT_MS
        )
        assert window.status.check.isHidden()  # "checking the journal file…" is gone
        assert window.status.state.text() == "store: damaged"
        notice = window.notice.text()
        assert "damaged" in notice and "proctor verify" in notice and "backup" in notice
        qtbot.waitUntil(lambda: window.inbox.model.has_loaded, timeout=WAIT_MS)
        assert window.status.current_state() is StoreState.DAMAGED  # stays
        assert no_dialogs == []
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def test_approve_on_a_damaged_journal_shows_one_state_and_is_not_left_pending(
    qtbot, journal_path, tmp_path, open_desk, no_dialogs
):
    path, approval_id = damaged_copy(journal_path, tmp_path)
    window = open_desk(path)  # opened without the desk's quick check: the read finds it
    detail = show(qtbot, window, approval_id)
    qtbot.waitUntil(lambda: window.registry.is_enabled("inbox.approve"), timeout=WAIT_MS)
    from .conftest import settled

    settled(qtbot, window)
    with qtbot.waitSignal(window.presenter.damaged, timeout=WAIT_MS):
        assert window.registry.trigger("inbox.approve")
    qtbot.waitUntil(lambda: not window.inbox.decider.in_flight, timeout=WAIT_MS)
    assert window.status.state.text() == "store: damaged"
    current = window.inbox.detail.current()
    message = current.message.text() if current is not None else ""
    assert "Approving" not in message and "Approving" not in detail.message.text()
    notice = window.notice.text()
    assert "proctor verify" in notice and "backup" in notice
    assert no_dialogs == []  # no traceback dialog, not once


# ---------------------------------------------------------------- the check leaves the start


def test_the_damage_check_runs_after_the_window_is_up_and_off_the_gui_thread(
    qtbot, journal_path, settings, no_dialogs, monkeypatch
):
    """PRAGMA quick_check reads the whole file (seconds on a big journal): the window does
    not wait for it. It runs on the task runner once the window shows, the status bar says
    so meanwhile, and a healthy journal ends as "store: ok"."""
    import threading

    from proctor.core.storage.store import Store

    request(journal_path)
    calls: list[tuple[int, bool]] = []
    gate = threading.Event()
    real = Store.integrity_check
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)

    def held(self, quick=False, cancelled=None):
        calls.append((threading.get_ident(), desk.window is not None))
        gate.wait(WAIT_MS / 1000)
        return real(self, quick, cancelled)

    monkeypatch.setattr(Store, "integrity_check", held)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(journal_path, operator="dana")  # shown while the check is held
        window = desk.window
        qtbot.waitUntil(lambda: window.inbox.model.has_loaded, timeout=WAIT_MS)  # not behind it
        qtbot.waitUntil(lambda: bool(calls), timeout=WAIT_MS)
        assert not window.status.check.isHidden()
        [(thread, window_was_up)] = calls
        assert thread != threading.get_ident() and window_was_up
        gate.set()
        qtbot.waitUntil(window.status.check.isHidden, timeout=WAIT_MS)
        assert window.status.current_state() is not StoreState.DAMAGED
        assert no_dialogs == []
    finally:
        gate.set()
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def test_closing_the_window_cancels_the_damage_check(
    qtbot, journal_path, settings, no_dialogs, monkeypatch
):
    """A check still running when its window closes is cancelled (the real PRAGMA, stopped
    by its progress handler), so closing the desk never waits for it."""
    from proctor.core.storage.store import Store

    request(journal_path)
    seen: list[str] = []
    real = Store.integrity_check
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)

    def until_cancelled(self, quick=False, cancelled=None):
        assert cancelled is not None
        seen.append("started")
        while not cancelled():  # held until the window closes
            threading.Event().wait(0.01)
        try:
            return real(self, quick, cancelled)
        except errors.Cancelled:
            seen.append("cancelled")
            raise

    import threading

    monkeypatch.setattr(Store, "integrity_check", until_cancelled)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(journal_path, operator="dana")
        qtbot.waitUntil(lambda: seen == ["started"], timeout=WAIT_MS)
        desk.window.close()
        qtbot.waitUntil(lambda: seen == ["started", "cancelled"], timeout=WAIT_MS)
        assert no_dialogs == []
    finally:
        desk.shutdown()


def test_the_damage_check_waits_for_the_inbox_and_holds_no_read_thread(
    qtbot, journal_path, settings, no_dialogs, monkeypatch
):
    """The check is no part of the start (issue 33, target 2): it starts once the inbox's
    first page is there (by order, not by time: the inbox has loaded when the check is
    called), and while it runs, as many reads as the runner has threads run side by side
    (it never holds one of them for the seconds a big journal's check takes)."""
    import threading

    from proctor.core.storage.store import Store

    request(journal_path)
    at_check: list[bool] = []
    gate = threading.Event()
    real = Store.integrity_check
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)

    def held(self, quick=False, cancelled=None):
        window = desk.window
        at_check.append(window is not None and window.inbox.model.has_loaded)
        gate.wait(WAIT_MS / 1000)
        return real(self, quick, cancelled)

    monkeypatch.setattr(Store, "integrity_check", held)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(journal_path, operator="dana")
        window = desk.window
        qtbot.waitUntil(lambda: bool(at_check), timeout=WAIT_MS)
        assert at_check == [True]  # the inbox had its first page before the check began
        threads = desk.runner._pool.maxThreadCount()
        together = threading.Barrier(threads, timeout=WAIT_MS / 1000 / 3)
        met: list[object] = []
        for _ in range(threads):  # each waits for all the others: only side by side
            desk.runner.run(together.wait, on_done=met.append, on_error=met.append)
        qtbot.waitUntil(lambda: len(met) == threads, timeout=WAIT_MS)
        assert all(isinstance(m, int) for m in met), met  # not BrokenBarrierError
        assert not window.status.check.isHidden()  # still checking, and saying so
        gate.set()
        qtbot.waitUntil(window.status.check.isHidden, timeout=WAIT_MS)
        assert no_dialogs == []
    finally:
        gate.set()
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()
