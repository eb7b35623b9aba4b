"""Table models over rows held in memory: the counts, headers and flags they share.

``TableModel`` answers for a list of rows under titled columns; a subclass says what a
cell shows (``data``) and how the rows arrive. ``ListModel`` is the short, fully loaded
kind: ``set_rows`` replaces them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from ..i18n import tr

Index = QModelIndex | QPersistentModelIndex


class TableModel(QAbstractTableModel):
    """Rows in memory under the given column titles; read-only, selectable cells."""

    def __init__(self, titles: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._titles = list(titles)
        self._rows: list[Any] = []

    def item(self, row: int) -> Any:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._titles)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self._titles):
            return tr(self._titles[section])  # titles are marked QT_TR_NOOP where declared
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class ListModel(TableModel):
    """A short, fully loaded list of rows."""

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()
