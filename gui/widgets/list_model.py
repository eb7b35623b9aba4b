"""Table models over rows held in memory: the counts, headers and flags they share.

``TableModel`` answers for a list of rows under titled columns; a subclass says what a
cell shows (``data``) and how the rows arrive. ``ListModel`` is the short, fully loaded
kind: ``set_rows`` replaces them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QFont

from ..infra.i18n import tr
from ..infra.time_mode import time_mode
from . import fmt
from .labels import plain_tip

Index = QModelIndex | QPersistentModelIndex


class TableModel(QAbstractTableModel):
    """Rows in memory under the given column titles; read-only, selectable cells."""

    def __init__(self, titles: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._titles = list(titles)
        self._rows: list[Any] = []
        self.absolute_titles: dict[int, str] = {}  # a column's title while times are absolute
        time_mode().changed.connect(self._on_time_mode)

    def _on_time_mode(self) -> None:
        """Times switched between relative and absolute: repaint every cell, reload nothing."""
        if self.absolute_titles:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self._titles) - 1)
        if self._rows and self._titles:
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(len(self._rows) - 1, len(self._titles) - 1),
                [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole],
            )

    def item(self, row: int) -> Any:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._titles)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self._titles)
        ):
            title = self.absolute_titles.get(section) if fmt.absolute() else None
            return tr(title or self._titles[section])  # marked QT_TR_NOOP where declared
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


class RowsModel(ListModel):
    """A small read-only table over a list (history, field differences, receipts): what
    each cell shows comes from ``cells``; ``tip`` and ``bold`` are optional per row."""

    def __init__(
        self,
        headers: Sequence[str],
        cells: Callable[[Any], Sequence[str]],
        parent: QObject | None = None,
        *,
        tip: Callable[[Any], str] | None = None,
        bold: Callable[[Any], bool] | None = None,
    ) -> None:
        super().__init__(headers, parent)
        self._cells = cells
        self._tip = tip
        self._bold = bold

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return fmt.bounded(self._cells(row)[index.column()])
        if role == Qt.ItemDataRole.ToolTipRole and self._tip is not None:
            return plain_tip(fmt.bounded(self._tip(row), 2000))
        if role == Qt.ItemDataRole.FontRole and self._bold is not None and self._bold(row):
            font = QFont()
            font.setBold(True)
            return font
        return None
