"""Table views built one way: read-only, whole rows, one at a time."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, QObject, Slot
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

from ..infra.time_mode import time_mode
from . import fmt

WIDEST_TIME = "2026-12-31 23:59"  # an absolute time not today, as fmt.clock writes it


def row_table(
    model: QAbstractItemModel, name: str, parent: QWidget, widths: Sequence[int] = ()
) -> QTableView:
    """A read-only table that selects one whole row at a time, without grid or row numbers;
    ``widths`` are the first columns' widths."""
    view = QTableView(parent)
    view.setModel(model)
    view.setAccessibleName(name)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setShowGrid(False)
    view.verticalHeader().hide()
    for col, width in enumerate(widths):
        view.horizontalHeader().resizeSection(col, width)
    return view


class TimeColumns(QObject):
    """Widens a table's time columns while times are absolute (so "2026-10-02 03:53" is
    not elided) and gives them back their width when they are relative again."""

    def __init__(self, view: QTableView, columns: Sequence[int]) -> None:
        super().__init__(view)  # goes with the view (and so does its connection)
        self._view, self._columns = view, list(columns)
        self._kept: dict[int, int] = {}
        time_mode().changed.connect(self.follow)
        if fmt.absolute():
            self.follow(True)

    @Slot(bool)
    def follow(self, absolute: bool) -> None:
        header = self._view.horizontalHeader()
        if absolute:
            need = self._view.fontMetrics().horizontalAdvance(WIDEST_TIME) + 20
            for col in self._columns:
                if header.sectionSize(col) < need:
                    self._kept[col] = header.sectionSize(col)
                    header.resizeSection(col, need)
        else:
            for col, width in self._kept.items():
                header.resizeSection(col, width)
            self._kept = {}
