"""The event timeline of one run: a lazily loaded table, filter by type, jump to a time,
find in payloads, follow the tail, and the selected event's payload (tree, raw, copy).

Following: while "Follow new events" is on, new events scroll into view; otherwise the
operator's scroll position never moves when events arrive. Scrolling to the very end
turns following on, scrolling away turns it off (like a terminal).
"""

from __future__ import annotations

import json
from functools import partial

from PySide6.QtCore import QDateTime, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.audit import timeline
from proctor.core.models import Run, RunEvent

from ..infra.context import PageContext
from ..infra.i18n import tr
from ..infra.tasks import Ticket
from ..widgets import fmt
from ..widgets.bounded_text import LINE_CHARS, preview
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label
from ..widgets.prepare import prepare, text_size
from .events_model import BLOCK, COL_SUMMARY, EventBlockModel, precise_clock

RAW_MAX = 200_000  # characters of a payload shown raw (copy has all of it)


def raw_text(payload: object) -> str:
    """The payload as the Raw tab shows it: pretty JSON, its first RAW_MAX characters,
    escaped, lines longer than LINE_CHARS broken for display (a 3 MB string is one line)."""
    head, left = preview(fmt.pretty_json(payload), RAW_MAX, LINE_CHARS)
    return head + (f"\n… {left:,} more characters (cut here; Copy JSON has it all)" if left else "")


WIDTHS = (60, 100, 150, 360, 130, 56)


def event_json(event: RunEvent) -> str:
    return json.dumps(event.model_dump(mode="json"), indent=2, ensure_ascii=False, sort_keys=True)


def type_choices(counts: dict[str, int]) -> list[tuple[str, list[str] | None]]:
    """ "All", each family (``tool.*``) with more than one type, then each type."""
    total = sum(counts.values())
    choices: list[tuple[str, list[str] | None]] = [(f"All event types ({total:,})", None)]
    families: dict[str, list[str]] = {}
    for name in counts:
        if "." in name:
            families.setdefault(name.split(".", 1)[0], []).append(name)
    for family, names in sorted(families.items()):
        if len(names) > 1:
            n = sum(counts[t] for t in names)
            choices.append((f"{family}.* ({n:,})", sorted(names)))
    choices += [(f"{name} ({n:,})", [name]) for name, n in sorted(counts.items())]
    return choices


class EventTable(QTableView):
    def __init__(self, model: EventBlockModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setAccessibleName(tr("Run events"))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # never measures 100k rows
        rows.setDefaultSectionSize(24)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        for col, width in enumerate(WIDTHS):
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_SUMMARY, QHeaderView.ResizeMode.Stretch)


class EventDetail(QWidget):
    """The selected event: facts, payload as a tree and raw, copy buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown: RunEvent | None = None
        self._raw_ticket: Ticket | None = None
        self.facts = plain_label(parent=self, name="Muted")
        self.facts.setWordWrap(False)  # four short lines; a wrapped label can lose its height
        self.facts.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.facts.setFixedHeight(self.facts.fontMetrics().lineSpacing() * 4 + 6)
        self.facts.setAccessibleName(tr("Event facts"))
        self.tree = JsonTree("Payload", self)
        self.raw = QPlainTextEdit(self)
        self.raw.setReadOnly(True)
        self.raw.setAccessibleName(tr("Payload as raw JSON"))
        self.raw.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.tree, tr("Tree"))
        self.tabs.addTab(self.raw, tr("Raw"))
        self.copy_event = QPushButton(tr("Copy event as JSON"), self)
        self.copy_event.setAccessibleName(tr("Copy the whole event as JSON"))
        self.copy_event.clicked.connect(self.copy_all)
        self.tabs.setCornerWidget(self.copy_event, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.facts)
        layout.addWidget(self.tabs, 1)
        self.show_event(None)

    def show_event(self, event: RunEvent | None, loading: int | None = None) -> None:
        self.shown = event
        self.copy_event.setEnabled(event is not None)
        if event is None:
            self.facts.setText(
                tr("Loading event #{loading}…").format(loading=loading)
                if loading
                else tr("Select an event to see its payload.")
            )
            self.tree.clear()
            if self._raw_ticket is not None:
                self._raw_ticket.cancel()
            self.raw.setPlainText("")
            return
        self.facts.setText(
            tr(
                "#{sequence} · {type}\n{created_at} · {actor} · attempt {attempt} · run version "
                "{run_version}\ndigest {digest}… · previous {prev_digest}…\n{id}"
            ).format(
                sequence=event.sequence,
                type=fmt.bounded(event.type, 100),
                created_at=precise_clock(event.created_at),
                actor=fmt.bounded(event.actor, 80),
                attempt=event.attempt,
                run_version=event.run_version,
                digest=event.digest[:16],
                prev_digest=event.prev_digest[:16],
                id=event.id,
            )
        )
        self.tree.set_value(event.payload)
        payload = event.payload
        if self._raw_ticket is not None:
            self._raw_ticket.cancel()
        self.raw.setPlainText("")
        self._raw_ticket = prepare(
            lambda: raw_text(payload), self.raw.setPlainText, self, size=text_size(payload)
        )

    @Slot()
    def copy_all(self) -> None:
        if self.shown is not None:
            QGuiApplication.clipboard().setText(event_json(self.shown))


class EventsPane(QWidget):
    """Signals:
    event_selected(object): the current event (RunEvent) once it is loaded.
    failed(object): a store read failed (the exception).
    """

    event_selected = Signal(object)
    failed = Signal(object)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run: Run | None = None
        self.model = EventBlockModel(ctx.runner, self)
        self.table = EventTable(self.model, self)
        self.detail = EventDetail(self)
        self._types: list[str] | None = None
        self._pending_sequence: int | None = None
        self._scrolling = False
        self._build_tools()
        self._build()
        self._connect()

    # ------------------------------------------------------------ building
    def _build_tools(self) -> None:
        self.type_filter = QComboBox(self)
        self.type_filter.setAccessibleName(tr("Filter events by type"))
        self.type_filter.setToolTip(tr("Show only events of this type"))
        self.type_filter.setMinimumContentsLength(22)
        self.type_filter.addItem(tr("All event types"), None)
        self.when = QDateTimeEdit(self)
        self.when.setDisplayFormat("yyyy-MM-dd HH:mm:ss")
        self.when.setCalendarPopup(True)
        self.when.setAccessibleName(tr("Jump to time"))
        self.when.setToolTip(tr("Jump to the first event at or after this time"))
        self.go_time = QPushButton(tr("Go"), self)
        self.go_time.setAccessibleName(tr("Jump to the chosen time"))
        self.find_box = QLineEdit(self)
        self.find_box.setClearButtonEnabled(True)
        self.find_box.setPlaceholderText(tr("Find in payloads…"))
        self.find_box.setAccessibleName(tr("Find text in event payloads"))
        self.find_prev = QToolButton(self)
        self.find_prev.setText("◀")
        self.find_prev.setAccessibleName(tr("Find previous match"))
        self.find_prev.setToolTip(tr("Previous match (Shift+Enter)"))
        self.find_next = QToolButton(self)
        self.find_next.setText("▶")
        self.find_next.setAccessibleName(tr("Find next match"))
        self.find_next.setToolTip(tr("Next match (Enter)"))
        self.follow = QCheckBox(tr("Follow new events"), self)
        self.follow.setAccessibleName(tr("Follow new events as they arrive"))
        self.note = plain_label(parent=self, name="Muted", selectable=False)
        self.note.setWordWrap(False)
        self.note.hide()

    def _build(self) -> None:
        tools = QHBoxLayout()
        tools.addWidget(self.type_filter)
        tools.addWidget(self.when)
        tools.addWidget(self.go_time)
        tools.addWidget(self.find_box, 1)
        tools.addWidget(self.find_prev)
        tools.addWidget(self.find_next)
        tools.addWidget(self.follow)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([700, 460])
        split.setChildrenCollapsible(False)
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(tools)
        layout.addWidget(self.note)
        layout.addWidget(split, 1)

    def _connect(self) -> None:
        self.type_filter.activated.connect(self._on_type_chosen)
        self.go_time.clicked.connect(self.jump_to_time)
        self.find_box.returnPressed.connect(self.find_forward)
        self.find_next.clicked.connect(self.find_forward)
        self.find_prev.clicked.connect(self.find_backward)
        self.follow.toggled.connect(self._on_follow)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.table.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.model.block_loaded.connect(self._on_block)
        self.model.shaped.connect(self._on_shaped)
        self.model.failed.connect(self.failed)

    def set_note(self, text: str, *, from_filter: bool = False) -> None:
        """One line under the tools: what a filter, jump or search found."""
        self._note_from_filter = from_filter
        self.note.setText(text)
        self.note.setVisible(bool(text))

    # ------------------------------------------------------------ showing a run
    def set_run(self, run: Run, tail: tuple[int, list[RunEvent]] | None = None) -> None:
        """Show ``run`` from its newest events (``tail``: the last block, already read);
        follow it while it is live."""
        same = self.run is not None and self.run.id == run.id
        self.run = run
        if not same:
            self._types = None
            self.type_filter.blockSignals(True)
            self.type_filter.clear()
            self.type_filter.addItem(tr("All event types"), None)
            self.type_filter.blockSignals(False)
            self.find_box.clear()
            for key in ("find", "time"):  # a search of the run shown before is not delivered
                self.ctx.runner.drop(key, self)
            self.set_note("")
            self.detail.show_event(None)
            self.follow.setChecked(not run.status.terminal)
            self._pending_sequence = None
        self._set_time_range(run)
        self.model.set_run(self.ctx.journal, run.id, run.last_sequence, self._types)
        if tail is not None:
            self.model.put_block(*tail)
        self.load_types()

    def grow(self, run: Run) -> None:
        """The run changed (live): new events are added at the end."""
        if self.run is None or run.id != self.run.id:
            return
        self.run = run
        self._set_time_range(run)
        self.model.grow(run.last_sequence)
        if self.follow.isChecked():
            self._scroll_to_end()

    def load_types(self) -> None:
        if self.run is None:
            return
        journal, run_id = self.ctx.journal, self.run.id
        self.ctx.runner.run(
            lambda: (run_id, timeline.event_type_counts(journal, run_id)),
            on_done=self._on_types,
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_types(self, result: tuple[str, dict[str, int]]) -> None:
        run_id, counts = result
        if self.run is None or run_id != self.run.id:
            return
        self.type_filter.blockSignals(True)
        self.type_filter.clear()
        for text, types in type_choices(counts):
            self.type_filter.addItem(fmt.bounded(text, 120), types)  # agent-chosen names
        found = self.type_filter.findData(self._types) if self._types else 0
        self.type_filter.setCurrentIndex(max(found, 0))
        self.type_filter.blockSignals(False)

    def _set_time_range(self, run: Run) -> None:
        start = QDateTime.fromMSecsSinceEpoch(int(run.created_at * 1000))
        end = QDateTime.fromMSecsSinceEpoch(int(max(run.updated_at, run.created_at) * 1000) + 1000)
        self.when.setDateTimeRange(start, end)

    # ------------------------------------------------------------ filter
    @Slot(int)
    def _on_type_chosen(self, index: int) -> None:
        self.set_types(self.type_filter.itemData(index))

    def set_types(self, types: list[str] | None) -> None:
        """Show only events of ``types`` (None: all); keeps the current event if it fits."""
        if self.run is None:
            return
        keep = self.current_sequence()
        self._types = types or None
        self._pending_sequence = keep
        self.model.set_run(self.ctx.journal, self.run.id, self.run.last_sequence, self._types)
        found = self.type_filter.findData(self._types) if self._types else 0
        if found >= 0:
            self.type_filter.setCurrentIndex(found)

    @Slot()
    def _on_shaped(self) -> None:
        count = self.model.rowCount()
        if self._types is not None:
            self.set_note(
                f"{count:,} events of {', '.join(self._types[:3])}"
                + ("…" if len(self._types) > 3 else ""),
                from_filter=True,
            )
        elif getattr(self, "_note_from_filter", False):
            self.set_note("")  # the filter is gone; a search or jump note stays
        if self._pending_sequence is not None:
            sequence, self._pending_sequence = self._pending_sequence, None
            self.select_sequence(sequence, exact=False)
        elif count:
            self._scroll_to_end()

    # ------------------------------------------------------------ moving
    def current_sequence(self) -> int | None:
        index = self.table.currentIndex()
        return self.model.sequence_at(index.row()) if index.isValid() else None

    def select_sequence(self, sequence: int, *, exact: bool = True) -> None:
        """Make event ``sequence`` current. ``exact``: drop a type filter that hides it;
        otherwise the nearest shown event at or after it becomes current."""
        if self.run is None:
            return
        row = self.model.row_of_sequence(sequence)
        if exact and self._types is not None and self.model.sequence_at(row) != sequence:
            self._types = None
            self._pending_sequence = sequence
            self.model.set_run(self.ctx.journal, self.run.id, self.run.last_sequence)
            self.type_filter.setCurrentIndex(0)
            return
        if row < 0:
            return
        self.model.load_rows(row - 20, row + 20)
        self._scrolling = True
        try:
            self.table.setCurrentIndex(self.model.index(row, 0))
            self.table.scrollTo(
                self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter
            )
        finally:
            self._scrolling = False
        self.follow.setChecked(False)

    def _scroll_to_end(self) -> None:
        self._scrolling = True
        try:
            self.table.scrollToBottom()
        finally:
            self._scrolling = False

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        if self._scrolling:
            return
        bar = self.table.verticalScrollBar()
        at_end = value >= bar.maximum()
        if at_end != self.follow.isChecked():
            self.follow.blockSignals(True)
            self.follow.setChecked(at_end)
            self.follow.blockSignals(False)

    @Slot(bool)
    def _on_follow(self, on: bool) -> None:
        if on:
            self._scroll_to_end()

    # ------------------------------------------------------------ jump and find
    @Slot()
    def jump_to_time(self) -> None:
        if self.run is None:
            return
        at = self.when.dateTime().toMSecsSinceEpoch() / 1000
        journal, run_id = self.ctx.journal, self.run.id
        self.ctx.runner.latest(
            "time",
            lambda: timeline.sequence_at(journal, run_id, at),
            on_done=self._on_found_time,
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_found_time(self, sequence: int | None) -> None:
        if sequence is not None:
            self.set_note(f"First event at or after that time: #{sequence}")
            self.select_sequence(sequence)

    @Slot()
    def find_forward(self) -> None:
        self._find(backwards=False)

    @Slot()
    def find_backward(self) -> None:
        self._find(backwards=True)

    def _find(self, *, backwards: bool) -> None:
        text = self.find_box.text().strip()
        if self.run is None or not text:
            return
        journal, run_id, types = self.ctx.journal, self.run.id, self._types
        current = self.current_sequence()
        start = (
            current if current is not None else (0 if not backwards else self.run.last_sequence + 1)
        )
        wrap = 0 if not backwards else self.run.last_sequence + 1

        def search() -> tuple[int | None, bool]:
            found = timeline.find_event(
                journal, run_id, text, after=start, backwards=backwards, types=types
            )
            if found is None and start != wrap:
                return timeline.find_event(
                    journal, run_id, text, after=wrap, backwards=backwards, types=types
                ), True
            return found, False

        # latest wins: an older search that finishes after a newer one is dropped
        self.ctx.runner.latest(
            "find",
            search,
            on_done=partial(self._on_found_text, text),
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_found_text(self, searched: str, result: tuple[int | None, bool]) -> None:
        sequence, wrapped = result
        text = fmt.bounded(searched, 60)
        if sequence is None:
            self.set_note(f"No event contains “{text}”.")
            return
        self.set_note(f"“{text}” found in #{sequence}" + (" (wrapped around)" if wrapped else ""))
        self.select_sequence(sequence)

    # ------------------------------------------------------------ selection
    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_current()

    def _show_current(self) -> None:
        index = self.table.currentIndex()
        if not index.isValid():
            self.detail.show_event(None)
            return
        event = self.model.event_at(index.row())
        if event is None:
            self.detail.show_event(None, loading=self.model.sequence_at(index.row()))
            return
        if self.detail.shown is None or self.detail.shown.id != event.id:
            self.detail.show_event(event)
            self.event_selected.emit(event)

    @Slot(int)
    def _on_block(self, block: int) -> None:
        index = self.table.currentIndex()
        if index.isValid() and index.row() // BLOCK == block:
            self._show_current()
