"""A memory change review shown the way a memory conflict is: the entry's current content
against the proposed text, word by word (the memory conflict's diff and views), with the
proposed text's source, trust and sensitivity beside the entry's.

The entry and the word diff are loaded on the task runner (``load_memory_change``); until
they arrive the views say so. Without an entry id, the request's own "before" text is the
base (and the view says the entry could not be compared).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from proctor.core import errors
from proctor.core.memory.service import Memory, agent_barred
from proctor.core.models import MemoryEntry, Question

from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.labels import plain_label, section
from ..widgets.text_diff import DiffView, Piece, whitespace_only, word_diff
from .views import request_dict, text_of

PROPOSED_KEYS = ("after", "content", "proposed")


def proposed_text(request: dict) -> str:
    return next((text_of(request[k]) for k in PROPOSED_KEYS if request.get(k) is not None), "")


@dataclass(frozen=True)
class MemoryChange:
    entry: MemoryEntry | None  # the entry now (None: no entry id, or it does not exist)
    base: str  # what the proposal is compared against
    proposed: str
    pieces: list[Piece]
    note: str = ""  # why the base is not the entry's current content, if it is not
    barred: str = ""  # why the agent could not write the change if accepted ("" : it can)


def load_memory_change(memory: Memory, question: Question) -> MemoryChange:
    """Runs on the task runner: the entry now and the word diff of the proposal against it."""
    r = request_dict(question)
    proposed = proposed_text(r)
    entry, note = None, ""
    entry_id = r.get("entry_id")
    if isinstance(entry_id, str) and entry_id:
        try:
            entry = memory.get(entry_id)
        except errors.NotFound:
            note = f"The entry {fmt.bounded(entry_id, 60)} does not exist (any more)."
    else:
        note = "The agent named no entry: compared with the text it says is remembered now."
    base = entry.content if entry is not None else text_of(r.get("before", ""))
    # the store's own rule: accepting a change the agent may not write would offer a choice
    # that ends in the agent's refusal (NotAllowed), so the review asks the core first
    barred = agent_barred(entry, "replace") if entry is not None else ""
    return MemoryChange(entry, base, proposed, word_diff(base, proposed), note, barred)


def _value(request: dict, key: str) -> str | None:
    value = request.get(key)
    return None if value is None else fmt.bounded(value, 120)


def field_rows(question: Question, change: MemoryChange) -> list[tuple[str, str, str]]:
    """(field, remembered now, proposed) — the facts a person weighs before accepting."""
    r, e = request_dict(question), change.entry
    run = f" · run {question.run_id}" if question.run_id else ""
    trust = _value(r, "trust")
    sensitivity = _value(r, "sensitivity")
    return [
        (
            "Source",
            f"run {e.source_run_id}" if e and e.source_run_id else "—",
            f"{fmt.bounded(_value(r, 'source') or question.agent, 80)}{run}",
        ),
        (
            "Trust",
            e.trust.value.replace("_", " ") if e else "—",
            trust.replace("_", " ") if trust else "agent proposal (not confirmed by a person)",
        ),
        (
            "Sensitivity",
            e.sensitivity if e else "—",
            sensitivity if sensitivity else (f"{e.sensitivity} (unchanged)" if e else "not given"),
        ),
        ("Version", str(e.version) if e else "—", "next version if accepted" if e else "—"),
        ("Length", f"{len(change.base):,} characters", f"{len(change.proposed):,} characters"),
    ]


class MemoryChangeMaterial(QWidget):
    """The entry now vs the proposal (word diff, both sides), and the field table.

    Signals:
        shown(object): the MemoryChange now on screen (the review limits its verdicts).
    """

    shown = Signal(object)

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.change: MemoryChange | None = None
        r = request_dict(question)
        facts = [
            f"{k}: {fmt.bounded(r[k], 200)}" for k in ("title", "scope", "entry_id") if r.get(k)
        ]
        self.facts = plain_label("  ·  ".join(facts), self, name="Muted")
        self.summary = plain_label(tr("Loading the entry's current content…"), self, name="Muted")
        self.current_title = section("Remembered now", self)
        self.proposed_title = section(f"Proposed — from {fmt.bounded(question.agent, 60)}", self)
        for title in (self.current_title, self.proposed_title):
            title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.current = DiffView("Remembered now (removed words highlighted)", self, side="old")
        self.proposed = DiffView("Proposed (new words highlighted)", self, side="new")
        for view in (self.current, self.proposed):
            view.setMinimumHeight(120)
            view.show_text("Loading…")
        self.fields = QTableWidget(0, 3, self)
        self.fields.setAccessibleName(tr("The proposal's source, trust and sensitivity"))
        self.fields.setHorizontalHeaderLabels([tr("Field"), tr("Remembered now"), tr("Proposed")])
        self.fields.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.fields.verticalHeader().hide()
        self.fields.setShowGrid(False)
        self.fields.setMaximumHeight(6 * 24 + 30)
        header = self.fields.horizontalHeader()
        header.resizeSection(0, 100)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        sides = QHBoxLayout()
        for title, view in (
            (self.current_title, self.current),
            (self.proposed_title, self.proposed),
        ):
            column = QVBoxLayout()
            column.addWidget(title)
            column.addWidget(view, 1)
            sides.addLayout(column, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if facts:
            layout.addWidget(self.facts)
        layout.addWidget(self.summary)
        layout.addLayout(sides, 1)
        layout.addWidget(section("The proposal", self))
        layout.addWidget(self.fields)

    def show_change(self, change: MemoryChange) -> None:
        self.change = change
        e = change.entry
        self.current_title.setText(
            tr("Remembered now (version {version})").format(version=e.version)
            if e
            else tr("Remembered now (as the agent says)")
        )
        self.current.show_pieces(change.pieces)
        self.proposed.show_pieces(change.pieces)
        text = change.note
        if whitespace_only(change.pieces):
            text = (text + "\n" if text else "") + "Only white space differs."
        elif not any(p.op != "equal" for p in change.pieces):
            text = (
                text + "\n" if text else ""
            ) + "The proposal is the same as what is remembered now."
        self.summary.setText(text)
        self.summary.setVisible(bool(text))
        rows = field_rows(self.question, change)
        self.fields.setRowCount(len(rows))
        for n, row in enumerate(rows):
            for col, value in enumerate(row):
                self.fields.setItem(n, col, QTableWidgetItem(fmt.visible(value)))
        self.fields.resizeRowsToContents()
        self.shown.emit(change)

    def field_value(self, name: str) -> tuple[str, str]:
        def text(n: int, col: int) -> str:
            item = self.fields.item(n, col)  # show_change sets every cell
            assert item is not None
            return item.text()

        for n in range(self.fields.rowCount()):
            if text(n, 0) == name:
                return text(n, 1), text(n, 2)
        raise KeyError(name)


def memory_material(question: Question, parent: QWidget | None = None) -> QWidget:
    return MemoryChangeMaterial(question, parent)
