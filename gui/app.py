"""Composition root: open journal -> services -> main window. No globals.

``build_window(journal, ...)`` composes one desk over an already open journal (tests use
it directly); ``DeskApp`` opens journals on the task runner and swaps windows;
``run_desk()`` is what ``proctor open`` / ``proctor demo`` / ``proctor-desk`` call.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, QtMsgType, Signal, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal

from .context import Services
from .errors import ErrorDialog, describe, is_expected
from .guard import GuardedJournal, ThreadGuard
from .mainwindow import MainWindow
from .settings import DeskSettings
from .tasks import TaskRunner
from .theme import Theme, ThemeMode
from .watcher import JournalWatcher
from .widgets.icons import icon

log = logging.getLogger("proctor.gui")


def debug_mode() -> bool:
    return os.environ.get("PROCTOR_DEBUG", "") not in ("", "0")


def build_window(journal: Journal, *, runner: TaskRunner, settings: DeskSettings,
                 theme: Theme | None = None, strict: bool | None = None) -> MainWindow:
    """One desk over ``journal``: guard it, watch it, and build the window (not shown)."""
    guard = ThreadGuard(strict=debug_mode() if strict is None else strict)
    guarded = GuardedJournal(journal, guard)
    watcher = JournalWatcher(guarded, runner)
    services = Services(journal=guarded, runner=runner, watcher=watcher, settings=settings,
                        guard=guard, theme=theme)
    window = MainWindow(services)
    watcher.setParent(window)
    return window


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv or [sys.argv[0]])
    app.setOrganizationName("Proctor")
    app.setApplicationName("Proctor Desk")
    app.setDesktopFileName("proctor-desk")
    app.setWindowIcon(icon("proctor"))
    return app


def route_qt_messages() -> None:
    """Qt's own warnings go to Python logging."""
    levels = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        logging.getLogger("qt").log(levels.get(kind, logging.WARNING), message)

    qInstallMessageHandler(handler)


class DeskApp(QObject):
    """Opens journals (off the GUI thread) and owns the windows over them.

    Signals:
        window_shown(object): a new MainWindow is on screen.
        open_failed(object): a journal could not be opened (the exception).
    """

    window_shown = Signal(object)
    open_failed = Signal(object)

    def __init__(self, app: QApplication, settings: DeskSettings, theme: Theme | None,
                 *, strict: bool = False) -> None:
        super().__init__(app)
        self.app = app
        self.settings = settings
        self.theme = theme
        self.strict = strict
        self.runner = TaskRunner(self)
        self.window: MainWindow | None = None
        self.on_window: Callable[[MainWindow], None] | None = None

    def open(self, path: str | Path, *, read_only: bool = False,
             operator: str | None = None) -> None:
        actor = Actor.operator(operator) if operator else None
        self.runner.run(lambda: Journal.open(path, actor=actor, read_only=read_only),
                        on_done=self._on_opened, on_error=self._on_open_failed, owner=self)

    def _on_opened(self, journal: Journal) -> None:
        window = build_window(journal, runner=self.runner, settings=self.settings,
                              theme=self.theme, strict=self.strict)
        window.open_requested.connect(self._on_open_requested)
        old, self.window = self.window, window
        self.settings.add_recent(journal.path)
        window.show()
        window.start()
        if old is not None:
            old.close()
            old.deleteLater()
        if self.on_window is not None:
            self.on_window(window)
        self.window_shown.emit(window)

    def _on_open_requested(self, path: str) -> None:
        operator = self.window.journal.actor.name if self.window else None
        self.open(path, operator=operator)

    def _on_open_failed(self, exc: BaseException) -> None:
        self.open_failed.emit(exc)
        text = describe(exc) if is_expected(exc) else f"{type(exc).__name__}: {exc}"
        if not is_expected(exc):
            log.error("could not open the journal", exc_info=exc)
        ErrorDialog.ask(self.window, "Could not open the journal", text, str(exc))
        if self.window is None:
            self.app.exit(1)

    def shutdown(self) -> None:
        self.runner.shutdown()


def run_desk(path: str | Path, *, read_only: bool = False, operator: str | None = None,
             on_window: Callable[[MainWindow], None] | None = None) -> int:
    """Open ``path`` in the desk and run the event loop until the window closes."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = make_app()
    route_qt_messages()
    settings = DeskSettings()
    theme = Theme(app, ThemeMode(settings.theme))
    desk = DeskApp(app, settings, theme, strict=debug_mode())
    desk.on_window = on_window
    desk.open(path, read_only=read_only, operator=operator)
    try:
        return app.exec()
    finally:
        desk.shutdown()


def report_paint_and_quit(window: MainWindow) -> None:
    """Benchmark hook: print when the inbox first shows rows, then quit."""

    def check() -> None:
        table = window.inbox.table
        if window.inbox.model.has_loaded:
            table.viewport().repaint()
            print(f"painted {time.time():.6f} rows {window.inbox.model.rowCount()}", flush=True)
            QApplication.instance().quit()
        else:
            QTimer.singleShot(1, check)

    QTimer.singleShot(0, check)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="proctor-desk", description="Proctor's desk")
    parser.add_argument("path", help="the journal file")
    parser.add_argument("--read-only", action="store_true", help="open for observing only")
    parser.add_argument("--as", dest="operator", help="operator name (default: your login)")
    parser.add_argument("--bench-paint", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    hook = report_paint_and_quit if args.bench_paint else None
    return run_desk(args.path, read_only=args.read_only, operator=args.operator, on_window=hook)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
