"""Exports from the desk: a run as JSON or JSONL, the run list and the audit log as CSV.

The file is chosen with ``SaveDialog.ask`` (mockable in tests); the writing runs on the
task runner (it reads the store); the outcome comes back as a message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from PySide6.QtWidgets import QFileDialog, QWidget

from proctor.core.audit.timeline import RunQuery
from proctor.core.ops import transfer

from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from .dialogs import start_folder
from .message_bar import Level, MessageBar

FILTERS = {
    "json": QT_TR_NOOP("JSON (*.json)"),
    "jsonl": QT_TR_NOOP("JSON lines (*.jsonl)"),
    "csv": QT_TR_NOOP("CSV (*.csv)"),
}  # marked at import, translated where shown


class SaveDialog:
    """File ▸ Save as: where to write an export."""

    @classmethod
    def ask(
        cls, parent: QWidget | None, title: str, suggested: str, kind: str, settings: Any = None
    ) -> str | None:
        """``suggested``: the file's name; it is offered in the folder last exported to."""
        folder = start_folder(settings, "export")
        path, _ = QFileDialog.getSaveFileName(
            parent,
            title,
            str(Path(folder) / Path(suggested).name),
            tr("{kind};;All files (*)").format(kind=tr(FILTERS[kind])),
        )
        if path and settings is not None:
            settings.remember_folder("export", path)
        return path or None


def write_file(path: str, writer: Callable[[IO[str]], int]) -> tuple[str, int]:
    """Write to ``path`` through a temporary file, so a failure leaves no half file."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as out:
            count = writer(out)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return str(target), count


class Exporter:
    """Runs one export at a time for a page and reports in its message bar."""

    def __init__(self, ctx: PageContext, parent: QWidget, message: MessageBar) -> None:
        self.ctx = ctx
        self.parent = parent
        self.message = message
        self.busy = False

    def run_json(self, run_id: str) -> None:
        self._export(
            "Export run as JSON",
            f"{run_id}.json",
            "json",
            "events",
            lambda j, out: transfer.write_run_json(j, run_id, out),
        )

    def run_jsonl(self, run_id: str) -> None:
        self._export(
            "Export run events as JSON lines",
            f"{run_id}.jsonl",
            "jsonl",
            "events",
            lambda j, out: transfer.write_run_jsonl(j, run_id, out),
        )

    def runs_csv(self, q: RunQuery) -> None:
        self._export(
            "Export run list as CSV",
            "runs.csv",
            "csv",
            "runs",
            lambda j, out: transfer.write_runs_csv(j, q, out),
        )

    def audit_csv(self, filters: dict[str, Any]) -> None:
        self._export(
            "Export audit log as CSV",
            "audit.csv",
            "csv",
            "audit entries",
            lambda j, out: transfer.write_audit_csv(j, out, **filters),
        )

    def _export(
        self, title: str, suggested: str, kind: str, noun: str, write: Callable[[Any, IO[str]], int]
    ) -> None:
        if self.busy:
            self.message.show_message(tr("An export is already running."), Level.INFO)
            return
        path = SaveDialog.ask(self.parent, title, suggested, kind, self.ctx.settings)
        if not path:
            return
        self.busy = True
        self.message.show_message(tr("Writing {name}…").format(name=Path(path).name), Level.INFO)
        journal = self.ctx.journal
        self.ctx.runner.run(
            lambda: write_file(path, lambda out: write(journal, out)),
            on_done=lambda result: self._on_done(result, noun),
            on_error=self._on_error,
            owner=self.parent,
        )

    def _on_done(self, result: tuple[str, int], noun: str) -> None:
        self.busy = False
        path, count = result
        self.message.show_message(
            tr("Wrote {count:,} {noun} to {path}.").format(count=count, noun=noun, path=path),
            Level.SUCCESS,
        )

    def _on_error(self, exc: BaseException) -> None:
        self.busy = False
        if isinstance(exc, OSError):
            self.message.show_message(
                tr("Could not write the file: {exc}").format(exc=exc), Level.ERROR
            )
        else:
            self.ctx.presenter.present(exc, inline=self.message)
