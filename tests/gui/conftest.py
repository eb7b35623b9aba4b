"""Desk test fixtures: a real journal file, the real window, agent processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.core import Journal
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.shell.mainwindow import MainWindow

from .data import populate

AGENT = Path(__file__).with_name("agent_proc.py")
WAIT_MS = 30_000  # every wait is for a condition: generous, for a loaded 2-core CI machine


def wait_presented(qtbot) -> None:
    """Wait until the presentation pool (diffs of agent data) has delivered everything."""
    from proctor.gui.infra.tasks import PresentationPool

    qtbot.waitUntil(lambda: PresentationPool.instance().pending() == 0, timeout=WAIT_MS)


# The offscreen platform plugin says this whenever a dialog is shown; it is not ours.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"


def settled(qtbot, window_or_detail) -> None:
    """Wait until the shown item (of a window's inbox, or of a detail widget) has been on
    screen long enough for a click on its decision buttons to count (issue 16: a click on
    what has just appeared does nothing)."""
    from proctor.gui.decide.settle import SETTLE_S

    inbox = getattr(window_or_detail, "inbox", None)
    settle = inbox.settle if inbox is not None else window_or_detail.ctx.settle
    if settle is not None:
        qtbot.waitUntil(lambda: settle.read_for() >= SETTLE_S, timeout=WAIT_MS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


class AgentProcess:
    """A separate Python process running ``script`` (agent_proc.py unless named) on the
    journal; its output lines are collected."""

    def __init__(self, journal: Path, *args: str, script: Path = AGENT) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(journal), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def found(self, prefix: str) -> list[str]:
        return [line for line in self.lines if line.startswith(prefix)]

    def wait_for(self, qtbot, prefix: str, count: int = 1, timeout: int = WAIT_MS) -> list[str]:
        qtbot.waitUntil(lambda: len(self.found(prefix)) >= count, timeout=timeout)
        return self.found(prefix)

    def requested(self) -> list[str]:
        return [line.split()[1] for line in self.found("REQUESTED")]

    def finish(self, qtbot, timeout: int = WAIT_MS) -> list[str]:
        """Wait for the process to end by itself; all its lines."""
        qtbot.waitUntil(lambda: self.proc.poll() is not None, timeout=timeout)
        self._reader.join(5)  # the pipe is closed: the reader ends at once
        return self.lines

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture(autouse=True)
def no_session_bus(monkeypatch: pytest.MonkeyPatch) -> None:
    """No desk under test sends desktop notifications to the session bus of whoever runs
    the tests (tests/gui/test_desktop_notify.py starts a private bus of its own)."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


@pytest.fixture(scope="session")
def migrated_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One freshly migrated journal file per session (per xdist worker): each test's journal
    is a copy of it (a copy takes ~2 ms, migrating ~0.2 s)."""
    path = tmp_path_factory.mktemp("gui-template") / "journal.db"
    Journal.open(path).close()
    assert not Path(f"{path}-wal").exists(), "the template must be checkpointed before copying"
    return path


def fresh_journal(template: Path, folder: Path) -> Path:
    """``folder``/journal.db: a new migrated journal (a copy of the session's template, its
    0600 mode kept)."""
    path = folder / "journal.db"
    shutil.copy2(template, path)
    return path


@pytest.fixture
def journal_path(migrated_journal: Path, tmp_path: Path) -> Path:
    return fresh_journal(migrated_journal, tmp_path)


@pytest.fixture
def populated(migrated_journal: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = fresh_journal(migrated_journal, tmp_path)
    return path, populate(path)


@pytest.fixture
def open_desk(desks) -> Iterator:
    """open_desk(path, operator="alice", read_only=False) -> a started, shown, active
    MainWindow. At teardown (tests/conftest.py ``Desks.close_all``) no desk may have made
    a store call on the GUI thread."""
    desks.wait_ms = WAIT_MS

    def make(
        path: Path, operator: str = "alice", read_only: bool = False, signer: Any = None
    ) -> MainWindow:
        return desks.open(
            path, operator=operator, read_only=read_only, activate=True, signer=signer
        )

    yield make
    for violations in desks.close_all():
        assert violations == []


@pytest.fixture
def agents() -> Iterator:
    started: list[AgentProcess] = []

    def start(journal: Path, *args: str, script: Path = AGENT) -> AgentProcess:
        agent = AgentProcess(journal, *args, script=script)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        agent.stop()


@pytest.fixture
def runner(qapp) -> Iterator[TaskRunner]:
    """A task runner of its own (3 read threads and the write lane), shut down after."""
    runner = TaskRunner(threads=3)
    yield runner
    runner.shutdown()
