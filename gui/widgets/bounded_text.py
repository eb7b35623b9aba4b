"""Agent text shown as plain text, bounded on display, with "Show all"."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from .fmt import visible

PREVIEW = 1200  # characters shown before "Show all"
HARD_CAP = 1_000_000  # the viewer never loads more than this
# Qt lays a paragraph out whole: one unbroken 1 MB line takes tens of seconds. Long lines
# are shown cut into display lines of at most CHUNK characters (each laid out on its own,
# only when scrolled into view); the text itself is unchanged.
CHUNK = 2000


def chunk_lines(text: str, width: int = CHUNK) -> str:
    """``text`` with every line longer than ``width`` broken into lines of ``width``."""
    if len(text) <= width:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(line[n : n + width] for n in range(0, len(line), width))
    return "\n".join(out)


def display_text(text: str) -> str:
    """Agent text as a plain-text view shows it: controls and bidi overrides escaped
    (``fmt.visible``), bounded to HARD_CAP, long lines cut into CHUNK-long display lines."""
    shown = text if len(text) <= HARD_CAP else text[:HARD_CAP] + "\n… (truncated)"
    return chunk_lines(visible(shown))


class TextViewer(QDialog):
    """The whole text in a read-only plain-text editor."""

    def __init__(self, parent: QWidget | None, title: str, text: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        box = QPlainTextEdit(self)
        box.setReadOnly(True)
        box.setAccessibleName(title)
        box.setPlainText(display_text(text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(box, 1)
        layout.addWidget(buttons)
        self.resize(720, 480)

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, text: str) -> None:
        cls(parent, title, text).exec()


class BoundedText(QWidget):
    """A selectable plain-text label; long text is cut at PREVIEW with a "Show all" button."""

    def __init__(self, name: str, parent: QWidget | None = None, *, mono: bool = False) -> None:
        super().__init__(parent)
        self._name = name
        self._full = ""
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.label.setAccessibleName(name)
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        if mono:
            self.label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.more = QPushButton(tr("Show all"), self)
        self.more.setAccessibleName(tr("Show all of {name}").format(name=name.lower()))
        self.more.setFlat(True)
        self.more.clicked.connect(self._show_all)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.more)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addLayout(row)
        self.set_text("")

    def set_text(self, text: str | None) -> None:
        self._full = text or ""
        cut = len(self._full) > PREVIEW or self._full.count("\n") > 30
        preview = self._preview() if cut else self._full
        self.label.setText(visible(preview))
        self.more.setVisible(cut)
        if cut:
            self.more.setText(tr("Show all ({_full:,} characters)").format(_full=len(self._full)))

    def _preview(self) -> str:
        lines = self._full[:PREVIEW].split("\n")[:30]
        return "\n".join(lines) + " …"

    def text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        return self.label.text()

    def set_font(self, font: QFont) -> None:
        self.label.setFont(font)

    @Slot()
    def _show_all(self) -> None:
        TextViewer.ask(self, self._name, self._full)
