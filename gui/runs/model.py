"""The run list model (keyset pages of ``runs.list``: filters and sort in SQL)
and a small bounded event list (events around a broken link, and other short lists)."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import (
    QObject,
    Qt,
    Signal,
)

from proctor.core import Journal
from proctor.core.audit.timeline import RunQuery
from proctor.core.models import Run, RunEvent
from proctor.core.runs.service import sort_fields

from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.event_summary import event_summary, plain_tip
from ..widgets.list_model import Index, ListModel
from ..widgets.paged_model import Column, PagedModel
from ..widgets.run_status import status_icon, words

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def duration(run: Run, now: float | None = None) -> str:
    seconds = (run.finished_at or (now or time.time())) - run.created_at
    return f"{max(seconds, 0) * 1000:.0f} ms" if seconds < 1 else fmt.span(seconds)


def open_text(run: Run) -> str:
    return tr("{count} waiting").format(count=run.open_items) if run.open_items else ""


def error_label(run: Run) -> str:
    """A run's ``error`` is its first failure: once retried, it is said so."""
    return "error" if run.current_attempt <= 1 else "first failure"


RUN_COLUMNS = [
    Column(
        QT_TR_NOOP("Status"),
        lambda r: words(r.status.value),
        width=150,
        tip=lambda r: plain_tip(
            f"{words(r.status.value)}"
            + (f" · {error_label(r)}: {fmt.bounded(r.error, 400)}" if r.error else "")
            + (" · cancel requested" if r.cancel_requested else "")
        ),
    ),
    Column(
        QT_TR_NOOP("Title"),
        lambda r: r.title,
        tip=lambda r: plain_tip(f"{r.title} · {r.id}"),
        width=300,
    ),
    Column(QT_TR_NOOP("Agent"), lambda r: r.agent, width=120),
    Column(QT_TR_NOOP("Project"), lambda r: f"{r.project}/{r.space}", width=150),
    Column(
        QT_TR_NOOP("Started"),
        lambda r: fmt.when(r.created_at),
        tip=lambda r: fmt.other(r.created_at),
        align=RIGHT,
        width=128,
        live=True,
    ),
    Column(QT_TR_NOOP("Duration"), duration, align=RIGHT, width=80, live=True),
    Column(QT_TR_NOOP("Attempts"), lambda r: str(r.current_attempt), align=RIGHT, width=70),
    Column(QT_TR_NOOP("Events"), lambda r: f"{r.last_sequence:,}", align=RIGHT, width=76),
    Column(QT_TR_NOOP("Open items"), open_text, align=RIGHT, width=90),
]
COL_STATUS, COL_TITLE = 0, 1
# Header column -> the sort key the core understands (None: not sortable).
SORT_OF = {0: "status", 1: "title", 2: "agent", 3: "project", 4: "started", 7: "events"}


class RunsModel(PagedModel):
    """Rows are Runs; keys are run ids.

    Signals:
        sorted(str, bool): the sort changed (key, descending) by a header click.
    """

    sorted = Signal(str, bool)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(
            runner, RUN_COLUMNS, lambda r: r.id, lambda r: (r.created_at, r.id), parent
        )
        self.query = RunQuery()
        self._journal: Journal | None = None

    def show(
        self, journal: Journal, *, text: str | None = None, status: list[str] | None = None
    ) -> None:
        """The newest runs, optionally filtered by title text and status."""
        self.show_query(journal, RunQuery(text=text, status=tuple(status or ())))

    def show_query(self, journal: Journal, q: RunQuery) -> None:
        self._journal, self.query = journal, q
        self._order = _order_key(q)
        self.set_query(
            lambda cursor, limit: journal.runs.list(q, cursor=cursor, limit=limit),
            descending=q.descending,
        )

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = SORT_OF.get(column)
        if key is None or self._journal is None:
            return
        descending = order == Qt.SortOrder.DescendingOrder
        if (key, descending) == (self.query.sort, self.query.descending):
            return
        self.show_query(
            self._journal, self.query.model_copy(update={"sort": key, "descending": descending})
        )
        self.sorted.emit(key, descending)

    def extra_data(self, item: Run, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DecorationRole and column == COL_STATUS:
            return status_icon(item.status.value)
        if role == Qt.ItemDataRole.AccessibleTextRole and column == COL_STATUS:
            return f"status {words(item.status.value)}"
        return None


def _order_key(q: RunQuery) -> Any:
    """The run's place in the core's order for ``q.sort`` (its sort column, then the
    tie-breaks: created_at for status/agent/project, then id)."""
    attrs = sort_fields(q.sort)

    def key(run: Run) -> Any:
        return tuple(getattr(v, "value", v) for v in (getattr(run, a) for a in attrs))

    return key


EVENT_HEADERS = ("#", QT_TR_NOOP("When"), QT_TR_NOOP("Type"), QT_TR_NOOP("Summary"))


class EventsModel(ListModel):
    """A short, fully loaded list of events (e.g. around a broken link)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(EVENT_HEADERS, parent)

    def event_at(self, row: int) -> RunEvent | None:
        return self.item(row)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        e = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                str(e.sequence),
                fmt.clock(e.created_at),
                fmt.bounded(e.type, 100),
                fmt.bounded(event_summary(e), 200),
            )[index.column()]
        return None
