"""The inbox page: filters, the cross-run list, and the detail of the current item.

Selection rules (keyboard first): j/k move the cursor; while several rows are selected
(x, shift/ctrl-click) the cursor moves without dropping the selection, and actions apply
to the selection; otherwise they apply to the current row. After the operator's own
decision the next row becomes current; when someone else decides the item being looked
at, the detail stays on it and says what happened.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import ChangeSet, InboxItem, InboxKind

from ..decide.decider import Decider
from ..decide.detail import DetailContext, DetailPane
from ..decide.items import only_waiter_differs
from ..decide.kinds import DETAIL_WIDGETS
from ..decide.settle import InputWatch, Settle
from ..decide.undo_bar import UndoBar
from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.delegates import ChipDelegate, RowDelegate, TwoLineDelegate
from ..widgets.labels import plain_label, plain_tip, reserve_lines
from ..widgets.message_bar import Level, MessageBar
from ..widgets.saved_views import SavedViews
from ..widgets.tables import TimeColumns
from .filters import WAITER, FilterBar
from .mine import is_mine as mine
from .model import (
    COL_AGE,
    COL_SAFETY,
    COL_SUMMARY,
    COL_WAITER,
    RESYNC_MS,
    SAFETY_ROLE,
    InboxModel,
    item_key,
)

TICK_MS = 1000
SWEEP_EVERY_S = 3.0
FACETS_AFTER_MS = 1000
PATCH_MAX = 200  # more changed items than this: reload the page instead
Flag = QItemSelectionModel.SelectionFlag
SEARCH_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Down, Qt.Key.Key_Escape)


def inbox_keys(cs: ChangeSet) -> set[str]:
    """Model keys (kind:id) of the inbox items a change set touched."""
    kinds = {kind.change_kind: kind for kind in InboxKind}
    return {
        f"{kinds[c.entity_kind].value}:{c.entity_id}" for c in cs.changes if c.entity_kind in kinds
    }


class InboxTable(QTableView):
    def __init__(self, model: InboxModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setAccessibleName(tr("Inbox items"))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(2 * self.fontMetrics().height() + 12)
        self.setItemDelegate(RowDelegate(self))  # bulk selection and cursor look different
        self.setItemDelegateForColumn(COL_SAFETY, ChipDelegate(SAFETY_ROLE, self))
        self.setItemDelegateForColumn(COL_SUMMARY, TwoLineDelegate(self))
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        for col, width in enumerate(model.column_widths()):
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_SUMMARY, QHeaderView.ResizeMode.Stretch)
        self.time_columns = TimeColumns(self, model.time_columns())
        header.setSortIndicator(COL_AGE, Qt.SortOrder.AscendingOrder)  # youngest first
        header.setSortIndicatorShown(True)
        header.setSectionsClickable(True)
        header.setToolTip(tr("Click Age to switch between newest and oldest first"))


class NewBar(QFrame):
    """ "3 new requests — Show them (N)": arrivals held while the operator works the list.
    It sits in the message bar's row (whose height is kept, shown or not), on its left, its
    room there kept while it is hidden: no band of its own is kept above the list, and
    neither the rows nor the message bar move when it comes and goes (issue 32 item 14).

    Signals:
        show_requested(): the operator asked to see them.
    """

    show_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NewBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = reserve_lines(plain_label(parent=self, selectable=False))  # never wraps
        self.button = QPushButton(tr("Show them (N)"), self)
        self.button.setAccessibleName(tr("Show the new requests"))
        self.button.clicked.connect(self.show_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 2, 6, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # laid out while hidden: the row never reflows
        self.setSizePolicy(policy)
        self.hide()

    def set_count(self, count: int) -> None:
        noun = "request" if count == 1 else "requests"
        self.label.setText(
            tr("{count} new {noun} held — the list stays put").format(count=count, noun=noun)
        )
        self.label.setToolTip(plain_tip(self.label.text()))
        self.setAccessibleName(tr("{count} new {noun}").format(count=count, noun=noun))
        self.setVisible(count > 0)

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""


class InboxPage(QWidget):
    """Signals:
    counts_stale(): the inbox changed; sidebar badges should be re-read.
    open_run(str): the operator asked to see a run.
    """

    counts_stale = Signal()
    open_run = Signal(str)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.journal = ctx.journal
        self.read_only = bool(ctx.journal.read_only)
        self.decider = Decider(ctx.journal, ctx.runner, self, ctx.settings)
        self.undo_bar = UndoBar(ctx.journal, ctx.runner, ctx.presenter, self)
        self.model = InboxModel(ctx.runner, self)
        self.filters = FilterBar(self)
        self.filters.operator = ctx.journal.actor.name  # whom "Waiting for me" names
        self.views = SavedViews(
            ctx.settings,
            "inbox",
            self.filters.state,
            self.filters.apply_state,
            lambda text: self.message.show_message(text, Level.WARNING),
            self.filters,
        )
        self.filters.row.addWidget(self.views)
        self.table = InboxTable(self.model, self)
        self.new_bar = NewBar(self)
        self.message = MessageBar(self)
        self.watch = InputWatch(self)
        self.settle = Settle(self.watch)  # what is on screen, since when, brought by whom
        self.detail = DetailPane(
            DetailContext(
                ctx.journal,
                ctx.runner,
                ctx.presenter,
                ctx.registry,
                self.decider,
                self.read_only,
                ctx.settings,
                self.settle,
            ),
            DETAIL_WIDGETS,
            self,
        )
        self._by_desk = False  # True while the desk (not the operator) moves the cursor
        self.sticky = False  # several rows are selected on purpose (x, ctrl/shift-click)
        self.decided: set[str] = set()  # keys this desk just decided (advance when they go)
        self.pinned: str | None = None  # key of an item that vanished while being looked at
        self._resume_row: int | None = None  # where to go if the pinned item was ours
        self._facets_timer = QTimer(self)  # filter menus may lag a little: rows come first
        self._facets_timer.setSingleShot(True)
        self._facets_timer.setInterval(FACETS_AFTER_MS)
        self._facets_timer.timeout.connect(self._load_facets)
        self._swept: frozenset[str] = frozenset()
        self._last_sweep = 0.0
        self._last_lapsed_sweep = 0.0
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._resync = QTimer(self)
        self._resync.setInterval(RESYNC_MS)
        self._build()
        self._connect()

    def _build(self) -> None:
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("InboxSplitter")
        left = QWidget(split)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.table, 1)
        split.addWidget(left)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 420])
        split.setChildrenCollapsible(False)
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 0)
        layout.addWidget(self.filters)
        notes = QHBoxLayout()  # the held bar beside the message bar, in the bar's kept row
        notes.setSpacing(6)
        notes.addWidget(self.new_bar, 2)
        notes.addWidget(self.message, 3)
        layout.addLayout(notes)
        layout.addWidget(split, 1)
        layout.addWidget(self.undo_bar)  # its room is kept: the list never moves for it

    def _connect(self) -> None:
        self.filters.search.installEventFilter(self)
        self.filters.changed.connect(self._on_filter)
        self.table.horizontalHeader().sectionClicked.connect(self._on_header_clicked)
        self.table.selectionModel().currentChanged.connect(self._on_current)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.pressed.connect(self._on_pressed)
        self.model.loaded.connect(self._on_loaded)
        self.model.vanished.connect(self._on_vanished)
        self.model.arrived.connect(self._on_arrived)
        self.model.failed.connect(self._on_model_failed)
        self.model.hold = self.holding
        self.model.held_changed.connect(self._on_held)
        self.new_bar.show_requested.connect(self.show_new)
        self.detail.open_run.connect(self.open_run)
        self.detail.loaded.connect(self._on_detail_loaded)
        self._tick.timeout.connect(self._on_tick)
        self._resync.timeout.connect(self.model.refresh)

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.detail.show_empty("Loading the inbox…")
        self.model.show(self.journal, self.filters.value())
        self._load_facets()
        self._tick.start()
        self._resync.start()

    def stop(self) -> None:
        """The window closes: no more ticks, sweeps or facet reads."""
        self._tick.stop()
        self._resync.stop()
        self._facets_timer.stop()

    def on_changes(self, cs: ChangeSet) -> None:
        """The watcher saw commits: refresh the list and the detail if they are concerned."""
        keys = inbox_keys(cs)
        if keys:
            if len(keys) > PATCH_MAX:
                self.model.refresh()
            else:
                self.model.patch(keys)
            if not self._facets_timer.isActive():
                self._facets_timer.start()
            self.counts_stale.emit()
        widget = self.detail.current()
        item = widget.item if widget is not None else None
        if widget is not None and item is not None and item.id in cs.ids(item.kind.change_kind):
            widget.reload()

    def on_looked(self, looks: list) -> None:
        """Agents looked at these requests (their wait's stamp, no change row): re-read
        their rows, so "agent waiting now" shows at once (the detail is not reloaded: only
        its waiter line changes)."""
        kinds = {kind.change_kind: kind for kind in InboxKind}
        keys = {f"{kinds[kind].value}:{item_id}" for kind, item_id in looks if kind in kinds}
        if keys:
            self.model.patch(keys)

    # ------------------------------------------------------------ arrivals
    def pointer_on_list(self) -> bool:
        viewport = self.table.viewport()
        return viewport.isVisible() and viewport.underMouse()

    def holding(self) -> bool:
        """Arrivals wait (behind the "N new" bar) while the operator works the list: the
        pointer is over it, or a key was pressed a moment ago."""
        return self.pointer_on_list() or self.watch.typing()

    @Slot(int)
    def _on_held(self, count: int) -> None:
        self.new_bar.set_count(count)
        self.ctx.registry.refresh()  # N shows them while some wait

    def show_new(self) -> None:
        """Let the held arrivals into the list (the current item stays current)."""
        self.model.release()

    # ------------------------------------------------------------ search keys
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        """In the search box, Enter and Down go to the results, Esc clears and goes back."""
        if obj is self.filters.search and event.type() in (
            QEvent.Type.ShortcutOverride,
            QEvent.Type.KeyPress,
        ):
            key = (
                event.key()
                if isinstance(event, QKeyEvent)
                and (  # a key without modifiers
                    event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
                )
                == Qt.KeyboardModifier.NoModifier
                else None
            )
            if key in SEARCH_KEYS:
                if event.type() == QEvent.Type.ShortcutOverride:
                    event.accept()  # the search box takes it, not a window shortcut
                    return False
                self._search_key(Qt.Key(key))
                return True
        return super().eventFilter(obj, event)

    def _search_key(self, key: Qt.Key) -> None:
        if key == Qt.Key.Key_Escape:
            self.filters.search.clear()
        self.filters.flush()
        self.focus_list()
        if self.model.rowCount():
            self.set_current_row(0)  # else the first result becomes current when it loads

    # ------------------------------------------------------------ selection
    def current_item(self) -> InboxItem | None:
        index = self.table.currentIndex()
        return self.model.item(index.row()) if index.isValid() else None

    def targets(self) -> list[InboxItem]:
        """What an action applies to: the selection while several rows are chosen, else the
        current row (or the pinned item shown in the detail)."""
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        if self.sticky and rows:
            return [self.model.item(r) for r in rows if self.model.item(r) is not None]
        item = self.current_item()
        if item is None and self.pinned is not None:
            shown = self.detail.current_item()
            return [shown] if shown is not None else []
        return [item] if item is not None else []

    def move_by(self, step: int) -> None:  # not `move`: that is QWidget.move()
        rows = self.model.rowCount()
        if rows == 0:
            return
        current = self.table.currentIndex()
        row = 0 if not current.isValid() else max(0, min(rows - 1, current.row() + step))
        if row == rows - 1 and step > 0 and self.model.canFetchMore():
            self.model.fetchMore()
        self.set_current_row(row)

    def set_current_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        flags = Flag.NoUpdate if self.sticky else Flag.ClearAndSelect | Flag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index)

    def desk_moves_to(self, row: int) -> None:
        """The desk, not the operator, makes ``row`` current (after a decision, or when the
        list changed): the item must be on screen a while before a decision counts."""
        self._by_desk = True
        try:
            self.set_current_row(row)
        finally:
            self._by_desk = False

    def open_item(self, item: InboxItem) -> None:
        """Show ``item`` (a clicked desktop notification): its row when the list has it, else
        the item alone in the detail (pinned) — the list's filters or its page may hide it.
        The desk chose what appears, so the item must be on screen a while before a decision
        counts, as after any move the desk makes."""
        self.show_new()
        self.sticky = False
        key = item_key(item)
        row = self.model.row_of(key)
        if row >= 0:
            self.desk_moves_to(row)
            return
        self.table.selectionModel().clear()
        self.pinned = key
        self.settle.showing(key, by_desk=True)
        self.detail.show_item(item)
        self.ctx.registry.refresh()

    def mark_decided(self, keys: set[str]) -> None:
        """The operator's writes for ``keys`` committed: their rows go at the next refresh
        (rows already gone are not remembered). A shown item whose row went while our write
        was on its way was ours after all: move on to where the cursor went."""
        self.decided.update(k for k in keys if self.model.row_of(k) >= 0)
        if self.pinned in keys and self._resume_row is not None:
            row, self._resume_row = self._resume_row, None
            self.pinned = None
            if 0 <= row < self.model.rowCount():
                self.desk_moves_to(row)
            else:
                self._show_current()

    def advance_from(self, key: str) -> None:
        """The operator just decided ``key``: if it is the current row, the next row becomes
        current now (the decided row disappears with the next refresh)."""
        row = self.model.row_of(key)
        if row < 0 or self.sticky or self.table.currentIndex().row() != row:
            return
        following = row + 1 if row + 1 < self.model.rowCount() else row - 1
        if following >= 0:
            self.desk_moves_to(following)

    def toggle_select(self) -> None:
        index = self.table.currentIndex()
        if not index.isValid():
            return
        mode = Flag.Select if not self.sticky else Flag.Toggle
        self.sticky = True
        self.table.selectionModel().select(index, mode | Flag.Rows)

    def clear_selection(self) -> None:
        self.sticky = False
        index = self.table.currentIndex()
        if index.isValid():
            self.table.selectionModel().select(index, Flag.ClearAndSelect | Flag.Rows)

    @Slot(QModelIndex)
    def _on_pressed(self, _index: QModelIndex) -> None:
        mods = QGuiApplication.keyboardModifiers()
        plain = not (
            mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        )
        if plain:
            self.sticky = False

    @Slot()
    def _on_selection(self) -> None:
        self.table.viewport().update()  # one selected row or several look different
        count = len(self.table.selectionModel().selectedRows())
        if count > 1:
            self.sticky = True
        elif count == 0:
            self.sticky = False
        self.ctx.registry.refresh()

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.table.viewport().update()  # the cursor's frame spans the whole row
        if self.model.applying:
            return  # a refresh moved the cursor; _on_vanished decides what to show
        if current.isValid():
            self.pinned = None
        self._show_current()

    def _show_current(self) -> None:
        item = self.current_item()
        if item is not None:
            self.settle.showing(item_key(item), by_desk=self._by_desk)
            self.detail.show_item(item)
        elif self.pinned is None:
            self.settle.showing(None, by_desk=True)
            self.detail.show_empty(self._empty_text())
        self.ctx.registry.refresh()

    @Slot(object)
    def _on_detail_loaded(self, item: InboxItem) -> None:
        """A detail shows its whole entity: the settle clock starts, and decision commands
        follow what it says (e.g. decided elsewhere: Approve is disabled at once)."""
        shown = self.detail.current_item()
        if shown is not None and item_key(shown) == item_key(item):
            self.settle.loaded(item_key(item))
        self.ctx.registry.refresh()

    def _empty_text(self) -> str:
        if not self.model.has_loaded:
            return tr("Loading the inbox…")
        if self.model.rowCount():
            return tr("Select an item to see it whole.")
        f = self.model.filter
        if f.snoozed:
            return tr("Nothing is snoozed.")
        if f.kinds or f.agent or f.project or f.safety_class or f.text or f.waited or mine(f):
            return tr("No waiting item matches these filters.")
        return tr("Nothing waits for you. New requests appear here as agents make them.")

    # ------------------------------------------------------------ model events
    @Slot(int)
    def _on_header_clicked(self, section: int) -> None:
        """Age and Waiter are the sortable columns (the store orders, never a proxy): Age
        switches newest and oldest first, Waiter puts the agents waiting now first."""
        sort = self.filters.sort
        if section == COL_AGE:
            sort.setCurrentIndex(1 if sort.currentIndex() == 0 else 0)
        elif section == COL_WAITER:
            sort.setCurrentIndex(max(0, sort.findData(WAITER)))
        self._show_sort()

    def _show_sort(self) -> None:
        data = self.filters.sort.currentData()
        self.table.horizontalHeader().setSortIndicator(
            COL_WAITER if data == WAITER else COL_AGE,
            Qt.SortOrder.DescendingOrder if data is False else Qt.SortOrder.AscendingOrder,
        )

    @Slot(object)
    def _on_filter(self, f: Any) -> None:
        self._show_sort()
        self.pinned = None
        self.sticky = False
        self.model.show(self.journal, f)

    @Slot()
    def _on_loaded(self) -> None:
        if self.model.held and not self.model.rowCount():
            self.show_new()  # nothing left to move: let them in
        if (
            not self.table.currentIndex().isValid()
            and self.pinned is None
            and self.model.rowCount()
        ):
            self.set_current_row(0)  # the first item of a list (not an advance)
        elif only_waiter_differs(row := self.current_item(), self.detail.current_item()):
            assert row is not None
            self.detail.show_waiter_of(row)  # an agent's stamp: no reload
        elif self.current_item() != self.detail.current_item() or self.current_item() is None:
            self._by_desk = True  # a new row, or the row's snapshot (version, snooze) changed
            try:
                self._show_current()
            finally:
                self._by_desk = False

    @Slot(list)
    def _on_vanished(self, keys: list[str]) -> None:
        shown = self.detail.current_item()
        shown_key = item_key(shown) if shown is not None else None
        mine = shown_key is not None and shown_key in self.decided
        self.decided.difference_update(keys)
        if shown_key not in keys:
            return
        if mine or self.detail.current() is None:
            self.pinned = None
            self._by_desk = True  # the row under the cursor went: the next one is shown
            try:
                self._show_current()
            finally:
                self._by_desk = False
            return
        # decided elsewhere, or by our own write still on its way (the watcher can see it
        # before its result comes back): stay until we know, and say what happened
        in_flight = shown_key is not None and self.decider.busy(shown_key)
        self._resume_row = self.table.currentIndex().row() if in_flight else None
        self.pinned = shown_key
        self.sticky = False
        self.table.selectionModel().clear()
        widget = self.detail.current()
        if widget is not None:
            widget.reload()

    @Slot(list)
    def _on_arrived(self, keys: list[str]) -> None:
        self.decided.difference_update(keys)  # e.g. woken from a snooze

    @Slot(object)
    def _on_model_failed(self, exc: BaseException) -> None:
        self.ctx.presenter.present(
            exc, inline=self.message, action="Retry", on_action=self.model.refresh
        )

    # ------------------------------------------------------------ facets, clock, expiry
    @Slot()
    def _load_facets(self) -> None:
        # coalesced: one read of the filter choices in flight, the last request after it
        self.ctx.runner.coalesce(
            "facets",
            self.journal.inbox.facets,
            on_done=self._on_facets,
            on_error=lambda _exc: None,
            owner=self,
        )

    def _on_facets(self, facets: dict[str, list[str]]) -> None:
        self.filters.set_facets(facets)

    @Slot()
    def _on_tick(self) -> None:
        self.model.tick()
        self.detail.tick()
        self._sweep_expired()
        self._sweep_lapsed()

    def _sweep_expired(self) -> None:
        """Let the store expire what is due (the agent may not be polling any more)."""
        now = time.time()
        due = frozenset(
            item_key(i)
            for i in self.model.due_items(now)
            if i.kind in (InboxKind.APPROVAL, InboxKind.QUESTION)
        )
        if (
            self.read_only
            or not due
            or due <= self._swept
            or now - self._last_sweep < SWEEP_EVERY_S
        ):
            return
        self._swept, self._last_sweep = due, now
        approvals, questions = self.journal.approvals, self.journal.questions
        self.ctx.runner.run(
            lambda: approvals.expire_due() + questions.expire_due(),
            on_error=self._on_sweep_error,
            owner=self,
            write=True,
        )

    def _sweep_lapsed(self) -> None:
        """Let the store mark effects whose lease lapsed ambiguous (their agent was killed
        mid-effect and nobody else reserves): they reach the inbox by themselves. The core
        reads first and writes only when a lease lapsed."""
        now = time.time()
        if self.read_only or now - self._last_lapsed_sweep < SWEEP_EVERY_S:
            return
        self._last_lapsed_sweep = now
        self.ctx.runner.run(
            self.journal.effects.sweep_expired,
            on_error=self._on_sweep_error,
            owner=self,
            write=True,
        )

    def _on_sweep_error(self, exc: BaseException) -> None:
        self.message.show_message(
            tr("Could not record expiries: {exc}").format(exc=exc), Level.WARNING
        )

    def focus_list(self) -> None:
        self.table.setFocus()
