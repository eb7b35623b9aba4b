"""The Runs page filter row: status, agent, project, time range, "waiting for you",
sort. Emits one RunQuery; the search text comes from the page's search box."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QWidget

from proctor.core.models import RunStatus
from proctor.core.timeline import RunQuery

from ..widgets.list_page import choice_combo, fill_combo

ACTIVE = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING_FOR_USER,
          RunStatus.INTERRUPTED)
STATUS_CHOICES: list[tuple[str, Any]] = [
    ("All statuses", ()), ("Active", tuple(s.value for s in ACTIVE)),
    ("Waiting for you", (RunStatus.WAITING_FOR_USER.value,)),
    ("Running", (RunStatus.RUNNING.value,)),
    ("Failed", (RunStatus.FAILED.value,)), ("Completed", (RunStatus.COMPLETED.value,)),
    ("Cancelled", (RunStatus.CANCELLED.value,)),
    ("Interrupted", (RunStatus.INTERRUPTED.value,)),
    ("Ended (any)", tuple(s.value for s in RunStatus if s.terminal)),
]
TIME_CHOICES: list[tuple[str, Any]] = [
    ("Any time", None), ("Last hour", 3600), ("Last 24 hours", 86_400),
    ("Last 7 days", 7 * 86_400), ("Last 30 days", 30 * 86_400),
]
SORT_CHOICES: list[tuple[str, Any]] = [
    ("Newest first", "started:desc"), ("Oldest first", "started:asc"),
    ("Recently updated", "updated:desc"), ("Most events", "events:desc"),
    ("Title A–Z", "title:asc"), ("Agent A–Z", "agent:asc"), ("Status", "status:asc"),
]


def sort_data(key: str, descending: bool) -> str:
    """The sort menu's item data for a sort (strings: QComboBox.findData can match them)."""
    return f"{key}:{'desc' if descending else 'asc'}"


class RunFilterBar(QWidget):
    """Signals:
        changed(): a filter or the sort changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = choice_combo("Run status", STATUS_CHOICES, self)
        self.agent = choice_combo("Agent", [("All agents", None)], self)
        self.project = choice_combo("Project", [("All projects", None)], self)
        self.when = choice_combo("Started within", TIME_CHOICES, self)
        self.sort = choice_combo("Sort runs", SORT_CHOICES, self)
        self.waiting = QCheckBox("Has open items", self)
        self.waiting.setAccessibleName("Only runs with items waiting for a person")
        self.waiting.setToolTip("Only runs with approvals, questions or effects waiting for "
                                "a person")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.status, self.agent, self.project, self.when, self.waiting):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(self.sort)
        for combo in (self.status, self.agent, self.project, self.when, self.sort):
            combo.currentIndexChanged.connect(self._emit)
        self.waiting.toggled.connect(self._emit)

    @Slot()
    def _emit(self) -> None:
        self.changed.emit()

    def set_facets(self, agents: list[str], projects: list[str]) -> None:
        """Fill the agent and project menus, keeping the current choice."""
        fill_combo(self.agent, "All agents", agents, keep=True)
        fill_combo(self.project, "All projects", projects, keep=True)

    def set_sort(self, key: str, descending: bool) -> None:
        """Reflect a sort chosen elsewhere (a header click) without re-emitting."""
        found = self.sort.findData(sort_data(key, descending))
        self.sort.blockSignals(True)
        if found < 0:
            self.sort.addItem(f"{key.capitalize()} {'descending' if descending else 'ascending'}",
                              sort_data(key, descending))
            found = self.sort.count() - 1
        self.sort.setCurrentIndex(found)
        self.sort.blockSignals(False)

    def query(self, text: str | None, now: float | None = None) -> RunQuery:
        window = self.when.currentData()
        key, order = str(self.sort.currentData() or "started:desc").split(":")
        descending = order == "desc"
        return RunQuery(status=tuple(self.status.currentData() or ()),
                        agent=self.agent.currentData(), project=self.project.currentData(),
                        text=text, since=(now or time.time()) - window if window else None,
                        has_open_items=self.waiting.isChecked(), sort=key,
                        descending=descending)
