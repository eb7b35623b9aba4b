"""Preferences: theme, single-key shortcuts, notifications, the operator name recorded on
decisions, the default journal, the refresh fallback interval, the memory token
budget per scope, and which approvals ask for a second, deliberate step; the operator's
signing key (its fingerprint) is shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from proctor.core.journal import default_operator_name

from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.settings import (
    CONFIRM_CHOICES,
    DEFAULT_CONFIRM,
    DEFAULT_TOKEN_LIMIT,
    DEFAULT_UNDO_S,
    POLL_RANGE_MS,
    TOKEN_LIMIT_RANGE,
    UNDO_RANGE_S,
    DeskSettings,
)
from ..infra.watcher import POLL_MS
from ..widgets.dialogs import OpenJournalDialog

THEMES = (
    (QT_TR_NOOP("Follow the system"), "system"),
    (QT_TR_NOOP("Light"), "light"),
    (QT_TR_NOOP("Dark"), "dark"),
)


@dataclass(frozen=True)
class Prefs:
    theme: str
    single_keys: bool
    notifications: bool
    operator: str = ""  # "" = the login name (or PROCTOR_OPERATOR)
    default_journal: str = ""  # "" = the most recent journal
    poll_ms: int = POLL_MS
    memory_tokens: int = DEFAULT_TOKEN_LIMIT  # the budget of every memory scope
    confirm: frozenset[str] = DEFAULT_CONFIRM  # what asks before an approval (settings.py)
    undo_seconds: int = DEFAULT_UNDO_S  # how long Approve or Deny may be undone (0: off)


def prefs_from(settings: DeskSettings) -> Prefs:
    return Prefs(
        settings.theme,
        settings.single_keys,
        settings.notifications,
        settings.operator,
        settings.default_journal,
        settings.poll_ms,
        settings.memory_token_limit,
        settings.confirm,
        settings.undo_seconds,
    )


def save_prefs(settings: DeskSettings, prefs: Prefs) -> None:
    settings.theme = prefs.theme
    settings.single_keys = prefs.single_keys
    settings.notifications = prefs.notifications
    settings.operator = prefs.operator
    settings.default_journal = prefs.default_journal
    settings.poll_ms = prefs.poll_ms
    settings.memory_token_limit = prefs.memory_tokens
    settings.confirm = prefs.confirm
    settings.undo_seconds = prefs.undo_seconds
    settings.sync()


def key_text(key: Any) -> str:
    """What Preferences says about the operator's signing key (``OperatorKey`` or None)."""
    if key is None:
        return tr(
            "No signing key: your decisions are unsigned, and agents that trust "
            "operator keys refuse them."
        )
    text = f"{key.fingerprint}\n{key.public_key}"
    if key.weaker:
        text += "\n" + tr(
            "The private key is in a file readable only by you (no OS keyring "
            "works here): weaker than a keyring, any program running as you can "
            "read it."
        )
    else:
        text += "\n" + tr("The private key is in the OS keyring.")
    return text + "\n" + tr("`proctor keys export` writes the file agents trust.")


class PreferencesDialog(QDialog):
    def __init__(self, parent: QWidget | None, prefs: Prefs, key: Any = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Preferences"))
        self.theme = QComboBox(self)
        self.theme.setAccessibleName(tr("Theme"))
        for text, value in THEMES:
            self.theme.addItem(tr(text), value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(prefs.theme)))
        self.single_keys = QCheckBox(
            tr("Single-key shortcuts (j, k, a, d, s, x, c, f, /, ?)"), self
        )
        self.single_keys.setAccessibleName(tr("Single-key shortcuts"))
        self.single_keys.setChecked(prefs.single_keys)
        self.notifications = QCheckBox(
            tr("Notify me of new requests while the window is in the background"), self
        )
        self.notifications.setAccessibleName(tr("Notifications"))
        self.notifications.setChecked(prefs.notifications)
        self.operator = QLineEdit(prefs.operator, self)
        self.operator.setAccessibleName(tr("Operator name"))
        self.operator.setMaxLength(200)
        self.operator.setPlaceholderText(
            tr("{n} (your login name)").format(n=default_operator_name())
        )
        self.operator.setToolTip(
            tr(
                "The name recorded on every decision you make. A change "
                "applies when a journal is next opened."
            )
        )
        self.default_journal = QLineEdit(prefs.default_journal, self)
        self.default_journal.setAccessibleName(tr("Default journal"))
        self.default_journal.setPlaceholderText(tr("the most recent journal"))
        self.browse = QPushButton(tr("Choose…"), self)
        self.browse.setAccessibleName(tr("Choose the default journal"))
        self.browse.clicked.connect(self._on_browse)
        journal_row = QHBoxLayout()
        journal_row.addWidget(self.default_journal, 1)
        journal_row.addWidget(self.browse)
        self.poll_ms = QSpinBox(self)
        self.poll_ms.setAccessibleName(tr("Refresh fallback interval"))
        self.poll_ms.setRange(*POLL_RANGE_MS)
        self.poll_ms.setSingleStep(100)
        self.poll_ms.setSuffix(" ms")
        self.poll_ms.setValue(prefs.poll_ms)
        self.poll_ms.setToolTip(
            tr(
                "Changes from agents normally show at once (a file watcher); "
                "this poll catches any the watcher misses."
            )
        )
        self.memory_tokens = QSpinBox(self)
        self.memory_tokens.setAccessibleName(tr("Memory token budget per scope"))
        self.memory_tokens.setRange(*TOKEN_LIMIT_RANGE)
        self.memory_tokens.setSingleStep(1000)
        self.memory_tokens.setGroupSeparatorShown(True)
        self.memory_tokens.setSuffix(" tokens")
        self.memory_tokens.setValue(prefs.memory_tokens)
        self.memory_tokens.setToolTip(
            tr(
                "The Memory page measures every scope (project, space, "
                "user) against this budget and marks those over it."
            )
        )
        self.undo_seconds = QSpinBox(self)
        self.undo_seconds.setAccessibleName(tr("Undo window"))
        self.undo_seconds.setRange(*UNDO_RANGE_S)
        self.undo_seconds.setSuffix(" s")
        self.undo_seconds.setSpecialValueText(tr("Off"))
        self.undo_seconds.setValue(prefs.undo_seconds)
        self.undo_seconds.setToolTip(
            tr(
                "After Approve or Deny, Undo (or Ctrl+Z) takes the decision back for this "
                "long; the agent acts on it only afterwards. A decision that makes a "
                "standing rule, and a rule's own, have none. 0: off."
            )
        )
        self.confirm = self._confirm_box(prefs.confirm)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(tr("Theme"), self.theme)
        form.addRow(self.single_keys)
        form.addRow(self.notifications)
        form.addRow(tr("Operator name"), self.operator)
        form.addRow(tr("Default journal"), journal_row)
        form.addRow(tr("Refresh fallback"), self.poll_ms)
        form.addRow(tr("Memory token budget per scope"), self.memory_tokens)
        form.addRow(tr("Undo window after a decision"), self.undo_seconds)
        self.key = QLabel(key_text(key), self)
        self.key.setObjectName("OperatorKey")
        self.key.setAccessibleName(tr("Operator key fingerprint"))
        self.key.setTextFormat(Qt.TextFormat.PlainText)
        self.key.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key.setWordWrap(True)
        form.addRow(tr("Signing key"), self.key)
        form.addRow(self.confirm)
        form.addRow(buttons)

    def _confirm_box(self, chosen: frozenset[str]) -> QGroupBox:
        box = QGroupBox(tr("Ask me to confirm before approving"), self)
        box.setAccessibleName(tr("Approvals that ask for confirmation"))
        box.setToolTip(
            tr(
                "Approving one of these opens a dialog that restates the action; "
                "approving needs a second, deliberate step. Denying never asks."
            )
        )
        layout = QVBoxLayout(box)
        self.confirm_checks: dict[str, QCheckBox] = {}
        for token, text in CONFIRM_CHOICES:
            check = QCheckBox(text, box)
            check.setAccessibleName(tr("Confirm: {text}").format(text=text))
            check.setChecked(token in chosen)
            layout.addWidget(check)
            self.confirm_checks[token] = check
        return box

    @Slot()
    def _on_browse(self) -> None:
        path = OpenJournalDialog.ask(self, self.default_journal.text())
        if path:
            self.default_journal.setText(path)

    def value(self) -> Prefs:
        return Prefs(
            str(self.theme.currentData()),
            self.single_keys.isChecked(),
            self.notifications.isChecked(),
            self.operator.text().strip(),
            self.default_journal.text().strip(),
            self.poll_ms.value(),
            self.memory_tokens.value(),
            frozenset(t for t, check in self.confirm_checks.items() if check.isChecked()),
            self.undo_seconds.value(),
        )

    @classmethod
    def ask(cls, parent: QWidget | None, prefs: Prefs) -> Prefs | None:
        """The window's journal's signing key is shown (``parent.journal.signer``)."""
        dialog = cls(parent, prefs, getattr(getattr(parent, "journal", None), "signer", None))
        return dialog.value() if dialog.exec() == QDialog.DialogCode.Accepted else None
