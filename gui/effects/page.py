"""The Effects page: keyset-paged effects, ambiguous ones first by default."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QWidget

from proctor.core.models import Effect, EffectStatus

from ..tasks import TaskRunner
from ..widgets import fmt
from ..widgets.list_page import ListPage, choice_combo
from ..widgets.paged_model import Column, PagedModel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def effect_note(e: Effect) -> str:
    return e.ambiguous_reason or e.error or e.resolution_reason or ""


COLUMNS = [
    Column("Key", lambda e: e.key, tip=lambda e: e.key, width=220),
    Column("Tool", lambda e: e.tool, width=140),
    Column("Status", lambda e: e.status.value, width=100),
    Column("Safety", lambda e: e.safety_class.value.replace("_", " "), width=140),
    Column("Attempt", lambda e: str(e.attempt), align=RIGHT, width=64),
    Column("Owner", lambda e: e.lease_owner or "", width=140),
    Column("Note", effect_note, tip=effect_note, width=260),
    Column("Updated", lambda e: fmt.clock(e.updated_at), align=RIGHT, width=130),
]
STATUSES: list[tuple[str, Any]] = [("Ambiguous", [EffectStatus.AMBIGUOUS.value]),
                                   ("All effects", None)] + [
    (s.value.capitalize(), [s.value]) for s in EffectStatus if s != EffectStatus.AMBIGUOUS]


class EffectsModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, COLUMNS, lambda e: e.key, lambda e: (e.created_at, e.key),
                         parent)

    def show(self, journal: Any, status: list[str] | None) -> None:
        effects = journal.effects
        self.set_query(lambda cursor, limit: effects.list(status=status, cursor=cursor,
                                                          limit=limit))


class EffectsPage(ListPage):
    change_kinds = frozenset({"effect"})
    title = "Effects"
    stretch_column = 6

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(ctx, EffectsModel(ctx.runner), parent)
        self.model.setParent(self)
        self.search.hide()  # the core filters effects by status and run, not by text
        self.status = choice_combo("Effect status", STATUSES, self)
        self.status.currentIndexChanged.connect(self.apply_query)
        self.layout_top.addWidget(self.status)
        self.add_main(self.table)

    def apply_query(self) -> None:
        assert isinstance(self.model, EffectsModel)
        self.model.show(self.journal, self.status.currentData())
