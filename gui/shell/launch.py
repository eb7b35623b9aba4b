"""The desk's launcher: ``proctor-desk`` (the desktop menu entry), ``python -m proctor.gui``
and the bundle's ``proctor-desk`` executable all start here.

    proctor-desk [JOURNAL | LINK] [--read-only] [--as NAME]
    proctor-desk --version
    proctor-desk JOURNAL --smoke-test OUT.png

Without JOURNAL it opens the default journal (Preferences), else the most recent one,
else it asks: open a journal, create one, or build a demo journal. JOURNAL may be a file: URL
and LINK a proctor:// link, which opens that same journal at the item or run (the desktop
entry's ``%u``: the desktop hands over a file or a link). ``--smoke-test`` is
for packaging checks: open the journal, wait until the inbox has loaded, save a
screenshot, print one line and exit 0 (1 if anything is missing after a minute).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import platformdirs
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QLabel,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.kernel.links import BadLink, is_link, parse_link
from proctor.core.ops import recent

from ..infra.i18n import tr
from ..infra.settings import DeskSettings
from ..infra.tasks import TaskRunner
from ..widgets.dialogs import OpenJournalDialog
from ..widgets.icons import icon
from ..widgets.labels import plain_label
from .about import proctor_version, versions
from .desk_args import desk_parser

SMOKE_TIMEOUT_MS = 60_000


def start_journal(settings: DeskSettings) -> Path | None:
    """The journal to open when none was named: the default one, else the most recent (the
    core's one choice, ``proctor.core.ops.recent``, which the CLI makes too)."""
    return recent.start_journal([settings.default_journal, *settings.recent()])


class WelcomeDialog(QDialog):
    """First start: no journal named and none remembered. ``ask()`` returns a path or None."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Proctor"))
        self.choice: Path | None = None
        logo = QLabel(self)
        logo.setPixmap(icon("proctor").pixmap(64, 64))
        text = plain_label(
            tr(
                "Proctor opens a journal: the file your agents record their runs, "
                "approvals and questions in."
            ),
            self,
            selectable=False,
        )
        self.open_button = QPushButton(tr("Open a journal…"), self)
        self.create_button = QPushButton(tr("Create a new journal…"), self)
        self.demo_button = QPushButton(tr("Try a demo journal"), self)
        self.demo_button.setToolTip(tr("Builds a journal full of example runs to look around in"))
        self.open_button.clicked.connect(self._on_open)
        self.create_button.clicked.connect(self._on_create)
        self.demo_button.clicked.connect(self._on_demo)
        layout = QVBoxLayout(self)
        layout.addWidget(logo)
        layout.addWidget(text)
        for button in (self.open_button, self.create_button, self.demo_button):
            layout.addWidget(button)
        self.open_button.setDefault(True)

    def _on_open(self) -> None:
        path = OpenJournalDialog.ask(self, str(Path.home()))
        if path:
            self._finish(Path(path))

    def _on_create(self) -> None:
        suggested = Path(platformdirs.user_data_dir("proctor", appauthor=False)) / "journal.db"
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Create a journal"), str(suggested), tr("Proctor journals (*.db)")
        )
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._finish(Path(path))

    def _on_demo(self) -> None:
        path = DemoBuilder.ask(self)
        if path is not None:
            self._finish(path)

    def _finish(self, path: Path) -> None:
        self.choice = path
        self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None = None) -> Path | None:
        dialog = cls(parent)
        return dialog.choice if dialog.exec() == QDialog.DialogCode.Accepted else None


class DemoBuilder(QObject):
    """Builds a small demo journal off the GUI thread behind a progress dialog.

    Signals:
        progressed(int, int): runs written so far, runs planned (from the worker thread).
    """

    progressed = Signal(int, int)

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.runner = TaskRunner(self)
        self.dialog = QProgressDialog(tr("Building a demo journal…"), "", 0, 0, parent)
        self.dialog.setCancelButton(None)
        self.dialog.setMinimumDuration(0)
        self.dialog.setAutoClose(False)  # it closes when the journal is done, not at 100 %
        self.dialog.setAutoReset(False)
        self.progressed.connect(self._on_progress)
        self.target: Path | None = None
        self.path: Path | None = None
        self.error: BaseException | None = None

    def build(self) -> Path | None:
        from proctor.cmd_desk import demo_folder
        from proctor.sim.demo import build_demo_journal

        self.target = demo_folder(None) / "journal.db"
        target, report = self.target, self._report
        self.runner.run(
            lambda: build_demo_journal(target, size="small", progress=report),
            on_done=self._done,
            on_error=self._failed,
            owner=self,
        )
        self.dialog.exec()
        self.runner.shutdown()
        return self.path

    def _report(self, done: int, total: int, _message: str = "") -> None:
        self.progressed.emit(done, total)

    def _on_progress(self, done: int, total: int) -> None:
        self.dialog.setMaximum(total)
        self.dialog.setValue(done)

    def _done(self, _summary: dict) -> None:
        self.path = self.target
        self.dialog.accept()

    def _failed(self, exc: BaseException) -> None:
        self.error = exc
        self.dialog.reject()

    @classmethod
    def ask(cls, parent: QWidget | None) -> Path | None:
        builder = cls(parent)
        path = builder.build()
        if builder.error is not None:
            from ..infra.errors import ErrorDialog

            ErrorDialog.ask(
                parent,
                tr("Could not build the demo journal"),
                str(builder.error),
                repr(builder.error),
            )
        return path


def smoke_hook(out: Path, app: QApplication) -> Callable[[object], None]:
    """on_window hook: wait for the inbox's first page, save a screenshot, exit 0."""

    def on_window(window: object) -> None:
        def check() -> None:
            inbox = window.inbox  # type: ignore[attr-defined]
            if not inbox.model.has_loaded:
                QTimer.singleShot(50, check)
                return
            app.processEvents()
            saved = window.grab().save(str(out))  # type: ignore[attr-defined]
            icons = not icon("proctor").isNull() and not icon("kind-approval").isNull()
            print(
                f"smoke-test: {inbox.model.rowCount()} inbox rows, icons "
                f"{'ok' if icons else 'MISSING'}, screenshot {out if saved else 'FAILED'}",
                flush=True,
            )
            shown = ("Proctor", "Qt", "PySide6", "SQLAlchemy", "SQLite", "Journal schema")
            print(
                "versions: "
                + "; ".join(
                    f"{name} {value}"
                    for name, value in versions(window.journal)  # type: ignore[attr-defined]
                    if name in shown
                ),
                flush=True,
            )
            app.exit(0 if saved and icons else 1)

        QTimer.singleShot(0, check)

    return on_window


def smoke_deadline(app: QApplication) -> QTimer:
    def expired() -> None:
        print("smoke-test: the desk did not show the inbox in time", file=sys.stderr, flush=True)
        app.exit(1)

    timer = QTimer(app)
    timer.setSingleShot(True)
    timer.timeout.connect(expired)
    timer.start(SMOKE_TIMEOUT_MS)
    return timer


def build_parser() -> argparse.ArgumentParser:
    parser = desk_parser(
        "Proctor's desk: approve, answer, resolve and audit what agents do.",
        path_optional=True,
    )
    parser.add_argument("--version", action="version", version=f"proctor {proctor_version()}")
    parser.add_argument(
        "--smoke-test",
        type=Path,
        metavar="PNG",
        help="packaging check: open JOURNAL, wait for the inbox, save a screenshot to PNG and exit",
    )
    return parser


def named(text: str | None) -> tuple[Path | None, str | None]:
    """What proctor-desk was given: (the journal named, the link to show). A file: URL names
    its file; a link names no journal (the one opened without a name is its journal)."""
    if text is None:
        return None, None
    if is_link(text):
        return None, parse_link(text).url()
    parts = urlsplit(text)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return Path(unquote(parts.path)), None
    return Path(text).expanduser(), None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        journal, link = named(args.path)
    except BadLink as exc:
        print(f"proctor-desk: {exc}", file=sys.stderr)
        return 2
    from .preflight import check_or_explain

    if (refused := check_or_explain("proctor-desk")) is not None:
        return refused
    from .app import make_app, run_desk

    if journal is not None and not journal.exists():
        print(
            f"proctor-desk: no journal at {journal} (create one with `proctor open "
            f"{journal} --create`, or start proctor-desk without a path)",
            file=sys.stderr,
        )
        return 3
    app = make_app()
    path = journal or start_journal(DeskSettings())
    if args.smoke_test is not None:
        if path is None or not path.is_file():
            print("smoke-test: name an existing journal", file=sys.stderr)
            return 2
        _deadline = smoke_deadline(app)
        return run_desk(
            path,
            read_only=args.read_only,
            operator=args.operator,
            on_window=smoke_hook(args.smoke_test, app),
            single_instance=False,
            old_schema="migrate" if args.migrate else "read_only",
        )  # never asks
    if path is None:
        path = WelcomeDialog.ask()
        if path is None:
            return 0
    return run_desk(
        path,
        read_only=args.read_only,
        operator=args.operator,
        old_schema="migrate" if args.migrate else "ask",
        link=link,
    )
