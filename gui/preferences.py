"""Preferences: theme, single-key shortcuts, notifications."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QWidget,
)

THEMES = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))


@dataclass(frozen=True)
class Prefs:
    theme: str
    single_keys: bool
    notifications: bool


class PreferencesDialog(QDialog):
    def __init__(self, parent: QWidget | None, prefs: Prefs) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.theme = QComboBox(self)
        self.theme.setAccessibleName("Theme")
        for text, value in THEMES:
            self.theme.addItem(text, value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(prefs.theme)))
        self.single_keys = QCheckBox("Single-key shortcuts (j, k, a, d, s, x, /, ?)", self)
        self.single_keys.setAccessibleName("Single-key shortcuts")
        self.single_keys.setChecked(prefs.single_keys)
        self.notifications = QCheckBox("Notify me of new requests while the window is in the "
                                       "background", self)
        self.notifications.setAccessibleName("Notifications")
        self.notifications.setChecked(prefs.notifications)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Theme", self.theme)
        form.addRow(self.single_keys)
        form.addRow(self.notifications)
        form.addRow(buttons)

    def value(self) -> Prefs:
        return Prefs(str(self.theme.currentData()), self.single_keys.isChecked(),
                     self.notifications.isChecked())

    @classmethod
    def ask(cls, parent: QWidget | None, prefs: Prefs) -> Prefs | None:
        dialog = cls(parent, prefs)
        return dialog.value() if dialog.exec() == QDialog.DialogCode.Accepted else None
