"""The Runs page filter row: status, agent, project, time range, "waiting for you",
sort. Emits one RunQuery; the search text comes from the page's search box.

The time menu offers presets (since now minus a window) and "Custom range…", which opens
``RangeDialog`` (from–to); the chosen range then shows in the menu itself and the query
gets ``since`` and ``until``. Choosing "Custom range…" again re-opens the dialog with it;
cancelling keeps what was shown before."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QWidget

from proctor.core.audit.timeline import RunQuery
from proctor.core.models import RunStatus

from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.list_page import choice_combo, fill_combo
from .range_dialog import RangeDialog, initial_range, range_text

ACTIVE = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING_FOR_USER, RunStatus.INTERRUPTED)
STATUS_CHOICES: list[tuple[str, Any]] = [
    ("All statuses", ()),
    ("Active", tuple(s.value for s in ACTIVE)),
    ("Waiting for you", (RunStatus.WAITING_FOR_USER.value,)),
    ("Running", (RunStatus.RUNNING.value,)),
    ("Failed", (RunStatus.FAILED.value,)),
    ("Completed", (RunStatus.COMPLETED.value,)),
    ("Cancelled", (RunStatus.CANCELLED.value,)),
    ("Interrupted", (RunStatus.INTERRUPTED.value,)),
    ("Ended (any)", tuple(s.value for s in RunStatus if s.terminal)),
]
CUSTOM = "custom"  # the time menu's data for "Custom range…"
CUSTOM_TEXT = "Custom range…"
TIME_CHOICES: list[tuple[str, Any]] = [
    ("Any time", None),
    ("Last hour", 3600),
    ("Last 24 hours", 86_400),
    ("Last 7 days", 7 * 86_400),
    ("Last 30 days", 30 * 86_400),
    (CUSTOM_TEXT, CUSTOM),
]
SORT_CHOICES: list[tuple[str, Any]] = [
    ("Newest first", "started:desc"),
    ("Oldest first", "started:asc"),
    ("Recently updated", "updated:desc"),
    ("Most events", "events:desc"),
    ("Title A–Z", "title:asc"),
    ("Agent A–Z", "agent:asc"),
    ("Status", "status:asc"),
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
        self.custom_index = self.when.findData(CUSTOM)
        self.range: tuple[float, float] | None = None  # the custom range in use
        self.range_dialog: RangeDialog | None = None
        self._before_custom = 0  # the time choice to go back to when the dialog is cancelled
        self.sort = choice_combo("Sort runs", SORT_CHOICES, self)
        self.waiting = QCheckBox(tr("Has open items"), self)
        self.waiting.setAccessibleName(tr("Only runs with items waiting for a person"))
        self.waiting.setToolTip(
            tr("Only runs with approvals, questions or effects waiting for a person")
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.status, self.agent, self.project, self.when, self.waiting):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(self.sort)
        for combo in (self.status, self.agent, self.project, self.sort):
            combo.currentIndexChanged.connect(self._emit)
        self.when.currentIndexChanged.connect(self._on_when)
        self.when.activated.connect(self._on_when_picked)
        self.waiting.toggled.connect(self._emit)

    @Slot()
    def _emit(self) -> None:
        self.changed.emit()

    # ------------------------------------------------------------ time range
    @Slot(int)
    def _on_when(self, index: int) -> None:
        if index == self.custom_index:
            return  # the dialog decides (activated); nothing changes until it is accepted
        self._before_custom = index
        self.range = None
        self._show_custom_text()
        self.changed.emit()

    @Slot(int)
    def _on_when_picked(self, index: int) -> None:
        if index == self.custom_index:
            QTimer.singleShot(0, self.choose_range)  # after the menu has closed

    @Slot()
    def choose_range(self) -> None:
        """Open the from–to dialog (not blocking: it reports through its signals)."""
        if self.range_dialog is not None:
            self.range_dialog.raise_()
            return
        dialog = RangeDialog(self, *initial_range(self.range))
        dialog.chosen.connect(self.set_range)
        dialog.finished.connect(self._on_range_closed)
        self.range_dialog = dialog
        dialog.open()

    @Slot(int)
    def _on_range_closed(self, _result: int) -> None:
        dialog, self.range_dialog = self.range_dialog, None
        if self.range is None:  # cancelled, and no custom range was in use: back
            self.when.blockSignals(True)
            self.when.setCurrentIndex(self._before_custom)
            self.when.blockSignals(False)
        if dialog is not None:
            dialog.deleteLater()

    @Slot(float, float)
    def set_range(self, since: float, until: float) -> None:
        """Show the runs started in [since, until)."""
        if not since < until:
            raise ValueError("a range starts before it ends")
        self.range = (since, until)
        self.when.blockSignals(True)
        self.when.setCurrentIndex(self.custom_index)
        self.when.blockSignals(False)
        self._show_custom_text()
        self.changed.emit()

    def _show_custom_text(self) -> None:
        text = range_text(*self.range) if self.range else CUSTOM_TEXT
        self.when.setItemText(self.custom_index, text)
        self.when.setToolTip(
            tr("Started within: {text}").format(text=text) if self.range else tr("Started within")
        )

    def set_facets(self, agents: list[str], projects: list[str]) -> None:
        """Fill the agent and project menus, keeping the current choice."""
        fill_combo(self.agent, "All agents", agents, keep=True)
        fill_combo(self.project, "All projects", projects, keep=True)

    def set_sort(self, key: str, descending: bool) -> None:
        """Reflect a sort chosen elsewhere (a header click) without re-emitting."""
        found = self.sort.findData(sort_data(key, descending))
        self.sort.blockSignals(True)
        if found < 0:
            words = tr("{key} descending") if descending else tr("{key} ascending")
            self.sort.addItem(words.format(key=key.capitalize()), sort_data(key, descending))
            found = self.sort.count() - 1
        self.sort.setCurrentIndex(found)
        self.sort.blockSignals(False)

    # ------------------------------------------------------------ saved views
    def state(self) -> dict[str, Any]:
        """The filters and the sort as a saved view keeps them (a custom range as it is)."""
        within = self.when.currentData()
        return {
            "status": list(self.status.currentData() or ()),
            "agent": self.agent.currentData() or "",
            "project": self.project.currentData() or "",
            "within": within,
            "range": list(self.range) if within == CUSTOM and self.range else None,
            "waiting": self.waiting.isChecked(),
            "sort": self.sort.currentData(),
        }

    def apply_state(self, view: dict[str, Any]) -> None:
        """Select a saved view's filters without emitting (the page queries once after).
        A value the menus do not offer reads as the menu's first choice; an agent or a
        project as saved, even when no run of it is listed now."""
        statuses = view.get("status")
        wanted = tuple(statuses) if isinstance(statuses, list) else ()
        with_status = [tuple(self.status.itemData(i) or ()) for i in range(self.status.count())]
        within, span = view.get("within"), view.get("range")
        custom = (
            within == CUSTOM
            and isinstance(span, list)
            and len(span) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in span)
            and span[0] < span[1]
        )
        self.range = (float(span[0]), float(span[1])) if custom else None  # type: ignore[index]
        found = self.when.findData(within) if within != CUSTOM else -1
        when = self.custom_index if custom else max(found, 0)
        for widget in (self.status, self.agent, self.project, self.when, self.sort, self.waiting):
            widget.blockSignals(True)
        try:
            self.status.setCurrentIndex(with_status.index(wanted) if wanted in with_status else 0)
            for combo, key in ((self.agent, "agent"), (self.project, "project")):
                _choose(combo, view.get(key))
            self.when.setCurrentIndex(when)
            self._before_custom = 0 if custom else self.when.currentIndex()
            self._show_custom_text()
            self.sort.setCurrentIndex(max(0, self.sort.findData(view.get("sort"))))
            self.waiting.setChecked(view.get("waiting") is True)
        finally:
            for widget in (self.status, self.agent, self.project, self.when, self.sort):
                widget.blockSignals(False)
            self.waiting.blockSignals(False)

    def time_range(self, now: float | None = None) -> tuple[float | None, float | None]:
        """``(since, until)`` of the time menu's choice (None: open-ended)."""
        window = self.when.currentData()
        if window == CUSTOM:
            return self.range if self.range is not None else (None, None)
        return ((now or time.time()) - window if window else None), None

    def query(self, text: str | None, now: float | None = None) -> RunQuery:
        since, until = self.time_range(now)
        key, order = str(self.sort.currentData() or "started:desc").split(":")
        descending = order == "desc"
        return RunQuery(
            status=tuple(self.status.currentData() or ()),
            agent=self.agent.currentData(),
            project=self.project.currentData(),
            text=text,
            since=since,
            until=until,
            has_open_items=self.waiting.isChecked(),
            sort=key,
            descending=descending,
        )


def _choose(combo: QComboBox, value: Any) -> None:
    """Make ``value`` (a string; anything else: the first choice) current, adding it when
    the menu lacks it."""
    if not isinstance(value, str) or not value:
        combo.setCurrentIndex(0)
        return
    if combo.findData(value) < 0:
        combo.addItem(fmt.bounded(value, 80), value)
    combo.setCurrentIndex(combo.findData(value))
