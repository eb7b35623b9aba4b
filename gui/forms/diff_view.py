"""A diff shown as a review's material: side by side (a model over the parsed rows, each
line bounded, word spans highlighted) or unified, one file at a time, parsed off the GUI
thread when it is large. Used by :mod:`.review`'s diff review and above a generic form."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    QTimer,
    Slot,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QPainter,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QPlainTextEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Question

from ..infra.i18n import tr
from ..infra.theme import diff_colors
from ..widgets.fmt import visible
from ..widgets.labels import plain_label
from ..widgets.prepare import prepare
from . import diff
from .views import request_dict

LINE_MAX = 2_000  # characters of one diff line shown in a cell
UNIFIED_MAX = 200_000
COLORS = {
    "delete": QColor(220, 60, 60, 60),
    "insert": QColor(46, 160, 67, 60),
    "replace": QColor(210, 160, 30, 60),
    "hunk": QColor(80, 120, 220, 45),
}


def mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def read_only_text(
    text: str, name: str, parent: QWidget, *, height: int = 180, limit: int = UNIFIED_MAX
) -> QPlainTextEdit:
    """Agent material, read-only, monospace; cut at ``limit`` characters (said so)."""
    box = QPlainTextEdit(parent)
    box.setReadOnly(True)
    box.setFont(mono())
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    box.setAccessibleName(name)
    box.setPlainText(material_text(text, limit))
    box.setMinimumHeight(height)
    return box


def material_text(text: str, limit: int = UNIFIED_MAX) -> str:
    """Agent material as a read-only box shows it: cut at ``limit`` characters (said so),
    controls and bidi overrides shown escaped."""
    shown = (
        text
        if len(text) <= limit
        else text[:limit] + f"\n… cut: {len(text) - limit:,} more characters (the request has all)"
    )
    return visible(shown)


class UnifiedHighlighter(QSyntaxHighlighter):
    def highlightBlock(self, text: str) -> None:
        tag = (
            "hunk"
            if text.startswith("@@")
            else "insert"
            if text.startswith("+")
            else "delete"
            if text.startswith("-")
            else ""
        )
        if tag and not text.startswith(("+++", "---")):
            fmt = QTextCharFormat()
            fmt.setBackground(COLORS[tag])
            self.setFormat(0, len(text), fmt)


SPANS_ROLE = Qt.ItemDataRole.UserRole + 7
DIFF_INLINE = 5_000  # characters of a patch (or of both texts) parsed on the GUI thread
WRAP_ROWS = 600  # up to this many rows wrap to their contents; more scroll sideways
PAD = 2  # pixels around a diff line's text


class DiffCellDelegate(QStyledItemDelegate):
    """A diff line: plain text wrapped anywhere, the spans that changed within it marked
    with a stronger background (never markup: the text goes in through a text cursor)."""

    def __init__(self, parent: QWidget | None = None, *, wrap: bool = True) -> None:
        super().__init__(parent)
        self.wrap = wrap
        self._sizes: dict[tuple[int, int, int], QSize] = {}  # (row, column, width)

    def document(self, option: QStyleOptionViewItem, index: Any) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(PAD)
        text_option = QTextOption()
        text_option.setWrapMode(
            QTextOption.WrapMode.WrapAnywhere if self.wrap else QTextOption.WrapMode.NoWrap
        )
        doc.setDefaultTextOption(text_option)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        spans = index.data(SPANS_ROLE) or ()
        colors = diff_colors(option.palette)
        mark = QTextCharFormat()
        mark.setBackground(colors["delete" if index.column() < 2 else "insert"].darker(115))
        mark.setFontUnderline(True)
        plain = QTextCharFormat()
        cursor = QTextCursor(doc)
        pos = 0
        for start, end in spans:
            cursor.insertText(text[pos:start], plain)
            cursor.insertText(text[start:end], mark)
            pos = end
        cursor.insertText(text[pos:], plain)
        if self.wrap and option.rect.width() > 0:
            doc.setTextWidth(option.rect.width())
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        color = option.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        painter.save()
        painter.setClipRect(option.rect)
        if not index.data(SPANS_ROLE):  # most lines: one fast text draw
            painter.setPen(color)
            painter.setFont(option.font)
            painter.drawText(
                option.rect.adjusted(PAD, PAD, -PAD, -PAD),
                self._flags(),
                str(index.data(Qt.ItemDataRole.DisplayRole) or ""),
            )
        else:
            doc = self.document(option, index)
            painter.translate(option.rect.topLeft())
            context = QAbstractTextDocumentLayout.PaintContext()
            context.palette.setColor(QPalette.ColorRole.Text, color)
            doc.documentLayout().draw(painter, context)
        painter.restore()

    def _flags(self) -> int:
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        flags = int(align.value) if hasattr(align, "value") else int(align)
        return flags | (int(Qt.TextFlag.TextWrapAnywhere.value) if self.wrap else 0)

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        key = (index.row(), index.column(), option.rect.width() if self.wrap else 0)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = self._size(option, index)
        return size

    def _size(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if index.data(SPANS_ROLE):
            doc = self.document(option, index)
            return QSize(int(doc.idealWidth()) + 4, int(doc.size().height()) + 2)
        metrics = QFontMetrics(option.font)
        width = option.rect.width() - 2 * PAD
        if not self.wrap or width <= 0 or metrics.horizontalAdvance(text) <= width:
            return QSize(metrics.horizontalAdvance(text) + 2 * PAD, metrics.height() + 2 * PAD)
        bound = metrics.boundingRect(QRect(0, 0, width, 1_000_000), self._flags(), text)
        return QSize(bound.width() + 2 * PAD, bound.height() + 2 * PAD)


def marked_texts(table: QTableView, row: int, column: int) -> list[str]:
    """The substrings marked as changed in one cell (what a person sees highlighted)."""
    index = table.model().index(row, column)
    text = str(index.data() or "")
    return [text[a:b] for a, b in index.data(SPANS_ROLE) or ()]


class DiffModel(QAbstractTableModel):
    """The side-by-side rows of a diff (line number, old line, line number, new line), read
    from the diff's rows as the view asks for them: a 4,000-line patch made 16,000 table
    items on the GUI thread (0.1-0.3 s), the model makes none."""

    def __init__(self, made: diff.Diff, titles: tuple[str, str], parent: QWidget) -> None:
        super().__init__(parent)
        self.rows = made.rows
        self.titles = ["", titles[0], "", titles[1]]
        self.file_titles = {f.first_row: visible(file_title(f)) for f in made.files}
        self.bold = QFont(parent.font())
        self.bold.setBold(True)
        self.brushes = {tag: QBrush(c) for tag, c in COLORS.items()}

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 4

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.titles[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        row, col = self.rows[index.row()], index.column()
        if row.tag == "file":  # a file's header row: one cell spanning the row
            if col != 0:
                return "" if role == Qt.ItemDataRole.DisplayRole else None
            if role == Qt.ItemDataRole.DisplayRole:
                return self.file_titles.get(index.row(), row.left)
            if role == Qt.ItemDataRole.FontRole:
                return self.bold
            if role == Qt.ItemDataRole.BackgroundRole:
                return self.brushes["hunk"]
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return "" if row.left_no is None else str(row.left_no)
            if col == 2:
                return "" if row.right_no is None else str(row.right_no)
            return (row.left if col == 1 else row.right)[:LINE_MAX]
        if role == Qt.ItemDataRole.BackgroundRole:
            number = row.left_no if col < 2 else row.right_no
            if number is None and row.tag != "hunk":
                return None  # this side has no line
            return self.brushes.get(row.tag)
        if role == SPANS_ROLE and col in (1, 3):
            spans = row.left_spans if col == 1 else row.right_spans
            return tuple((a, b) for a, b in spans if b <= LINE_MAX)
        return None


class DiffView(QWidget):
    """A diff shown side by side and unified (tabs). Side by side wraps long lines (small
    diffs) and opens at the first change; changed words within a line are marked; a
    multi-file patch has a header row per file with that file's counts, and a file list."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        path: str = "",
        before: str | None = None,
        after: str | None = None,
        unified_text: str | None = None,
        titles: tuple[str, str] = ("Before", "After"),
    ) -> None:
        super().__init__(parent)
        self._path, self._titles = path, titles
        self.diff = diff.Diff()
        self.rows = self.diff.rows
        self.files = self.diff.files
        self.head = plain_label(tr("Preparing the diff…"), self, name="Mono")
        self.file_list = QComboBox(self)
        self.file_list.setAccessibleName(tr("Files in this change"))
        self.file_list.hide()
        self.file_list.activated.connect(self._on_file)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName(tr("Diff"))
        self.table = self._table(titles)
        self.tabs.addTab(self.table, tr("Side by side"))
        self.unified = read_only_text("", "Unified diff", self, height=220)
        self.highlighter = UnifiedHighlighter(self.unified.document())
        self.tabs.addTab(self.unified, tr("Unified"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.head)
        layout.addWidget(self.file_list)
        layout.addWidget(self.tabs)
        self._opened = False
        self._fits = 0
        self._fit_timer = QTimer(self)  # row heights follow the column width, once per change
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_rows)
        # parsing a big patch (unidiff) or diffing big texts took the GUI thread for up to
        # a second: a large one is made on the presentation pool, then shown
        size = (
            len(before) + len(after)
            if before is not None and after is not None
            else len(unified_text or "")
        )
        self._ticket = prepare(
            lambda: made_diff(path, before, after, unified_text),
            self._show_diff,
            self,
            size=size,
            inline=DIFF_INLINE,
        )

    def preparing(self) -> bool:
        """The diff is still being made on the presentation pool."""
        return self._ticket is not None

    def _show_diff(self, made: tuple[diff.Diff, str]) -> None:
        self._ticket = None
        self.diff, text = made
        self.rows = self.diff.rows
        self.files = self.diff.files
        self.head.setText(self._head(self._path))
        for f in self.files:
            self.file_list.addItem(visible(file_title(f)), f.first_row)
        self.file_list.setVisible(len(self.files) > 1)
        old, self.table = self.table, self._table(self._titles)
        self.tabs.removeTab(0)
        self.tabs.insertTab(0, self.table, tr("Side by side"))
        self.tabs.setCurrentIndex(0)
        old.deleteLater()
        self.unified.setPlainText(text)
        if self._opened:
            self._fits = 0
            self.fit_rows()
            self.show_first_change()

    @Slot(int, int, int)
    def _on_width(self, column: int, _old: int, _new: int) -> None:
        if column in (1, 3):
            self._fit_timer.start()

    @Slot()
    def fit_rows(self) -> None:
        """Each row as tall as its wrapped lines (small diffs only; a big one scrolls)."""
        if self.table.wordWrap():
            self.table.resizeRowsToContents()
            if self._fits < 3:  # while the view settles its width it stays at the change
                self._fits += 1
                self.show_first_change()

    def _head(self, path: str) -> str:
        d = self.diff
        if len(self.files) > 1:
            head = f"{len(self.files)} files  ·  −{d.removed} +{d.added}"
        else:
            head = (
                f"{visible(path) or (self.files[0].path if self.files else 'Change')}"
                f"  ·  −{d.removed} +{d.added}"
            )
        if d.problem:
            head += f"  ·  {d.problem}; see the Unified tab"
        if d.cut:
            head += f"  ·  first {diff.MAX_ROWS:,} lines shown"
        return head

    def _table(self, titles: tuple[str, str]) -> QTableView:
        table = QTableView(self)
        table.setModel(DiffModel(self.diff, titles, table))
        table.setAccessibleName(tr("Side-by-side diff"))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.verticalHeader().hide()
        table.setShowGrid(False)
        wrap = len(self.rows) <= WRAP_ROWS
        table.setWordWrap(wrap)
        table.setFont(mono())
        delegate = DiffCellDelegate(table, wrap=wrap)
        for col in (1, 3):
            table.setItemDelegateForColumn(col, delegate)
        header = table.horizontalHeader()
        if wrap:
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
            header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
            table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        else:
            table.verticalHeader().setDefaultSectionSize(20)
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
            header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
            for col in (1, 3):
                header.resizeSection(col, 520)
        # the line numbers' columns as wide as the longest number (sized to their contents,
        # Qt asked every row of a 4,000-line diff for eight roles when the tab showed)
        digits = len(str(max((max(r.left_no or 0, r.right_no or 0) for r in self.rows), default=0)))
        numbers = QFontMetrics(table.font()).horizontalAdvance("9" * max(digits, 2)) + 2 * PAD + 8
        for col in (0, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, numbers)
        for f in self.files:  # a file's header row spans the four columns
            table.setSpan(f.first_row, 0, 1, 4)
        if wrap:
            header.sectionResized.connect(self._on_width)
        table.setMinimumHeight(220)
        return table

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self._opened:
            self._opened = True
            self.fit_rows()
            self.show_first_change()

    def show_first_change(self) -> None:
        """Scroll side by side to the first changed line (the hunk header above it too)."""
        first = self.diff.first_change()
        if first < 0:
            return
        top = max(0, first - 1) if first > 0 and self.rows[first - 1].tag == "hunk" else first
        self.table.scrollTo(
            self.table.model().index(top, 1), QAbstractItemView.ScrollHint.PositionAtTop
        )

    @Slot(int)
    def _on_file(self, index: int) -> None:
        row = self.file_list.itemData(index)
        if isinstance(row, int):
            self.tabs.setCurrentWidget(self.table)
            self.table.scrollTo(
                self.table.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop
            )


def made_diff(
    path: str, before: str | None, after: str | None, unified_text: str | None
) -> tuple[diff.Diff, str]:
    """The diff's rows and its unified text as the Unified tab shows it (pure Python: on
    the presentation pool when large)."""
    if before is not None and after is not None:
        made, text = diff.side_by_side(before, after, path), diff.unified(before, after, path)
    else:
        text = unified_text or ""
        made = diff.from_unified(text, path)
    return made, material_text(text or "(no changes)")


def file_title(f: diff.FileDiff | None) -> str:
    if f is None:
        return ""
    status = "" if f.status == "modified" else f" ({f.status})"
    renamed = f" ← {f.source}" if f.status == "renamed" and f.source else ""
    return f"{f.path}{renamed}{status}  ·  −{f.removed} +{f.added}"


def diff_material(question: Question, parent: QWidget | None = None) -> QWidget:
    r = request_dict(question)
    path = str(r.get("path") or r.get("file") or "")[:300]
    before, after = r.get("before", r.get("old")), r.get("after", r.get("new"))
    if isinstance(before, str) and isinstance(after, str):
        return DiffView(parent, path=path, before=before, after=after)
    text = r.get("diff", r.get("patch"))
    if isinstance(text, str):
        return DiffView(parent, path=path, unified_text=text)
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.addWidget(
        plain_label(tr("The agent sent no diff; see the request below."), box, name="Muted")
    )
    return box
