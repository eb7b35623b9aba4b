"""The Overview page: the journal at a glance, as charts.

What waits for a person (by kind and age), decisions per hour (by a person, a rule or
expiry, and answers), the time to a decision by agent and by tool, rules' automatic
decisions against manual ones, and runs started per hour. Filter by project and agent and
choose the window; click a bar to open those items (the inbox filtered, or the page that
lists them). The figures come from ``journal.overview.facts`` (one read, aggregated in SQL)
and are re-read from the change feed, at most once per ``REFRESH_MS``, while visible.

Signals:
    open_inbox(object): show the inbox filtered by this dict (kind, agent, project, text).
    open_page(str): show this page (runs, audit…).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QVBoxLayout, QWidget

from proctor.core.audit.overview import OverviewFacts, age_window
from proctor.core.models import ChangeSet

from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.labels import plain_label
from .chart import Bar, BarChart, Series

REFRESH_MS = 1500
WINDOWS = (
    (QT_TR_NOOP("Last 24 hours"), 24),
    (QT_TR_NOOP("Last 7 days"), 7 * 24),
    (QT_TR_NOOP("Last 6 hours"), 6),
)
KIND_SERIES = [
    Series("approval", "Approvals", "#3b82f6"),
    Series("question", "Questions", "#a855f7"),
    Series("conflict", "Conflict", "#14b8a6"),
    Series("effect", "Effects", "#f97316"),
]
DECISION_SERIES = [
    Series("manual", "By a person", "#2563eb"),
    Series("rule", "By a rule", "#16a34a"),
    Series("expired", "Expired", "#dc2626"),
    Series("answer", "Answers", "#a855f7"),
]
RUN_SERIES = [
    Series("active", "Active", "#3b82f6"),
    Series("completed", "Completed", "#16a34a"),
    Series("failed", "Failed", "#dc2626"),
    Series("cancelled", "Cancelled", "#9ca3af"),
]
WAIT_SERIES = [Series("mean", "Mean wait", "#0ea5e9")]
SPLIT_SERIES = [Series("n", "Decisions", "#16a34a")]
ANY = None


def any_combo(name: str, any_text: str, parent: QWidget) -> QComboBox:
    combo = QComboBox(parent)
    combo.setAccessibleName(name)
    combo.addItem(any_text, ANY)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


def refill(combo: QComboBox, values: list[str]) -> None:
    """Replace the choices after "All …", keeping the current one."""
    current = combo.currentData()
    combo.blockSignals(True)
    while combo.count() > 1:
        combo.removeItem(1)
    for value in values:
        combo.addItem(fmt.bounded(value, 80), value)
    if current is not None and combo.findData(current) < 0:
        combo.addItem(fmt.bounded(current, 80), current)
    combo.setCurrentIndex(max(0, combo.findData(current)) if current is not None else 0)
    combo.blockSignals(False)


class Card(QWidget):
    """A titled chart."""

    def __init__(self, title: str, chart: BarChart, parent: QWidget) -> None:
        super().__init__(parent)
        self.chart = chart
        self.title = plain_label(title, self, selectable=False)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.note = plain_label("", self, selectable=False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(chart, 1)
        layout.addWidget(self.note)


class OverviewData(QObject):
    """Reads the facts on the task runner; one read in flight, the latest wish after it.

    Signals:
        loaded(object): fresh OverviewFacts.
    """

    loaded = Signal(object)

    def __init__(self, ctx: PageContext, parent: QObject) -> None:
        super().__init__(parent)
        self.journal = ctx.journal
        self.runner = ctx.runner
        self.filters: dict[str, Any] = {"hours": 24}
        self.facts: OverviewFacts | None = None
        self._asked: dict[str, Any] | None = None  # the filters of the last read asked

    def refresh(self) -> None:
        overview, filters = self.journal.overview, dict(self.filters)
        if filters != self._asked:  # other filters: what is in flight answers nothing asked
            self.runner.drop("facts", self)
            self._asked = filters
        self.runner.coalesce(
            "facts", lambda: overview.facts(**filters), on_done=self._on_done, owner=self
        )

    def _on_done(self, facts: OverviewFacts) -> None:
        self.facts = facts
        self.loaded.emit(facts)


# what a click on a bar of each chart opens (its tooltip says it)
CLICK_AGENT = QT_TR_NOOP("Click to open this agent's waiting items in the inbox")
CLICK_TOOL = QT_TR_NOOP("Click to search the inbox for this tool")
CLICK_AUDIT = QT_TR_NOOP("Click to open the audit log")
CLICK_RUNS = QT_TR_NOOP("Click to open the runs")


class OverviewPage(QWidget):
    open_inbox = Signal(object)
    open_page = Signal(str)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = OverviewData(ctx, self)
        self.project = any_combo("Project", "All projects", self)
        self.agent = any_combo("Agent", "All agents", self)
        self.time_window = QComboBox(self)  # not `window`: that is QWidget.window()
        self.time_window.setAccessibleName(tr("Time window"))
        for title, hours in WINDOWS:
            self.time_window.addItem(tr(title), hours)
        self.pending = Card("Waiting for a person, by age", BarChart(KIND_SERIES), self)
        self.per_hour = Card(
            "Decisions per hour", BarChart(DECISION_SERIES, click=CLICK_AUDIT), self
        )
        self.by_agent = Card(
            "Time to decision, by agent",
            BarChart(WAIT_SERIES, rows=True, unit="s", click=CLICK_AGENT),
            self,
        )
        self.by_tool = Card(
            "Time to decision, by tool",
            BarChart(WAIT_SERIES, rows=True, unit="s", click=CLICK_TOOL),
            self,
        )
        self.split = Card(
            "Approvals decided by rules and by people",
            BarChart(SPLIT_SERIES, rows=True, click=CLICK_AUDIT),
            self,
        )
        self.runs = Card("Runs started per hour", BarChart(RUN_SERIES, click=CLICK_RUNS), self)
        self._throttle = QTimer(self)
        self._throttle.setSingleShot(True)
        self._throttle.setInterval(REFRESH_MS)
        self._throttle.timeout.connect(self._refresh_if_visible)
        self._stale = True
        self._build()
        self._connect()

    def _build(self) -> None:
        bar = QHBoxLayout()
        for widget in (self.project, self.agent, self.time_window):
            bar.addWidget(widget)
        bar.addStretch(1)
        grid = QGridLayout()
        cards = (self.pending, self.per_hour, self.runs, self.by_agent, self.by_tool, self.split)
        for index, card in enumerate(cards):
            grid.addWidget(card, index // 3, index % 3)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(grid, 1)

    def _connect(self) -> None:
        self.model.loaded.connect(self._show)
        for combo in (self.project, self.agent, self.time_window):
            combo.currentIndexChanged.connect(self._on_filter)
        self.pending.chart.bar_clicked.connect(self._open_pending)
        self.by_agent.chart.bar_clicked.connect(self._open_agent)
        self.by_tool.chart.bar_clicked.connect(self._open_tool)
        self.per_hour.chart.bar_clicked.connect(self._open_audit)
        self.split.chart.bar_clicked.connect(self._open_audit)
        self.runs.chart.bar_clicked.connect(self._open_runs)

    # ------------------------------------------------------------ page protocol
    def start(self) -> None:
        self.model.refresh()

    def on_changes(self, cs: ChangeSet) -> None:
        if cs.changes:
            self._stale = True
            if not self._throttle.isActive():
                self._throttle.start()

    def focus_list(self) -> None:
        self.pending.chart.setFocus()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._refresh_if_visible()

    @Slot()
    def _refresh_if_visible(self) -> None:
        if self._stale and self.isVisible():
            self._stale = False
            self.model.refresh()

    @Slot()
    def _on_filter(self) -> None:
        self.model.filters = {
            "project": self.project.currentData(),
            "agent": self.agent.currentData(),
            "hours": int(self.time_window.currentData()),
        }
        self.model.refresh()

    # ------------------------------------------------------------ showing
    @Slot(object)
    def _show(self, facts: OverviewFacts) -> None:
        refill(self.project, facts.projects)
        refill(self.agent, facts.agents)
        self.pending.chart.set_bars([Bar(b.label, dict(b.counts)) for b in facts.pending])
        waiting = sum(sum(b.counts.values()) for b in facts.pending)
        self.pending.note.setText(tr("{waiting} waiting now").format(waiting=waiting))
        self.per_hour.chart.set_bars(
            [Bar(self._hour_label(b.start, facts), dict(b.counts)) for b in facts.per_hour]
        )
        decided = sum(sum(b.counts.values()) for b in facts.per_hour)
        self.per_hour.note.setText(
            tr("{decided} decisions and answers in the window").format(decided=decided)
        )
        self.runs.chart.set_bars(
            [Bar(self._hour_label(b.start, facts), dict(b.counts)) for b in facts.runs_per_hour]
        )
        self.runs.note.setText(
            tr("{n} runs started").format(
                n=sum(sum(b.counts.values()) for b in facts.runs_per_hour)
            )
        )
        for card, rows in ((self.by_agent, facts.by_agent), (self.by_tool, facts.by_tool)):
            card.chart.set_bars(
                [
                    Bar(
                        r.name,
                        {"mean": r.mean_s},
                        note=f"{r.decisions} decided, longest {fmt.span(r.max_s)}",
                    )
                    for r in rows
                ]
            )
            card.note.setText(tr("manual approvals and denials in the window"))
        self.split.chart.set_bars(
            [Bar("By a rule", {"n": facts.automatic}), Bar("By a person", {"n": facts.manual})]
        )
        total = facts.automatic + facts.manual
        share = f"{100 * facts.automatic / total:.0f} % automatic" if total else "none yet"
        self.split.note.setText(share)

    @staticmethod
    def _hour_label(start: float | None, facts: OverviewFacts) -> str:
        if start is None:
            return ""
        hours_ago = round((facts.now - start) / 3600)
        return f"-{hours_ago}h"

    # ------------------------------------------------------------ click-through
    def _filters(self) -> dict[str, Any]:
        return {"agent": self.agent.currentData(), "project": self.project.currentData()}

    @Slot(int)
    def _open_pending(self, index: int) -> None:
        """The inbox with exactly the items of this bar: its age bucket as counted."""
        facts = self.model.facts
        if facts is None or index >= len(facts.pending):
            return
        after, until = age_window(index, facts.now)
        name = tr("Waiting {age} (at {when})").format(
            age=facts.pending[index].label, when=fmt.clock(facts.now)
        )
        self.open_inbox.emit({**self._filters(), "age": (name, after, until)})

    @Slot(int)
    def _open_agent(self, index: int) -> None:
        facts = self.model.facts
        if facts is not None and index < len(facts.by_agent):
            self.open_inbox.emit({**self._filters(), "agent": facts.by_agent[index].name})

    @Slot(int)
    def _open_tool(self, index: int) -> None:
        facts = self.model.facts
        if facts is not None and index < len(facts.by_tool):
            self.open_inbox.emit({**self._filters(), "text": facts.by_tool[index].name})

    @Slot(int)
    def _open_audit(self, _index: int) -> None:
        self.open_page.emit("audit")

    @Slot(int)
    def _open_runs(self, _index: int) -> None:
        self.open_page.emit("runs")
