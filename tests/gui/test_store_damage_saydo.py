"""What the desk says about its journal (issue 32, items 11 and 12): after the -wal was
deleted under it, a failing read does not turn the notice into "damaged … restore from a
backup" (a backup lacks the newest requests; only `proctor verify` can say one is needed);
damage inside a content page (a stored action whose JSON no longer parses) is shown as the
journal's damage, never as an error dialog with SQL, and nothing is decided on it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from PySide6.QtWidgets import QApplication

from proctor.core import Journal, errors
from proctor.gui.shell.app import DeskApp
from proctor.gui.widgets.status import StoreState

from .conftest import WAIT_MS, settled
from .test_store_damage import (  # noqa: F401 - the fixture is used by name
    no_dialogs,
    overwrite_page,
    request,
    root_page,
    show,
)

MARK = b'"sessionsXYZ"'


def test_a_failing_read_after_the_wal_was_deleted_advises_no_backup(
    qtbot,
    journal_path,
    open_desk,
    no_dialogs,  # noqa: F811 - the fixture
):
    window = open_desk(journal_path)
    qtbot.waitUntil(window.services.watcher.watching_wal, timeout=WAIT_MS)
    _run, approval_id = request(journal_path)
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") >= 0, timeout=WAIT_MS
    )
    Path(f"{journal_path}-wal").unlink()  # no checkpoint first
    qtbot.waitUntil(
        lambda: window.status.current_state() is StoreState.WAL_DELETED, timeout=WAIT_MS
    )
    # what SQLite answers a read through a -wal index whose -wal is gone
    window.presenter.present(errors.Corrupt("the journal file is damaged: disk image malformed"))
    notice = window.notice.text()
    assert "-wal" in notice and "deleted" in notice and "proctor verify" in notice
    assert "only if verify names a problem" in notice
    assert "The journal file is damaged" not in notice
    assert window.status.current_state() is StoreState.WAL_DELETED
    assert no_dialogs == []


def test_damage_inside_a_content_page_is_named_damage_not_a_dialog(
    qtbot,
    journal_path,
    open_desk,
    no_dialogs,  # noqa: F811 - the fixture
):
    with Journal.open(journal_path, actor="agent:bot") as agent:
        run = agent.runs.start("shop", "migrate")
        bad = agent.approvals.request(
            run.id, {"tool": "db.migrate", "args": {"table": "sessionsXYZ"}}, reason="go"
        )
    conn = sqlite3.connect(journal_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = journal_path.read_bytes()
    assert data.count(MARK) == 1
    journal_path.write_bytes(data.replace(MARK, b'"sessionsXYZ}'))  # its JSON no longer parses
    window = open_desk(journal_path)
    inbox = window.inbox
    key = f"approval:{bad.id}"
    qtbot.waitUntil(lambda: inbox.model.row_of(key) >= 0, timeout=WAIT_MS)
    inbox.set_current_row(inbox.model.row_of(key))
    qtbot.waitUntil(lambda: window.status.state.text() == "store: damaged", timeout=WAIT_MS)
    notice = window.notice.text()
    assert "the journal is damaged at approval" in notice and "its action" in notice
    assert "SELECT" not in notice
    assert no_dialogs == []
    assert window.journal.damage is not None  # and nothing more is decided on it


def test_the_damage_check_marks_the_journal_damaged_and_nothing_is_decided(
    qtbot,
    journal_path,
    tmp_path,
    settings,
    no_dialogs,  # noqa: F811 - the fixture
):
    """PRAGMA quick_check (run once the window is up) finds a damaged page in a table no
    read of the desk touches yet: the status says "store: damaged", and an Approve pressed
    afterwards writes nothing to the file (as after damage a read ran into)."""
    _run, approval_id = request(journal_path)
    path = tmp_path / "damaged.db"
    path.write_bytes(journal_path.read_bytes())
    overwrite_page(path, root_page(path, "ix_receipts_effect"))
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="dana")
        window = desk.window
        qtbot.waitUntil(lambda: window.status.state.text() == "store: damaged", timeout=WAIT_MS)
        show(qtbot, window, approval_id)
        settled(qtbot, window)
        assert window.registry.trigger("inbox.approve")
        qtbot.waitUntil(lambda: not window.inbox.decider.in_flight, timeout=WAIT_MS)
        assert approval_status(path, approval_id) == "pending"
        assert window.journal.damage is not None
        assert window.status.state.text() == "store: damaged"
        assert no_dialogs == []
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def approval_status(path: Path, approval_id: str) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT status FROM approvals WHERE id = ?", (approval_id,)).fetchone()[
            0
        ]
    finally:
        conn.close()


def test_opening_the_journal_again_after_a_restore_clears_the_damage(
    qtbot,
    journal_path,
    tmp_path,
    settings,
    no_dialogs,  # noqa: F811 - the fixture
):
    """The notice says: restore the journal from a backup, then reopen it. Opened again
    (File > Open of the same file) once a healthy copy is back in its place, the desk reads
    it afresh: "store: ok", the damage forgotten, and Approve decides again."""
    _run, approval_id = request(journal_path)
    path = tmp_path / "restored.db"
    path.write_bytes(journal_path.read_bytes())
    overwrite_page(path, root_page(path, "ix_receipts_effect"))
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="dana")
        damaged = desk.window
        qtbot.waitUntil(lambda: damaged.status.state.text() == "store: damaged", timeout=WAIT_MS)
        qtbot.waitUntil(lambda: damaged.status.check.isHidden(), timeout=WAIT_MS)
        backup = tmp_path / "backup.db"
        backup.write_bytes(journal_path.read_bytes())
        os.replace(backup, path)  # the operator restores the backup in its place
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            damaged.open_requested.emit(str(path))  # File > Open…, the same file
        window = desk.window
        qtbot.waitUntil(lambda: window.status.check.isHidden(), timeout=WAIT_MS)
        assert window.status.state.text() == "store: ok"
        assert window.journal.damage is None
        show(qtbot, window, approval_id)
        settled(qtbot, window)
        assert window.registry.trigger("inbox.approve")
        qtbot.waitUntil(lambda: approval_status(path, approval_id) == "approved", timeout=WAIT_MS)
        assert no_dialogs == []
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()
