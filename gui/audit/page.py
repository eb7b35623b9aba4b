"""The Audit page: the audit log, keyset-paged by sequence."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QWidget

from proctor.core.models import AuditEntry, Page

from ..tasks import TaskRunner
from ..widgets import fmt
from ..widgets.list_page import ListPage, choice_combo
from ..widgets.paged_model import Column, PagedModel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
ENTITIES = [("All entities", None)] + [(k.capitalize(), k) for k in (
    "approval", "interaction", "reconciliation", "effect", "run", "rule", "memory")]


def change_text(a: AuditEntry) -> str:
    if a.before is None and a.after is None:
        return ""
    return f"{fmt.bounded(fmt.pretty_json(a.before), 80)} → {fmt.bounded(fmt.pretty_json(a.after), 80)}"


COLUMNS = [
    Column("#", lambda a: str(a.sequence), align=RIGHT, width=64),
    Column("When", lambda a: fmt.clock(a.created_at), align=RIGHT, width=130),
    Column("Actor", lambda a: a.actor, width=160),
    Column("Action", lambda a: a.action, width=190),
    Column("Entity", lambda a: f"{a.entity_kind} {a.entity_id}", width=220),
    Column("Reason", lambda a: a.reason or "", tip=lambda a: a.reason or "", width=200),
    Column("Change", change_text, tip=change_text, width=300),
]


class AuditModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, COLUMNS, lambda a: a.id, lambda a: a.sequence, parent)

    def show(self, journal: Any, *, action_prefix: str | None, entity_kind: str | None) -> None:
        audit = journal.audit

        def fetch(cursor: str | None, limit: int) -> Page:
            return audit.list(before=int(cursor) if cursor else None, limit=limit,
                              action_prefix=action_prefix, entity_kind=entity_kind)

        self.set_query(fetch)


class AuditPage(ListPage):
    change_kinds = frozenset({"audit"})
    title = "Audit"
    stretch_column = 6

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(ctx, AuditModel(ctx.runner), parent)
        self.model.setParent(self)
        self.search.setPlaceholderText("Action starts with… (e.g. approval.)")
        self.search.setAccessibleName("Filter audit by action prefix")
        self.entity = choice_combo("Entity kind", ENTITIES, self)
        self.entity.currentIndexChanged.connect(self.apply_query)
        self.layout_top.addWidget(self.entity)
        self.add_main(self.table)

    def apply_query(self) -> None:
        assert isinstance(self.model, AuditModel)
        self.model.show(self.journal, action_prefix=self.text(),
                        entity_kind=self.entity.currentData())
