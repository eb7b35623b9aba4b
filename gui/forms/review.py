"""Review views: a diff to approve, a merge conflict to settle, a memory change to accept.

Each shows the agent's material (plain text, monospace, bounded) and a verdict. The
material widgets are also used above the generic form when the agent's schema does not
fit the dedicated view.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QFontDatabase, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Interaction

from ..widgets.fmt import visible
from ..widgets.labels import plain_label, section
from . import diff
from .fields import button_text
from .schema import pretty_name
from .validate import Problem
from .views import AnswerView, enum_of, props, request_dict, text_of

LINE_MAX = 2_000  # characters of one diff line shown in a cell
UNIFIED_MAX = 200_000
MEMORY_MAX = 20_000  # characters of a memory text shown in its pane
COLORS = {"delete": QColor(220, 60, 60, 60), "insert": QColor(46, 160, 67, 60),
          "replace": QColor(210, 160, 30, 60), "hunk": QColor(80, 120, 220, 45)}
VERDICT_WORDS = {"approve": "Approve", "request_changes": "Request changes", "reject": "Reject",
                 "accept": "Accept the change", "edit": "Edit, then accept",
                 "ours": "Keep ours", "theirs": "Take theirs",
                 "merged": "Edit a merged result"}


def mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def read_only_text(text: str, name: str, parent: QWidget, *, height: int = 180,
                   limit: int = UNIFIED_MAX) -> QPlainTextEdit:
    """Agent material, read-only, monospace; cut at ``limit`` characters (said so)."""
    box = QPlainTextEdit(parent)
    box.setReadOnly(True)
    box.setFont(mono())
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    box.setAccessibleName(name)
    shown = text if len(text) <= limit else \
        text[:limit] + f"\n… cut: {len(text) - limit:,} more characters (the request has all)"
    box.setPlainText(visible(shown))  # controls and bidi overrides shown escaped
    box.setMinimumHeight(height)
    return box


class UnifiedHighlighter(QSyntaxHighlighter):
    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt name)
        tag = "hunk" if text.startswith("@@") else "insert" if text.startswith("+") \
            else "delete" if text.startswith("-") else ""
        if tag and not text.startswith(("+++", "---")):
            fmt = QTextCharFormat()
            fmt.setBackground(COLORS[tag])
            self.setFormat(0, len(text), fmt)


class DiffView(QWidget):
    """A diff shown side by side and unified (tabs)."""

    def __init__(self, parent: QWidget | None = None, *, path: str = "", before: str | None = None,
                 after: str | None = None, unified_text: str | None = None,
                 titles: tuple[str, str] = ("Before", "After")) -> None:
        super().__init__(parent)
        if before is not None and after is not None:
            self.rows, cut = diff.side_by_side(before, after)
            text = diff.unified(before, after, path)
        else:
            text = unified_text or ""
            self.rows, cut = diff.from_unified(text)
        removed, added = diff.stats(self.rows)
        head = f"{path or 'Change'}  ·  −{removed} +{added}"
        if cut:
            head += f"  ·  first {diff.MAX_ROWS:,} lines shown"
        self.head = plain_label(head, self, name="Mono")
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Diff")
        self.table = self._table(titles)
        self.tabs.addTab(self.table, "Side by side")
        self.unified = read_only_text(text or "(no changes)", "Unified diff", self, height=220)
        self.highlighter = UnifiedHighlighter(self.unified.document())
        self.tabs.addTab(self.unified, "Unified")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.head)
        layout.addWidget(self.tabs)

    def _table(self, titles: tuple[str, str]) -> QTableWidget:
        table = QTableWidget(len(self.rows), 4, self)
        table.setAccessibleName("Side-by-side diff")
        table.setHorizontalHeaderLabels(["", titles[0], "", titles[1]])
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.verticalHeader().hide()
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.setFont(mono())
        table.verticalHeader().setDefaultSectionSize(20)
        header = table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        for col in (0, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        for n, row in enumerate(self.rows):
            cells = ("" if row.left_no is None else str(row.left_no), row.left[:LINE_MAX],
                     "" if row.right_no is None else str(row.right_no), row.right[:LINE_MAX])
            for col, text in enumerate(cells):
                item = QTableWidgetItem(visible(text))
                color = COLORS.get(row.tag)
                side_empty = (col < 2 and row.left_no is None and row.tag != "hunk") or \
                    (col >= 2 and row.right_no is None and row.tag != "hunk")
                if color is not None and not side_empty:
                    item.setBackground(color)
                table.setItem(n, col, item)
        table.setMinimumHeight(220)
        return table


def diff_material(interaction: Interaction, parent: QWidget | None = None) -> QWidget:
    r = request_dict(interaction)
    path = str(r.get("path") or r.get("file") or "")[:300]
    before, after = r.get("before", r.get("old")), r.get("after", r.get("new"))
    if isinstance(before, str) and isinstance(after, str):
        return DiffView(parent, path=path, before=before, after=after)
    text = r.get("diff", r.get("patch"))
    if isinstance(text, str):
        return DiffView(parent, path=path, unified_text=text)
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.addWidget(plain_label("The agent sent no diff; see the request below.", box,
                                 name="Muted"))
    return box


class VerdictGroup(QWidget):
    """Radio buttons for the verdicts the schema allows."""

    def __init__(self, values: list[Any], parent: QWidget | None = None,
                 words: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self.values = values
        self.group = QButtonGroup(self)
        labels = {**VERDICT_WORDS, **(words or {})}
        texts = [labels.get(str(v), pretty_name(str(v))) for v in values]
        row = QHBoxLayout(self) if sum(len(t) for t in texts) <= 48 else QVBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for n, text in enumerate(texts):
            radio = QRadioButton(button_text(text), self)
            radio.setAccessibleName(text)
            self.group.addButton(radio, n)
            row.addWidget(radio)
        row.addStretch(1)

    def value(self) -> Any:
        n = self.group.checkedId()
        return self.values[n] if 0 <= n < len(self.values) else None

    def choose(self, value: Any) -> None:
        if value in self.values:
            self.group.button(self.values.index(value)).setChecked(True)

    def button_for(self, value: Any) -> QRadioButton:
        return self.group.button(self.values.index(value))  # type: ignore[return-value]


def editor(name: str, parent: QWidget, *, code: bool = False) -> QPlainTextEdit:
    box = QPlainTextEdit(parent)
    box.setAccessibleName(name)
    box.setTabChangesFocus(not code)
    if code:
        box.setFont(mono())
        box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return box


class DiffReviewView(AnswerView):
    """Approve a proposed change, or request changes with a comment."""

    KEYS = frozenset({"verdict", "comment"})
    MAIN = "verdict"

    def __init__(self, interaction: Interaction, parent: QWidget | None = None) -> None:
        super().__init__(interaction, parent)
        self.material = diff_material(interaction, self)
        self.verdicts = VerdictGroup(enum_of(self.schema, "verdict",
                                             ["approve", "request_changes", "reject"]), self)
        self.verdicts.group.idToggled.connect(self.choice_toggled)
        self.comment = editor("Review comment", self)
        self.comment.setPlaceholderText("What should change? (needed to request changes)")
        self.comment.setMaximumHeight(110)
        self.comment.textChanged.connect(self.changed)
        self.comment.setVisible("comment" in props(self.schema))
        self.layout_.addWidget(self.material)
        self.layout_.addWidget(section("Your review", self))
        self.layout_.addWidget(self.verdicts)
        self.layout_.addWidget(self.comment)
        self.layout_.addWidget(self.problem)
        self.check()

    def value(self) -> Any:
        out: dict[str, Any] = {}
        if self.verdicts.value() is not None:
            out["verdict"] = self.verdicts.value()
        if "comment" in props(self.schema) and self.comment.toPlainText():
            out["comment"] = self.comment.toPlainText()
        return out

    def view_problems(self) -> list[Problem]:
        verdict = self.verdicts.value()
        if verdict is None:
            return [Problem(("verdict",), "choose a verdict")]
        if verdict != "approve" and "comment" in props(self.schema) and \
                not self.comment.toPlainText().strip():
            return [Problem(("comment",), "say what should change")]
        return []

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            self.verdicts.choose(draft.get("verdict"))
            self.comment.setPlainText(str(draft.get("comment", "")))

    def focus_primary(self) -> None:
        self.verdicts.setFocus()


def merge_material(interaction: Interaction, parent: QWidget | None = None) -> QWidget:
    """Ours against theirs as a diff, and each side (and the base) whole, in tabs."""
    r = request_dict(interaction)
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    if r.get("path"):
        layout.addWidget(plain_label(str(r["path"])[:300], box, name="Mono"))
    names = {key: (f"{title} ({str(r[key + '_ref'])[:60]})" if r.get(f"{key}_ref") else title)
             for key, title in (("base", "Base"), ("ours", "Ours"), ("theirs", "Theirs"))}
    tabs = QTabWidget(box)
    tabs.setAccessibleName("Conflict")
    ours, theirs = text_of(r.get("ours", "")), text_of(r.get("theirs", ""))
    compare = DiffView(tabs, before=ours, after=theirs, titles=(names["ours"], names["theirs"]),
                       path=str(r.get("path", ""))[:300])
    compare.tabs.removeTab(1)  # the unified text adds nothing here
    tabs.addTab(compare, "Ours vs theirs")
    for key in ("base", "ours", "theirs"):
        tabs.addTab(read_only_text(text_of(r.get(key, "")), names[key], tabs), names[key])
    layout.addWidget(tabs)
    return box


class MergeConflictView(AnswerView):
    """Both sides and the base; keep ours, take theirs, or edit a merged result."""

    KEYS = frozenset({"resolution", "merged"})
    MAIN = "resolution"

    def __init__(self, interaction: Interaction, parent: QWidget | None = None) -> None:
        super().__init__(interaction, parent)
        self.request = request_dict(interaction)
        words = {"ours": f"Keep ours ({str(self.request.get('ours_ref', 'ours'))[:60]})",
                 "theirs": f"Take theirs ({str(self.request.get('theirs_ref', 'theirs'))[:60]})"}
        self.material = merge_material(interaction, self)
        self.choices = VerdictGroup(enum_of(self.schema, "resolution",
                                            ["ours", "theirs", "merged"]), self, words)
        self.choices.group.idToggled.connect(self._on_toggled)
        self.merged = editor("Merged result", self, code=True)
        self.merged.setMinimumHeight(160)
        self.merged.textChanged.connect(self.changed)
        starts = QHBoxLayout()
        starts.addWidget(plain_label("Start from:", self, selectable=False))
        for key, text in (("ours", "Ours"), ("theirs", "Theirs"), ("both", "Both, marked")):
            button = QPushButton(text, self)
            button.setAccessibleName(f"Start the merged result from {text.lower()}")
            button.setProperty("start", key)
            button.clicked.connect(self._on_start)
            starts.addWidget(button)
        starts.addStretch(1)
        self.merge_box = QWidget(self)
        inner = QVBoxLayout(self.merge_box)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(starts)
        inner.addWidget(self.merged)
        self.merge_box.setVisible(False)
        self.layout_.addWidget(self.material)
        self.layout_.addWidget(section("Resolution", self))
        self.layout_.addWidget(self.choices)
        self.layout_.addWidget(self.merge_box)
        self.layout_.addWidget(self.problem)
        self.check()

    def start_text(self, key: str) -> str:
        ours, theirs = text_of(self.request.get("ours", "")), text_of(self.request.get("theirs",
                                                                                         ""))
        if key == "ours":
            return ours
        if key == "theirs":
            return theirs
        end = "" if ours.endswith("\n") or not ours else "\n"
        end2 = "" if theirs.endswith("\n") or not theirs else "\n"
        return f"<<<<<<< ours\n{ours}{end}=======\n{theirs}{end2}>>>>>>> theirs\n"

    @Slot()
    def _on_start(self) -> None:
        key = self.sender().property("start") if self.sender() is not None else "ours"
        self.merged.setPlainText(self.start_text(str(key)))

    @Slot(int, bool)
    def _on_toggled(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        editing = self.choices.value() == "merged"
        self.merge_box.setVisible(editing)
        if editing and not self.merged.toPlainText():
            self.merged.setPlainText(self.start_text("ours"))
        self.changed()

    def value(self) -> Any:
        out: dict[str, Any] = {}
        if self.choices.value() is not None:
            out["resolution"] = self.choices.value()
        if self.choices.value() == "merged":
            out["merged"] = self.merged.toPlainText()
        return out

    def view_problems(self) -> list[Problem]:
        if self.choices.value() is None:
            return [Problem(("resolution",), "choose how to resolve the conflict")]
        if self.choices.value() == "merged":
            text = self.merged.toPlainText()
            if not text.strip():
                return [Problem(("merged",), "the merged result is empty")]
            if "<<<<<<<" in text or ">>>>>>>" in text:
                return [Problem(("merged",), "remove the conflict markers first")]
        return []

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            if "merged" in draft:
                self.merged.setPlainText(str(draft["merged"]))
            self.choices.choose(draft.get("resolution"))

    def focus_primary(self) -> None:
        self.choices.setFocus()


def memory_material(interaction: Interaction, parent: QWidget | None = None) -> QWidget:
    r = request_dict(interaction)
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    facts = [f"{k}: {str(r[k])[:200]}" for k in ("title", "scope", "entry_id") if r.get(k)]
    if facts:
        layout.addWidget(plain_label("  ·  ".join(facts), box, name="Muted"))
    before, after = text_of(r.get("before", "")), text_of(r.get("after", r.get("content", "")))
    split = QSplitter(Qt.Orientation.Horizontal, box)
    for title, text in (("Remembered now", before or "(nothing yet)"), ("Proposed", after)):
        column = QWidget(split)
        inner = QVBoxLayout(column)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(section(title, column))
        shown = read_only_text(text, title, column, height=90, limit=MEMORY_MAX)
        shown.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        inner.addWidget(shown)
        split.addWidget(column)
    layout.addWidget(split)
    if before and after and before.count("\n") > 2:
        layout.addWidget(DiffView(box, path=str(r.get("title", ""))[:200], before=before,
                                  after=after))
    return box


class MemoryReviewView(AnswerView):
    """A memory change with before/after: accept, reject, or edit then accept."""

    KEYS = frozenset({"verdict", "content"})
    MAIN = "verdict"

    def __init__(self, interaction: Interaction, parent: QWidget | None = None) -> None:
        super().__init__(interaction, parent)
        self.request = request_dict(interaction)
        self.material = memory_material(interaction, self)
        self.verdicts = VerdictGroup(enum_of(self.schema, "verdict",
                                             ["accept", "reject", "edit"]), self)
        self.verdicts.group.idToggled.connect(self._on_toggled)
        self.content = editor("Memory text to keep", self)
        self.content.setMaximumHeight(120)
        self.content.textChanged.connect(self.changed)
        self.content.setVisible(False)
        self.layout_.addWidget(self.material)
        self.layout_.addWidget(section("Your decision", self))
        self.layout_.addWidget(self.verdicts)
        self.layout_.addWidget(self.content)
        self.layout_.addWidget(self.problem)
        self.check()

    @Slot(int, bool)
    def _on_toggled(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        editing = self.verdicts.value() == "edit"
        self.content.setVisible(editing and "content" in props(self.schema))
        if editing and not self.content.toPlainText():
            self.content.setPlainText(text_of(self.request.get("after", "")))
        self.changed()

    def value(self) -> Any:
        out: dict[str, Any] = {}
        if self.verdicts.value() is not None:
            out["verdict"] = self.verdicts.value()
        if self.verdicts.value() == "edit" and "content" in props(self.schema):
            out["content"] = self.content.toPlainText()
        return out

    def view_problems(self) -> list[Problem]:
        if self.verdicts.value() is None:
            return [Problem(("verdict",), "accept, reject or edit the change")]
        if self.verdicts.value() == "edit" and not self.content.toPlainText().strip():
            return [Problem(("content",), "the edited memory text is empty")]
        return []

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            if "content" in draft:
                self.content.setPlainText(str(draft["content"]))
            self.verdicts.choose(draft.get("verdict"))

    def focus_primary(self) -> None:
        self.verdicts.setFocus()
