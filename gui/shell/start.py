"""The desk's first window, up before the desk itself is imported: importing the desk (its
pages, the core, SQLAlchemy) and opening the journal take seconds on a loaded machine, and
a bare PySide6 window takes a fraction of one. So a desk start shows this window at once —
saying what it is doing — then imports the desk, opens the journal and replaces it with the
main window (which says "Loading the inbox…" until the inbox is there).

This module imports PySide6 and nothing of Proctor's at its top: keep it so.

    python -m proctor.gui.shell.start PATH [--read-only] [--as NAME] [--migrate]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget


def _tr(text: str) -> str:
    return QCoreApplication.translate("OpeningWindow", text)


class OpeningWindow(QWidget):
    """ "Opening PATH…": the window an operator sees while the desk loads."""

    def __init__(self, place: str) -> None:
        super().__init__()
        self.setWindowTitle(_tr("Proctor Desk"))
        self.setAccessibleName(_tr("Opening the journal"))
        self.title = QLabel(_tr("Opening the journal…"), self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        self.title.setFont(font)
        self.place = QLabel(place, self)  # the operator's own path (shown plain)
        self.place.setTextFormat(Qt.TextFormat.PlainText)
        self.place.setAccessibleName(_tr("Journal"))
        self.doing = QLabel(_tr("Loading the desk; the inbox follows."), self)
        self.doing.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 32, 32, 32)
        layout.addStretch(1)
        for label in (self.title, self.place, self.doing):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        layout.addStretch(2)
        self.resize(1100, 720)


def run_desk(path: str | Path, **options: Any) -> int:
    """``proctor.gui.shell.app.run_desk`` with the opening window shown first (up in the time
    a bare PySide6 window takes), closed when the main window shows or the desk ends."""
    app = QApplication.instance() or QApplication([sys.argv[0]])
    opening = OpeningWindow(str(path))
    opening.show()
    opening.repaint()
    report = options.pop("report_opening", None)
    if report is not None:
        report()
    QCoreApplication.processEvents()
    from ..infra.i18n import install_translator
    from .app import run_desk as run

    if isinstance(app, QApplication):
        install_translator(app)  # made here, before the desk's make_app could
    then = options.pop("on_window", None)

    def shown(window: Any) -> None:
        opening.close()
        if then is not None:
            then(window)

    try:
        return run(path, on_window=shown, **options)
    finally:
        opening.close()
        opening.deleteLater()


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
