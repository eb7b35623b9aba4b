"""The action being approved, shown whole: its command / SQL / URL / path / message body in
full, monospaced and wrapped (never elided, never behind a tooltip). A long value sits in a
bounded, scrollable box with a size note and a copy button. The structured arguments stay
in the JSON tree beside it; this shows the text an approval would act on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, Slot
from PySide6.QtGui import (
    QFontDatabase,
    QGuiApplication,
    QHelpEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from proctor.core.lens import Fact

from ..infra.i18n import tr
from ..infra.tasks import Ticket
from ..infra.theme import highlight_color
from .bounded_text import LINE_CHARS, PreviewMap, TextViewer, preview
from .labels import plain_label, plain_tip, section
from .prepare import prepare, text_size

# Keys whose text is what the action does, wherever they sit in the action.
ACTION_KEYS = (
    "command",
    "cmd",
    "argv",
    "script",
    "sql",
    "query",
    "statement",
    "method",
    "url",
    "endpoint",
    "path",
    "paths",
    "file",
    "destination",
    "to",
    "cc",
    "bcc",
    "subject",
    "body",
    "message",
    "text",
    "content",
    "diff",
    "patch",
    "resource",
)
LONG = 60  # any other text longer than this (or with a line break) is shown whole too
MAX_LINES = 14  # a box grows to this many lines, then scrolls
MAX_FIELDS = 40  # texts shown; the tree has the rest
BOX_CHARS = 200_000  # a box holds at most this much of a text; "Show all" opens the rest
MAX_MARKS = 300  # lens highlights drawn in one box


def _leaves(
    value: Any, path: tuple[str, ...] = (), field: str | None = None
) -> Iterator[tuple[tuple[str, ...], str | None, Any]]:
    """(path, the lens's name of it or None, value) of every leaf; the lens names the
    places under ``args`` as ``args.steps[1].command`` (``Fact.field``)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if field is not None:
                sub: str | None = f"{field}.{key}"
            else:
                sub = "args" if not path and key == "args" else None
            yield from _leaves(child, (*path, str(key)), sub)
    elif isinstance(value, list) and not all(isinstance(v, str) for v in value):
        for n, child in enumerate(value):
            yield from _leaves(child, (*path, f"[{n}]"), None if field is None else f"{field}[{n}]")
    else:
        yield path, field, value


def places_of(field: str | None, value: Any) -> dict[str, int]:
    """The lens's fields whose text makes up a shown text, each with where it starts in it
    (a list of strings is shown one element a line)."""
    if field is None:
        return {}
    if isinstance(value, str):
        return {field: 0}
    places, at = {}, 0
    for n, item in enumerate(value):
        places[f"{field}[{n}]"] = at
        at += len(item) + 1
    return places


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


@dataclass(frozen=True)
class Found:
    """One text of the action: its label, the whole text, and the lens's fields in it."""

    name: str
    text: str
    places: dict[str, int]


def found_texts(action: Any) -> list[Found]:
    """Every text in ``action`` that says what it does: the known action keys first
    (command, sql, url, path, body …), then any other long text."""
    if not isinstance(action, dict):
        text = _text(action)
        return [Found("action", text, {})] if text else []
    known: list[tuple[int, Found]] = []
    other: list[Found] = []
    for path, field, value in _leaves(action):
        text = _text(value)
        if text is None or not path or path == ("tool",) or path == ("name",):
            continue
        key = path[-1].lower()
        name = ".".join(p for p in path if p != "args") or path[-1]
        found = Found(name, text, places_of(field, value))
        if key in ACTION_KEYS:
            known.append((ACTION_KEYS.index(key), found))
        elif len(text) > LONG or "\n" in text:
            other.append(found)
    ordered = [found for _rank, found in sorted(known, key=lambda k: k[0])]
    return (ordered + other)[:MAX_FIELDS]


def action_texts(action: Any) -> list[tuple[str, str]]:
    """(label, whole text) of every text in ``action`` that says what it does."""
    return [(f.name, f.text) for f in found_texts(action)]


def size_note(text: str) -> str:
    lines = text.count("\n") + 1
    note = f"{len(text):,} characters"
    if lines > 1:
        note += f" · {lines:,} lines"
    if len(text) > BOX_CHARS:
        note += f" · the box shows the first {BOX_CHARS:,}"
    return note


def more_text(text: str) -> str:
    """The Show all button of a text longer than the box: how much more there is."""
    return tr("Show all ({more} more characters)").format(more=f"{len(text) - BOX_CHARS:,}")


@dataclass(frozen=True)
class Mark:
    """A span of the box's text a lens fact comes from, and the fact's sentence."""

    start: int
    end: int
    tip: str


def marks_of(found: Found, facts: Sequence[Fact]) -> list[Mark]:
    """Where ``facts`` sit in the box that shows ``found`` (the preview's offsets), at most
    MAX_MARKS; the escapes and breaks are mapped only for a text that has facts."""
    # the facts that say a risk (an overview such as "runs psql, rm" spans the whole line:
    # marking it would mark everything, and show nothing)
    here = [f for f in facts if f.field in found.places and f.implies][:MAX_MARKS]
    if not here:
        return []
    where = PreviewMap(found.text, BOX_CHARS, LINE_CHARS)
    marks = []
    for fact in here:
        at = found.places[fact.field]
        span = where.span(at + fact.start, at + fact.end)
        if span is not None:
            marks.append(Mark(*span, fact.text))
    return marks


class Shown:
    """One text of the action as the box shows it (made off the GUI thread when large):
    its name, the whole text, its size note, the bounded, escaped head in display lines
    of at most LINE_CHARS, and where the lens's facts sit in that head."""

    def __init__(self, found: Found, facts: Sequence[Fact] = ()) -> None:
        self.name, self.full = found.name, found.text
        self.note = size_note(found.text)
        self.head, self.left = preview(found.text, BOX_CHARS, LINE_CHARS)
        self.marks = marks_of(found, facts)


def shown_texts(action: Any, facts: Sequence[Fact] = ()) -> list[Shown]:
    return [Shown(found, facts) for found in found_texts(action)]


class FullText(QTextEdit):
    """Read-only, monospaced, wrapped anywhere; as tall as its text up to MAX_LINES, then it
    scrolls. Holds plain text (never markup; control and bidi characters shown visibly): a
    bounded head of the text, its long lines broken into display lines (``preview``)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setAccessibleName(name)
        self.setTabChangesFocus(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.marks: list[Mark] = []
        self.viewport().installEventFilter(self)
        self._fit()

    def set_marks(self, marks: list[Mark]) -> None:
        """Highlight the spans the lens's facts come from (the theme's highlight colour);
        hovering one shows its facts' sentences."""
        self.marks = marks
        colour = highlight_color(self.palette())
        selections = []
        for mark in marks:
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.document())
            cursor.setPosition(mark.start)
            cursor.setPosition(mark.end, QTextCursor.MoveMode.KeepAnchor)
            look = QTextCharFormat()
            look.setBackground(colour)
            selection.cursor, selection.format = cursor, look
            selections.append(selection)
        self.setExtraSelections(selections)

    def tip_at(self, position: int) -> str:
        """The sentences of the facts whose spans hold the character at ``position``."""
        return "\n".join(dict.fromkeys(m.tip for m in self.marks if m.start <= position < m.end))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.viewport() and event.type() == QEvent.Type.ToolTip and self.marks:
            assert isinstance(event, QHelpEvent)
            tip = self.tip_at(self.cursorForPosition(event.pos()).position())
            if tip:
                QToolTip.showText(event.globalPos(), plain_tip(tip), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)

    def set_text(self, text: str) -> None:
        """Agent text: its bounded, escaped head in short display lines (``preview``)."""
        self.set_shown(preview(text, BOX_CHARS, LINE_CHARS)[0])

    def set_shown(self, head: str) -> None:
        """Text already made ready to show (escaped, bounded, in short lines)."""
        self.setPlainText(head)
        self._fit()

    def text(self) -> str:
        return self.toPlainText()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    @Slot()
    def _fit(self, *_args: Any) -> None:
        line = self.fontMetrics().lineSpacing()
        cap = MAX_LINES * line + 2 * self.document().documentMargin()
        doc = self.document().size().height() if self.document().characterCount() < 50_000 else cap
        frame = 2 * self.frameWidth()
        self.setFixedHeight(
            int(min(max(doc, line + 2 * self.document().documentMargin()), cap)) + frame + 1
        )


class ActionField(QWidget):
    """One labelled text of the action with its size note and a Copy button."""

    def __init__(self, shown: Shown, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        name, text = shown.name, shown.full
        self.marks = shown.marks
        self.name, self.full = name, text
        self.label = plain_label(name, self, name="Mono", selectable=False)
        self.note = plain_label(shown.note, self, name="Muted", selectable=False)
        self.note.setWordWrap(False)
        self.note.setToolTip(shown.note)
        # the note gives way (cut at the pane's edge) before Show all and Copy do
        self.note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setWordWrap(False)
        self.copy = QPushButton(tr("Copy"), self)
        self.copy.setAccessibleName(tr("Copy {name}").format(name=name))
        self.copy.clicked.connect(self._copy)
        self.show_all = QPushButton(tr("Show all"), self)
        self.show_all.setAccessibleName(tr("Show all of {name}").format(name=name))
        self.show_all.setVisible(len(text) > BOX_CHARS)
        if len(text) > BOX_CHARS:
            self.show_all.setText(more_text(text))
        self.show_all.clicked.connect(self._show_all)
        self.box = FullText(f"Action {name}", self)
        # a multi-MB text laid out in a QTextDocument froze the desk for minutes and held
        # gigabytes, one unbroken 200,000-character line for seconds: the box holds a
        # bounded head in short display lines, the viewer pages through the whole text
        self.box.set_shown(shown.head)
        self.box.set_marks(shown.marks)
        head = QHBoxLayout()
        head.addWidget(self.label)
        head.addWidget(self.note, 1)
        head.addWidget(self.show_all)
        head.addWidget(self.copy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.box)

    @Slot()
    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.full)

    @Slot()
    def _show_all(self) -> None:
        TextViewer(self, self.name, self.full).open()


class ActionText(QWidget):
    """Every text the action acts on, each shown whole (see ``action_texts``)."""

    def __init__(self, title: str = "What it will do", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields: list[ActionField] = []
        self._ticket: Ticket | None = None
        self.title = section(title, self)
        self.empty = plain_label(
            tr("The action carries no text; see its arguments below."),
            self,
            name="Muted",
            selectable=False,
        )
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.addWidget(self.title)
        self.preparing = plain_label(
            tr("Preparing the action's text…"), self, name="Muted", selectable=False
        )
        self.preparing.hide()
        self.layout_.addWidget(self.empty)
        self.layout_.addWidget(self.preparing)

    def set_action(self, action: Any, facts: Sequence[Fact] = ()) -> None:
        """Show ``action``'s texts, the spans ``facts`` (what the lens read of it) come from
        highlighted; a large action is made ready on the presentation pool (``is_preparing()``
        until it arrives)."""
        if self._ticket is not None:
            self._ticket.cancel()
        for field in self.fields:
            self.layout_.removeWidget(field)
            field.deleteLater()
        self.fields = []
        self.empty.hide()
        self.preparing.show()
        self._ticket = prepare(
            lambda: shown_texts(action, facts), self._fill, self, size=text_size(action)
        )

    def is_preparing(self) -> bool:
        return not self.preparing.isHidden()

    def _fill(self, shown: list[Shown]) -> None:
        self._ticket = None
        self.preparing.hide()
        self.fields = [ActionField(s, self) for s in shown]
        for field in self.fields:
            self.layout_.addWidget(field)
            field.show()
        self.empty.setVisible(not self.fields)

    def field(self, name: str) -> ActionField | None:
        return next((f for f in self.fields if f.name == name), None)
