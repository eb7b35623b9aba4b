"""Review views: a diff to approve, a merge conflict to settle, a memory change to accept.

Each shows the agent's material (plain text, monospace, bounded) and a verdict. The
material widgets are also used above the generic form when the agent's schema does not
fit the dedicated view. The diff itself (side by side or unified) is :mod:`.diff_view`'s.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Question

from ..infra.i18n import tr
from ..widgets.labels import plain_label, section
from .diff_view import DiffModel, DiffView, diff_material, marked_texts, mono, read_only_text
from .fields import button_text
from .memory_change import MemoryChange, MemoryChangeMaterial, proposed_text
from .schema import pretty_name
from .validate import Problem
from .views import AnswerView, enum_of, props, request_dict, text_of

WRITES = ("accept", "edit")  # the verdicts after which the agent writes the entry
VERDICT_WORDS = {
    "approve": "Approve",
    "request_changes": "Request changes",
    "reject": "Reject",
    "accept": "Accept the change",
    "edit": "Edit, then accept",
    "ours": "Keep ours",
    "theirs": "Take theirs",
    "merged": "Edit a merged result",
}


class VerdictGroup(QWidget):
    """Radio buttons for the verdicts the schema allows."""

    def __init__(
        self, values: list[Any], parent: QWidget | None = None, words: dict[str, str] | None = None
    ) -> None:
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

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.material = diff_material(question, self)
        self.verdicts = VerdictGroup(
            enum_of(self.schema, "verdict", ["approve", "request_changes", "reject"]), self
        )
        self.verdicts.group.idToggled.connect(self.choice_toggled)
        self.comment = editor("Review comment", self)
        self.comment.setPlaceholderText(tr("What should change? (needed to request changes)"))
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
        if (
            verdict != "approve"
            and "comment" in props(self.schema)
            and not self.comment.toPlainText().strip()
        ):
            return [Problem(("comment",), "say what should change")]
        return []

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            self.verdicts.choose(draft.get("verdict"))
            self.comment.setPlainText(str(draft.get("comment", "")))

    def focus_primary(self) -> None:
        self.verdicts.setFocus()


def merge_material(question: Question, parent: QWidget | None = None) -> QWidget:
    """Ours against theirs as a diff, and each side (and the base) whole, in tabs."""
    r = request_dict(question)
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    if r.get("path"):
        layout.addWidget(plain_label(str(r["path"])[:300], box, name="Mono"))
    names = {
        key: (f"{title} ({str(r[key + '_ref'])[:60]})" if r.get(f"{key}_ref") else title)
        for key, title in (("base", "Base"), ("ours", "Ours"), ("theirs", "Theirs"))
    }
    tabs = QTabWidget(box)
    tabs.setAccessibleName(tr("Conflict"))
    ours, theirs = text_of(r.get("ours", "")), text_of(r.get("theirs", ""))
    compare = DiffView(
        tabs,
        before=ours,
        after=theirs,
        titles=(names["ours"], names["theirs"]),
        path=str(r.get("path", ""))[:300],
    )
    compare.tabs.removeTab(1)  # the unified text adds nothing here
    tabs.addTab(compare, tr("Ours vs theirs"))
    for key in ("base", "ours", "theirs"):
        tabs.addTab(read_only_text(text_of(r.get(key, "")), names[key], tabs), names[key])
    layout.addWidget(tabs)
    return box


class MergeConflictView(AnswerView):
    """Both sides and the base; keep ours, take theirs, or edit a merged result."""

    KEYS = frozenset({"resolution", "merged"})
    MAIN = "resolution"

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.request = request_dict(question)
        words = {
            "ours": f"Keep ours ({str(self.request.get('ours_ref', 'ours'))[:60]})",
            "theirs": f"Take theirs ({str(self.request.get('theirs_ref', 'theirs'))[:60]})",
        }
        self.material = merge_material(question, self)
        self.choices = VerdictGroup(
            enum_of(self.schema, "resolution", ["ours", "theirs", "merged"]), self, words
        )
        self.choices.group.idToggled.connect(self._on_toggled)
        self.merged = editor("Merged result", self, code=True)
        self.merged.setMinimumHeight(160)
        self.merged.textChanged.connect(self.changed)
        starts = QHBoxLayout()
        starts.addWidget(plain_label(tr("Start from:"), self, selectable=False))
        for key, text in (("ours", "Ours"), ("theirs", "Theirs"), ("both", "Both, marked")):
            button = QPushButton(text, self)
            button.setAccessibleName(
                tr("Start the merged result from {text}").format(text=text.lower())
            )
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
        ours, theirs = (
            text_of(self.request.get("ours", "")),
            text_of(self.request.get("theirs", "")),
        )
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


class MemoryReviewView(AnswerView):
    """A memory change with before/after: accept, reject, or edit then accept."""

    KEYS = frozenset({"verdict", "content"})
    MAIN = "verdict"

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.request = request_dict(question)
        self.material = MemoryChangeMaterial(question, self)
        self.material.shown.connect(self._on_change_shown)
        self.barred = ""  # why accepting cannot be offered (the core's word), "" if it can
        self.barred_note = plain_label(parent=self, name="Muted")
        self.barred_note.setAccessibleName(tr("Why the change cannot be accepted"))
        self.barred_note.hide()
        self.verdicts = VerdictGroup(
            enum_of(self.schema, "verdict", ["accept", "reject", "edit"]), self
        )
        self.verdicts.group.idToggled.connect(self._on_toggled)
        self.content = editor("Memory text to keep", self)
        self.content.setMaximumHeight(120)
        self.content.textChanged.connect(self.changed)
        self.content.setVisible(False)
        self.layout_.addWidget(self.material)
        self.layout_.addWidget(section("Your decision", self))
        self.layout_.addWidget(self.verdicts)
        self.layout_.addWidget(self.barred_note)
        self.layout_.addWidget(self.content)
        self.layout_.addWidget(self.problem)
        self.check()

    @Slot(object)
    def _on_change_shown(self, change: MemoryChange) -> None:
        """Offer only what the store accepts: when the agent may not write the entry (the
        core's ``agent_barred``: it is confirmed by a person), accepting or editing the change
        would end in the agent's refusal, so those verdicts are off and the reason shown."""
        self.barred = change.barred
        for value in WRITES:
            if value in self.verdicts.values:
                button = self.verdicts.button_for(value)
                button.setEnabled(not self.barred)
                if self.barred and button.isChecked():
                    self.verdicts.group.setExclusive(False)
                    button.setChecked(False)
                    self.verdicts.group.setExclusive(True)
        self.barred_note.setText(
            tr(
                "Accepting cannot be offered: {why}. Reject it; the agent can record a "
                "conflict with its version, which a person resolves on the Memory page."
            ).format(why=self.barred)
            if self.barred
            else ""
        )
        self.barred_note.setVisible(bool(self.barred))
        self.check()

    @Slot(int, bool)
    def _on_toggled(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        editing = self.verdicts.value() == "edit"
        self.content.setVisible(editing and "content" in props(self.schema))
        if editing and not self.content.toPlainText():
            self.content.setPlainText(proposed_text(self.request))
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
        if self.barred and self.verdicts.value() in WRITES:
            return [Problem(("verdict",), self.barred)]
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


__all__ = [
    "DiffModel",
    "DiffReviewView",
    "DiffView",
    "MemoryReviewView",
    "MergeConflictView",
    "diff_material",
    "marked_texts",
    "merge_material",
]
