"""The Runs page: a keyset-paged list of runs, and the selected run's attempts and events."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Attempt, ChangeSet, Run, RunEvent, RunStatus

from ..widgets import fmt
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label
from ..widgets.list_page import ListPage, choice_combo
from ..widgets.paged_model import KEY_ROLE
from .model import EventsModel, RunsModel

EVENTS_SHOWN = 300
ACTIVE = [RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING_FOR_USER,
          RunStatus.INTERRUPTED]
STATUS_CHOICES: list[tuple[str, Any]] = [
    ("All runs", None), ("Active", [s.value for s in ACTIVE]),
    ("Waiting for you", [RunStatus.WAITING_FOR_USER.value]),
    ("Completed", [RunStatus.COMPLETED.value]), ("Failed", [RunStatus.FAILED.value]),
    ("Cancelled", [RunStatus.CANCELLED.value]), ("Interrupted", [RunStatus.INTERRUPTED.value]),
]


def run_summary(run: Run, attempts: list[Attempt]) -> str:
    lines = [f"{run.status.value.replace('_', ' ')} · agent {run.agent} · "
             f"{run.project}/{run.space} · started {fmt.clock(run.created_at)}"]
    if run.finished_at:
        lines.append(f"finished {fmt.clock(run.finished_at)}")
    if run.error:
        lines.append(f"error: {fmt.bounded(run.error, 300)}")
    if run.cancel_requested:
        lines.append(f"cancel requested: {fmt.bounded(run.cancel_reason or '', 200)}")
    lines.append(" · ".join(f"attempt {a.number}: {a.status.value}" for a in attempts))
    lines.append(f"run id {run.id}")
    return "\n".join(lines)


class RunDetail(QWidget):
    """One run: summary, its newest events, and the selected event's payload."""

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: str | None = None
        self._generation = 0
        self.title = plain_label(parent=self, name="DetailTitle")
        self.summary = plain_label(parent=self, name="Muted")
        self.summary.setAccessibleName("Run summary")
        self.events = EventsModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.events)
        self.table.setAccessibleName("Run events")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().currentChanged.connect(self._on_event)
        self.payload = JsonTree("Event payload", self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.payload)
        layout.addWidget(split, 1)

    def show_run(self, run_id: str | None) -> None:
        self.run_id = run_id
        self.reload()

    def reload(self) -> None:
        if self.run_id is None:
            return
        self._generation += 1
        generation, run_id, runs = self._generation, self.run_id, self.ctx.journal.runs
        self.ctx.runner.run(
            lambda: (generation, runs.get(run_id), runs.attempts(run_id),
                     runs.events(run_id, descending=True, limit=EVENTS_SHOWN)),
            on_done=self._on_loaded, owner=self)

    def _on_loaded(self, result: tuple[int, Run, list[Attempt], list[RunEvent]]) -> None:
        generation, run, attempts, events = result
        if generation != self._generation:
            return
        self.title.setText(fmt.bounded(run.title, 160))
        self.summary.setText(run_summary(run, attempts))
        keep = self.table.currentIndex().row()
        self.events.set_rows(events)
        if self.events.rowCount():
            self.table.selectRow(max(0, min(keep, self.events.rowCount() - 1)))

    @Slot(QModelIndex, QModelIndex)
    def _on_event(self, current: QModelIndex, _previous: QModelIndex) -> None:
        event = self.events.event_at(current.row())
        self.payload.set_value(event.payload if event else None)


class RunsPage(ListPage):
    change_kinds = frozenset({"run"})
    title = "Runs"

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(ctx, RunsModel(ctx.runner), parent)
        self.model.setParent(self)
        self.status = choice_combo("Run status", STATUS_CHOICES, self)
        self.status.currentIndexChanged.connect(self.apply_query)
        self.layout_top.addWidget(self.status)
        self.detail = RunDetail(ctx, self)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("RunsSplitter")
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.add_main(split)
        self.table.selectionModel().currentChanged.connect(self._on_current)
        self.model.loaded.connect(self._select_wanted)
        self._wanted: str | None = None

    def apply_query(self) -> None:
        assert isinstance(self.model, RunsModel)
        self.model.show(self.journal, text=self.text(), status=self.status.currentData())

    def show_run(self, run_id: str) -> None:
        """Select ``run_id`` in the list if it is loaded, and show it either way."""
        self._wanted = run_id
        self.detail.show_run(run_id)
        self._select_wanted()

    @Slot()
    def _select_wanted(self) -> None:
        if self._wanted is None:
            return
        row = self.model.row_of(self._wanted)
        if row >= 0:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))
            self._wanted = None

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.detail.show_run(str(current.data(KEY_ROLE)))

    def on_changes(self, cs: ChangeSet) -> None:
        super().on_changes(cs)
        if self.detail.run_id and self.detail.run_id in cs.run_ids() and self.isVisible():
            self.detail.reload()
