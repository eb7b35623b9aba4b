"""JSON shown as a collapsible tree (key | value | type) with copy; values are plain text."""

from __future__ import annotations

import json
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
from . import fmt
from .labels import plain_tip, section

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


def _item(text: str, value: Any = None) -> QStandardItem:
    item = QStandardItem(fmt.bounded(text, VALUE_MAX))
    item.setEditable(False)
    item.setData(value, VALUE_ROLE)
    if len(text) > VALUE_MAX or "\n" in text:
        item.setToolTip(plain_tip(text[:4000]))
    return item


def build_rows(parent: QStandardItem, value: Any) -> None:
    pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    for key, child in pairs[:MAX_CHILDREN]:
        key_item = _item(str(key) if isinstance(value, dict) else f"[{key}]", child)
        container = isinstance(child, dict | list)
        value_item = _item("" if container else _scalar(child), child)
        parent.appendRow([key_item, value_item, _item(_type(child), child)])
        if container:
            build_rows(key_item, child)
    if len(pairs) > MAX_CHILDREN:
        parent.appendRow([_item(f"… {len(pairs) - MAX_CHILDREN} more"), _item(""), _item("")])


class JsonTree(QWidget):
    """A read-only JSON tree with "Copy JSON" and per-value copy (context menu)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._value: Any = None
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
        self._value = value
        self.model.removeRows(0, self.model.rowCount())
        root = self.model.invisibleRootItem()
        if isinstance(value, dict | list):
            build_rows(root, value)
        else:
            root.appendRow(
                [_item("(value)", value), _item(_scalar(value), value), _item(_type(value), value)]
            )
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
        value = index.siblingAtColumn(1).data(VALUE_ROLE)
        text = value if isinstance(value, str) else fmt.pretty_json(value)
        QGuiApplication.clipboard().setText(text)
