"""Run list and run event models."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from proctor.core.models import Run, RunEvent

from ..tasks import TaskRunner
from ..widgets import fmt
from ..widgets.paged_model import Column, PagedModel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
Index = QModelIndex | QPersistentModelIndex

RUN_COLUMNS = [
    Column("Title", lambda r: r.title, tip=lambda r: f"{r.title}\n{r.id}", width=260),
    Column("Agent", lambda r: r.agent, width=120),
    Column("Project", lambda r: f"{r.project}/{r.space}", width=150),
    Column("Status", lambda r: r.status.value.replace("_", " "), width=130),
    Column("Open", lambda r: str(r.open_items or ""), align=RIGHT, width=56),
    Column("Events", lambda r: f"{r.last_sequence:,}", align=RIGHT, width=70),
    Column("Updated", lambda r: fmt.age(r.updated_at) + " ago", align=RIGHT, width=90,
           live=True),
    Column("Started", lambda r: fmt.clock(r.created_at), align=RIGHT, width=130),
]


class RunsModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, RUN_COLUMNS, lambda r: r.id, lambda r: (r.created_at, r.id),
                         parent)

    def show(self, journal: Any, *, text: str | None, status: list[str] | None) -> None:
        runs = journal.runs
        self.set_query(lambda cursor, limit: runs.list(
            text=text, status=status, cursor=cursor, limit=limit))


EVENT_HEADERS = ("#", "When", "Type", "Actor", "Payload")


def payload_preview(event: RunEvent) -> str:
    return fmt.bounded(fmt.pretty_json(event.payload), 160) if event.payload is not None else ""


class EventsModel(QAbstractTableModel):
    """The newest events of one run (a bounded list; the run page loads more on demand)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[RunEvent] = []

    def set_rows(self, rows: list[RunEvent]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def event_at(self, row: int) -> RunEvent | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(EVENT_HEADERS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        e = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(e.sequence), fmt.clock(e.created_at), e.type, e.actor,
                    payload_preview(e))[index.column()]
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(EVENT_HEADERS):
            return EVENT_HEADERS[section]
        return None
