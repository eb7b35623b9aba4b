"""Help ▸ About: what is running (for bug reports), with a button that copies it."""

from __future__ import annotations

import importlib.metadata
import platform
import sqlite3

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

import proctor
from proctor.core import Journal

from ..infra.i18n import tr
from ..infra.server_target import place_of
from ..widgets.icons import icon
from ..widgets.labels import plain_label
from .logging_setup import log_dir


def proctor_version() -> str:
    found = library_version("proctor")
    return proctor.__version__ if found == "unknown" else found


def library_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def versions(journal: Journal | None) -> list[tuple[str, str]]:
    """(name, version) rows: the desk, its libraries and the open journal's schema."""
    rows = [
        ("Proctor", proctor_version()),
        ("Python", platform.python_version()),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("SQLAlchemy", library_version("SQLAlchemy")),
        ("SQLite", sqlite3.sqlite_version),
    ]
    if journal is not None:
        rows.append(("Journal schema", str(journal.schema_revision)))
        rows.append(("Journal", place_of(journal)))
    rows.append(("Platform", platform.platform()))
    rows.append(("Log folder", str(log_dir())))
    return rows


def as_text(rows: list[tuple[str, str]]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in rows)


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None, journal: Journal | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("About Proctor"))
        self.rows = versions(journal)
        logo = QLabel(self)
        logo.setPixmap(icon("proctor").pixmap(64, 64))
        logo.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        title = plain_label(
            tr("Proctor {rows}").format(rows=self.rows[0][1]), self, name="DetailTitle"
        )
        title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        blurb = plain_label(
            tr(
                "The operator desk for AI-agent runs: approve, answer, resolve and "
                "audit what agents do."
            ),
            self,
            selectable=False,
        )
        form = QFormLayout()
        for name, value in self.rows:
            form.addRow(plain_label(name, self, selectable=False), plain_label(value, self))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy = buttons.addButton("Copy versions", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy.clicked.connect(self.copy_versions)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(logo)
        layout.addWidget(title)
        layout.addWidget(blurb)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def copy_versions(self) -> None:
        QGuiApplication.clipboard().setText(as_text(self.rows))
