"""What a run did besides its events: attempts, tool calls, approvals and questions with
their decisions, effects with their receipts, memory changes, child runs.

``load_facts`` reads all of it in one task; each tab is a small table whose selected
row is shown whole as a JSON tree (with "Copy JSON": any item can be copied).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.models import (
    Approval,
    Decision,
)
from proctor.core.runs.facts import RunFacts as CoreRunFacts

from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.event_summary import plain_tip
from ..widgets.json_tree import JsonTree
from ..widgets.list_model import Index, ListModel
from ..widgets.paged_model import Column
from ..widgets.run_status import status_icon, words
from ..widgets.tables import row_table

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
ITEM_ROLE = Qt.ItemDataRole.UserRole + 1


class RunFacts(CoreRunFacts):
    """A run's facts as its page shows them: core's snapshot, each list cut to its newest
    MAX_FACT_ROWS, with the totals of what was cut (its field name -> all)."""

    totals: dict[str, int] = {}  # noqa: RUF012 - a pydantic field default (copied per instance), not shared state


MAX_FACT_ROWS = 1000  # per list: a run's page holds at most this many of each kind
# the lists cut to their newest MAX_FACT_ROWS (effects come from core as its oldest 1,000)
CUT_LISTS = ("children", "attempts", "tool_calls", "approvals", "questions", "decisions", "memory")


def _newest(items: list[Any], name: str, totals: dict[str, int]) -> list[Any]:
    """The newest MAX_FACT_ROWS of ``items`` (oldest first), noting the total when cut."""
    if len(items) <= MAX_FACT_ROWS:
        return items
    totals[name] = len(items)
    return items[-MAX_FACT_ROWS:]


def load_facts(journal: Journal, run_id: str) -> RunFacts:
    """Everything about one run except its events (runs on the task runner), read by the
    core in one transaction (``runs.facts``: one snapshot). Each list is cut to its newest
    MAX_FACT_ROWS (an agent can make 20 000 tool calls in one run; the events pane and the
    visual timeline show every one)."""
    f = journal.runs.facts(run_id)  # its effects: the oldest MAX_FACT_ROWS, with receipts
    totals: dict[str, int] = {}
    shown = {name: getattr(f, name) for name in CoreRunFacts.model_fields}
    shown.update({name: _newest(getattr(f, name), name, totals) for name in CUT_LISTS})
    shown["signatures"] = {
        d.id: f.signatures[d.id] for d in shown["decisions"] if d.id in f.signatures
    }
    # no validation again: the rows are core's models, read and checked in this snapshot
    return RunFacts.model_construct(**shown, totals=totals)


def fact_rows(facts: RunFacts) -> list[list[Row]]:
    """Each tab's rows with their cells' texts and tooltips made (pure Python: on the
    worker that loaded the facts; a tool call's 3 MB request was escaped on the GUI thread
    at every paint of its cell)."""
    return [[shown_row(row, spec.columns) for row in spec.rows(facts)] for spec in TABS]


def shown_row(row: Row, columns: Sequence[Column]) -> Row:
    texts = tuple(
        fmt.bounded(row.note if c.text is ROW_NOTE else c.text(row.item), 200) for c in columns
    )
    tips = tuple(
        (plain_tip(row.note) if row.note else None)
        if c.text is ROW_NOTE
        else (plain_tip(c.tip(row.item)) if c.tip else None)
        for c in columns
    )
    return replace(row, texts=texts, tips=tips)


def tab_title(spec: TabSpec, facts: RunFacts, shown: int) -> str:
    """ "Tool calls (1,000 of 20,000)" when the list was cut, "Tool calls (12)" else."""
    name = tr(spec.name).replace("&", "&&")  # a tab title's & marks a mnemonic
    total = sum(facts.totals.get(f, 0) for f in spec.fields) if spec.fields else 0
    if total > shown:
        return tr("{name} ({shown} of {total}; the newest)").format(
            name=name, shown=f"{shown:,}", total=f"{total:,}"
        )
    return f"{name} ({shown})" if shown else name


@dataclass(frozen=True)
class Row:
    """One table row: the shown object and what "Copy JSON" / the tree show for it."""

    item: Any
    status: str | None
    whole: Any
    note: str = ""  # what a ROW_NOTE column shows (the decisions' signature states)
    texts: tuple[str, ...] = ()  # each cell's text, made off the GUI thread (shown_row)
    tips: tuple[str | None, ...] = ()  # each cell's tooltip, likewise


def ROW_NOTE(_item: Any) -> str:
    return ""


class RowsModel(ListModel):
    """A short, fully loaded list of rows described by Columns."""

    def __init__(self, columns: Sequence[Column], parent: QObject | None = None) -> None:
        super().__init__([c.title for c in columns], parent)
        self._columns = list(columns)

    def _on_time_mode(self) -> None:
        """The texts made ahead hold times in the old form: made again when next shown."""
        self._rows = [replace(r, texts=(), tips=()) for r in self._rows]
        super()._on_time_mode()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row, column = self._rows[index.row()], self._columns[index.column()]
        if not row.texts:  # a row not made by shown_row
            row = self._rows[index.row()] = shown_row(row, self._columns)
        if role == Qt.ItemDataRole.DisplayRole:
            return row.texts[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tips[index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(column.align.value)
        if role == Qt.ItemDataRole.DecorationRole and index.column() == 0 and row.status:
            return status_icon(row.status)
        if role == ITEM_ROLE:
            return row.item
        return None


class FactsTab(QWidget):
    """A table of rows and the selected row as a JSON tree.

    Signals:
        activated(object): a row was double-clicked or Enter was pressed (its item).
    """

    activated = Signal(object)

    def __init__(
        self,
        name: str,
        columns: Sequence[Column],
        parent: QWidget | None = None,
        *,
        empty: str = "",
    ) -> None:
        super().__init__(parent)
        self.name = name
        self.model = RowsModel(columns, self)
        self.table = row_table(self.model, name, self, [c.width for c in columns])
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.tree = JsonTree(tr("{name}: selected item").format(name=name), self)
        self.empty = empty
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.tree)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.table.activated.connect(self._on_activated)

    def set_rows(self, rows: list[Row]) -> None:
        keep = self.table.currentIndex().row()
        self.model.set_rows(rows)
        if rows:
            self.table.selectRow(min(max(keep, 0), len(rows) - 1))
        else:
            self.tree.set_value(self.empty or None)

    def count(self) -> int:
        return self.model.rowCount()

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.model.item(current.row())
        self.tree.set_value(row.whole if row else None)

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        row = self.model.item(index.row())
        if row is not None:
            self.activated.emit(row.item)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json") if hasattr(model, "model_dump") else model


def _span(start: float, end: float | None) -> str:
    return fmt.span(end - start) if end else tr("open")


# ---------------------------------------------------------------- the tabs

ATTEMPT_COLUMNS = [
    Column(QT_TR_NOOP("Attempt"), lambda a: f"{a.number} · {words(a.status.value)}", width=170),
    Column(
        QT_TR_NOOP("Started"),
        lambda a: fmt.when(a.started_at),
        tip=lambda a: fmt.other(a.started_at),
        align=RIGHT,
        width=130,
        live=True,
    ),
    Column(QT_TR_NOOP("Took"), lambda a: _span(a.started_at, a.finished_at), align=RIGHT, width=80),
    Column(QT_TR_NOOP("Error"), lambda a: a.error or "", tip=lambda a: a.error or "", width=300),
]
TOOL_COLUMNS = [
    Column(QT_TR_NOOP("Tool"), lambda t: f"{t.tool} · {words(t.status.value)}", width=230),
    Column(QT_TR_NOOP("Safety"), lambda t: t.safety_class.value.replace("_", " "), width=140),
    Column(
        QT_TR_NOOP("Called"),
        lambda t: fmt.when(t.created_at),
        tip=lambda t: fmt.other(t.created_at),
        align=RIGHT,
        width=100,
        live=True,
    ),
    Column(
        QT_TR_NOOP("Took"),
        lambda t: (
            ""
            if t.status.value in ("running", "pending")
            else fmt.span(t.updated_at - t.created_at)
        ),
        align=RIGHT,
        width=70,
    ),
    Column(QT_TR_NOOP("Attempt"), lambda t: str(t.attempt), align=RIGHT, width=64),
    Column(
        QT_TR_NOOP("Request / result"),
        lambda t: fmt.bounded(
            fmt.pretty_json(t.result if t.result is not None else t.request), 160
        ),
        tip=lambda t: tr("request: {request}\nresult: {result}\n{error}").format(
            request=fmt.pretty_json(t.request),
            result=fmt.pretty_json(t.result),
            error=t.error or "",
        ),
        width=300,
    ),
]


def _asked_text(item: Any) -> str:
    if isinstance(item, Approval):
        return tr("approval · {action}").format(action=item.action_name)
    return f"{item.kind.value.replace('_', ' ')} · {item.prompt}"


def _decided_text(item: Any) -> str:
    if isinstance(item, Approval):
        who = item.decided_by or ""
        reason = f": {item.decision_reason}" if item.decision_reason else ""
        return f"{who}{reason}"
    if item.resolved_by:
        return f"{item.resolved_by}: {fmt.bounded(fmt.pretty_json(item.response), 120)}"
    return ""


ASK_COLUMNS = [
    Column(QT_TR_NOOP("Status"), lambda i: words(i.status.value), width=140),
    Column(QT_TR_NOOP("What was asked"), _asked_text, tip=_asked_text, width=320),
    Column(
        QT_TR_NOOP("Asked"),
        lambda i: fmt.when(i.created_at),
        tip=lambda i: fmt.other(i.created_at),
        align=RIGHT,
        width=100,
        live=True,
    ),
    Column(QT_TR_NOOP("Decided by / answer"), _decided_text, tip=_decided_text, width=320),
    Column(QT_TR_NOOP("Signature"), ROW_NOTE, width=220),
]
EFFECT_COLUMNS = [
    Column(QT_TR_NOOP("Status"), lambda e: words(e.status.value), width=140),
    Column(QT_TR_NOOP("Key"), lambda e: e.key, tip=lambda e: e.key, width=220),
    Column(QT_TR_NOOP("Tool"), lambda e: e.tool, width=140),
    Column(
        QT_TR_NOOP("Updated"),
        lambda e: fmt.when(e.updated_at),
        tip=lambda e: fmt.other(e.updated_at),
        align=RIGHT,
        width=100,
        live=True,
    ),
    Column(
        QT_TR_NOOP("Note"),
        lambda e: e.resolution_reason or e.ambiguous_reason or e.error or "",
        tip=lambda e: e.resolution_reason or e.ambiguous_reason or e.error or "",
        width=300,
    ),
]
MEMORY_COLUMNS = [
    Column(
        QT_TR_NOOP("Change"),
        lambda m: tr("{operation} · v{version}").format(operation=m.operation, version=m.version),
        width=150,
    ),
    Column(
        QT_TR_NOOP("When"),
        lambda m: fmt.when(m.created_at),
        tip=lambda m: fmt.other(m.created_at),
        align=RIGHT,
        width=100,
        live=True,
    ),
    Column(QT_TR_NOOP("By"), lambda m: m.actor, width=150),
    Column(QT_TR_NOOP("Entry"), lambda m: m.entry_id, width=200),
    Column(
        QT_TR_NOOP("Content after"),
        lambda m: m.after_content or tr("(deleted)"),
        tip=lambda m: tr("before: {before}\nafter: {after}").format(
            before=m.before_content or "", after=m.after_content or ""
        ),
        width=300,
    ),
]
RUN_LINK_COLUMNS = [
    Column(QT_TR_NOOP("Status"), lambda r: words(r.status.value), width=150),
    Column(QT_TR_NOOP("Title"), lambda r: r.title, tip=lambda r: f"{r.title}\n{r.id}", width=320),
    Column(QT_TR_NOOP("Agent"), lambda r: r.agent, width=120),
    Column(
        QT_TR_NOOP("Started"),
        lambda r: fmt.when(r.created_at),
        tip=lambda r: fmt.other(r.created_at),
        align=RIGHT,
        width=120,
        live=True,
    ),
]


def attempt_rows(f: RunFacts) -> list[Row]:
    return [Row(a, a.status.value, dump(a)) for a in f.attempts]


def tool_rows(f: RunFacts) -> list[Row]:
    return [Row(t, t.status.value, dump(t)) for t in f.tool_calls]


def ask_rows(f: RunFacts) -> list[Row]:
    by_target: dict[str, list[Decision]] = {}
    for d in f.decisions:
        by_target.setdefault(d.target_id, []).append(d)
    items: list[Any] = sorted([*f.approvals, *f.questions], key=lambda i: i.created_at)
    kind = {True: "approval", False: "question"}

    def signed(d: Decision) -> str:
        state = f.signatures.get(d.id)
        return state.text if state is not None else ""

    return [
        Row(
            i,
            i.status.value,
            {
                kind[isinstance(i, Approval)]: dump(i),
                "decisions": [{**dump(d), "signature": signed(d)} for d in by_target.get(i.id, [])],
            },
            note="; ".join(signed(d) for d in by_target.get(i.id, []) if signed(d)),
        )
        for i in items
    ]


def effect_rows(f: RunFacts) -> list[Row]:
    return [
        Row(
            e,
            e.status.value,
            {"effect": dump(e), "receipts": [dump(r) for r in f.receipts.get(e.key, [])]},
        )
        for e in f.effects
    ]


def memory_rows(f: RunFacts) -> list[Row]:
    return [Row(m, None, dump(m)) for m in f.memory]


def link_rows(f: RunFacts) -> list[Row]:
    runs = ([f.parent] if f.parent else []) + f.children
    return [Row(r, r.status.value, dump(r)) for r in runs]


@dataclass(frozen=True)
class TabSpec:
    name: str
    columns: list[Column]
    rows: Callable[[RunFacts], list[Row]]
    empty: str
    fields: tuple[str, ...] = ()  # the RunFacts lists it shows (for "N of M" when cut)


# Declared at import (before a translator loads): the names and empty texts are marked here
# and translated where shown (tab_title, FactsTab).
TABS = [
    TabSpec(
        QT_TR_NOOP("Attempts"),
        ATTEMPT_COLUMNS,
        attempt_rows,
        QT_TR_NOOP("No attempts."),
        ("attempts",),
    ),
    TabSpec(
        QT_TR_NOOP("Tool calls"),
        TOOL_COLUMNS,
        tool_rows,
        QT_TR_NOOP("This run recorded no tool calls."),
        ("tool_calls",),
    ),
    TabSpec(
        QT_TR_NOOP("Approvals & questions"),
        ASK_COLUMNS,
        ask_rows,
        QT_TR_NOOP("This run asked for no approvals and no answers."),
        ("approvals", "questions"),
    ),
    TabSpec(
        QT_TR_NOOP("Effects & receipts"),
        EFFECT_COLUMNS,
        effect_rows,
        QT_TR_NOOP("This run has no effects."),
    ),
    TabSpec(
        QT_TR_NOOP("Memory changes"),
        MEMORY_COLUMNS,
        memory_rows,
        QT_TR_NOOP("This run changed no memory."),
        ("memory",),
    ),
    TabSpec(
        QT_TR_NOOP("Parent & children"),
        RUN_LINK_COLUMNS,
        link_rows,
        QT_TR_NOOP("This run has no parent and no child runs."),
        ("children",),
    ),
]
