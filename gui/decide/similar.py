"""Similar past decisions (same action name): a small table model."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from proctor.core.models import Approval

from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.labels import plain_tip

Index = QModelIndex | QPersistentModelIndex
HEADERS = (QT_TR_NOOP("When"), QT_TR_NOOP("Decision"), QT_TR_NOOP("By"), QT_TR_NOOP("Reason"))


def cells(a: Approval) -> tuple[str, ...]:
    return (
        fmt.clock(a.decided_at),
        a.status.value,
        a.decided_by or "",
        fmt.bounded(a.decision_reason or "", 120),
    )


class SimilarModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Approval] = []

    def set_rows(self, rows: list[Approval]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cells(row)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(
                fmt.bounded(f"{row.decision_reason or ''}\nrun: {row.run_title}", 2000)
            )
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(HEADERS)
        ):
            return tr(HEADERS[section])
        return None
