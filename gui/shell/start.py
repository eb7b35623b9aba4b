"""The desk's window, up before the desk itself is imported: importing the desk (its pages,
the core, SQLAlchemy) and opening the journal take seconds on a loaded machine, and a bare
PySide6 window takes a fraction of one. So a desk start shows its window at once — the
``DeskFrame``, saying what it is doing — then imports the desk, opens the journal and puts
the main window inside that same window (the inbox says "Loading the inbox…" until it is
there). No window gives way to another: the one the operator saw first is the desk.

This module imports PySide6 and nothing of Proctor's at its top: keep it so
(tests/gui/test_start_window.py checks it in a fresh process).

    python -m proctor.gui.shell.start PATH [--read-only] [--as NAME] [--migrate]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QVBoxLayout, QWidget


def _tr(text: str) -> str:
    return QCoreApplication.translate("OpeningWindow", text)


class OpeningPane(QWidget):
    """ "Opening the journal… PATH — what it does now": the frame's content until the desk
    is in it."""

    def __init__(self, place: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(_tr("Opening the journal"))
        self.title = QLabel(_tr("Opening the journal…"), self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        self.title.setFont(font)
        self.place = QLabel(place, self)  # the operator's own path (shown plain)
        self.place.setTextFormat(Qt.TextFormat.PlainText)
        self.place.setAccessibleName(_tr("Journal"))
        self.doing = QLabel(_tr("Loading the desk…"), self)
        self.doing.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 32, 32, 32)
        layout.addStretch(1)
        for label in (self.title, self.place, self.doing):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        layout.addStretch(2)


class DeskFrame(QMainWindow):
    """The desk's one window: shown first with an ``OpeningPane``, then holding the main
    window (``adopt``). Its title and icon follow the main window's; closing it closes the
    desk inside it, and the desk closing (File ▸ Quit, another journal opened) closes it.

    Signals:
        closed_early(): the operator closed it before the desk was in it.
    """

    closed_early = Signal()

    def __init__(self, place: str) -> None:
        super().__init__()
        self.setObjectName("DeskFrame")
        self.setWindowTitle(_tr("Proctor Desk"))
        self.pane = OpeningPane(place, self)
        self.setCentralWidget(self.pane)
        self.desk: QWidget | None = None
        self._closing = False
        self.resize(1360, 860)
        # where the desk's window was last (the settings the main window saves it in)
        saved = QSettings("Proctor", "Proctor Desk").value("window/geometry")
        if isinstance(saved, QByteArray) and not saved.isEmpty():
            self.restoreGeometry(saved)

    def say(self, doing: str) -> None:
        """What the desk does now, painted at once (the event loop may not run until the
        next step is done)."""
        self.pane.doing.setText(doing)
        self.pane.doing.repaint()

    def adopt(self, window: QMainWindow) -> None:
        """Put the main window in this one (before it is shown): from now on it is the
        desk's window, under this window's title bar."""
        window.setWindowFlags(Qt.WindowType.Widget)
        self.setMinimumSize(window.minimumSize())
        self.setWindowTitle(window.windowTitle())
        self.setWindowIcon(window.windowIcon())
        window.windowTitleChanged.connect(self.setWindowTitle)
        window.windowIconChanged.connect(self.setWindowIcon)
        closed = getattr(window, "closed", None)
        if closed is not None:
            closed.connect(self.close)
        self.desk = window
        self.setCentralWidget(window)  # the opening pane is deleted with it
        self.pane = None  # type: ignore[assignment]

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing:  # the desk inside closing closes this (adopt)
            super().closeEvent(event)
            return
        self._closing = True
        desk = self.desk
        if desk is not None and desk.isVisible() and not desk.close():
            self._closing = False
            event.ignore()  # the desk chose to stay open
            return
        if desk is None:
            self.closed_early.emit()
        super().closeEvent(event)


def run_desk(path: str | Path, **options: Any) -> int:
    """``proctor.gui.shell.app.run_desk`` with its window shown first (up in the time a bare
    PySide6 window takes, saying what the desk does), the main window put inside it when it
    is built. Closing the window before then ends the desk."""
    app = QApplication.instance() or QApplication([sys.argv[0]])
    frame = DeskFrame(str(path))
    frame.show()
    frame.repaint()
    report = options.pop("report_opening", None)
    if report is not None:
        report()
    QCoreApplication.processEvents()
    from ..infra.i18n import install_translator
    from .app import run_desk as run

    if isinstance(app, QApplication):
        install_translator(app)  # made here, before the desk's make_app could
    frame.say(_tr("Reading the journal…"))
    frame.closed_early.connect(QCoreApplication.quit)
    try:
        return run(path, frame=frame, **options)
    finally:
        frame.close()
        frame.deleteLater()


def main(argv: list[str] | None = None) -> int:
    from .desk_args import direct_parser

    parser = direct_parser()
    args = parser.parse_args(argv)
    options: dict[str, Any] = {}
    if args.bench_paint:
        options["report_opening"] = lambda: print(f"opening {time.time():.6f}", flush=True)

        def hook(window: Any) -> None:
            from .app import report_paint_and_quit

            report_paint_and_quit(window)

        options["on_window"] = hook
    return run_desk(
        args.path,
        read_only=args.read_only,
        operator=args.operator,
        old_schema="migrate" if args.migrate else "ask",
        **options,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
