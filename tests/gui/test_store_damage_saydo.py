"""What the desk says about its journal (issue 32, items 11 and 12): after the -wal was
deleted under it, a failing read does not turn the notice into "damaged … restore from a
backup" (a backup lacks the newest requests; only `proctor verify` can say one is needed);
damage inside a content page (a stored action whose JSON no longer parses) is shown as the
journal's damage, never as an error dialog with SQL, and nothing is decided on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from proctor.core import Journal, errors
from proctor.gui.widgets.status import StoreState

from .conftest import WAIT_MS
from .test_store_damage import no_dialogs, request  # noqa: F401 - the fixture is used by name

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
