"""An older journal in the desk: the operator is asked (Upgrade after a backup / Open
read-only / Cancel) on the GUI thread, after the journal was opened without migrating off
it; `--read-only` and `--migrate` opens never ask.

An honest older journal whatever this Proctor's head is: the tests add one test-only
Alembic revision after the real head (in a copy of the migration scripts) and tell the
code that it is the head, so a journal written now is one revision behind.
"""

from __future__ import annotations

import shutil
import sqlite3
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import alembic.config
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog

from proctor.core import Actor, Journal
from proctor.core.storage import db as core_db
from proctor.core.storage import revisions as core_revisions
from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.shell import old_schema
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.old_schema import Choice, OldSchemaDialog

from .conftest import WAIT_MS

NEXT = "desk_test_next"
REVISION = '''
"""test-only revision after the real head: one new table"""
import sqlalchemy as sa
from alembic import op

revision = "{next}"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("desk_probe", sa.Column("id", sa.Integer, primary_key=True))


def downgrade() -> None:
    op.drop_table("desk_probe")
'''


@pytest.fixture
def older(tmp_path: Path, monkeypatch) -> tuple[Path, str, str]:
    """(path, its revision, the code's head): a journal with data, one revision behind."""
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "older data")
        agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
        old = agent.schema_revision
    scripts = tmp_path / "migrations"
    shutil.copytree(
        Path(core_db.__file__).with_name("migrations"),
        scripts,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (scripts / "versions" / f"{NEXT}.py").write_text(
        textwrap.dedent(REVISION.format(next=NEXT, head=old))
    )
    for module in (core_db, core_revisions):  # db re-exports what revisions defines
        monkeypatch.setattr(module, "SCHEMA_REVISIONS", (*core_db.SCHEMA_REVISIONS, NEXT))
        monkeypatch.setattr(module, "SCHEMA_HEAD", NEXT)
    monkeypatch.setattr(old_schema, "SCHEMA_HEAD", NEXT)  # the desk's copy (app_schema)
    plain = alembic.config.Config.set_main_option

    def set_main_option(self, name: str, value: str) -> None:
        plain(self, name, str(scripts) if name == "script_location" else value)

    monkeypatch.setattr(alembic.config.Config, "set_main_option", set_main_option)
    return path, old, NEXT


@pytest.fixture
def desk(qtbot, settings, monkeypatch) -> Iterator[DeskApp]:
    """A DeskApp whose error dialog and exits are recorded."""
    app = DeskApp(QApplication.instance(), settings, None, strict=True)
    app.errors = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: app.errors.append(a))
    app.exits = []
    app.app = SimpleNamespace(exit=app.exits.append)  # `proctor open` would exit here
    yield app
    if app.window is not None:
        app.window.close()
    app.shutdown()


def answer(monkeypatch, choice: Choice) -> list[dict]:
    """Make the dialog answer ``choice``; returns what each ask saw."""
    asked: list[dict] = []

    def ask(_parent, path: Path, revision: str, head: str) -> Choice:
        asked.append(
            {
                "path": path,
                "revision": revision,
                "head": head,
                "gui_thread": threading.current_thread() is threading.main_thread(),
                "stored": stored_revision(path),
                "backups": backups(path),
            }
        )
        return choice

    monkeypatch.setattr(OldSchemaDialog, "ask", ask)
    return asked


def stored_revision(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    finally:
        conn.close()


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.backup-*"))


def test_upgrade_is_asked_first_then_migrates_after_a_backup(qtbot, older, desk, monkeypatch):
    path, old, head = older
    asked = answer(monkeypatch, Choice.UPGRADE)
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(path, operator="alice")
    [seen] = asked
    # asked on the GUI thread, before anything was written
    assert seen == {
        "path": path,
        "revision": old,
        "head": head,
        "gui_thread": True,
        "stored": old,
        "backups": [],
    }
    window = desk.window
    assert window.journal.schema_revision == head and not window.journal.read_only
    assert stored_revision(path) == head
    [backup] = backups(path)
    assert stored_revision(backup) == old
    assert backup.stat().st_mode & 0o777 == 0o600
    assert (
        str(backup) in window.notice.text()
        and f"from schema {old} to {head}" in window.notice.text()
    )
    assert window.status.schema.text() == f"schema {head}"
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=WAIT_MS)
    assert desk.errors == []


def test_read_only_keeps_the_file_as_it_was(qtbot, older, desk, monkeypatch):
    path, old, head = older
    asked = answer(monkeypatch, Choice.READ_ONLY)
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(path, operator="alice")
    assert len(asked) == 1
    window = desk.window
    assert window.journal.read_only and window.journal.schema_revision == old
    assert window.status.state.text() == "store: read-only"
    assert window.status.schema.text() == f"schema {old}"
    assert f"older than this Proctor's ({head})" in window.notice.text()
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=WAIT_MS)
    assert stored_revision(path) == old and backups(path) == []


def test_cancel_opens_nothing(qtbot, older, desk, monkeypatch, tmp_path):
    path, old, _head = older
    asked = answer(monkeypatch, Choice.CANCEL)
    with qtbot.waitSignal(desk.open_cancelled, timeout=WAIT_MS) as cancelled:
        desk.open(path, operator="alice")
    assert cancelled.args == [str(path)] and len(asked) == 1
    assert desk.window is None and desk.exits == [1]  # `proctor open` ends: nothing opened
    assert stored_revision(path) == old and backups(path) == []
    # with a desk already open, cancelling keeps it
    current = tmp_path / "current" / "journal.db"
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(current, operator="alice")  # a new journal: at the head, never asked
    assert len(asked) == 1
    window = desk.window
    with qtbot.waitSignal(desk.open_cancelled, timeout=WAIT_MS):
        window.open_requested.emit(str(path))  # File ▸ Open
    assert len(asked) == 2 and desk.window is window and window.isVisible()
    assert desk.exits == [1] and stored_revision(path) == old


@pytest.mark.parametrize("how", ["read_only", "migrate"])
def test_non_interactive_opens_never_ask(qtbot, older, desk, monkeypatch, how):
    path, old, head = older
    asked = answer(monkeypatch, Choice.CANCEL)
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        if how == "read_only":  # --read-only
            desk.open(path, read_only=True, operator="alice")
        else:  # --migrate
            desk.open(path, operator="alice", old_schema="migrate")
    assert asked == []
    journal = desk.window.journal
    if how == "read_only":
        assert journal.read_only and journal.schema_revision == old and backups(path) == []
    else:
        assert not journal.read_only and journal.schema_revision == head
        assert stored_revision(path) == head and len(backups(path)) == 1


def test_dialog_says_both_versions_and_where_the_backup_goes(qtbot, tmp_path):
    path = tmp_path / "team" / "journal.db"
    dialog = OldSchemaDialog(None, path, "0001", "0002")
    qtbot.addWidget(dialog)
    text = dialog.text.text()
    assert "journal schema 0001" in text and "this Proctor uses schema 0002" in text
    assert f"{path.parent / 'journal.db.backup-'}" in text and "written first" in text
    assert dialog.text.textFormat() == Qt.TextFormat.PlainText
    buttons = [
        b.text() for b in (dialog.upgrade_button, dialog.read_only_button, dialog.cancel_button)
    ]
    assert buttons == ["&Upgrade", "Open &read-only", "Cancel"]
    assert dialog.cancel_button.isDefault() and not dialog.upgrade_button.isDefault()  # issue 32
    dialog.open()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.result() == QDialog.DialogCode.Rejected and dialog.choice is Choice.CANCEL
    for button, choice, result in (
        (dialog.read_only_button, Choice.READ_ONLY, True),
        (dialog.upgrade_button, Choice.UPGRADE, True),
        (dialog.cancel_button, Choice.CANCEL, False),
    ):
        dialog.open()
        button.click()
        assert dialog.choice is choice
        assert (dialog.result() == QDialog.DialogCode.Accepted) is result
