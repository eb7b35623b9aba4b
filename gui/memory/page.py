"""The Memory page: entries (newest change first) and pending conflicts."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from proctor.core.models import Page

from ..tasks import TaskRunner
from ..widgets import fmt
from ..widgets.labels import section
from ..widgets.list_page import ListPage, choice_combo, make_table
from ..widgets.paged_model import Column, PagedModel

LIMIT = 500  # the core lists memory in one bounded page
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

ENTRY_COLUMNS = [
    Column("Title", lambda e: e.title, tip=lambda e: e.content, width=220),
    Column("Content", lambda e: e.content, tip=lambda e: e.content, width=320),
    Column("Scope", lambda e: f"{e.scope.value}:{e.scope_key}", width=150),
    Column("Kind", lambda e: e.kind, width=80),
    Column("Trust", lambda e: e.trust.value.replace("_", " "), width=120),
    Column("Flags", lambda e: " ".join(f for f, on in (("pinned", e.pinned),
                                                       ("confirmed", e.confirmed),
                                                       ("deleted", e.deleted)) if on),
           width=120),
    Column("Ver.", lambda e: str(e.version), align=RIGHT, width=48),
    Column("Updated", lambda e: fmt.clock(e.updated_at), align=RIGHT, width=130),
]
CONFLICT_COLUMNS = [
    Column("Entry", lambda c: c.title, width=220),
    Column("Incoming", lambda c: c.incoming_content, tip=lambda c: c.incoming_content,
           width=320),
    Column("From", lambda c: c.incoming_source, width=140),
    Column("Scope", lambda c: f"{c.scope.value}:{c.scope_key}", width=150),
    Column("Waiting", lambda c: fmt.age(c.created_at), align=RIGHT, width=80, live=True),
]
SCOPES = [("All scopes", None), ("Project", "project"), ("Space", "space"), ("User", "user")]


def one_page(items: list[Any]) -> Page:
    return Page[Any](items=items, next_cursor=None)


class EntriesModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, ENTRY_COLUMNS, lambda e: e.id, lambda e: (e.updated_at, e.id),
                         parent)

    def show(self, journal: Any, *, text: str | None, scope: str | None,
             deleted: bool) -> None:
        memory = journal.memory
        self.set_query(lambda _cursor, _limit: one_page(memory.list(
            scope=scope, text=text, include_deleted=deleted, limit=LIMIT)))


class ConflictsModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, CONFLICT_COLUMNS, lambda c: c.id,
                         lambda c: (c.created_at, c.id), parent)

    def show(self, journal: Any) -> None:
        memory = journal.memory
        self.set_query(lambda _cursor, _limit: one_page(memory.reconciliations(
            "pending", limit=LIMIT)))


class MemoryPage(ListPage):
    change_kinds = frozenset({"memory", "reconciliation"})
    title = "Memory"
    stretch_column = 1

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(ctx, EntriesModel(ctx.runner), parent)
        self.model.setParent(self)
        self.conflicts = ConflictsModel(ctx.runner, self)
        self.conflicts_table = make_table(self.conflicts, "Pending memory conflicts", self, 1)
        self.scope = choice_combo("Memory scope", SCOPES, self)
        self.scope.currentIndexChanged.connect(self.apply_query)
        self.deleted = choice_combo("Deleted entries",
                                    [("Hide deleted", False), ("Show deleted", True)], self)
        self.deleted.currentIndexChanged.connect(self.apply_query)
        self.layout_top.addWidget(self.scope)
        self.layout_top.addWidget(self.deleted)
        lower = QWidget(self)
        box = QVBoxLayout(lower)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(section("Pending conflicts", lower))
        box.addWidget(self.conflicts_table)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.setObjectName("MemorySplitter")
        split.addWidget(self.table)
        split.addWidget(lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        self.add_main(split)

    def apply_query(self) -> None:
        assert isinstance(self.model, EntriesModel)
        self.model.show(self.journal, text=self.text(), scope=self.scope.currentData(),
                        deleted=bool(self.deleted.currentData()))
        self.conflicts.show(self.journal)

    def refreshed(self) -> None:
        self.conflicts.refresh()

