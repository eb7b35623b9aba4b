"""The desk as a real process with its event loop running. `proctor open` on an older journal:
the operator's Upgrade in the dialog (the only window at that point) must not quit the desk
before the upgraded journal's window is shown; closing the window ends the desk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.storage import db as core_db

DESK = r"""
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from proctor.gui.shell import app as desk_app
from proctor.gui.shell.old_schema import OldSchemaDialog

plain_exec = OldSchemaDialog.exec

def exec_and_upgrade(self):
    QTimer.singleShot(100, self.upgrade_button.click)  # the operator clicks Upgrade
    return plain_exec(self)

def shown(window):
    print("WINDOW", window.journal.schema_revision, flush=True)
    QTimer.singleShot(300, QApplication.instance().quit)

OldSchemaDialog.exec = exec_and_upgrade
sys.exit(desk_app.run_desk(sys.argv[1], operator="alice", on_window=shown,
                           single_instance=False))
"""


def older_journal(path: Path, downgrade) -> str:
    """A journal with data, taken one revision back with Alembic; returns that revision."""
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "older data")
        agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
    previous = core_db.SCHEMA_REVISIONS[-2]
    downgrade(path, previous)
    return previous


def test_upgrade_from_the_dialog_opens_the_window(tmp_path, downgrade):
    path = tmp_path / "journal.db"
    older_journal(path, downgrade)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PROCTOR_LOG_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-c", DESK, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert f"WINDOW {core_db.SCHEMA_HEAD}" in done.stdout, (done.stdout, done.stderr)
    assert list(tmp_path.glob("journal.db.backup-*"))


CLOSE = r"""
import sys
from PySide6.QtCore import QTimer
from proctor.gui.shell import app as desk_app

def shown(window):
    print("WINDOW", flush=True)
    QTimer.singleShot(300, window.close)  # the operator closes the desk

sys.exit(desk_app.run_desk(sys.argv[1], operator="alice", on_window=shown,
                           single_instance=False))
"""


def test_closing_the_window_ends_the_desk(tmp_path):
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PROCTOR_LOG_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-c", CLOSE, str(tmp_path / "journal.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "WINDOW" in done.stdout
