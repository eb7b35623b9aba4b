"""Walk every widget of a desk window and report agent text rendered as rich text.

Qt renders a QLabel (AutoText/RichText), a tooltip, a QTextEdit filled with setHtml and a
message box as HTML when the text "might be rich text". Agent text must never be: links,
images and styled runs of agent text are findings; so is markup that was swallowed (the
rendered text no longer shows the tags the agent wrote).
"""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction, QFont, QTextDocument
from PySide6.QtGui import Qt as GuiQt  # Qt::mightBeRichText lives in QtGui
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGraphicsView,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

# Every piece is in every agent-supplied field (see HOSTILE).
TAGS = ("<b>B</b>", "<img src=x onerror=alert(1)>", '<a href="http://evil.invalid">L</a>')
RLO, ESC = "\u202e", "\x1b"
HOSTILE = "".join(TAGS) + f" {RLO}exe.txt {ESC}[31mRED{ESC}[0m"
MARKERS = ("<b>", "<img", "<a href", "&lt;b&gt;", "onerror", "evil.invalid", RLO, ESC)
# Characters no widget may show raw: bidi overrides and isolates, C0 and C1 controls.
CONTROLS = "\u2066iso\u2069 \u2067r\u2068 \x07bell \x9bcsi \x08"
RAW = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    + "".join(map(chr, range(0x20))).replace("\n", "").replace("\t", "")
    + "".join(map(chr, range(0x7F, 0xA0)))
)


def raw_controls(text: str) -> str:
    """The characters of ``text`` that should have been shown escaped."""
    return "".join(sorted({c for c in text if c in RAW}))


MODEL_ROWS = 200  # rows per model inspected (models are paged; the hostile rows come first)


def is_agent_text(text: str) -> bool:
    return any(m in text for m in MARKERS)


def rendered_problems(text: str) -> list[str]:
    """What goes wrong when ``text`` is shown as rich text (empty if it shows literally)."""
    doc = QTextDocument()
    doc.setHtml(text)
    found = set()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                found.add("link")
            if fmt.isImageFormat():
                found.add("image")
            if fmt.fontWeight() > QFont.Weight.Normal and "<b>" in text:
                found.add("bold")
            it += 1
        block = block.next()
    plain = doc.toPlainText()
    swallowed = [t for t in TAGS if t in text and t not in plain]
    if swallowed:
        found.add("markup swallowed: " + ", ".join(swallowed))
    return sorted(found)


def shown_as_rich(text: str, fmt: Qt.TextFormat) -> bool:
    if fmt == Qt.TextFormat.PlainText:
        return False
    return fmt == Qt.TextFormat.RichText or GuiQt.mightBeRichText(text)


def check_rich(where: str, text: str, fmt: Qt.TextFormat) -> list[str]:
    if not text or not is_agent_text(text) or not shown_as_rich(text, fmt):
        return []
    return [f"{where}: {p} in {text[:90]!r}" for p in rendered_problems(text)]


def tooltip_problems(where: str, tip: str) -> list[str]:
    # Qt shows a tooltip as rich text exactly when Qt.mightBeRichText() says so
    return check_rich(where, tip, Qt.TextFormat.AutoText)


def describe(widget: QWidget) -> str:
    name = widget.objectName() or widget.accessibleName() or ""
    return f"{type(widget).__name__}({name[:40]})"


def model_indexes(model, parent: QModelIndex | None = None, depth: int = 0) -> Iterator:
    parent = parent if parent is not None else QModelIndex()
    rows = min(model.rowCount(parent), MODEL_ROWS)
    try:
        cols = model.columnCount(parent)
        tree = True
    except TypeError:  # a list model (columnCount and hasChildren are private there)
        cols, tree = 1, False
    for row in range(rows):
        for col in range(cols):
            index = model.index(row, col, parent)
            yield index
            if tree and col == 0 and depth < 4 and model.rowCount(index) > 0:
                yield from model_indexes(model, index, depth + 1)


def widget_problems(widget: QWidget) -> list[str]:
    where = describe(widget)
    problems = tooltip_problems(f"{where} tooltip", widget.toolTip())
    if isinstance(widget, QLabel):
        problems += check_rich(f"{where} text", widget.text(), widget.textFormat())
    if isinstance(widget, QTextEdit):
        html = widget.document().toHtml()
        if is_agent_text(widget.toPlainText()) or is_agent_text(html):
            problems += [
                f"{where} document: {p}" for p in rendered_problems(html) if p in ("link", "image")
            ]
    if isinstance(widget, QTabBar):
        for i in range(widget.count()):
            problems += tooltip_problems(f"{where} tab {i} tooltip", widget.tabToolTip(i))
    if isinstance(widget, QAbstractItemView) and widget.model() is not None:
        for index in model_indexes(widget.model()):
            tip = index.data(Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str):
                problems += tooltip_problems(
                    f"{where} cell {index.row()},{index.column()} tooltip", tip
                )
            shown = index.data(Qt.ItemDataRole.DisplayRole)
            if shown is not None and not isinstance(shown, str | int | float):
                problems.append(
                    f"{where} cell {index.row()},{index.column()}: "
                    f"display data is {type(shown).__name__}"
                )
    for action in widget.actions():
        problems += action_problems(action)
    return problems


def action_problems(action: QAction) -> list[str]:
    return tooltip_problems(
        f"action {action.objectName() or action.text()} tooltip", action.toolTip()
    )


def window_problems(window: QWidget) -> list[str]:
    """Every finding in ``window`` and every other top-level window (dialogs, menus)."""
    problems: list[str] = []
    tops = [w for w in QApplication.topLevelWidgets() if w is window or w.isVisible()]
    for top in tops:
        for widget in [top, *top.findChildren(QWidget)]:
            problems += widget_problems(widget)
    return sorted(set(problems))


def displayed_texts(window: QWidget) -> Iterator[tuple[str, str]]:
    """(where, text) for every text shown: label texts, cells, tooltips, window titles."""
    for top in [w for w in QApplication.topLevelWidgets() if w is window or w.isVisible()]:
        yield f"{describe(top)} title", top.windowTitle()
        for widget in [top, *top.findChildren(QWidget)]:
            if isinstance(widget, QLabel | QAbstractButton):
                yield describe(widget), widget.text()
            if isinstance(widget, QGroupBox):
                yield describe(widget), widget.title()
            if widget.toolTip():
                yield f"{describe(widget)} tooltip", widget.toolTip()
            if isinstance(widget, QPlainTextEdit | QTextEdit) and widget.isReadOnly():
                yield f"{describe(widget)} document", widget.toPlainText()
            if isinstance(widget, QComboBox):
                for i in range(widget.count()):
                    yield f"{describe(widget)} item {i}", widget.itemText(i)
            if isinstance(widget, QGraphicsView) and widget.scene() is not None:
                for item in widget.scene().items():
                    if hasattr(item, "shown_text"):
                        yield f"{describe(widget)} bar", item.shown_text()
                    for text in getattr(item, "shown_texts", list)():  # one layer, many bars
                        yield f"{describe(widget)} bar", text
                    if item.toolTip():
                        yield f"{describe(widget)} bar tooltip", item.toolTip()
            if isinstance(widget, QAbstractItemView) and widget.model() is not None:
                for index in model_indexes(widget.model()):
                    for role in (
                        Qt.ItemDataRole.DisplayRole,
                        Qt.ItemDataRole.ToolTipRole,
                        Qt.ItemDataRole.AccessibleTextRole,
                    ):
                        value = index.data(role)
                        if isinstance(value, str):
                            yield f"{describe(widget)} cell {index.row()},{index.column()}", value
