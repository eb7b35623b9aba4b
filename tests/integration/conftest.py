"""Integration fixtures: a desk in the test process (offscreen, on a real journal file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from proctor.core import Actor, Journal
from proctor.gui.app import build_window
from proctor.gui.mainwindow import MainWindow
from proctor.gui.settings import DeskSettings
from proctor.gui.tasks import TaskRunner

WAIT_MS = 20_000


@pytest.fixture
def settings(tmp_path: Path) -> DeskSettings:
    return DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def desk(qtbot, settings) -> Iterator:
    """desk(path, read_only=False, busy_timeout=5.0) -> a started MainWindow as "alice"."""
    opened: list[tuple[MainWindow, TaskRunner]] = []

    def make(path: Path, read_only: bool = False, busy_timeout: float = 5.0) -> MainWindow:
        journal = Journal.open(path, actor=Actor.operator("alice"), read_only=read_only,
                               busy_timeout=busy_timeout)
        runner = TaskRunner()
        window = build_window(journal, runner=runner, settings=settings, strict=True)
        qtbot.addWidget(window)
        opened.append((window, runner))
        window.show()
        qtbot.waitExposed(window)
        window.start()
        qtbot.waitUntil(lambda: window.inbox.model.has_loaded, timeout=WAIT_MS)
        return window

    yield make
    for window, runner in opened:
        window.close()
        runner.shutdown()
