"""The action being approved, shown whole: its command / SQL / URL / path / message body in
full, monospaced and wrapped (never elided, never behind a tooltip). A long value sits in a
bounded, scrollable box with a size note and a copy button. The structured arguments stay
in the JSON tree beside it; this shows the text an approval would act on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication, QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..infra.tasks import Ticket
from .bounded_text import LINE_CHARS, TextViewer, preview
from .labels import plain_label, section
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


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, str(key)))
    elif isinstance(value, list) and not all(isinstance(v, str) for v in value):
        for n, child in enumerate(value):
            yield from _leaves(child, (*path, f"[{n}]"))
    else:
        yield path, value


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def action_texts(action: Any) -> list[tuple[str, str]]:
    """(label, whole text) of every text in ``action`` that says what it does: the known
    action keys first (command, sql, url, path, body …), then any other long text."""
    if not isinstance(action, dict):
        text = _text(action)
        return [("action", text)] if text else []
    known: list[tuple[int, str, str]] = []
    other: list[tuple[str, str]] = []
    for path, value in _leaves(action):
        text = _text(value)
        if text is None or not path or path == ("tool",) or path == ("name",):
            continue
        key = path[-1].lower()
        name = ".".join(p for p in path if p != "args") or path[-1]
        if key in ACTION_KEYS:
            known.append((ACTION_KEYS.index(key), name, text))
        elif len(text) > LONG or "\n" in text:
            other.append((name, text))
    ordered = [(name, text) for _rank, name, text in sorted(known, key=lambda k: k[0])]
    return (ordered + other)[:MAX_FIELDS]


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


class Shown:
    """One text of the action as the box shows it (made off the GUI thread when large):
    its name, the whole text, its size note, and the bounded, escaped head in display lines
    of at most LINE_CHARS."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.full = name, text
        self.note = size_note(text)
        self.head, self.left = preview(text, BOX_CHARS, LINE_CHARS)


def shown_texts(action: Any) -> list[Shown]:
    return [Shown(name, text) for name, text in action_texts(action)]


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
        self._fit()

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

    def set_action(self, action: Any) -> None:
        """Show ``action``'s texts; a large action is made ready on the presentation pool
        (``is_preparing()`` until it arrives)."""
        if self._ticket is not None:
            self._ticket.cancel()
        for field in self.fields:
            self.layout_.removeWidget(field)
            field.deleteLater()
        self.fields = []
        self.empty.hide()
        self.preparing.show()
        self._ticket = prepare(
            lambda: shown_texts(action), self._fill, self, size=text_size(action)
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
