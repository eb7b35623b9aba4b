"""Item delegates: safety-class chips."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ..theme import chip_colors, palette_is_dark


class ChipDelegate(QStyledItemDelegate):
    """Paints the cell's text as a coloured pill (colour by the cell's raw value)."""

    def __init__(self, value_role: int, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self._value_role = value_role

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        value = index.data(self._value_role)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget else None
        if style:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        color = chip_colors(value, palette_is_dark(option.palette))
        if not text or color is None:
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = option.fontMetrics
        width = min(metrics.horizontalAdvance(text) + 14, option.rect.width() - 8)
        height = metrics.height() + 4
        rect = QRectF(option.rect.left() + 4, option.rect.center().y() - height / 2 + 1,
                      width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(width - 10))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, elided)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem,
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width() + 14, max(size.height(), option.fontMetrics.height() + 8))


SECOND_LINE_ROLE = Qt.ItemDataRole.UserRole + 20


class TwoLineDelegate(QStyledItemDelegate):
    """The cell's text on the first line, SECOND_LINE_ROLE muted under it (both elided)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        first, second = opt.text, str(index.data(SECOND_LINE_ROLE) or "")
        opt.text = ""
        widget = opt.widget
        if widget is not None:
            widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter,
                                       widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        rect = option.rect.adjusted(6, 3, -6, -3)
        metrics = option.fontMetrics
        half = rect.height() // 2
        painter.save()
        painter.setPen(option.palette.color(role))
        painter.drawText(rect.adjusted(0, 0, 0, -half), Qt.AlignmentFlag.AlignLeft
                         | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(first, Qt.TextElideMode.ElideRight, rect.width()))
        muted = option.palette.color(role if selected else QPalette.ColorRole.PlaceholderText)
        painter.setPen(muted)
        painter.drawText(rect.adjusted(0, half, 0, 0), Qt.AlignmentFlag.AlignLeft
                         | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(second, Qt.TextElideMode.ElideRight, rect.width()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem,
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width(), option.fontMetrics.height() * 2 + 10)
