"""One desk per journal: a second `proctor open J` (another process) focuses the desk that
has J open and exits; the same desk asked for its own journal again just comes forward."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QDir
from PySide6.QtWidgets import QApplication

from proctor.core import Journal
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.single_instance import JournalServer, focus_running, journal_key

from .conftest import WAIT_MS

ASK = (
    "import sys; from PySide6.QtCore import QCoreApplication; "
    "from proctor.gui.shell.single_instance import focus_running; "
    "app = QCoreApplication([]); print(focus_running(sys.argv[1]))"
)


def quiet_env(tmp_path: Path) -> dict[str, str]:
    """A child desk's environment: offscreen, its settings and logs under tmp_path."""
    return {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PROCTOR_LOG_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


def run_child(qtbot, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a child process while this process's event loop keeps answering."""
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=60_000)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def test_the_key_is_per_file_not_per_spelling(tmp_path, monkeypatch):
    journal = tmp_path / "j.db"
    journal.touch()
    link = tmp_path / "link.db"
    link.symlink_to(journal)
    monkeypatch.chdir(tmp_path)
    assert journal_key(journal) == journal_key("j.db") == journal_key(link)
    assert journal_key(journal) != journal_key(tmp_path / "other.db")
    assert journal_key(journal).startswith("proctor-desk-")


def test_nobody_answers_for_a_journal_no_desk_has_open(qapp, tmp_path):
    assert focus_running(tmp_path / "j.db") is False


def test_another_process_asking_for_the_journal_focuses_this_desk(qtbot, tmp_path):
    journal = tmp_path / "j.db"
    server = JournalServer()
    try:
        assert server.listen(journal)
        with qtbot.waitSignal(server.focus_requested, timeout=WAIT_MS):
            done = run_child(qtbot, [sys.executable, "-c", ASK, str(journal)], quiet_env(tmp_path))
        assert done.stdout.strip() == "True", done.stderr
    finally:
        server.close()


def test_a_second_live_desk_does_not_steal_the_journal(qapp, tmp_path):
    journal = tmp_path / "j.db"
    first, second = JournalServer(), JournalServer()
    try:
        assert first.listen(journal)
        assert second.listen(journal) is False
        assert first.name() == journal_key(journal) and second.name() == ""
    finally:
        first.close()
        second.close()


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes leave no file behind")
def test_a_socket_left_by_a_crashed_desk_is_replaced(qapp, tmp_path):
    journal = tmp_path / "j.db"
    stale = Path(QDir.tempPath()) / journal_key(journal)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(stale))
    dead.close()  # the file stays; nobody listens
    server = JournalServer()
    try:
        assert stale.exists()
        assert server.listen(journal)
    finally:
        server.close()
    assert not stale.exists()


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: no window manager
def test_proctor_open_of_an_open_journal_focuses_the_desk_and_exits(
    qtbot, populated, tmp_path, settings
):
    path, _ = populated
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="alice")
        window = desk.window
        with qtbot.waitSignal(desk.instances.focus_requested, timeout=WAIT_MS):
            done = run_child(
                qtbot, [sys.executable, "-m", "proctor", "open", str(path)], quiet_env(tmp_path)
            )
        assert done.returncode == 0, done.stderr
        assert "already open in a desk" in done.stderr
        # asked for its own journal again, the desk keeps its window (no second one)
        shown = []
        desk.window_shown.connect(shown.append)
        desk.open(path)
        desk.open(str(path.parent / "." / path.name))
        assert desk.window is window and shown == []
        # another journal nobody has open is opened as usual
        other = tmp_path / "other.db"
        Journal.open(other).close()
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(other)
        assert desk.instances.name() == journal_key(other)
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()
