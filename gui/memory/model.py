"""The Memory page's list models: entries (keyset-paged, filtered and sorted in the store)
and pending conflicts."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Slot

from proctor.core import Journal
from proctor.core.memory.views import MemoryQuery
from proctor.core.models import Conflict, MemoryEntry, Page

from ..decide.reveal import RevealState, label
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.paged_model import Column, PagedModel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
CONFLICT_LIMIT = 500


def flags_text(e: MemoryEntry) -> str:
    return " ".join(
        f
        for f, on in (("pinned", e.pinned), ("confirmed", e.confirmed), ("removed", e.deleted))
        if on
    )


def last_used_text(e: MemoryEntry) -> str:
    return fmt.when(e.last_used_at) if e.use_count else tr("never")


def used_tip(e: MemoryEntry) -> str:
    if not e.use_count:
        return tr("No agent has reported reading this entry.")
    return tr("Read by agents {count} times; last at {clock}.").format(
        count=f"{e.use_count:,}", clock=fmt.clock(e.last_used_at)
    )


class EntriesModel(PagedModel):
    """Entries matching a MemoryQuery; sensitive content stays hidden until revealed."""

    def __init__(
        self, runner: TaskRunner, reveals: RevealState, parent: QObject | None = None
    ) -> None:
        self.reveals = reveals
        columns = [
            Column(QT_TR_NOOP("Title"), lambda e: e.title, tip=lambda e: e.title, width=200),
            Column(QT_TR_NOOP("Content"), self._content, tip=self._content, width=300),
            Column(QT_TR_NOOP("Scope"), lambda e: f"{e.scope.value}:{e.scope_key}", width=140),
            Column(QT_TR_NOOP("Kind"), lambda e: e.kind, width=80),
            Column(QT_TR_NOOP("Pri."), lambda e: str(e.priority), align=RIGHT, width=40),
            Column(QT_TR_NOOP("Trust"), lambda e: label(e.trust.value), width=110),
            Column(QT_TR_NOOP("Sensitivity"), lambda e: e.sensitivity, width=84),
            Column(QT_TR_NOOP("Flags"), flags_text, width=110),
            Column(QT_TR_NOOP("Ver."), lambda e: str(e.version), align=RIGHT, width=44),
            Column(
                QT_TR_NOOP("Updated"),
                lambda e: fmt.when(e.updated_at),
                tip=lambda e: fmt.other(e.updated_at),
                align=RIGHT,
                width=120,
                live=True,
            ),
            Column(QT_TR_NOOP("Last used"), last_used_text, tip=used_tip, align=RIGHT, width=120),
        ]
        super().__init__(runner, columns, lambda e: e.id, self._order, parent)
        self.query = MemoryQuery()
        reveals.changed.connect(self._on_revealed)

    def _content(self, e: MemoryEntry) -> str:
        return e.content if self.reveals.shows(e) else f"(hidden: {e.sensitivity})"

    def _order(self, e: MemoryEntry) -> Any:
        keys = {
            "updated": (e.updated_at, e.id),
            "created": (e.created_at, e.id),
            "priority": (e.priority, e.updated_at, e.id),
            "title": (e.title, e.id),
            "used": (e.last_used_at, e.id),
        }
        return keys[self.query.sort]

    def show(self, journal: Journal, query: MemoryQuery) -> None:
        self.query = query
        memory = journal.memory
        self.set_query(
            lambda cursor, limit: memory.browse(query, cursor=cursor, limit=limit),
            descending=query.descending,
        )

    @Slot(str)
    def _on_revealed(self, entry_id: str) -> None:
        row = self.row_of(entry_id)
        if row >= 0:
            self.dataChanged.emit(self.index(row, 1), self.index(row, 1))


class ConflictsModel(PagedModel):
    """Pending memory conflicts (newest first), optionally of one scope."""

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        columns = [
            Column(QT_TR_NOOP("Entry"), lambda c: c.title, tip=lambda c: c.title, width=200),
            Column(
                QT_TR_NOOP("From"),
                lambda c: c.incoming_source,
                tip=lambda c: c.incoming_source,
                width=140,
            ),
            Column(QT_TR_NOOP("Scope"), lambda c: f"{c.scope.value}:{c.scope_key}", width=120),
            Column(
                QT_TR_NOOP("Entry version"),  # the version the incoming change was made against
                lambda c: tr("v{version}").format(version=c.local_version),
                tip=lambda c: tr("The incoming change was made against version {v}").format(
                    v=c.local_version
                ),
                align=RIGHT,
                width=90,
            ),
            Column(
                QT_TR_NOOP("Waiting"),
                lambda c: fmt.since(c.created_at),
                tip=lambda c: fmt.other(c.created_at),
                align=RIGHT,
                width=80,
                live=True,
            ),
        ]
        super().__init__(runner, columns, lambda c: c.id, lambda c: (c.created_at, c.id), parent)

    def show(self, journal: Journal, scope: Any = None, scope_key: str | None = None) -> None:
        memory = journal.memory

        def fetch(_cursor: str | None, _limit: int) -> Page:
            items = [
                c
                for c in memory.conflicts("pending", limit=CONFLICT_LIMIT)
                if (scope is None or c.scope == scope)
                and (scope_key is None or c.scope_key == scope_key)
            ]
            return Page[Conflict](items=items, next_cursor=None)

        self.set_query(fetch)
