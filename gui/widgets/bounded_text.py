"""Agent text shown as plain text, bounded on display, with "Show all"."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

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

from proctor.core.kernel.safe_text import INVISIBLE

from ..infra.i18n import tr
from .fmt import visible

PREVIEW = 1200  # characters shown before "Show all"
HARD_CAP = 1_000_000  # the viewer never loads more than this
# Qt lays a paragraph out whole: one unbroken 1 MB line takes tens of seconds. Long lines
# are shown cut into display lines of at most CHUNK characters (each laid out on its own,
# only when scrolled into view); the text itself is unchanged.
CHUNK = 2000
# A box that shows agent text at once (the action box, the confirmation, the bulk list)
# holds a bounded head whose lines are at most LINE_CHARS long: Qt lays out each display
# line whole, and one unbroken 200,000-character line stopped the desk for seconds.
LINE_CHARS = 400
PAGE = HARD_CAP  # the viewer shows a text this many characters at a time


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


def preview(text: str, limit: int, width: int = LINE_CHARS) -> tuple[str, int]:
    """What a box shows of agent text at once: the first ``limit`` characters, escaped
    (``fmt.visible``), every line longer than ``width`` broken into lines of ``width`` (the
    text itself is unchanged); and how many characters were left out. Only the head is
    looked at, so it costs the same for a 3 MB text as for a 30 KB one."""
    head = text[:limit]
    return chunk_lines(visible(head), width), len(text) - len(head)


def escape_width(ch: str) -> int:
    """How many characters ``visible`` shows an invisible character as (\\xhh, \\uhhhh …)."""
    code = ord(ch)
    return 4 if code < 0x100 else 6 if code < 0x10000 else 10


class PreviewMap:
    """Where characters of agent text sit in its ``preview(text, limit, width)``: each
    escaped character widens to its escape, each line of the escaped head longer than
    ``width`` gets a newline every ``width`` characters. Built in one pass over the head
    (off the GUI thread for a large text, as the preview is); a lookup is a bisection."""

    def __init__(self, text: str, limit: int, width: int = LINE_CHARS) -> None:
        head = text[:limit]
        self.size, self.width = len(head), width
        self.escaped = [m.start() for m in INVISIBLE.finditer(head)]
        self.extra = list(accumulate(escape_width(head[p]) - 1 for p in self.escaped))
        shown = self.size + (self.extra[-1] if self.extra else 0)
        # display lines: the escaped head's line starts, and the breaks inserted before each
        self.starts = [0] + [self.widened(m) + 1 for m in _newlines(head)]
        self.broken = shown > width
        self.inside: list[int] = []  # breaks inside each line
        self.breaks: list[int] = []  # breaks before each line
        if self.broken:
            ends = [s - 1 for s in self.starts[1:]] + [shown]
            self.inside = [
                max(end - start - 1, 0) // width
                for start, end in zip(self.starts, ends, strict=True)
            ]
            self.breaks = [0, *accumulate(self.inside[:-1])]

    def widened(self, offset: int) -> int:
        """``offset`` in the escaped head (before display breaks)."""
        n = bisect_left(self.escaped, offset)
        return offset + (self.extra[n - 1] if n else 0)

    def broken_at(self, offset: int) -> int:
        """An offset of the escaped head in the preview (display breaks inserted)."""
        if not self.broken:
            return offset
        line = bisect_right(self.starts, offset) - 1
        within = min((offset - self.starts[line]) // self.width, self.inside[line])
        return offset + self.breaks[line] + within

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """``[start, end)`` of the text as ``[start, end)`` of its preview; cut at the head,
        None when nothing of it is shown."""
        end = min(end, self.size)
        if start < 0 or start >= end:
            return None
        return self.broken_at(self.widened(start)), self.broken_at(self.widened(end) - 1) + 1


def _newlines(text: str) -> list[int]:
    out, at = [], text.find("\n")
    while at != -1:
        out.append(at)
        at = text.find("\n", at + 1)
    return out


def longest_line(text: str) -> int:
    """The longest line of ``text`` (what a text layout lays out in one piece)."""
    return max((len(line) for line in text.split("\n")), default=0)


class TextViewer(QDialog):
    """The whole text in a read-only plain-text editor, PAGE characters at a time (a
    multi-MB action pages; Previous / Next move through it)."""

    def __init__(self, parent: QWidget | None, title: str, text: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self._text, self._start = text, 0
        self.box = QPlainTextEdit(self)
        self.box.setReadOnly(True)
        self.box.setAccessibleName(title)
        self.where = QLabel(self)
        self.where.setAccessibleName(tr("Where in the text"))
        self.previous = QPushButton(tr("Previous page"), self)
        self.next = QPushButton(tr("Next page"), self)
        self.previous.clicked.connect(self.previous_page)
        self.next.clicked.connect(self.next_page)
        pages = QHBoxLayout()
        pages.addWidget(self.where, 1)
        pages.addWidget(self.previous)
        pages.addWidget(self.next)
        for w in (self.where, self.previous, self.next):
            w.setVisible(len(text) > PAGE)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.box, 1)
        layout.addLayout(pages)
        layout.addWidget(buttons)
        self.resize(720, 480)
        self._show_page(0)

    def _show_page(self, start: int) -> None:
        self._start = max(0, min(start, max(len(self._text) - 1, 0)))
        page = self._text[self._start : self._start + PAGE]
        self.box.setPlainText(chunk_lines(visible(page)))
        end = self._start + len(page)
        self.where.setText(
            tr("Characters {first}–{last} of {total}").format(
                first=f"{self._start + 1:,}", last=f"{end:,}", total=f"{len(self._text):,}"
            )
        )
        self.previous.setEnabled(self._start > 0)
        self.next.setEnabled(end < len(self._text))

    @Slot()
    def next_page(self) -> None:
        if self._start + PAGE < len(self._text):
            self._show_page(self._start + PAGE)

    @Slot()
    def previous_page(self) -> None:
        self._show_page(self._start - PAGE)

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
