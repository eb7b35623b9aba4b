"""An older journal: the operator chooses to upgrade it (after a backup) or open it read-only.

The desk opens journals without migrating (``app.open_or_hold``, on the task runner): a
journal whose schema is older than this Proctor's comes back open read-only as an
``OlderJournal``; the desk asks (``OldSchemaDialog.ask``, on the GUI thread) and then
migrates it (``app.upgrade``, on the task runner) or keeps it read-only. Core writes the
backup (``VACUUM INTO``) next to the journal as ``<name>.backup-<YYYYmmdd-HHMMSS>`` before
it migrates.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.journal import SCHEMA_HEAD

from ..infra.i18n import tr
from ..widgets.dialogs import cancel_by_default

# What the desk does with an older journal: ask the operator, or decide up front
# (``proctor open --migrate``; ``--read-only`` never migrates anything).
OldSchema = Literal["ask", "migrate", "read_only"]


class Choice(StrEnum):
    UPGRADE = "upgrade"
    READ_ONLY = "read_only"
    CANCEL = "cancel"


@dataclass(frozen=True)
class OlderJournal:
    """A journal with an older schema, open read-only until the operator chooses."""

    journal: Journal
    head: str  # this Proctor's schema revision

    @property
    def revision(self) -> str:
        return str(self.journal.schema_revision)


def app_schema() -> str:
    """The schema revision this Proctor writes (read when asked: tests may move it)."""
    return SCHEMA_HEAD


def backup_name(path: Path) -> str:
    return f"{path.name}.backup-<date>-<time>"


def backups(path: Path) -> list[Path]:
    """Backups core wrote before migrating ``path``, oldest first."""
    return sorted(path.parent.glob(f"{path.name}.backup-*"))


def read_only_reason(revision: str, head: str) -> str:
    return (
        f"its schema ({revision}) is older than this Proctor's ({head}) and you chose "
        "not to upgrade it. Reopen it and choose Upgrade to decide."
    )


class OldSchemaDialog(QDialog):
    """Upgrade / Open read-only / Cancel for a journal with an older schema."""

    def __init__(self, parent: QWidget | None, path: Path, revision: str, head: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Older journal"))
        self.choice = Choice.CANCEL
        self.text = QLabel(self.message(path, revision, head), self)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName(tr("Why the journal needs an upgrade"))
        buttons = QDialogButtonBox(self)
        self.upgrade_button = self._button(
            buttons, "&Upgrade", Choice.UPGRADE, QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.read_only_button = self._button(
            buttons, "Open &read-only", Choice.READ_ONLY, QDialogButtonBox.ButtonRole.ActionRole
        )
        self.cancel_button = self._button(
            buttons, "Cancel", Choice.CANCEL, QDialogButtonBox.ButtonRole.RejectRole
        )
        cancel_by_default(buttons)  # Enter neither migrates the journal nor opens it
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(560, 0)

    @staticmethod
    def message(path: Path, revision: str, head: str) -> str:
        return (
            f"{path.name} has journal schema {revision}; this Proctor uses schema {head}.\n\n"
            f"Upgrade migrates it to schema {head}. A backup copy is written first, "
            f"next to the journal:\n{path.parent / backup_name(path)}\n"
            "Proctor versions that only know the older schema cannot open the upgraded "
            "journal (the backup still opens in them).\n\n"
            "Open read-only changes nothing: you can watch, but not decide."
        )

    def _button(
        self, box: QDialogButtonBox, text: str, choice: Choice, role: QDialogButtonBox.ButtonRole
    ) -> QPushButton:
        button = box.addButton(text, role)
        button.setProperty("choice", choice.value)
        button.clicked.connect(self._on_clicked)
        return button

    def _on_clicked(self) -> None:
        self.choice = Choice(self.sender().property("choice"))  # Escape leaves CANCEL
        if self.choice is Choice.CANCEL:
            self.reject()
        else:
            self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None, path: Path, revision: str, head: str) -> Choice:
        dialog = cls(parent, path, revision, head)
        dialog.exec()
        return dialog.choice


def upgrade_progress(parent: QWidget | None, path: Path) -> QProgressDialog:
    """A busy indicator while the upgrade runs (a big journal's backup takes a while); no
    cancel: a migration is not stopped half-way."""
    busy = QProgressDialog(parent)
    label = QLabel(
        tr("Upgrading {name}: writing the backup, then migrating…").format(name=path.name), busy
    )
    label.setTextFormat(Qt.TextFormat.PlainText)
    busy.setLabel(label)
    busy.setWindowTitle(tr("Upgrading the journal"))
    busy.setCancelButton(None)
    busy.setRange(0, 0)
    busy.setMinimumDuration(0)
    busy.setWindowModality(Qt.WindowModality.ApplicationModal)
    busy.show()
    return busy
