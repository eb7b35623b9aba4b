"""Word-level text diff (difflib) and its safe rendering.

``word_diff(old, new)`` returns pieces (equal / delete / insert) whose texts rebuild both
versions exactly. It diffs segments first (lines; very long lines are cut at sentence ends
and content-defined word boundaries, so 100 KB texts stay fast), then words inside each
changed block. Rendering feeds plain text into a QTextDocument through QTextCursor with
QTextCharFormat: agent text is never parsed as markup.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from ..theme import diff_colors

EQUAL, DELETE, INSERT = "equal", "delete", "insert"
MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f"
# A word (with its combining marks), a line break, a run of other white space, or one
# symbol with its marks, skin-tone modifiers and zero-width-joined partners (an emoji
# stays whole).
TOKEN = re.compile(rf"[\w{MARKS}]+|\n|[^\S\n]+"
                   rf"|[^\w\s](?:[{MARKS}\U0001F3FB-\U0001F3FF]|\u200d[^\w\s])*")
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
LONG_SEGMENT = 800  # characters; longer lines are cut into smaller segments
MAX_TOKEN_PAIRS = 3_000_000  # a changed block bigger than this is shown replaced whole
OP_PROPERTY = QTextFormat.Property.UserProperty  # "delete"/"insert" on changed runs
NEWLINE_MARK = "↵"


@dataclass(frozen=True)
class Piece:
    op: str
    text: str


def old_text(pieces: list[Piece]) -> str:
    return "".join(p.text for p in pieces if p.op != INSERT)


def new_text(pieces: list[Piece]) -> str:
    return "".join(p.text for p in pieces if p.op != DELETE)


def whitespace_only(pieces: list[Piece]) -> bool:
    """True when something changed and every change is whitespace."""
    changed = [p for p in pieces if p.op != EQUAL]
    return bool(changed) and all(not p.text.strip() for p in changed)


# ---------------------------------------------------------------- segmenting
def _cut_long(line: str) -> Iterator[str]:
    """Cut a long line after sentence ends, then after words whose hash picks them (content
    defined, so an edit moves only nearby cuts)."""
    start = 0
    for m in SENTENCE_END.finditer(line):
        if m.end() - start >= LONG_SEGMENT // 4:
            yield from _cut_words(line[start:m.end()])
            start = m.end()
    if start < len(line):
        yield from _cut_words(line[start:])


def _cut_words(part: str) -> Iterator[str]:
    if len(part) <= LONG_SEGMENT:
        yield part
        return
    start = 0
    for m in re.finditer(r"\S+\s+", part):
        if m.end() - start >= 64 and zlib.crc32(m.group().encode()) % 16 == 0:
            yield part[start:m.end()]
            start = m.end()
    if start < len(part):
        yield part[start:]


def segments(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        out.extend(_cut_long(line) if len(line) > LONG_SEGMENT else (line,))
    return out


# ---------------------------------------------------------------- diffing
def word_diff(old: str, new: str) -> list[Piece]:
    """Pieces that turn ``old`` into ``new``, word by word."""
    a, b = segments(old), segments(new)
    pieces: list[Piece] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left, right = "".join(a[i1:i2]), "".join(b[j1:j2])
        if tag == "equal":
            pieces.append(Piece(EQUAL, left))
        elif tag == "delete":
            pieces.append(Piece(DELETE, left))
        elif tag == "insert":
            pieces.append(Piece(INSERT, right))
        else:
            pieces.extend(_words(left, right))
    return _tidy(pieces)


def _words(left: str, right: str) -> list[Piece]:
    ta, tb = TOKEN.findall(left), TOKEN.findall(right)
    if len(ta) * len(tb) > MAX_TOKEN_PAIRS:
        return [Piece(DELETE, left), Piece(INSERT, right)]
    out: list[Piece] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(Piece(EQUAL, "".join(ta[i1:i2])))
            continue
        if i2 > i1:
            out.append(Piece(DELETE, "".join(ta[i1:i2])))
        if j2 > j1:
            out.append(Piece(INSERT, "".join(tb[j1:j2])))
    return out


def _tidy(pieces: list[Piece]) -> list[Piece]:
    """Absorb lone spaces between two changes (fewer, longer highlights); merge runs."""
    pieces = [p for p in pieces if p.text]
    out: list[Piece] = []
    for n, p in enumerate(pieces):
        between = 0 < n < len(pieces) - 1 and pieces[n - 1].op != EQUAL \
            and pieces[n + 1].op != EQUAL
        if p.op == EQUAL and between and p.text == " ":
            out += [Piece(DELETE, p.text), Piece(INSERT, p.text)]
        else:
            out.append(p)
    return _merge(_group(out))


def _group(pieces: list[Piece]) -> list[Piece]:
    """Within each run of changes, deletes first, then inserts."""
    out: list[Piece] = []
    run: list[Piece] = []
    for p in pieces + [Piece(EQUAL, "")]:
        if p.op == EQUAL:
            out += [q for q in run if q.op == DELETE] + [q for q in run if q.op == INSERT]
            run = []
            out.append(p)
        else:
            run.append(p)
    return [p for p in out if p.text]


def _merge(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        if out and out[-1].op == p.op:
            out[-1] = Piece(p.op, out[-1].text + p.text)
        else:
            out.append(p)
    return out


# ---------------------------------------------------------------- rendering
def change_colors(palette: QPalette) -> dict[str, QColor]:
    """Backgrounds of deleted / inserted runs, made from ``palette`` (readable with its
    Text colour on light and dark palettes)."""
    colors = diff_colors(palette)
    return {DELETE: colors["delete"], INSERT: colors["insert"]}


def _shown(piece: Piece) -> str:
    """Changed whitespace-only runs mark their line breaks so the change is visible."""
    if piece.op != EQUAL and not piece.text.strip():
        return piece.text.replace("\n", NEWLINE_MARK + "\n")
    return piece.text


def fill(doc: QTextDocument, pieces: list[Piece], palette: QPalette,
         side: str | None = None) -> None:
    """Write ``pieces`` into ``doc`` as plain text with highlight formats.

    ``side``: None shows both (deletions struck through), "old" only equal + deleted text,
    "new" only equal + inserted text."""
    colors = change_colors(palette)
    skip = {"old": INSERT, "new": DELETE}.get(side or "")
    doc.clear()
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    plain = QTextCharFormat()
    plain.setProperty(OP_PROPERTY, "")  # a non-empty format: line breaks never inherit a mark
    for piece in pieces:
        if piece.op == skip:
            continue
        if piece.op == EQUAL:
            cursor.insertText(piece.text, plain)
            continue
        f = QTextCharFormat()
        f.setBackground(colors[piece.op])
        f.setProperty(OP_PROPERTY, piece.op)
        if piece.op == DELETE and side is None:
            f.setFontStrikeOut(True)
        cursor.insertText(_shown(piece), f)
    cursor.endEditBlock()


def recolour(doc: QTextDocument, palette: QPalette) -> None:
    """Give every highlighted run in ``doc`` its background on ``palette`` (after a theme
    change); text, cursor and scroll position stay."""
    colors = change_colors(palette)
    runs = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            op = frag.charFormat().property(OP_PROPERTY)
            if isinstance(op, str) and op in colors:
                runs.append((frag.position(), frag.length(), op))
            it += 1
        block = block.next()
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    for position, length, op in runs:
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        f = QTextCharFormat()
        f.setBackground(colors[op])
        cursor.mergeCharFormat(f)
    cursor.endEditBlock()


def backgrounds(doc: QTextDocument) -> dict[str, set[str]]:
    """The background colours (#rrggbb) of the highlighted runs in ``doc``, by op."""
    found: dict[str, set[str]] = {}
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            f = it.fragment().charFormat()
            if isinstance(op := f.property(OP_PROPERTY), str) and op:
                found.setdefault(op, set()).add(f.background().color().name())
            it += 1
        block = block.next()
    return found


def highlighted(doc: QTextDocument) -> list[tuple[str, str]]:
    """(op, text) of every highlighted run in ``doc``, as the text it stands for (line-break
    marks dropped): what a person sees marked."""
    runs: list[tuple[str | None, str]] = []

    def add(op: str | None, text: str) -> None:
        if runs and runs[-1][0] == op:
            runs[-1] = (op, runs[-1][1] + text)
        else:
            runs.append((op, text))

    block = doc.begin()
    first = True
    while block.isValid():
        if not first:  # the line break before this block carries the block's char format
            op = block.charFormat().property(OP_PROPERTY) or None
            if op and runs and runs[-1][0] == op and runs[-1][1].endswith(NEWLINE_MARK):
                runs[-1] = (op, runs[-1][1][:-1])
            add(op, "\n")
        first = False
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            add(frag.charFormat().property(OP_PROPERTY) or None, frag.text())
            it += 1
        block = block.next()
    return [(str(op), text) for op, text in runs if op]


class DiffView(QPlainTextEdit):
    """A read-only plain-text view of a diff (one side, or both inline)."""

    def __init__(self, name: str, parent: QWidget | None = None, side: str | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.pieces: list[Piece] = []
        self.setReadOnly(True)
        self.setAccessibleName(name)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

    def show_pieces(self, pieces: list[Piece]) -> None:
        self.pieces = pieces
        fill(self.document(), pieces, self.palette(), self.side)
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def show_text(self, text: str) -> None:
        self.pieces = [Piece(EQUAL, text)] if text else []
        self.setPlainText(text)

    def changeEvent(self, event: QEvent) -> None:
        """A theme change re-colours the highlights for the new palette."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            recolour(self.document(), self.palette())

    def text(self) -> str:
        """The text this view stands for (its side of the diff; a note when masked)."""
        if self.pieces and self.side == "old":
            return old_text(self.pieces)
        if self.pieces and self.side == "new":
            return new_text(self.pieces)
        return self.toPlainText()

    def marked(self) -> list[tuple[str, str]]:
        return highlighted(self.document())
