"""Word-level text diff (difflib) and its safe rendering.

``diff_texts(old, new, budget=...)`` returns a ``Diff``: pieces (equal / delete / insert)
whose texts rebuild both versions exactly, and its level (WORD, LINE, WHOLE). It diffs
segments first (lines; very long lines are cut at sentence ends, content-defined word
boundaries and, for unbroken text, every UNBROKEN characters), then words inside each
changed block, with Myers' algorithm under a step budget: the work is bounded and
cancellable, and a diff too big for it falls back to line level, then to "too large to
diff — show both". ``word_diff(old, new)`` is its pieces.

Diffs of agent data never run on the GUI thread nor in the store's task runner:
``start_diff`` (or ``DiffView.compare``) runs them on the presentation pool
(``gui.tasks.PresentationPool``) and cancels them when the view moves on.

Rendering feeds plain text into a QTextDocument through QTextCursor with QTextCharFormat:
agent text is never parsed as markup; controls and bidi overrides are shown escaped.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from ..infra.tasks import PresentationCancelled, PresentationPool, Ticket
from ..infra.theme import diff_colors
from .bounded_text import CHUNK, HARD_CAP
from .fmt import visible

EQUAL, DELETE, INSERT = "equal", "delete", "insert"
MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f"
# A word (with its combining marks), a line break, a run of other white space, or one
# symbol with its marks, skin-tone modifiers and zero-width-joined partners (an emoji
# stays whole).
TOKEN = re.compile(
    rf"[\w{MARKS}]+|\n|[^\S\n]+"
    rf"|[^\w\s](?:[{MARKS}\U0001F3FB-\U0001F3FF]|\u200d[^\w\s])*"
)
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
LONG_SEGMENT = 800  # characters; longer lines are cut into smaller segments
UNBROKEN = 256  # a segment of unbroken text longer than 4 × LONG_SEGMENT is cut this long
SPACES = re.compile(r"\s+")
# Diff work is bounded (steps ~ comparisons; a million take about a second of CPU here):
STEP_BUDGET = 3_000_000  # one whole diff
SEGMENT_STEPS = 2_000_000  # comparing the segments; more and the texts are shown whole
BLOCK_STEPS = 600_000  # one changed block's words; more and the block is shown replaced
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
            yield from _cut_words(line[start : m.end()])
            start = m.end()
    if start < len(line):
        yield from _cut_words(line[start:])


def _cut_words(part: str) -> Iterator[str]:
    if len(part) <= LONG_SEGMENT:
        yield part
        return
    start = word = 0
    for m in SPACES.finditer(part):  # one pass: never a backtracking search per word
        if m.end() - start >= 64 and zlib.crc32(part[word : m.end()].encode()) % 16 == 0:
            yield from _cut_run(part[start : m.end()])
            start = m.end()
        word = m.end()
    if start < len(part):
        yield from _cut_run(part[start:])


def _cut_run(part: str) -> Iterator[str]:
    """A part with no cut in it; unbroken text (a base64 blob) longer than 4 × LONG_SEGMENT
    is cut every UNBROKEN characters."""
    if len(part) <= 4 * LONG_SEGMENT:
        yield part
        return
    for n in range(0, len(part), UNBROKEN):
        yield part[n : n + UNBROKEN]


def segments(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        out.extend(_cut_long(line) if len(line) > LONG_SEGMENT else (line,))
    return out


# ---------------------------------------------------------------- diffing
class DiffCancelled(PresentationCancelled):
    """The diff was cancelled (the operator moved on) before it finished."""


class Budget:
    """A bounded amount of diff work: ``steps`` comparisons in all, checked as the diff goes;
    ``cancelled()`` is asked often and ends the diff with DiffCancelled."""

    def __init__(
        self, steps: int = STEP_BUDGET, cancelled: Callable[[], bool] | None = None
    ) -> None:
        self.left = steps
        self.spent = 0
        self._cancelled = cancelled

    def cancelled(self) -> bool:
        return self._cancelled is not None and self._cancelled()

    def take(self, steps: int) -> bool:
        """Spend ``steps``; False (nothing spent) when the budget cannot pay for them."""
        if self._cancelled is not None and self._cancelled():
            raise DiffCancelled
        if steps > self.left:
            return False
        self.left -= steps
        self.spent += steps
        return True


@dataclass(frozen=True)
class Diff:
    """A diff's pieces and how fine it is: WORD (every changed block diffed word by word),
    LINE (some blocks too big for the budget are shown replaced whole) or WHOLE (too large
    to diff: ``pieces`` is the old text deleted and the new one inserted; show both)."""

    pieces: list[Piece]
    level: str
    steps: int = 0

    @property
    def changed(self) -> bool:
        return any(p.op != EQUAL for p in self.pieces)


WORD, LINE, WHOLE = "word", "line", "whole"


def _ids(items: list[str], table: dict[str, int]) -> list[int]:
    return [table.setdefault(x, len(table)) for x in items]


def _myers(a: list[int], b: list[int], budget: Budget, cap: int) -> list[tuple[str, int]] | None:
    """The shortest edit script from ``a`` to ``b`` (Myers' O((N+M)D) algorithm) as runs of
    (op, length), or None when it would cost more than ``cap`` steps or the budget left."""
    n, m = len(a), len(b)
    lo = 0  # common prefix and suffix cost nothing to find
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi_a, hi_b = n, m
    while hi_a > lo and hi_b > lo and a[hi_a - 1] == b[hi_b - 1]:
        hi_a, hi_b = hi_a - 1, hi_b - 1
    core = _myers_core(a[lo:hi_a], b[lo:hi_b], budget, cap)
    if core is None:
        return None
    return _runs([(EQUAL, lo), *core, (EQUAL, n - hi_a)])


def _myers_core(
    a: list[int], b: list[int], budget: Budget, cap: int
) -> list[tuple[str, int]] | None:
    n, m = len(a), len(b)
    if not n or not m:
        return [(DELETE, n), (INSERT, m)]
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    trace: list[list[int]] = []
    spent = 0
    for d in range(n + m + 1):
        if spent + d + 1 > cap or not budget.take(d + 1):
            return None
        spent += d + 1
        trace.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            if x - start > 64:  # a long snake is paid for too
                if not budget.take((x - start) // 64):
                    return None
                spent += (x - start) // 64
            v[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m, d)
    return None  # not reached: d = n + m always ends


def _backtrack(trace: list[list[int]], n: int, m: int, d_end: int) -> list[tuple[str, int]]:
    ops: list[tuple[str, int]] = []
    x, y = n, m
    for d in range(d_end, 0, -1):
        v = trace[d]  # v[k] is at index k + d + 1
        k = x - y
        down = k == -d or (k != d and v[k + d] < v[k + d + 2])
        prev_k = k + 1 if down else k - 1
        prev_x = v[prev_k + d + 1]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            ops.append((EQUAL, 1))
            x, y = x - 1, y - 1
        ops.append((INSERT, 1) if x == prev_x else (DELETE, 1))
        x, y = prev_x, prev_y
    ops.extend([(EQUAL, 1)] * x)
    ops.reverse()
    return ops


def _runs(ops: list[tuple[str, int]]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for op, count in ops:
        if not count:
            continue
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + count)
        else:
            out.append((op, count))
    return out


def _blocks(
    a: list[str], b: list[str], runs: list[tuple[str, int]]
) -> Iterator[tuple[str, str, str]]:
    """(tag, left, right) per run of the script; a delete next to an insert is one
    "replace" block."""
    i = j = 0
    left: list[str] = []
    right: list[str] = []
    for op, count in [*runs, (EQUAL, 0)]:
        if op == EQUAL:
            if left or right:
                yield (
                    "replace" if left and right else DELETE if left else INSERT,
                    "".join(left),
                    "".join(right),
                )
                left, right = [], []
            if count:
                yield EQUAL, "".join(a[i : i + count]), ""
                i, j = i + count, j + count
        elif op == DELETE:
            left += a[i : i + count]
            i += count
        else:
            right += b[j : j + count]
            j += count


def diff_texts(old: str, new: str, *, budget: Budget | None = None) -> Diff:
    """The word-level diff of ``old`` → ``new`` within ``budget`` (a bounded amount of work,
    cancellable): segments (lines; long lines cut) first, then the words of each changed
    block. A block the budget cannot pay for is shown replaced whole (level LINE); when
    even the segments are too many to compare, the result is WHOLE (show both).

    Pure Python, no Qt: run it on the presentation pool (``start_diff``), never on the GUI
    thread or the store's task runner."""
    budget = budget or Budget()
    if old == new:
        return Diff([Piece(EQUAL, old)] if old else [], WORD, 0)
    table: dict[str, int] = {}
    a, b = segments(old), segments(new)
    runs = _myers(_ids(a, table), _ids(b, table), budget, SEGMENT_STEPS)
    if runs is None:
        return Diff(
            _merge([p for p in (Piece(DELETE, old), Piece(INSERT, new)) if p.text]),
            WHOLE,
            budget.spent,
        )
    pieces: list[Piece] = []
    level = WORD
    for tag, left, right in _blocks(a, b, runs):
        if tag == EQUAL:
            pieces.append(Piece(EQUAL, left))
        elif tag == DELETE:
            pieces.append(Piece(DELETE, left))
        elif tag == INSERT:
            pieces.append(Piece(INSERT, right))
        else:
            words = _words(left, right, budget)
            if words is None:
                level = LINE
                words = [Piece(DELETE, left), Piece(INSERT, right)]
            pieces.extend(words)
    return Diff(_tidy(pieces), level, budget.spent)


def word_diff(old: str, new: str) -> list[Piece]:
    """Pieces that turn ``old`` into ``new``, word by word (within the default budget)."""
    return diff_texts(old, new).pieces


def line_blocks(
    old: str, new: str, budget: Budget | None = None
) -> list[tuple[str, str, str]] | None:
    """(tag, old lines, new lines) blocks of a line-level diff — tag "equal", "delete",
    "insert" or "replace" — or None when the budget cannot pay for it."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    table: dict[str, int] = {}
    runs = _myers(_ids(a, table), _ids(b, table), budget or Budget(), SEGMENT_STEPS)
    if runs is None:
        return None
    return [
        (tag, left, right if tag != EQUAL else left) for tag, left, right in _blocks(a, b, runs)
    ]


def start_diff(
    old: str, new: str, on_done: Callable[[Diff], None], owner: QObject | None = None
) -> Ticket:
    """``diff_texts(old, new)`` on the presentation pool; ``on_done(diff)`` on the GUI
    thread unless the returned ticket is cancelled first (cancel it when the operator moves
    on: the diff stops at its next check)."""

    def work(ticket: Ticket) -> Diff:
        return diff_texts(old, new, budget=Budget(cancelled=ticket.cancelled))

    return PresentationPool.instance().run(work, on_done=on_done, owner=owner)


def _words(left: str, right: str, budget: Budget) -> list[Piece] | None:
    ta, tb = TOKEN.findall(left), TOKEN.findall(right)
    table: dict[str, int] = {}
    runs = _myers(_ids(ta, table), _ids(tb, table), budget, BLOCK_STEPS)
    if runs is None:
        return None
    out: list[Piece] = []
    for tag, lt, rt in _blocks(ta, tb, runs):
        if tag == EQUAL:
            out.append(Piece(EQUAL, lt))
            continue
        if lt:
            out.append(Piece(DELETE, lt))
        if rt:
            out.append(Piece(INSERT, rt))
    return out


def _tidy(pieces: list[Piece]) -> list[Piece]:
    """Absorb lone spaces between two changes (fewer, longer highlights); merge runs."""
    pieces = [p for p in pieces if p.text]
    out: list[Piece] = []
    for n, p in enumerate(pieces):
        between = (
            0 < n < len(pieces) - 1 and pieces[n - 1].op != EQUAL and pieces[n + 1].op != EQUAL
        )
        if p.op == EQUAL and between and p.text == " ":
            out += [Piece(DELETE, p.text), Piece(INSERT, p.text)]
        else:
            out.append(p)
    return _merge(_group(out))


def _group(pieces: list[Piece]) -> list[Piece]:
    """Within each run of changes, deletes first, then inserts."""
    out: list[Piece] = []
    run: list[Piece] = []
    for p in [*pieces, Piece(EQUAL, "")]:
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


class _Writer:
    """Inserts agent text into a document as it is displayed: controls and bidi overrides
    escaped (``fmt.visible``), lines cut into CHUNK-long display lines (Qt lays out a
    paragraph whole), at most HARD_CAP characters."""

    def __init__(self, cursor: QTextCursor) -> None:
        self.cursor = cursor
        self.column = 0
        self.written = 0

    def write(self, text: str, f: QTextCharFormat) -> None:
        if self.written >= HARD_CAP:
            return
        text = visible(text[: HARD_CAP - self.written])
        self.written += len(text)
        for n, line in enumerate(text.split("\n")):
            if n:
                self.cursor.insertText("\n", f)
                self.column = 0
            while self.column + len(line) > CHUNK:
                take = CHUNK - self.column
                self.cursor.insertText(line[:take], f)
                self.cursor.insertText("\n", f)
                line, self.column = line[take:], 0
            if line:
                self.cursor.insertText(line, f)
                self.column += len(line)


def fill(
    doc: QTextDocument, pieces: list[Piece], palette: QPalette, side: str | None = None
) -> None:
    """Write ``pieces`` into ``doc`` as plain text with highlight formats (as displayed:
    escaped, long lines cut, bounded — see ``_Writer``).

    ``side``: None shows both (deletions struck through), "old" only equal + deleted text,
    "new" only equal + inserted text."""
    colors = change_colors(palette)
    skip = {"old": INSERT, "new": DELETE}.get(side or "")
    doc.clear()
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    writer = _Writer(cursor)
    plain = QTextCharFormat()
    plain.setProperty(OP_PROPERTY, "")  # a non-empty format: line breaks never inherit a mark
    for piece in pieces:
        if piece.op == skip:
            continue
        if piece.op == EQUAL:
            writer.write(piece.text, plain)
            continue
        f = QTextCharFormat()
        f.setBackground(colors[piece.op])
        f.setProperty(OP_PROPERTY, piece.op)
        if piece.op == DELETE and side is None:
            f.setFontStrikeOut(True)
        writer.write(_shown(piece), f)
    if writer.written >= HARD_CAP:
        writer.write("\n… (truncated)", plain)
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


COMPARING = "Comparing the versions…"
TOO_LARGE = "Too large to diff — both versions are shown whole."


class DiffView(QPlainTextEdit):
    """A read-only plain-text view of a diff (one side, or both inline).

    ``compare(old, new)`` diffs on the presentation pool (never on the GUI thread) and
    shows the result when it is ready; showing something else cancels it.

    Signals:
        compared(object): the Diff of the last ``compare`` is now shown.
    """

    compared = Signal(object)

    def __init__(self, name: str, parent: QWidget | None = None, side: str | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.pieces: list[Piece] = []
        self.diff: Diff | None = None
        self._ticket: Ticket | None = None
        self._key: tuple[str, str] | None = None  # the (old, new) shown or being compared
        self.setReadOnly(True)
        self.setAccessibleName(name)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

    def compare(self, old: str, new: str) -> None:
        """Diff ``old`` → ``new`` off the GUI thread; "Comparing…" until it is shown. The
        same pair again is not diffed again (``compared`` is emitted at once if shown)."""
        if self._key == (old, new) and (self.comparing() or self.diff is not None):
            if self.diff is not None:
                self.compared.emit(self.diff)
            return
        self.expect(old, new)
        self._ticket = start_diff(old, new, self._on_compared, owner=self)

    def expect(self, old: str, new: str) -> None:
        """Show "Comparing…" while the diff of ``old`` → ``new`` is made elsewhere (the host
        calls ``show_diff`` with it); ``text()`` already stands for this side."""
        self.cancel()
        self.diff = None
        self._key = (old, new)
        self.pieces = _merge([p for p in (Piece(DELETE, old), Piece(INSERT, new)) if p.text])
        self._show_plain(COMPARING)

    def _on_compared(self, diff: Diff) -> None:
        self._ticket = None
        self.show_diff(diff)
        self.compared.emit(diff)

    def cancel(self) -> None:
        """Stop the diff in progress (its result is dropped)."""
        if self._ticket is not None:
            self._ticket.cancel()
            self._ticket = None

    def comparing(self) -> bool:
        return self._ticket is not None

    def show_diff(self, diff: Diff) -> None:
        """Show a finished diff; a WHOLE one (too large to diff) as both texts, unmarked."""
        self.cancel()
        self._key = (old_text(diff.pieces), new_text(diff.pieces))
        self.diff = diff
        if diff.level != WHOLE:
            self._fill(diff.pieces)
            return
        old, new = self._key
        self.pieces = diff.pieces
        text = (
            old
            if self.side == "old"
            else new
            if self.side == "new"
            else f"— before —\n{old}\n— after —\n{new}"
        )
        self._show_plain(text)

    def show_pieces(self, pieces: list[Piece]) -> None:
        self.cancel()
        self.diff, self._key = None, None
        self._fill(pieces)

    def _fill(self, pieces: list[Piece]) -> None:
        self.pieces = pieces
        fill(self.document(), pieces, self.palette(), self.side)
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def show_text(self, text: str) -> None:
        self.cancel()
        self.diff, self._key = None, None
        self.pieces = [Piece(EQUAL, text)] if text else []
        self._show_plain(text)

    def _show_plain(self, text: str) -> None:
        fill(self.document(), [Piece(EQUAL, text)] if text else [], self.palette())
        self.moveCursor(QTextCursor.MoveOperation.Start)

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
        if self.pieces:
            return "".join(p.text for p in self.pieces)
        return self.toPlainText()

    def marked(self) -> list[tuple[str, str]]:
        return highlighted(self.document())
