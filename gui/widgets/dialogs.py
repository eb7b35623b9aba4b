"""Small modal dialogs. Each returns its answer through a mockable ``ask()`` classmethod."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDateTime, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractButton,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr

DATE_TIME_FORMAT = "yyyy-MM-dd HH:mm"  # as fmt.clock writes a time not today


def _label(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def cancel_by_default(buttons: QDialogButtonBox, *, focus: bool = True) -> QAbstractButton:
    """Enter cancels: no button that acts is the default (nor becomes it when it has the
    focus); Cancel is, and takes the focus unless ``focus`` is False (a text box that should
    have it keeps it). For every dialog whose OK does what cannot be undone (issue 32)."""
    cancel = buttons.button(QDialogButtonBox.StandardButton.Cancel)
    if cancel is None:
        cancel = next(
            b
            for b in buttons.buttons()
            if buttons.buttonRole(b) == QDialogButtonBox.ButtonRole.RejectRole
        )
    for button in buttons.buttons():
        if isinstance(button, QPushButton):
            button.setAutoDefault(button is cancel)
            button.setDefault(button is cancel)
    if focus:
        cancel.setFocus(Qt.FocusReason.OtherFocusReason)
    return cancel


class ConfirmDialog(QDialog):
    """Yes/no with the consequence spelled out (e.g. "Mark failed — it may happen twice");
    Enter cancels: the yes takes a deliberate click or its Alt letter."""

    def __init__(self, parent: QWidget | None, title: str, text: str, ok: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton(ok, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(_label(text, self))
        layout.addWidget(buttons)
        self.cancel = cancel_by_default(buttons)

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, text: str, ok: str = "OK") -> bool:
        return cls(parent, title, text, ok).exec() == QDialog.DialogCode.Accepted


class ReasonDialog(QDialog):
    """Asks for a reason (required for deny); Ctrl+Enter submits."""

    def __init__(
        self, parent: QWidget | None, title: str, prompt: str, ok: str, required: bool, initial: str
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self._required = required
        self.box = QPlainTextEdit(self)
        self.box.setPlainText(initial)
        self.box.setAccessibleName(tr("Reason"))
        self.box.setPlaceholderText(
            tr("Reason (required)") if required else tr("Reason (optional)")
        )
        self.box.setTabChangesFocus(True)
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton(ok, QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setShortcut("Ctrl+Return")
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.box.textChanged.connect(self._update)
        layout = QVBoxLayout(self)
        layout.addWidget(_label(prompt, self))
        layout.addWidget(self.box, 1)
        layout.addWidget(buttons)
        self.cancel = cancel_by_default(buttons, focus=False)  # the reason box has the focus
        self.box.setFocus(Qt.FocusReason.OtherFocusReason)
        self.resize(460, 220)
        self._update()

    @Slot()
    def _update(self) -> None:
        self.ok.setEnabled(bool(self.box.toPlainText().strip()) or not self._required)

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        title: str,
        prompt: str,
        *,
        ok: str = "OK",
        required: bool = True,
        initial: str = "",
    ) -> str | None:
        dialog = cls(parent, title, prompt, ok, required, initial)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.box.toPlainText().strip()


def snooze_presets(now: float) -> list[tuple[str, float]]:
    """(label, until) choices: minutes, hours, tomorrow morning, next Monday morning."""
    today = dt.datetime.fromtimestamp(now)
    tomorrow = (today + dt.timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    monday = (today + dt.timedelta(days=7 - today.weekday())).replace(
        hour=9, minute=0, second=0, microsecond=0
    )
    return [
        ("15 minutes", now + 900),
        ("1 hour", now + 3600),
        ("4 hours", now + 4 * 3600),
        (f"Tomorrow {tomorrow:%a %H:%M}", tomorrow.timestamp()),
        (f"Next week {monday:%a %d %b %H:%M}", monday.timestamp()),
    ]


class SnoozeDialog(QDialog):
    """Pick when the item comes back: a preset or a date and time."""

    CUSTOM = "Pick a date and time…"

    def __init__(self, parent: QWidget | None, count: int, now: float) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Snooze"))
        self.list = QListWidget(self)
        self.list.setAccessibleName(tr("Snooze until"))
        for label, until in snooze_presets(now):
            item = QListWidgetItem(label, self.list)
            item.setData(Qt.ItemDataRole.UserRole, until)
        QListWidgetItem(self.CUSTOM, self.list)
        self.list.setCurrentRow(1)
        self.when = QDateTimeEdit(QDateTime.fromSecsSinceEpoch(int(now + 3600)), self)
        self.when.setDisplayFormat(DATE_TIME_FORMAT)  # the desk's one date format
        self.when.setCalendarPopup(True)
        self.when.setAccessibleName(tr("Snooze until date and time"))
        self.when.setEnabled(False)
        self.list.currentTextChanged.connect(self._on_choice)
        self.list.itemActivated.connect(self.accept)
        buttons = QDialogButtonBox(self)
        buttons.addButton("Snooze", QDialogButtonBox.ButtonRole.AcceptRole).setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        what = "this item" if count == 1 else f"{count} items"
        layout = QVBoxLayout(self)
        layout.addWidget(_label(f"Hide {what} until:", self))
        layout.addWidget(self.list)
        layout.addWidget(self.when)
        layout.addWidget(buttons)

    @Slot(str)
    def _on_choice(self, text: str) -> None:
        self.when.setEnabled(text == self.CUSTOM)

    def until(self) -> float:
        item = self.list.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item else None
        return float(value) if value is not None else float(self.when.dateTime().toSecsSinceEpoch())

    @classmethod
    def ask(cls, parent: QWidget | None, count: int, now: float | None = None) -> float | None:
        dialog = cls(parent, count, now or time.time())
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.until()


def start_folder(settings: Any, kind: str, start: str = "") -> str:
    """Where a file dialog opens: the folder last chosen for ``kind`` (remembered in the
    desk's settings), else ``start``, else the home folder — never the current directory."""
    remembered = settings.last_folder(kind) if settings is not None else ""
    return remembered or start or str(Path.home())


class OpenJournalDialog:
    """File ▸ Open: choose a journal file (it opens in the folder chosen last time)."""

    @classmethod
    def ask(cls, parent: QWidget | None, start: str = "", settings: Any = None) -> str | None:
        path, _ = QFileDialog.getOpenFileName(
            parent,
            tr("Open journal"),
            start_folder(settings, "journal", start),
            tr("Proctor journals (*.db *.sqlite *.journal);;All files (*)"),
        )
        if path and settings is not None:
            settings.remember_folder("journal", path)
        return path or None
