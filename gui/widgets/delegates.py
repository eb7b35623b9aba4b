"""Item delegates: safety-class chips, two-line cells, and the row look of a list with a
cursor and a multi-row (bulk) selection: while several rows are selected they are tinted
(not painted as the cursor), and the cursor row is framed, so the two never look alike."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QPainter, QPalette, QPen
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ..infra.theme import chip_colors, mix, palette_is_dark

BULK_SHARE = 0.28  # how much of the highlight colour tints a bulk-selected row


def bulk_selection(view: object) -> bool:
    """True while ``view`` has several rows selected."""
    if not isinstance(view, QAbstractItemView) or view.selectionModel() is None:
        return False
    return len(view.selectionModel().selectedRows()) > 1


def bulk_tint(palette: QPalette) -> QBrush:
    return QBrush(
        mix(
            palette.color(QPalette.ColorRole.Base),
            palette.color(QPalette.ColorRole.Highlight),
            BULK_SHARE,
        )
    )


class RowLookMixin:
    """Bulk-selected rows are tinted with the palette's Text colour kept; the cursor row
    gets a frame in the highlight colour (two pixels, over the whole row)."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)  # type: ignore[misc]
        if option.state & QStyle.StateFlag.State_Selected and bulk_selection(option.widget):
            option.state &= ~QStyle.StateFlag.State_Selected
            option.backgroundBrush = bulk_tint(option.palette)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        self.paint_cell(painter, option, index)
        view = option.widget
        if (
            not isinstance(view, QAbstractItemView)
            or view.currentIndex().row() != index.row()
            or not view.currentIndex().isValid()
        ):
            return
        painter.save()
        pen = QPen(option.palette.color(QPalette.ColorRole.Highlight))
        pen.setWidth(2)
        painter.setPen(pen)
        r = option.rect.adjusted(0, 1, 0, -1)
        painter.drawLine(r.topLeft(), r.topRight())
        painter.drawLine(r.bottomLeft(), r.bottomRight())
        if index.column() == 0:
            painter.drawLine(r.topLeft(), r.bottomLeft())
        model = index.model()
        if model is not None and index.column() == model.columnCount() - 1:
            painter.drawLine(r.topRight(), r.bottomRight())
        painter.restore()

    def paint_cell(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        QStyledItemDelegate.paint(self, painter, option, index)  # type: ignore[arg-type]


class RowDelegate(RowLookMixin, QStyledItemDelegate):
    """Plain cells with the row look."""


class ChipDelegate(RowLookMixin, QStyledItemDelegate):
    """Paints the cell's text as a coloured pill (colour by the cell's raw value)."""

    def __init__(self, value_role: int, parent=None) -> None:
        super().__init__(parent)
        self._value_role = value_role

    def paint_cell(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
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
        rect = QRectF(
            option.rect.left() + 4, option.rect.center().y() - height / 2 + 1, width, height
        )
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(width - 10))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, elided)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width() + 14, max(size.height(), option.fontMetrics.height() + 8))


SECOND_LINE_ROLE = Qt.ItemDataRole.UserRole + 20


class TwoLineDelegate(RowLookMixin, QStyledItemDelegate):
    """The cell's text on the first line, SECOND_LINE_ROLE muted under it (both elided)."""

    def paint_cell(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        first, second = opt.text, str(index.data(SECOND_LINE_ROLE) or "")
        opt.text = ""
        widget = opt.widget
        if widget is not None:
            widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        rect = option.rect.adjusted(6, 3, -6, -3)
        metrics = option.fontMetrics
        half = rect.height() // 2
        painter.save()
        painter.setPen(option.palette.color(role))
        painter.drawText(
            rect.adjusted(0, 0, 0, -half),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(first, Qt.TextElideMode.ElideRight, rect.width()),
        )
        muted = option.palette.color(role if selected else QPalette.ColorRole.PlaceholderText)
        painter.setPen(muted)
        painter.drawText(
            rect.adjusted(0, half, 0, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(second, Qt.TextElideMode.ElideRight, rect.width()),
        )
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width(), option.fontMetrics.height() * 2 + 10)
