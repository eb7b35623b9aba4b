"""Table views built one way: read-only, whole rows, one at a time."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget


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
