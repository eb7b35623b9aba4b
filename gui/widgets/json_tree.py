"""JSON shown as a collapsible tree (key | value | type) with copy; values are plain text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QGuiApplication, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..infra.tasks import Ticket
from . import fmt
from .labels import plain_tip, section
from .prepare import prepare, text_size

MAX_CHILDREN = 500  # per object/array; the rest is summarised in one row
VALUE_MAX = 500  # characters of a scalar shown in its cell (the tooltip/copy has more)
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1


def _type(value: Any) -> str:
    if isinstance(value, dict):
        return f"object ({len(value)})"
    if isinstance(value, list):
        return f"array ({len(value)})"
    if value is None:
        return "null"
    return {bool: "bool", int: "number", float: "number", str: "string"}.get(type(value), "value")


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Cell:
    """One cell made ready to show: bounded, escaped text and its tooltip (pure Python, so
    it is made on the presentation pool when the value is large)."""

    text: str
    tip: str | None
    value: Any


@dataclass(frozen=True)
class TreeRow:
    cells: tuple[Cell, Cell, Cell]
    children: tuple[TreeRow, ...] = ()


def cell(text: str, value: Any = None) -> Cell:
    tip = plain_tip(text[:4000]) if len(text) > VALUE_MAX or "\n" in text[:4000] else None
    return Cell(fmt.bounded(text, VALUE_MAX), tip, value)


def tree_rows(value: Any) -> tuple[TreeRow, ...]:
    """The rows of ``value``'s tree (the top level, each with its children)."""
    if not isinstance(value, dict | list):
        return (TreeRow((cell("(value)", value), cell(_scalar(value), value), cell(_type(value)))),)
    pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    rows = []
    for key, child in pairs[:MAX_CHILDREN]:
        container = isinstance(child, dict | list)
        rows.append(
            TreeRow(
                (
                    cell(str(key) if isinstance(value, dict) else f"[{key}]", child),
                    cell("" if container else _scalar(child), child),
                    cell(_type(child), child),
                ),
                tree_rows(child) if container else (),
            )
        )
    if len(pairs) > MAX_CHILDREN:
        rows.append(TreeRow((cell(f"… {len(pairs) - MAX_CHILDREN} more"), cell(""), cell(""))))
    return tuple(rows)


class Held:
    """A value kept on an item as the Python object it is (a str or dict stored as item data
    is converted to a Qt string or map: a 3 MB argument copied at each of its cells)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _item(c: Cell) -> QStandardItem:
    item = QStandardItem(c.text)
    item.setEditable(False)
    item.setData(Held(c.value), VALUE_ROLE)
    if c.tip is not None:
        item.setToolTip(c.tip)
    return item


def build_rows(parent: QStandardItem, rows: tuple[TreeRow, ...]) -> None:
    for row in rows:
        items = [_item(c) for c in row.cells]
        parent.appendRow(items)
        if row.children:
            build_rows(items[0], row.children)


class JsonTree(QWidget):
    """A read-only JSON tree with "Copy JSON" and per-value copy (context menu)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._value: Any = None
        self._ticket: Ticket | None = None
        self._menu_index = QModelIndex()
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels([tr("Key"), tr("Value"), tr("Type")])
        self.view = QTreeView(self)
        self.view.setModel(self.model)
        self.view.setAccessibleName(name)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(0, 160)
        header.resizeSection(2, 90)
        self.copy_button = QPushButton(tr("Copy JSON"), self)
        self.copy_button.setAccessibleName(tr("Copy {name} as JSON").format(name=name.lower()))
        self.copy_button.clicked.connect(self.copy_all)
        self._title = section(name, self)
        top = QHBoxLayout()
        top.addWidget(self._title)
        top.addStretch(1)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)

    def set_title(self, title: str) -> None:
        self._title.setText(title)

    def set_value(self, value: Any) -> None:
        """Show ``value``; a large one's cells are made on the presentation pool (escaping and
        bounding a multi-MB argument took the GUI thread for a second), ``is_preparing()``
        until they arrive."""
        if self._ticket is not None:
            self._ticket.cancel()
        self._value = value
        self.model.removeRows(0, self.model.rowCount())
        self._ticket = prepare(lambda: tree_rows(value), self._fill, self, size=text_size(value))

    def clear(self) -> None:
        """Show nothing (no item is selected): not a ``null`` row, which a value of None
        shows."""
        if self._ticket is not None:
            self._ticket.cancel()
            self._ticket = None
        self._value = None
        self.model.removeRows(0, self.model.rowCount())

    def is_preparing(self) -> bool:
        return self._ticket is not None

    def _fill(self, rows: tuple[TreeRow, ...]) -> None:
        self._ticket = None
        self.model.removeRows(0, self.model.rowCount())
        build_rows(self.model.invisibleRootItem(), rows)
        self.view.expandToDepth(1)

    def json_text(self) -> str:
        return fmt.pretty_json(self._value)

    @Slot()
    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.json_text())

    @Slot()
    def _menu(self, pos: Any) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        self._menu_index = index
        menu = QMenu(self)
        menu.addAction(tr("Copy value"), self._copy_menu_value)
        menu.addAction(tr("Copy JSON"), self.copy_all)
        menu.exec(self.view.viewport().mapToGlobal(pos))

    @Slot()
    def _copy_menu_value(self) -> None:
        self.copy_value(self._menu_index)

    def copy_value(self, index: QModelIndex) -> None:
        held = index.siblingAtColumn(1).data(VALUE_ROLE)
        value = held.value if isinstance(held, Held) else held
        text = value if isinstance(value, str) else fmt.pretty_json(value)
        QGuiApplication.clipboard().setText(text)
