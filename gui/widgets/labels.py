"""Labels that never interpret text as markup."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget


def plain_label(text: str = "", parent: QWidget | None = None, *, name: str = "",
                selectable: bool = True) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    if name:
        label.setObjectName(name)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def section(title: str, parent: QWidget) -> QLabel:
    label = plain_label(title, parent, name="SectionLabel", selectable=False)
    label.setWordWrap(False)
    return label
