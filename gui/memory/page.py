"""The Memory page: a scope tree with counts and token budgets; entries filtered, searched
and sorted in the store; pending conflicts; and on the right the selected entry (content,
history, edits) or conflict (side-by-side review), or several conflicts at once (bulk).

Keyboard: Tab moves between the tree, filters, lists and the detail; arrows move in a
list; Shift+arrows / Ctrl+A select several conflicts; the detail's buttons carry Alt
mnemonics (Alt+K keep local, Alt+T take incoming, Alt+M merge, Alt+D dismiss, Alt+E edit,
Alt+P pin, Alt+O confirm, Alt+M remove, Alt+A reveal); Ctrl+F searches. Every one of
those buttons is also a command in the menu "Memory" and the Ctrl+K palette
(gui/memory/commands.py).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core.memory.views import MemoryQuery
from proctor.core.models import ChangeKind, ConflictStatus, MemoryScope, Trust

from ..decide.conflict_view import ConflictReview, load_conflict, resolve_call
from ..decide.reveal import RevealState, label, token_limit
from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.delegates import RowDelegate
from ..widgets.labels import plain_label, section
from ..widgets.list_page import ListPage, choice_combo, fill_combo, make_table
from ..widgets.message_bar import Level
from .bulk import BulkPanel, bulk_resolve
from .commands import MemoryCommands
from .entry import EntryDetail, load_entry
from .model import ConflictsModel, EntriesModel
from .scopes import ScopeTree

SORTS: list[tuple[str, Any]] = [
    ("Recently updated", ("updated", True)),
    ("Least recently updated", ("updated", False)),
    ("Highest priority", ("priority", True)),
    ("Lowest priority", ("priority", False)),
    ("Recently used", ("used", True)),
    ("Least recently used", ("used", False)),
    ("Newest", ("created", True)),
    ("Title A–Z", ("title", False)),
]
FLAGS: list[tuple[str, Any]] = [
    ("Any flags", (None, None)),
    ("Pinned", (True, None)),
    ("Not pinned", (False, None)),
    ("Confirmed", (None, True)),
    ("Not confirmed", (None, False)),
]
REMOVED: list[tuple[str, Any]] = [
    ("Live entries", False),
    ("Removed only", True),
    ("Live and removed", None),
]
TRUSTS: list[tuple[str, Any]] = [("Any trust", None)] + [
    (label(t.value).capitalize(), t.value) for t in Trust
]
CHOICE_DONE = {
    ConflictStatus.ACCEPTED_LOCAL: "Kept local",
    ConflictStatus.ACCEPTED_INCOMING: "Took incoming",
    ConflictStatus.MERGED: "Merged",
    ConflictStatus.DISMISSED: "Dismissed",
}


class MemoryPage(ListPage):
    """Signals:
    open_run(str): the operator asked to see a run (an entry's source, a conflict's run).
    open_event(str, int): ... at one of its events (the run event of a memory change).
    """

    open_run = Signal(str)
    open_event = Signal(str, int)
    change_kinds = frozenset({ChangeKind.MEMORY, ChangeKind.CONFLICT})
    title = "Memory"
    stretch_column = 1

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        self.reveals = RevealState()
        super().__init__(ctx, EntriesModel(ctx.runner, self.reveals), parent)
        self.reveals.setParent(self)
        self.read_only = bool(ctx.journal.read_only)
        self.limit = token_limit(ctx.settings)
        self.scope: tuple[MemoryScope | None, str | None] = (None, None)
        self._sized = False
        self.shown: tuple[str, str] | None = None  # ("entry"|"conflict", id) on the right
        self.conflicts = ConflictsModel(ctx.runner, self)
        # "From" stretches: the Entry column keeps its width (it was squeezed to 20 px)
        self.conflicts_table = make_table(self.conflicts, "Pending memory conflicts", self, 1)
        self.conflicts_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.conflicts_table.setItemDelegate(RowDelegate(self.conflicts_table))
        self.conflicts_table.selectionModel().selectionChanged.connect(self._repaint_conflicts)
        self.tree = ScopeTree(self)
        MemoryCommands(self, ctx.registry).register()  # the buttons below are built from them
        self.entry = EntryDetail(
            ctx.journal.memory, self.reveals, ctx.registry, self, read_only=self.read_only
        )
        self.review = ConflictReview(
            self.reveals, ctx.registry, "memory", self, read_only=self.read_only
        )
        self.bulk = BulkPanel(ctx.registry, "memory", self, read_only=self.read_only)
        self.empty = plain_label(
            tr("Select an entry or a conflict."), self, name="Muted", selectable=False
        )
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._filters()
        self._layout()
        self._connect()

    # ------------------------------------------------------------ building
    def _filters(self) -> None:
        self.kind = choice_combo("Entry kind", [("Any kind", None)], self)
        self.trust = choice_combo("Trust level", TRUSTS, self)
        self.sensitivity = choice_combo("Sensitivity", [("Any sensitivity", None)], self)
        self.flags = choice_combo("Pinned or confirmed", FLAGS, self)
        self.removed = choice_combo("Removed entries", REMOVED, self)
        self.sort = choice_combo("Sort entries by", SORTS, self)
        row = QHBoxLayout()
        for combo in (self.kind, self.trust, self.sensitivity, self.flags, self.removed, self.sort):
            row.addWidget(combo)
            combo.currentIndexChanged.connect(self.apply_query)
        row.addStretch(1)
        self.body.insertLayout(1, row)
        self.search.setPlaceholderText(tr("Search titles and content"))
        find = QShortcut(QKeySequence("Ctrl+F"), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.search.setFocus)

    def _layout(self) -> None:
        middle = QWidget(self)
        column = QVBoxLayout(middle)
        column.setContentsMargins(0, 0, 0, 0)
        self.conflicts_title = section("Pending conflicts", middle)
        lists = QSplitter(Qt.Orientation.Vertical, middle)
        lists.addWidget(self.table)
        lower = QWidget(lists)
        box = QVBoxLayout(lower)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.conflicts_title)
        box.addWidget(self.conflicts_table)
        lists.addWidget(lower)
        lists.setStretchFactor(0, 3)
        lists.setStretchFactor(1, 2)
        column.addWidget(lists)
        conflict_pane = QWidget(self)
        pane = QVBoxLayout(conflict_pane)
        pane.setContentsMargins(0, 0, 0, 0)
        pane.addWidget(self.review, 1)
        pane.addWidget(self.review.form)
        self.right = QStackedWidget(self)
        for widget in (self.empty, self.entry, conflict_pane, self.bulk):
            self.right.addWidget(widget)
        self.conflict_pane = conflict_pane
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("MemorySplitter")
        split.addWidget(self.tree)
        split.addWidget(middle)
        split.addWidget(self.right)
        split.setChildrenCollapsible(False)
        # the lists are what one reads first: they get the most room, the detail the rest
        split.setSizes([240, 620, 460])
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        self.splitter = split
        self.add_main(split)

    def _connect(self) -> None:
        self.tree.scope_chosen.connect(self._on_scope)
        self.table.selectionModel().currentChanged.connect(self._on_entry_current)
        self.conflicts_table.selectionModel().currentChanged.connect(self._on_conflict_current)
        self.conflicts_table.selectionModel().selectionChanged.connect(self._on_conflict_selection)
        self.conflicts.loaded.connect(self._on_conflicts_loaded)
        self.table.pressed.connect(self._on_entry_pressed)
        self.conflicts_table.pressed.connect(self._on_conflict_pressed)
        self.table.installEventFilter(self)
        self.conflicts_table.installEventFilter(self)
        self.entry.write_requested.connect(self._on_entry_write)
        self.entry.reveal_requested.connect(self.reveal)
        self.entry.open_run.connect(self.open_run)
        self.entry.open_event.connect(self.open_event)
        self.review.reveal_requested.connect(self.reveal)
        self.review.resolve_requested.connect(self._on_resolve)
        self.review.open_run.connect(self.open_run)
        self.bulk.resolve_requested.connect(self._on_bulk)
        for source in (self.entry, self.review, self.bulk):  # the commands follow the widgets
            source.buttons_changed.connect(self.ctx.registry.refresh)
        self.right.currentChanged.connect(self.ctx.registry.refresh)

    # ------------------------------------------------------------ querying
    def query(self) -> MemoryQuery:
        sort, descending = self.sort.currentData()
        pinned, confirmed = self.flags.currentData()
        trust = self.trust.currentData()
        return MemoryQuery(
            scope=self.scope[0],
            scope_key=self.scope[1],
            kind=self.kind.currentData(),
            trust=Trust(trust) if trust else None,
            sensitivity=self.sensitivity.currentData(),
            pinned=pinned,
            confirmed=confirmed,
            deleted=self.removed.currentData(),
            text=self.text(),
            sort=sort,
            descending=descending,
        )

    def apply_query(self) -> None:
        assert isinstance(self.model, EntriesModel)
        self.model.show(self.journal, self.query())
        self.conflicts.show(self.journal, *self.scope)
        self._load_side()

    def refreshed(self) -> None:
        self.conflicts.refresh()
        self._load_side()
        self.reload_detail()

    def _load_side(self) -> None:
        memory, limit = self.journal.memory, self.limit
        self.ctx.runner.run(
            lambda: (memory.scopes(), memory.facets()),
            on_done=partial(self._on_side, limit),
            on_error=self._on_failed,
            owner=self,
        )

    def set_token_limit(self, limit: int) -> None:
        """A new budget per scope (Preferences): the scope tree measures against it."""
        if limit != self.limit:
            self.limit = limit
            self._load_side()

    def _on_side(self, limit: int, result: tuple[list[Any], dict[str, list[str]]]) -> None:
        usages, facets = result
        self.tree.set_usage(usages, limit)
        fill_combo(self.kind, "Any kind", facets.get("kind", []))
        fill_combo(self.sensitivity, "Any sensitivity", facets.get("sensitivity", []))

    @Slot(object, object)
    def _on_scope(self, scope: MemoryScope | None, scope_key: str | None) -> None:
        self.scope = (scope, scope_key)
        assert isinstance(self.model, EntriesModel)
        self.model.show(self.journal, self.query())
        self.conflicts.show(self.journal, scope, scope_key)

    @Slot()
    def _on_conflicts_loaded(self) -> None:
        n = self.conflicts.rowCount()
        self.conflicts_title.setText(
            tr("Pending conflicts ({n})").format(n=n) if n else tr("Pending conflicts (none)")
        )

    # ------------------------------------------------------------ the right-hand side
    @Slot(QModelIndex, QModelIndex)
    def _on_entry_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = self.model.item(current.row()) if current.isValid() else None
        if item is not None and self.shown != ("entry", item.id):
            self.show_detail("entry", item.id)

    @Slot(QModelIndex, QModelIndex)
    def _on_conflict_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = self.conflicts.item(current.row()) if current.isValid() else None
        if (
            item is not None
            and len(self.selected_conflicts()) <= 1
            and self.shown != ("conflict", item.id)
        ):
            self.show_detail("conflict", item.id)

    def eventFilter(self, watched: Any, event: Any) -> bool:
        """Focus entering a list shows its current item on the right (keyboard users)."""
        if event.type() == QEvent.Type.FocusIn:
            if watched is self.table and self.table.currentIndex().isValid():
                self._on_entry_pressed(self.table.currentIndex())
            elif watched is self.conflicts_table and self.conflicts_table.currentIndex().isValid():
                self._on_conflict_selection()
        return super().eventFilter(watched, event)

    @Slot(QModelIndex)
    def _on_entry_pressed(self, index: QModelIndex) -> None:
        self._on_entry_current(index, QModelIndex())

    @Slot(QModelIndex)
    def _on_conflict_pressed(self, index: QModelIndex) -> None:
        item = self.conflicts.item(index.row())
        if item is not None and len(self.selected_conflicts()) <= 1:
            self.show_detail("conflict", item.id)

    @Slot(QItemSelection, QItemSelection)
    def _on_conflict_selection(self, *_: Any) -> None:
        chosen = self.selected_conflicts()
        if len(chosen) > 1:
            self.shown = None
            self.bulk.show_items(chosen)
            self.right.setCurrentWidget(self.bulk)
            return
        current = self.conflicts_table.currentIndex()
        item = (
            chosen[0]
            if chosen
            else self.conflicts.item(current.row())
            if current.isValid()
            else None
        )
        if item is not None and self.shown != ("conflict", item.id):
            self.show_detail("conflict", item.id)

    def selected_conflicts(self) -> list[Any]:
        rows = sorted(i.row() for i in self.conflicts_table.selectionModel().selectedRows())
        return [c for c in (self.conflicts.item(r) for r in rows) if c is not None]

    def show_detail(self, kind: str, item_id: str) -> None:
        """Show an entry or a conflict on the right (loaded off the GUI thread)."""
        if self.shown != (kind, item_id) and kind == "conflict":
            self.review.clear_draft()
        self.shown = (kind, item_id)
        if kind == "conflict":
            self.review.expect(item_id)
        self.right.setCurrentWidget(self.entry if kind == "entry" else self.conflict_pane)
        self.reload_detail()

    def reload_detail(self) -> None:
        if self.shown is None:
            return
        kind, item_id = self.shown
        memory = self.journal.memory
        fetch = (
            (lambda: load_entry(memory, item_id))
            if kind == "entry"
            else (lambda: load_conflict(memory, item_id))
        )
        # latest wins: a read for the item shown before, or an older read of this one, is dropped
        self.ctx.runner.latest(
            "detail", fetch, on_done=self._on_detail, on_error=self._on_detail_error, owner=self
        )

    def _on_detail(self, data: Any) -> None:
        if self.shown is None:
            return
        if self.shown[0] == "entry":
            self.entry.show_entry(data)
        else:
            self.review.show_conflict(data)

    def _on_detail_error(self, exc: BaseException) -> None:
        bar = self.entry.message if self.shown and self.shown[0] == "entry" else self.review.notice
        self.ctx.presenter.present(exc, inline=bar)

    # ------------------------------------------------------------ writes
    @Slot(str)
    def reveal(self, entry_id: str) -> None:
        """Reveal a sensitive entry: the store audits the look first."""
        if self.read_only:
            return
        memory = self.journal.memory
        self.ctx.runner.run(
            lambda: memory.reveal(entry_id),
            on_done=self._on_revealed,
            on_error=self._on_write_error,
            owner=self,
            write=True,
        )

    def _on_revealed(self, entry: Any) -> None:
        self.reveals.add(entry.id)

    @Slot(str, object)
    def _on_entry_write(self, what: str, fn: Any) -> None:
        self.entry.message.show_message(
            tr("{what}ing…").format(what=what.rstrip("d")) if what != "Saved" else tr("Saving…"),
            Level.INFO,
        )
        self.ctx.runner.run(
            fn,
            on_done=partial(self._on_entry_written, what),
            on_error=self._on_write_error,
            owner=self,
            write=True,
        )

    def _on_entry_written(self, what: str, entry: Any) -> None:
        text = tr("{what}: “{title}” is now version {version}.").format(
            what=what, title=entry.title, version=entry.version
        )
        shown = self.entry.entry()
        if shown is None or shown.id != entry.id:  # another entry is shown now: say it here
            self.message.show_message(text, Level.SUCCESS)
            return
        if what == "Saved":
            self.entry.edit_saved()
        self.entry.message.show_message(text, Level.SUCCESS, about=entry.id)

    def _on_write_error(self, exc: BaseException) -> None:
        bar = self.entry.message if self.shown and self.shown[0] == "entry" else self.review.notice
        self.ctx.presenter.present(exc, inline=bar)
        self.reload_detail()

    def _on_resolve_refused(self, exc: BaseException) -> None:
        """Said on the page (it stays when the list moves on); the review reloads to show
        what the conflict and its entry look like now."""
        self.review.notice.clear()
        self.ctx.presenter.present(exc, inline=self.message)
        self.reload_detail()
        self.conflicts.refresh()

    @Slot(object, object, str)
    def _on_resolve(self, choice: ConflictStatus, merged: str | None, reason: str) -> None:
        data = self.review.data
        if data is None or self.shown != ("conflict", data.item.id):
            return
        self.review.notice.show_message(tr("Saving your decision…"), Level.INFO)
        call = resolve_call(self.journal.memory, data, choice, merged, reason)
        self.ctx.runner.run(
            call,
            on_done=partial(self._on_resolved, choice),
            on_error=self._on_resolve_refused,
            owner=self,
            write=True,
        )

    def _on_resolved(self, choice: ConflictStatus, item: Any) -> None:
        self.review.clear_draft()
        self.review.notice.clear()
        self.message.show_message(f"{CHOICE_DONE[choice]}: “{item.title}”.", Level.SUCCESS)

    @Slot(object, str)
    def _on_bulk(self, choice: ConflictStatus, reason: str) -> None:
        items = self.bulk.items
        memory = self.journal.memory
        self.message.show_message(
            tr("{CHOICE_DONE} for {items} conflicts…").format(
                CHOICE_DONE=CHOICE_DONE[choice], items=len(items)
            )
        )
        self.ctx.runner.run(
            lambda: bulk_resolve(memory, items, choice, reason),
            on_done=partial(self._on_bulk_done, choice),
            on_error=self._on_write_error,
            owner=self,
            write=True,
        )

    def _on_bulk_done(self, choice: ConflictStatus, results: list[tuple[Any, str | None]]) -> None:
        bad = [(c, e) for c, e in results if e is not None]
        text = f"{CHOICE_DONE[choice]} for {len(results) - len(bad)} of {len(results)} conflicts."
        if bad:
            text += f" {len(bad)} refused — " + "; ".join(f"“{c.title}”: {e}" for c, e in bad[:3])
        self.message.show_message(text, Level.WARNING if bad else Level.SUCCESS)
        self.conflicts_table.clearSelection()
        self.shown = None
        self.right.setCurrentWidget(self.empty)

    @Slot()
    def _repaint_conflicts(self) -> None:
        """One selected row or several look different: repaint them all."""
        self.conflicts_table.viewport().update()

    # ------------------------------------------------------------ focus
    def focus_list(self) -> None:
        if self.conflicts.rowCount() and not self.model.rowCount():
            self.conflicts_table.setFocus()
        else:
            self.table.setFocus()

    def focus_conflicts(self) -> None:
        """Move to the conflicts list and show its current conflict (or the first)."""
        self.conflicts_table.setFocus()
        if not self.conflicts_table.currentIndex().isValid() and self.conflicts.rowCount():
            self.conflicts_table.selectRow(0)
        else:
            self._on_conflict_selection()

    def show_conflict(self, item_id: str) -> None:
        """Open a conflict's review (e.g. from a link)."""
        self.show_detail("conflict", item_id)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self._sized:  # first show: share the real width (tree, lists, detail)
            self._sized = True
            width = max(900, self.splitter.width())
            self.splitter.setSizes([int(width * 0.21), int(width * 0.36), int(width * 0.43)])

    def start(self) -> None:
        super().start()
        QTimer.singleShot(0, self._tick_start)

    def _tick_start(self) -> None:
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._on_tick)
        self._tick.start()

    @Slot()
    def _on_tick(self) -> None:
        if self.isVisible():
            self.conflicts.tick()
            self.review.tick()
