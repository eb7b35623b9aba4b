"""The visual timeline: a zoomable, pannable QGraphicsView of a run's spans.

Lanes (attempts, tool calls, approvals, questions, effects) hold one bar per span,
coloured by status (the hover line says the status in words); a bar still open runs to
the end with a dashed edge. The bottom lane is the event density over the visible time
range (re-read from the store when the view moves). The wheel zooms around the mouse,
dragging pans; +, - and 0 zoom from the keyboard. Hovering a bar describes it; clicking
a bar (or a point of the event lane) asks for the event at that time.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSceneHoverEvent,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from proctor.core.timeline import RunTimeline, Span

from ..runs.status import color, words
from ..widgets import fmt
from .layout import LANES, Placed, pack, tick_label, tick_step, ticks

LABEL_W = 124
AXIS_H = 22
ROW_H = 18
ROW_GAP = 4
LANE_PAD = 6
EMPTY_LANE_H = 18
DENSITY_H = 34
RIGHT_PAD = 24
MIN_BAR = 3.0
MAX_PPS = 50_000.0  # pixels per second at the deepest zoom (20 µs per pixel)
CLICK_SLOP = 4


def span_text(span: Span) -> str:
    """One plain line describing a span (the hover line and accessible text)."""
    kind = dict(LANES).get(span.lane, span.lane).rstrip("s")
    end = f"{fmt.clock(span.end)} ({fmt.span(span.end - span.start)})" if span.end \
        else "still open"
    extra = [f"{k.replace('_', ' ')}: {fmt.bounded(v, 120)}" for k, v in span.detail.items()
             if k not in ("status", "tool", "action", "attempt", "prompt") and v not in
             (None, "", {}, [])]
    return " · ".join([f"{kind}: {fmt.bounded(span.label, 120)}", words(span.status),
                       f"{fmt.clock(span.start)} → {end}"] + extra[:4])


class SpanItem(QGraphicsRectItem):
    """One bar. Hover reports the span to the view; painting elides its label."""

    def shown_text(self) -> str:
        """The bar's text as painted: agent text bounded and escaped."""
        return fmt.bounded(f"{self.span.label} · {words(self.span.status)}", 300)

    def __init__(self, placed: Placed, view: TimelineView) -> None:
        super().__init__()
        self.placed = placed
        self.span = placed.span
        self._view = view
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        base = color(self.span.status)
        fill = QColor(base)
        fill.setAlpha(150)
        self.setBrush(QBrush(fill))
        self.setPen(QPen(base.darker(130), 0))

    def hoverEnterEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._view.set_hovered(self.span)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self._view.set_hovered(None)
        super().hoverLeaveEvent(event)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        rect = self.rect()
        painter.setPen(self.pen())
        painter.setBrush(self.brush())
        painter.drawRoundedRect(rect, 3, 3)
        if self.span.end is None:  # still open: a dashed right edge
            pen = QPen(color(self.span.status).darker(150), 1.5, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawLine(rect.topRight(), rect.bottomRight())
        if self._view.selected_id == self.span.id:
            painter.setPen(QPen(self._view.palette().color(QPalette.ColorRole.Highlight), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(-1, -1, 1, 1), 3, 3)
        if rect.width() > 36:
            painter.setPen(self._view.palette().color(QPalette.ColorRole.Text))
            metrics = painter.fontMetrics()
            text = metrics.elidedText(self.shown_text(),
                                      Qt.TextElideMode.ElideRight, int(rect.width() - 8))
            painter.drawText(rect.adjusted(4, 0, -4, 0), Qt.AlignmentFlag.AlignVCenter
                             | Qt.AlignmentFlag.AlignLeft, text)


class TimelineView(QGraphicsView):
    """Signals:
        span_clicked(object): a bar was clicked (its Span).
        time_clicked(float): the event lane (or empty space) was clicked at this time.
        hovered(object): the Span under the mouse, or None.
        shaped(): a new run's lanes are laid out (its content height is known).
        visible_range(float, float, int): the visible time range settled (start, end,
            how many density buckets fit); the owner may re-read the event density.
    """

    span_clicked = Signal(object)
    time_clicked = Signal(float)
    hovered = Signal(object)
    visible_range = Signal(float, float, int)
    shaped = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setAccessibleName("Visual timeline")
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.timeline: RunTimeline | None = None
        self.bars: list[SpanItem] = []
        self.rows = [0] * len(LANES)
        self.t0 = self.t1 = 0.0
        self.pps = 1.0
        self.fitted = True
        self.cursor_time: float | None = None
        self.selected_id: str | None = None
        self.hovered_span: Span | None = None
        self._density: tuple[float, float, list[int]] | None = None
        self._density_item = QGraphicsPathItem()
        self._density_item.setPen(QPen(Qt.PenStyle.NoPen))
        self._press: QPointF | None = None
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(150)
        self._settle.timeout.connect(self._emit_range)
        self.horizontalScrollBar().valueChanged.connect(self._settle.start)

    # ------------------------------------------------------------ content
    def set_timeline(self, tl: RunTimeline) -> None:
        """Show ``tl``; a new run is fitted, the same run keeps its zoom and position."""
        same = self.timeline is not None and self.timeline.run_id == tl.run_id
        keep_scroll = self.horizontalScrollBar().value()
        self.timeline = tl
        self.t0, self.t1 = tl.start, max(tl.end, tl.start + 1e-3)
        scene = self.scene()
        for item in self.bars:
            scene.removeItem(item)
        if self._density_item.scene() is not None:
            scene.removeItem(self._density_item)
        placed, self.rows = pack(tl.spans, self.t1)
        self.bars = [SpanItem(p, self) for p in placed]
        for item in self.bars:
            scene.addItem(item)
        scene.addItem(self._density_item)
        if not same:
            self._density = None
            self.selected_id = None
            self.cursor_time = None
            self.fitted = True
        if self.fitted:
            self.fit()
        else:
            self.relayout()
            self.horizontalScrollBar().setValue(keep_scroll)
        self._settle.start()
        if not same:
            self.shaped.emit()

    def set_density(self, start: float, end: float, counts: list[int]) -> None:
        self._density = (start, end, counts)
        self._layout_density()

    def set_cursor(self, at: float | None, span_id: str | None = None) -> None:
        """Mark time ``at`` (the selected event) and, optionally, the selected bar."""
        self.cursor_time = at
        if span_id is not None or at is None:
            self.selected_id = span_id
        if at is not None and not self._visible(at):
            self.center_on_time(at)
        self.viewport().update()

    # ------------------------------------------------------------ geometry
    def x_of(self, t: float) -> float:
        return LABEL_W + (t - self.t0) * self.pps

    def t_of(self, x: float) -> float:
        return self.t0 + (x - LABEL_W) / self.pps

    def lane_height(self, lane: int) -> float:
        """Rows of bars; an empty lane keeps a thin strip (its title says it is empty)."""
        rows = self.rows[lane]
        return rows * (ROW_H + ROW_GAP) + LANE_PAD * 2 if rows else EMPTY_LANE_H

    def lane_top(self, lane: int) -> float:
        return AXIS_H + sum(self.lane_height(n) for n in range(lane))

    def density_top(self) -> float:
        return self.lane_top(len(LANES))

    def content_height(self) -> float:
        return self.density_top() + DENSITY_H + LANE_PAD

    def fit_pps(self) -> float:
        width = max(self.viewport().width() - LABEL_W - RIGHT_PAD, 50)
        return width / max(self.t1 - self.t0, 1e-3)

    def relayout(self) -> None:
        for item in self.bars:
            p = item.placed
            x0, x1 = self.x_of(p.span.start), self.x_of(p.end)
            y = self.lane_top(p.lane) + LANE_PAD + p.row * (ROW_H + ROW_GAP)
            item.setRect(QRectF(x0, y, max(x1 - x0, MIN_BAR), ROW_H))
        width = self.x_of(self.t1) + RIGHT_PAD
        self.scene().setSceneRect(QRectF(0, 0, width, self.content_height()))
        self._layout_density()
        self.viewport().update()

    def _layout_density(self) -> None:
        path = QPainterPath()
        if self._density is not None:
            start, end, counts = self._density
            peak = max(counts) if counts else 0
            if peak > 0:
                width = (end - start) / len(counts)
                base = self.density_top() + DENSITY_H
                for n, count in enumerate(counts):
                    if count:
                        x0 = self.x_of(start + n * width)
                        x1 = max(self.x_of(start + (n + 1) * width), x0 + 1)
                        h = max(2.0, (DENSITY_H - 6) * math.sqrt(count / peak))
                        path.addRect(QRectF(x0, base - h, x1 - x0, h))
        self._density_item.setPath(path)
        self._density_item.setBrush(self.palette().color(QPalette.ColorRole.Highlight)
                                    .lighter(120))

    # ------------------------------------------------------------ zoom and pan
    def fit(self) -> None:
        self.fitted = True
        self.pps = self.fit_pps()
        self.relayout()
        self.horizontalScrollBar().setValue(0)
        self._settle.start()

    def zoom(self, factor: float, anchor_x: float | None = None) -> None:
        """Zoom by ``factor`` keeping the time under viewport x ``anchor_x`` in place."""
        if self.timeline is None:
            return
        bar = self.horizontalScrollBar()
        vx = anchor_x if anchor_x is not None else self.viewport().width() / 2
        anchor_t = self.t_of(bar.value() + vx)
        self.pps = min(max(self.pps * factor, self.fit_pps()), MAX_PPS)
        self.fitted = self.pps <= self.fit_pps() * 1.0001
        self.relayout()
        bar.setValue(int(self.x_of(anchor_t) - vx))
        self._settle.start()

    def center_on_time(self, t: float) -> None:
        bar = self.horizontalScrollBar()
        bar.setValue(int(self.x_of(t) - self.viewport().width() / 2))

    def visible_times(self) -> tuple[float, float]:
        left = self.horizontalScrollBar().value()
        return (max(self.t_of(left + LABEL_W), self.t0),
                min(self.t_of(left + self.viewport().width()), self.t1))

    def _visible(self, t: float) -> bool:
        start, end = self.visible_times()
        return start <= t <= end

    @Slot()
    def _emit_range(self) -> None:
        if self.timeline is None:
            return
        start, end = self.visible_times()
        buckets = max(10, int((self.viewport().width() - LABEL_W) / 3))
        self.visible_range.emit(start, max(end, start + 1e-3), buckets)

    # ------------------------------------------------------------ events
    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        if abs(delta.x()) > abs(delta.y()) or event.modifiers() & \
                Qt.KeyboardModifier.ShiftModifier:
            bar = self.horizontalScrollBar()
            bar.setValue(bar.value() - (delta.x() or delta.y()))
            return
        if delta.y():
            self.zoom(1.25 ** (delta.y() / 120), event.position().x())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1.5)
        elif key == Qt.Key.Key_Minus:
            self.zoom(1 / 1.5)
        elif key == Qt.Key.Key_0:
            self.fit()
        else:
            super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.timeline is not None and self.fitted:
            self.fit()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._press = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        event.accept()  # the view handles every release (a click or the end of a pan)
        press, self._press = self._press, None
        if press is None or event.button() != Qt.MouseButton.LeftButton:
            return
        moved = event.position() - press
        if abs(moved.x()) + abs(moved.y()) > CLICK_SLOP:
            return
        self.click_at(event.position())

    def click_at(self, pos: QPointF) -> None:
        """A click at viewport position ``pos``: a bar, or a time."""
        if pos.x() < LABEL_W or self.timeline is None:
            return
        item = self.itemAt(pos.toPoint())
        if isinstance(item, SpanItem):
            self.selected_id = item.span.id
            self.viewport().update()
            self.span_clicked.emit(item.span)
            return
        scene = self.mapToScene(pos.toPoint())
        self.time_clicked.emit(min(max(self.t_of(scene.x()), self.t0), self.t1))

    def set_hovered(self, span: Span | None) -> None:
        self.hovered_span = span
        self.hovered.emit(span)

    def item_for(self, span_id: str) -> SpanItem | None:
        return next((i for i in self.bars if i.span.id == span_id), None)

    # ------------------------------------------------------------ painting
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        pal = self.palette()
        painter.fillRect(rect, pal.color(QPalette.ColorRole.Base))
        stripe = pal.color(QPalette.ColorRole.AlternateBase)
        for lane in range(len(LANES) + 1):
            if lane % 2:
                top = self.lane_top(lane)
                bottom = self.lane_top(lane + 1) if lane < len(LANES) else \
                    self.content_height()
                painter.fillRect(QRectF(rect.left(), top, rect.width(), bottom - top), stripe)

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        painter.save()
        painter.resetTransform()  # from here on: viewport coordinates
        self._paint_cursor(painter)
        self._paint_axis(painter)
        self._paint_labels(painter)
        painter.restore()

    def _vx(self, t: float) -> float:
        return self.x_of(t) - self.horizontalScrollBar().value()

    def _vy(self, y: float) -> float:
        return y - self.verticalScrollBar().value()

    def _paint_cursor(self, painter: QPainter) -> None:
        if self.cursor_time is None:
            return
        x = self._vx(self.cursor_time)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 1.5))
        painter.drawLine(QPointF(x, AXIS_H), QPointF(x, self.viewport().height()))

    def _paint_axis(self, painter: QPainter) -> None:
        pal = self.palette()
        width = self.viewport().width()
        painter.fillRect(QRectF(0, 0, width, AXIS_H), pal.color(QPalette.ColorRole.Window))
        painter.setPen(pal.color(QPalette.ColorRole.Mid))
        painter.drawLine(QPointF(0, AXIS_H - 0.5), QPointF(width, AXIS_H - 0.5))
        if self.timeline is None:
            return
        start, end = self.visible_times()
        step = tick_step(1 / self.pps)
        painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
        for t in ticks(start, end, step):
            x = self._vx(t)
            painter.drawLine(QPointF(x, AXIS_H - 6), QPointF(x, AXIS_H))
            painter.drawText(QRectF(x + 3, 0, 120, AXIS_H - 4),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                             tick_label(t, step))

    def _paint_labels(self, painter: QPainter) -> None:
        pal = self.palette()
        height = self.viewport().height()
        painter.fillRect(QRectF(0, AXIS_H, LABEL_W, height), pal.color(QPalette.ColorRole.Window))
        painter.setPen(pal.color(QPalette.ColorRole.Mid))
        painter.drawLine(QPointF(LABEL_W - 0.5, 0), QPointF(LABEL_W - 0.5, height))
        titles = [title for _name, title in LANES] + ["Events"]
        for lane, title in enumerate(titles):
            empty = lane < len(LANES) and not self.rows[lane]
            painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText if empty
                                     else QPalette.ColorRole.WindowText))
            top = self._vy(self.lane_top(lane))
            bottom = self._vy(self.lane_top(lane + 1) if lane < len(LANES)
                              else self.content_height())
            painter.drawText(QRectF(8, top, LABEL_W - 12, bottom - top),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             f"{title} (none)" if empty else title)

    def accessible_items(self) -> list[str]:
        """Every bar described in words (for screen readers and tests)."""
        return [span_text(i.span) for i in self.bars]

