"""Bar charts drawn with QPainter: stacked columns and labelled rows, clickable.

No plotting library: a chart here is a handful of rectangles and labels, and Qt's own
Charts module is a 175 MB wheel. Labels that came from agents (agent and tool names) are
shown through ``fmt.visible`` and elided to the space they have, never as markup.

Signals:
    bar_clicked(int): the bar (column or row) at this index was clicked.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt

MARGIN = 6
LEGEND_H = 18
AXIS_W = 34
LABEL_H = 16
ROW_H = 20


@dataclass(frozen=True)
class Series:
    key: str
    title: str
    color: str  # "#rrggbb", readable on light and dark backgrounds


@dataclass(frozen=True)
class Bar:
    label: str
    counts: dict[str, float]
    note: str = ""  # shown after the value on row charts and in the tooltip

    def total(self) -> float:
        return sum(self.counts.values())


def nice_max(value: float) -> float:
    """The axis top: ``value`` rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1.0
    power = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


class BarChart(QWidget):
    """Stacked columns (``rows=False``) or one labelled row per bar (``rows=True``)."""

    bar_clicked = Signal(int)

    def __init__(
        self,
        series: list[Series],
        *,
        rows: bool = False,
        unit: str = "",
        click: str = QT_TR_NOOP("Click to open these items"),
        parent: QWidget | None = None,
    ) -> None:
        """``click``: what a click on a bar opens, said in its tooltip (and true)."""
        super().__init__(parent)
        self.click = click
        self.series = series
        self.rows = rows
        self.unit = unit
        self.bars: list[Bar] = []
        self.setMouseTracking(True)
        self.setMinimumSize(QSize(160, 140))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    # ------------------------------------------------------------ data
    def set_bars(self, bars: list[Bar]) -> None:
        self.bars = list(bars)
        self.setAccessibleDescription(self.describe())
        self.update()

    def describe(self) -> str:
        """The chart as text (screen readers, tooltips, tests)."""
        if not self.bars:
            return "no data"
        parts = []
        for bar in self.bars:
            values = ", ".join(
                f"{s.title} {self._value(bar.counts.get(s.key, 0))}"
                for s in self.series
                if bar.counts.get(s.key, 0)
            )
            parts.append(
                f"{fmt.bounded(bar.label, 60)}: {values or '0'}"
                + (f" ({bar.note})" if bar.note else "")
            )
        return "; ".join(parts)

    def _value(self, value: float) -> str:
        if self.unit == "s":
            return fmt.span(value)
        return f"{value:g}"

    def peak(self) -> float:
        return max((b.total() for b in self.bars), default=0.0)

    # ------------------------------------------------------------ geometry
    def _legend_lines(self) -> list[list[Series]]:
        """The legend's entries, wrapped to the width (none for a single series)."""
        if len(self.series) < 2:
            return []
        metrics = QFontMetrics(self.font())
        lines: list[list[Series]] = [[]]
        x = float(MARGIN)
        for series in self.series:
            width = 14 + metrics.horizontalAdvance(series.title) + 12
            if lines[-1] and x + width > self.width() - MARGIN:
                lines.append([])
                x = float(MARGIN)
            lines[-1].append(series)
            x += width
        return lines

    def _plot(self) -> QRectF:
        left = MARGIN + (self._row_label_width() if self.rows else AXIS_W)
        bottom = MARGIN + LEGEND_H * len(self._legend_lines()) + (0 if self.rows else LABEL_H)
        return QRectF(
            left,
            MARGIN,
            max(10.0, self.width() - left - MARGIN),
            max(10.0, self.height() - MARGIN - bottom),
        )

    def _row_label_width(self) -> float:
        return min(self.width() * 0.4, 180.0)

    def bar_rect(self, index: int) -> QRectF:
        """Where bar ``index`` is drawn (its whole slot)."""
        plot = self._plot()
        n = max(1, len(self.bars))
        if self.rows:
            height = min(ROW_H, plot.height() / n)
            return QRectF(plot.left(), plot.top() + index * height, plot.width(), height)
        width = plot.width() / n
        return QRectF(plot.left() + index * width, plot.top(), width, plot.height())

    def bar_at(self, point: QPoint) -> int | None:
        for index in range(len(self.bars)):
            if self.bar_rect(index).contains(point.toPointF()):
                return index
        return None

    # ------------------------------------------------------------ painting
    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        text = self.palette().color(self.foregroundRole())
        faint = QColor(text)
        faint.setAlpha(60)
        plot = self._plot()
        top = nice_max(self.peak())
        if not self.bars or self.peak() == 0:
            painter.setPen(text)
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, "nothing in this window")
        elif self.rows:
            self._paint_rows(painter, plot, top, text)
        else:
            self._paint_columns(painter, plot, top, text, faint)
        self._paint_legend(painter, text)
        painter.end()

    def _paint_columns(
        self, painter: QPainter, plot: QRectF, top: float, text: QColor, faint: QColor
    ) -> None:
        painter.setPen(faint)
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.setPen(text)
        axis = QRectF(MARGIN, plot.top() - 6, AXIS_W - 4, 12)
        painter.drawText(axis, Qt.AlignmentFlag.AlignRight, f"{top:g}")
        metrics = QFontMetrics(self.font())
        widest = max(metrics.horizontalAdvance(fmt.bounded(b.label, 200)) for b in self.bars) + 8
        every = max(1, -(-int(widest) // max(1, int(plot.width() / len(self.bars)))))
        for index, bar in enumerate(self.bars):
            slot = self.bar_rect(index)
            width = max(2.0, slot.width() * 0.7)
            x = slot.left() + (slot.width() - width) / 2
            y = plot.bottom()
            for series in self.series:
                value = bar.counts.get(series.key, 0)
                if value <= 0:
                    continue
                height = plot.height() * value / top
                painter.fillRect(QRectF(x, y - height, width, height), QColor(series.color))
                y -= height
            if index % every == 0:
                label = QRectF(slot.center().x() - widest / 2, plot.bottom() + 2, widest, LABEL_H)
                painter.setPen(text)
                painter.drawText(
                    label,
                    Qt.AlignmentFlag.AlignHCenter,
                    metrics.elidedText(
                        fmt.bounded(bar.label, 200), Qt.TextElideMode.ElideRight, int(label.width())
                    ),
                )

    def _paint_rows(self, painter: QPainter, plot: QRectF, top: float, text: QColor) -> None:
        metrics = QFontMetrics(self.font())
        label_w = self._row_label_width()
        for index, bar in enumerate(self.bars):
            slot = self.bar_rect(index)
            painter.setPen(text)
            name = metrics.elidedText(
                fmt.bounded(bar.label, 200), Qt.TextElideMode.ElideMiddle, int(label_w - 6)
            )
            painter.drawText(
                QRectF(MARGIN, slot.top(), label_w - 6, slot.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                name,
            )
            value_text = self._value(bar.total())
            room = plot.width() - metrics.horizontalAdvance(value_text) - 8
            x = plot.left()
            for series in self.series:
                value = bar.counts.get(series.key, 0)
                if value <= 0:
                    continue
                width = max(1.0, room * value / top)
                painter.fillRect(
                    QRectF(x, slot.top() + 3, width, slot.height() - 6), QColor(series.color)
                )
                x += width
            painter.setPen(text)
            painter.drawText(
                QRectF(x + 4, slot.top(), plot.right() - x, slot.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                value_text,
            )

    def _paint_legend(self, painter: QPainter, text: QColor) -> None:
        metrics = QFontMetrics(self.font())
        lines = self._legend_lines()
        for row, line in enumerate(lines):
            x = float(MARGIN)
            y = self.height() - LEGEND_H * (len(lines) - row) + 2
            for series in line:
                painter.fillRect(QRectF(x, y + 3, 10, 10), QColor(series.color))
                painter.setPen(text)
                painter.drawText(
                    QRectF(x + 14, y, 200, LEGEND_H - 2),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    series.title,
                )
                x += 14 + metrics.horizontalAdvance(series.title) + 12

    # ------------------------------------------------------------ interaction
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        index = self.bar_at(event.position().toPoint())
        if index is None:
            QToolTip.hideText()
            self.unsetCursor()
            return
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        QToolTip.showText(event.globalPosition().toPoint(), self.tip(index), self)

    def tip(self, index: int) -> str:
        bar = self.bars[index]
        lines = [fmt.bounded(bar.label, 120)]
        lines += [
            f"{s.title}: {self._value(bar.counts.get(s.key, 0))}"
            for s in self.series
            if bar.counts.get(s.key, 0)
        ]
        if bar.note:
            lines.append(bar.note)
        lines.append(tr(self.click))
        # a plain-text tooltip: Qt would render a string that looks like rich text as HTML
        return "\n".join(lines).replace("<", "‹").replace(">", "›")

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            index = self.bar_at(event.position().toPoint())
            if index is not None and self.bars[index].total() > 0:
                self.bar_clicked.emit(index)
        super().mouseReleaseEvent(event)
