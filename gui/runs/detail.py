"""One run, whole: the header (status, who, where, why it ended), the visual timeline,
and tabs for its events, waiting items, attempts, tool calls, approvals and questions,
effects and receipts, memory changes, parent and child runs, and the chain's integrity.

Live: when the change feed names this run, the header and the event list follow at once
(new events are added at the end); the other tabs and the visual timeline are re-read
at most once a second.
"""

from __future__ import annotations

import uuid
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import ChangeSet, Run, RunEvent, RunStatus

from ..infra.actions import ActionRegistry
from ..infra.context import PageContext
from ..infra.i18n import tr
from ..timeline.pane import TimelinePane
from ..widgets import fmt
from ..widgets.dialogs import ReasonDialog
from ..widgets.event_summary import plain_tip
from ..widgets.export import Exporter
from ..widgets.labels import plain_label
from ..widgets.message_bar import Level, MessageBar
from ..widgets.run_status import status_icon, words
from .events_model import precise_clock, read_tail
from .events_pane import EventsPane
from .facts import TABS, FactsTab, RunFacts, dump, fact_rows, load_facts, tab_title
from .integrity import IntegrityPane
from .model import duration
from .pending import PendingPane

HEADER_MS = 200
FACTS_MS = 1000


def facts_line(run: Run) -> str:
    parts = [
        f"agent {run.agent}",
        f"{run.project}/{run.space}",
        f"started {precise_clock(run.created_at)}",
        f"took {duration(run)}" if run.finished_at else f"running for {duration(run)}",
        f"attempt {run.current_attempt}",
        f"{run.last_sequence:,} events",
    ]
    if run.deadline:
        parts.append(f"deadline {fmt.clock(run.deadline)}")
    return " · ".join(parts)


def ending_line(run: Run) -> str:
    """Why the run ended (or what stops it), in words; empty while nothing is wrong."""
    if run.retry_pending:
        return tr("Retry requested as attempt {n}: {reason}").format(
            n=run.retry_requested, reason=fmt.bounded(run.retry_reason or "", 300)
        )
    error = fmt.bounded(run.error or "", 400)
    if run.status == RunStatus.FAILED and run.current_attempt > 1:  # ``error`` is the first
        return tr(
            "Failed again, on attempt {n}: the Attempts tab has each attempt's error "
            "(the first: {error})"
        ).format(n=run.current_attempt, error=error)
    if run.status == RunStatus.FAILED:
        return tr("Failed: {error}").format(error=error)
    if run.cancel_requested:
        return f"Cancel requested: {fmt.bounded(run.cancel_reason or '', 300)}"
    if run.status.value == "interrupted":
        return "Interrupted: the agent stopped without finishing; see the last events."
    if run.open_items:
        noun = tr("item") if run.open_items == 1 else tr("items")
        return tr("Waiting for you: {n} {noun} — see “Waiting for you”.").format(
            n=run.open_items, noun=noun
        )
    if run.error:  # retried: it runs (or ended) again after that failure
        return tr("Retried as attempt {n} after: {error}").format(
            n=run.current_attempt, error=error
        )
    return ""


# the Export menu of a run's header, in its order (gui/runs/commands.py declares them)
EXPORT_COMMANDS = ("runs.export_json", "runs.export_jsonl", "runs.copy")


class RunDetail(QWidget):
    """Signals:
    back(): the operator wants the run list again.
    open_run(str): show another run (parent, child).
    """

    back = Signal()
    open_run = Signal(str)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: str | None = None
        self.run: Run | None = None
        self.facts: RunFacts | None = None
        self._sequence_on_open: int | None = None
        self.message = MessageBar(self)
        self.exporter = Exporter(ctx, self, self.message)
        self._build_header()
        self.timeline = TimelinePane(ctx, self)
        self.events_pane = EventsPane(ctx, self)
        self.events = self.events_pane.model
        self.pending = PendingPane(ctx, self)
        self.integrity = IntegrityPane(ctx, self)
        self.fact_tabs = [FactsTab(tr(t.name), t.columns, self, empty=tr(t.empty)) for t in TABS]
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.events_pane, tr("Events"))
        self.tabs.addTab(self.pending, tr("Waiting for you"))
        for tab in self.fact_tabs:
            self.tabs.addTab(tab, tab.name.replace("&", "&&"))
        self.tabs.addTab(self.integrity, tr("Integrity"))
        self._build()
        self._header_timer = self._timer(HEADER_MS, self.reload_header)
        self._facts_timer = self._timer(FACTS_MS, self._reload_rest)
        self._connect()

    def _timer(self, ms: int, slot: Any) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(ms)
        timer.timeout.connect(slot)
        return timer

    def _build_header(self) -> None:
        self.back_button = QPushButton(tr("← Runs"), self)
        self.back_button.setAccessibleName(tr("Back to the run list"))
        self.back_button.setToolTip(tr("Back to the run list (Alt+Left)"))
        self.status_icon = QLabel(self)
        self.status_text = plain_label(parent=self, selectable=False)
        self.status_text.setAccessibleName(tr("Run status"))
        self.title = plain_label(parent=self, name="DetailTitle")
        self.title.setAccessibleName(tr("Run title"))
        self.facts_label = plain_label(parent=self, name="Muted")
        self.facts_label.setAccessibleName(tr("Run facts"))
        self.ending = plain_label(parent=self)
        self.ending.setObjectName("RunEnding")
        self.ending.setAccessibleName(tr("Why the run ended"))
        self.ending.setStyleSheet("font-weight: 600;")
        self.show_end = QPushButton(tr("Show the last event"), self)
        self.show_end.setAccessibleName(tr("Show the run's last event"))
        self.parent_button = QPushButton(tr("Parent run"), self)
        self.parent_button.setAccessibleName(tr("Open the parent run"))
        # Request cancel and the Export menu are the page's commands (gui/runs/commands.py),
        # built from them by use_commands once they are registered
        self.cancel_button: QPushButton = QPushButton(tr("Request cancel…"), self)
        self.export_button = QToolButton(self)
        self.export_button.setText(tr("Export"))
        self.export_button.setAccessibleName(tr("Export this run"))
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_button.setMenu(QMenu(self.export_button))

    def use_commands(self, registry: ActionRegistry) -> None:
        """The header's Request cancel button and Export menu, built from the registered
        commands: enabled as the commands are, and a click runs the command."""
        button = registry.button(("runs.retry", "runs.cancel"), self)  # a failed run: Retry
        self._top.replaceWidget(self.cancel_button, button)
        self.cancel_button.deleteLater()
        self.cancel_button = button
        menu = self.export_button.menu()
        for action_id in EXPORT_COMMANDS:
            menu.addAction(registry.action(action_id))

    def _build(self) -> None:
        top = self._top = QHBoxLayout()
        top.addWidget(self.back_button)
        top.addWidget(self.status_icon)
        top.addWidget(self.status_text)
        top.addWidget(self.title, 1)
        top.addWidget(self.parent_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.export_button)
        ending = QHBoxLayout()
        ending.addWidget(self.ending, 1)
        ending.addWidget(self.show_end)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.timeline)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setSizes([self.timeline.preferred_height(), 600])
        split.setChildrenCollapsible(False)
        self.splitter = split
        self._split_moved = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.facts_label)
        layout.addLayout(ending)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)

    def _connect(self) -> None:
        self.back_button.clicked.connect(self.back)
        self.splitter.splitterMoved.connect(self._on_split_moved)
        self.timeline.view.shaped.connect(self._fit_timeline)
        self.splitter.installEventFilter(self)  # its height changes: the fit is made again
        self.show_end.clicked.connect(self.show_last_event)
        self.parent_button.clicked.connect(self._open_parent)
        self.timeline.sequence_chosen.connect(self.show_sequence)
        self.integrity.sequence_chosen.connect(self.show_sequence)
        self.events_pane.event_selected.connect(self._on_event_selected)
        self.tabs.currentChanged.connect(self._on_tab)
        self.pending.decided.connect(self.refresh)
        self.pending.open_run.connect(self.open_run)
        for tab in self.fact_tabs:
            tab.activated.connect(self._on_fact_activated)
        for source in (self.timeline, self.events_pane, self.integrity):
            source.failed.connect(self._on_failed)

    # ------------------------------------------------------------ loading
    def show_run(self, run_id: str, sequence: int | None = None) -> None:
        """Open ``run_id``: header and events first, the rest as it arrives; then select
        event ``sequence`` when given."""
        if run_id == self.run_id and self.run is not None:
            if sequence is not None:
                self.show_sequence(sequence)
            return
        self._sequence_on_open = sequence
        self.run_id, self.run, self.facts = run_id, None, None
        self.ctx.registry.refresh()  # Request cancel is off until the run is read
        for key in ("header", "facts"):  # reads of the run shown before are stale
            self.ctx.runner.drop(key, self)
        self.message.clear()
        self.pending.run_id = run_id
        self.pending.message.keep_only(run_id)  # its "approved." was about the run before
        self.title.setText(tr("Loading run…"))
        self.integrity.show_run(run_id)
        journal = self.ctx.journal
        self.ctx.runner.latest(
            "open",
            lambda: read_tail(journal, run_id),
            on_done=self._on_opened,
            on_error=self._on_failed,
            owner=self,
        )

    def _on_opened(self, result: tuple[Run, int, list[RunEvent]]) -> None:
        """The run and its newest events are here: show them, then read the rest."""
        run, block, tail = result
        self.events_pane.set_run(run, (block, tail))
        self._show_header(run)
        self.timeline.show_run(run.id)
        self.reload_facts()
        if self.tabs.currentWidget() is self.integrity:
            self.integrity.verify()
        sequence, self._sequence_on_open = self._sequence_on_open, None
        if sequence is not None:
            self.show_sequence(sequence)

    def refresh(self) -> None:
        """Re-read what may have changed (after a decision here, or on demand)."""
        self.reload_header()
        self.reload_facts()
        self.timeline.reload()

    def on_changes(self, cs: ChangeSet) -> None:
        if self.run_id is None or self.run_id not in cs.run_ids():
            return
        if not self._header_timer.isActive():
            self._header_timer.start()
        if not self._facts_timer.isActive():
            self._facts_timer.start()

    @Slot()
    def reload_header(self) -> None:
        if self.run_id is None:
            return
        run_id, runs = self.run_id, self.ctx.journal.runs
        self.ctx.runner.latest(
            "header",
            lambda: runs.get(run_id),
            on_done=self._on_header,
            on_error=self._on_failed,
            owner=self,
        )

    def _on_header(self, run: Run) -> None:
        if self.run is None:
            self.events_pane.set_run(run)
        else:
            self.events_pane.grow(run)
        self._show_header(run)

    @Slot()
    def reload_facts(self) -> None:
        if self.run_id is None:
            return
        run_id, journal = self.run_id, self.ctx.journal

        def load() -> tuple[RunFacts, list]:
            facts = load_facts(journal, run_id)
            return facts, fact_rows(facts)  # the rows too, off the GUI thread

        self.ctx.runner.latest(
            "facts", load, on_done=self._on_facts, on_error=self._on_failed, owner=self
        )

    @Slot()
    def _reload_rest(self) -> None:
        self.reload_facts()
        self.timeline.reload()

    def _on_facts(self, result: tuple[RunFacts, list]) -> None:
        facts, tab_rows = result
        grew = self.facts is not None and facts.run.last_sequence != self.facts.run.last_sequence
        self.facts = facts
        if grew:
            self.events_pane.load_types()
        for tab, spec, rows in zip(self.fact_tabs, TABS, tab_rows, strict=True):
            tab.set_rows(rows)
            self.tabs.setTabText(self.tabs.indexOf(tab), tab_title(spec, facts, len(rows)))
        self.pending.set_items(facts.open_items)
        n = len(facts.open_items)
        self.tabs.setTabText(
            self.tabs.indexOf(self.pending), f"Waiting for you ({n})" if n else "Waiting for you"
        )
        self.parent_button.setVisible(facts.parent is not None)

    # ------------------------------------------------------------ header
    def _show_header(self, run: Run) -> None:
        self.run = run
        self.status_icon.setPixmap(status_icon(run.status.value, 18).pixmap(18, 18))
        self.status_text.setText(words(run.status.value))
        self.title.setText(fmt.bounded(run.title, 200))
        self.title.setToolTip(plain_tip(f"{run.title}\n{run.id}"))
        self.facts_label.setText(facts_line(run) + f" · {run.id}")
        ending = ending_line(run)
        self.ending.setText(ending)
        self.ending.setVisible(bool(ending))
        self.ending.setStyleSheet(
            "font-weight: 600; color: #cc3333;"
            if run.status == RunStatus.FAILED and not run.retry_pending  # asked: not an alarm
            else "font-weight: 600;"
        )
        self.show_end.setVisible(run.status.terminal or bool(run.error))
        self.ctx.registry.refresh()  # Request cancel follows the run read
        self.cancel_button.setToolTip(
            tr("A retry was asked; the agent starts it when it next looks")
            if run.retry_pending
            else tr("Ask the agent to try again as a new attempt of this run")
            if run.status == RunStatus.FAILED
            else tr("The run has ended")
            if run.status.terminal
            else tr("Cancel was already requested")
            if run.cancel_requested
            else tr("Ask the agent to stop; it finishes the cancel itself")
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.splitter and event.type() == QEvent.Type.Resize:
            # a message came or went, the window grew: the lanes fit again, once the splitter
            # has shared out its new height (its own handler runs after this filter)
            QTimer.singleShot(0, self, self._fit_timeline)
        return super().eventFilter(watched, event)

    @Slot()
    def _on_split_moved(self) -> None:
        self._split_moved = True

    @Slot()
    def _fit_timeline(self) -> None:
        """Give the visual timeline the height its lanes need (until the operator chose)."""
        if self._split_moved:
            return
        total = sum(self.splitter.sizes())
        want = min(self.timeline.preferred_height(), total // 2)
        self.splitter.setSizes([want, max(total - want, 0)])

    # ------------------------------------------------------------ moving around
    @Slot(int)
    def show_sequence(self, sequence: int) -> None:
        self.tabs.setCurrentWidget(self.events_pane)
        self.events_pane.select_sequence(sequence)

    @Slot()
    def show_last_event(self) -> None:
        if self.run is not None and self.run.last_sequence:
            self.show_sequence(self.run.last_sequence)

    @Slot(object)
    def _on_event_selected(self, event: RunEvent) -> None:
        self.timeline.mark_event(event.created_at)

    @Slot(int)
    def _on_tab(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.integrity and self.integrity.needs_check():
            self.integrity.verify()

    @Slot(object)
    def _on_fact_activated(self, item: Any) -> None:
        if isinstance(item, Run):
            self.open_run.emit(item.id)

    @Slot()
    def _open_parent(self) -> None:
        if self.run is not None and self.run.parent_run_id:
            self.open_run.emit(self.run.parent_run_id)

    # ------------------------------------------------------------ actions
    @Slot()
    def request_cancel(self) -> None:
        run = self.run
        if run is None or run.status.terminal:
            return
        reason = ReasonDialog.ask(
            self,
            tr("Request cancel"),
            tr(
                "Ask the agent to stop “{title}”? The agent is told "
                "your reason and cancels the run itself."
            ).format(title=fmt.bounded(run.title, 80)),
            ok=tr("Request cancel"),
            required=True,
        )
        if not reason:
            return
        runs, rid = self.ctx.journal.runs, f"desk-{uuid.uuid4().hex}"
        run_id = run.id
        self.message.show_message(tr("Requesting cancel…"), Level.INFO, about=run_id)
        self.ctx.runner.run(
            lambda: runs.request_cancel(  # events the agent wrote meanwhile do not matter
                run_id, reason, expected_version=None, request_id=rid, source="desk"
            ),
            on_done=self._on_cancel_requested,
            on_error=self._on_cancel_refused,
            owner=self,
            write=True,
        )

    def _on_cancel_requested(self, run: Run) -> None:
        if run.id != self.run_id:  # the operator moved on to another run meanwhile
            return
        self.message.show_message(
            tr("Cancel requested; the agent will stop at its next step."),
            Level.SUCCESS,
            about=run.id,
        )
        if run.id == self.run_id:  # the row the write returned (no re-read): Cancel is off
            self._show_header(run)  # at once; the rest follows from the change set
            self.events_pane.grow(run)

    def _on_cancel_refused(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message)
        self.reload_header()

    @Slot()
    def request_retry(self) -> None:
        run = self.run
        if run is None or not self.can_retry():
            return
        reason = ReasonDialog.ask(
            self,
            tr("Retry run"),
            tr(
                "Retry “{title}”? Its agent starts attempt {n} of this same run when it next "
                "looks: the run goes from failed back to running. Attempt {last} and its "
                "error stay as they are, and your reason is told to the agent and kept as "
                "evidence. An agent that is gone does not retry; the run then stays failed."
            ).format(
                title=fmt.bounded(run.title, 80),
                n=run.current_attempt + 1,
                last=run.current_attempt,
            ),
            ok=tr("Retry run"),
            required=True,
        )
        if not reason:
            return
        runs, rid = self.ctx.journal.runs, f"desk-{uuid.uuid4().hex}"
        run_id, version = run.id, run.version
        self.message.show_message(tr("Requesting a retry…"), Level.INFO, about=run_id)
        self.ctx.runner.run(
            lambda: runs.request_retry(
                run_id, reason, expected_version=version, request_id=rid, source="desk"
            ),
            on_done=self._on_retry_requested,
            on_error=self._on_cancel_refused,
            owner=self,
            write=True,
        )

    def _on_retry_requested(self, run: Run) -> None:
        if run.id != self.run_id:
            return
        self.message.show_message(
            tr("Retry requested; the agent starts attempt {n} when it next looks.").format(
                n=run.retry_requested
            ),
            Level.SUCCESS,
            about=run.id,
        )
        self._show_header(run)
        self.events_pane.grow(run)

    def is_failed(self) -> bool:
        return self.run is not None and self.run.status == RunStatus.FAILED

    def can_retry(self) -> bool:
        """A failed run shown, no retry of it waiting to start, on a writable desk."""
        run = self.run
        return (
            run is not None
            and not self.ctx.journal.read_only
            and run.status == RunStatus.FAILED
            and not run.retry_pending
        )

    def can_cancel(self) -> bool:
        """A run shown, still going, not asked to cancel yet, on a writable desk."""
        run = self.run
        return (
            run is not None
            and not self.ctx.journal.read_only
            and not run.status.terminal
            and not run.cancel_requested
        )

    @Slot()
    def _export_json(self) -> None:
        if self.run_id:
            self.exporter.run_json(self.run_id)

    @Slot()
    def _export_jsonl(self) -> None:
        if self.run_id:
            self.exporter.run_jsonl(self.run_id)

    @Slot()
    def copy_run(self) -> None:
        if self.run is not None:
            QGuiApplication.clipboard().setText(fmt.pretty_json(dump(self.run)))

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message, action="Retry", on_action=self.refresh)
