"""Help ▸ About (versions, the journal's schema revision, copy for bug reports), Help ▸ Open
log folder, and the log itself: the platform folder, rotation, Qt's messages routed in."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import PySide6
import pytest
import sqlalchemy
from PySide6.QtCore import qInstallMessageHandler, qVersion, qWarning
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QMenu

import proctor
from proctor.gui.shell import logging_setup
from proctor.gui.shell.about import AboutDialog, as_text, versions


@pytest.fixture
def log_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "logs"
    monkeypatch.setenv("PROCTOR_LOG_DIR", str(folder))
    return folder


@pytest.fixture
def qt_handler():
    """setup_logging replaces Qt's message handler: put pytest-qt's back afterwards."""
    previous = qInstallMessageHandler(logging_setup.qt_message)
    yield
    qInstallMessageHandler(previous)
    logging_setup.stop_logging()


def test_versions_name_every_library_and_the_journal_schema(populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    rows = dict(versions(window.journal))
    assert rows["Proctor"] == proctor.__version__
    assert rows["Qt"] == qVersion()
    assert rows["PySide6"] == PySide6.__version__
    assert rows["SQLAlchemy"] == sqlalchemy.__version__
    assert rows["SQLite"] == sqlite3.sqlite_version
    assert rows["Journal schema"] == window.journal.schema_revision
    assert rows["Journal schema"]  # e.g. "0001"
    assert rows["Journal"] == str(window.journal.path)


def test_help_about_shows_them_and_copies_them(qtbot, populated, open_desk, log_folder):
    path, _ = populated
    window = open_desk(path)
    help_menu = window.menuBar().findChild(QMenu, "menu.help")
    ids = [a.objectName() for a in help_menu.actions() if not a.isSeparator()]
    assert ids == ["app.shortcuts", "app.logs", "app.about"]
    assert window.registry.trigger("app.about")
    dialog = window.findChild(AboutDialog)
    qtbot.waitUntil(dialog.isVisible)
    shown = [label.text() for label in dialog.findChildren(QLabel)]
    assert any(window.journal.schema_revision == text for text in shown)
    assert str(log_folder) in shown
    dialog.copy.click()
    copied = QGuiApplication.clipboard().text()
    assert copied == as_text(dialog.rows)
    assert f"Journal schema: {window.journal.schema_revision}" in copied
    assert f"Qt: {qVersion()}" in copied
    dialog.close()


def test_open_log_folder_hands_the_folder_to_the_platform(
    populated, open_desk, log_folder, monkeypatch
):
    path, _ = populated
    window = open_desk(path)
    opened = []
    monkeypatch.setattr(logging_setup, "open_url", opened.append)
    assert window.registry.trigger("app.logs")
    [url] = opened
    assert Path(url.toLocalFile()) == log_folder
    assert log_folder.is_dir()


def test_the_log_goes_to_the_platform_folder_and_rotates(log_folder, monkeypatch, qt_handler):
    monkeypatch.setattr(logging_setup, "MAX_BYTES", 4000)
    path = logging_setup.setup_logging()
    try:
        assert path == log_folder / "desk.log"
        log = logging.getLogger("proctor.gui.test")
        for n in range(200):
            log.info("line %d of the log, long enough to fill a few kilobytes quickly", n)
        assert path.stat().st_size <= 4000
        backups = sorted(p.name for p in log_folder.glob("desk.log*"))
        assert (log_folder / ".__desk.lock").exists()  # rotation is shared by desk processes
        assert backups == ["desk.log"] + [
            f"desk.log.{n}" for n in range(1, logging_setup.BACKUPS + 1)
        ]
        assert "line 199 of the log" in path.read_text(encoding="utf-8")
    finally:
        logging_setup.stop_logging()
    assert not any(getattr(h, "proctor_desk", False) for h in logging.getLogger().handlers)


def test_default_log_folder_is_the_platform_one(monkeypatch):
    import platformdirs

    monkeypatch.delenv("PROCTOR_LOG_DIR", raising=False)
    assert logging_setup.log_dir() == Path(platformdirs.user_log_dir("proctor", appauthor=False))


def test_qt_messages_land_in_the_log(log_folder, qt_handler):
    path = logging_setup.setup_logging()
    qWarning("a warning from Qt itself")
    logging_setup.stop_logging()
    text = path.read_text(encoding="utf-8")
    assert "WARNING qt" in text and "a warning from Qt itself" in text


def test_a_folder_that_cannot_be_created_leaves_logging_to_stderr(tmp_path, qt_handler):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = logging_setup.setup_logging(folder=blocker / "logs")
    ours = [h for h in logging.getLogger().handlers if getattr(h, "proctor_desk", False)]
    assert [type(h).__name__ for h in ours] == ["StreamHandler"]
    assert not path.exists()
