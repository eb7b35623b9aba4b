"""The Effects page's list: keyset-paged effects filtered in the store."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Qt

from proctor.core import Journal
from proctor.core.effects.views import EffectQuery
from proctor.core.models import Effect

from ..decide.effect_view import LIVE, lapsed
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.fmt import label
from ..widgets.paged_model import Column, PagedModel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def note(e: Effect) -> str:
    return e.ambiguous_reason or e.error or e.resolution_reason or ""


def lease_cell(e: Effect) -> str:
    if e.status not in LIVE or e.lease_expires_at is None:
        return fmt.span(e.lease_seconds)
    left = e.lease_expires_at - time.time()
    return (
        tr("{span} left").format(span=fmt.span(left))
        if left > 0
        else tr("lapsed {span}").format(span=fmt.span(-left))
    )


def status_cell(e: Effect) -> str:
    return "lapsed" if lapsed(e) else e.status.value


COLUMNS = [
    Column(QT_TR_NOOP("Key"), lambda e: e.key, tip=lambda e: e.key, width=210),
    Column(QT_TR_NOOP("Action"), lambda e: e.tool, width=130),
    Column(QT_TR_NOOP("Status"), status_cell, width=90, live=True),
    Column(QT_TR_NOOP("Safety"), lambda e: label(e.safety_class.value), width=130),
    Column(QT_TR_NOOP("Try"), lambda e: str(e.attempt), align=RIGHT, width=40),
    Column(
        QT_TR_NOOP("Holder"),
        lambda e: e.lease_owner or "",
        tip=lambda e: e.lease_owner or "",
        width=130,
    ),
    Column(QT_TR_NOOP("Lease"), lease_cell, align=RIGHT, width=96, live=True),
    Column(QT_TR_NOOP("Why / outcome"), note, tip=note, width=240),
    Column(
        QT_TR_NOOP("Updated"),
        lambda e: fmt.when(e.updated_at),
        tip=lambda e: fmt.other(e.updated_at),
        align=RIGHT,
        width=120,
        live=True,
    ),
]


class EffectsModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, COLUMNS, lambda e: e.key, lambda e: (e.created_at, e.key), parent)
        self.query = EffectQuery()

    def show(self, journal: Journal, query: EffectQuery | None = None) -> None:
        query = query if isinstance(query, EffectQuery) else EffectQuery()
        self.query = query
        effects = journal.effects
        self.set_query(
            lambda cursor, limit: effects.browse(query, cursor=cursor, limit=limit),
            descending=query.newest_first,
        )

    def crossed_expiry(self, since: float, now: float) -> bool:
        """True if a shown live lease expired between ``since`` and ``now``."""
        return any(
            e.status in LIVE
            and e.lease_expires_at is not None
            and since < e.lease_expires_at <= now
            for e in self.items()
        )
