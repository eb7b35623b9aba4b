"""The sidebar: pages with live count badges."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ..infra.i18n import tr
from .icons import icon

COUNT_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole + 2
Index = QModelIndex | QPersistentModelIndex


@dataclass
class Entry:
    id: str
    title: str
    count: int | None = None
    hint: str = ""


class SidebarModel(QAbstractListModel):
    def __init__(self, entries: list[Entry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries = entries

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.title
        if role == Qt.ItemDataRole.DecorationRole:
            return icon(f"page-{entry.id}")
        if role == COUNT_ROLE:
            return entry.count
        if role == ID_ROLE:
            return entry.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.hint or None
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return entry.title if entry.count is None else f"{entry.title}, {entry.count}"
        return None

    def set_count(self, page_id: str, count: int | None, hint: str = "") -> None:
        for row, entry in enumerate(self._entries):
            if entry.id == page_id and (entry.count, entry.hint) != (count, hint):
                entry.count, entry.hint = count, hint
                index = self.index(row)
                self.dataChanged.emit(index, index)

    def count(self, page_id: str) -> int | None:
        return next((e.count for e in self._entries if e.id == page_id), None)

    def row_of(self, page_id: str) -> int:
        return next((n for n, e in enumerate(self._entries) if e.id == page_id), -1)


class SidebarDelegate(QStyledItemDelegate):
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        count = index.data(COUNT_ROLE)
        super().paint(painter, option, index)
        if not count:
            return
        text = f"{count:,}" if count < 100_000 else "99k+"
        metrics = option.fontMetrics
        width = max(metrics.horizontalAdvance(text) + 12, metrics.height() + 4)
        height = metrics.height() + 2
        rect = QRect(
            option.rect.right() - width - 10, option.rect.center().y() - height // 2, width, height
        )
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        group = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Highlight
        painter.setBrush(option.palette.color(group))
        painter.drawRoundedRect(rect, height / 2, height / 2)
        text_role = QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.HighlightedText
        painter.setPen(option.palette.color(text_role))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width() + 60, max(size.height(), 34))


class Sidebar(QListView):
    """Signals:
    page_chosen(str): the operator picked a page (by id).
    """

    page_chosen = Signal(str)

    def __init__(self, model: SidebarModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAccessibleName(tr("Pages"))
        self.setModel(model)
        self.setItemDelegate(SidebarDelegate(self))
        self.setIconSize(QSize(20, 20))
        self.setUniformItemSizes(True)
        self.setFixedWidth(188)
        self.setSpacing(2)
        self.selectionModel().currentChanged.connect(self._on_current)

    def select(self, page_id: str) -> None:
        model = self.model()
        assert isinstance(model, SidebarModel)
        row = model.row_of(page_id)
        if row >= 0 and self.currentIndex().row() != row:
            self.setCurrentIndex(model.index(row))

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.page_chosen.emit(str(current.data(ID_ROLE)))
