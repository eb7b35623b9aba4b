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
import time
from bisect import bisect_left, bisect_right
from itertools import accumulate

from PySide6.QtCore import QPointF, QRect, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetrics,
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
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSceneHoverEvent,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from proctor.core.audit.timeline import RunTimeline, Span

from ..infra.i18n import tr
from ..infra.tasks import PresentationPool, Ticket
from ..widgets import fmt
from ..widgets.run_status import color, words
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
NOW_MS = 5000  # how often "now" (and the open bars up to it) moves on a run that still waits
MAX_PPS = 50_000.0  # pixels per second at the deepest zoom (20 µs per pixel)
CLICK_SLOP = 4
ELIDE_STEP = 8  # a bar's text is elided again only when its width crosses a step of this
PACK_INLINE = 1000  # spans packed on the GUI thread; more are packed on the presentation pool


def reach(tl: RunTimeline, now: float | None = None) -> tuple[float, float | None]:
    """Where the timeline ends, and "now" when something in it still runs or waits: then
    the open bars are drawn up to now (the time of this read), which the marker shows."""
    end = max(tl.end, tl.start + 1e-3)
    if not tl.live and all(s.end is not None for s in tl.spans):
        return end, None
    now = time.time() if now is None else now
    return max(end, now), now


def span_text(span: Span) -> str:
    """One plain line describing a span (the hover line and accessible text)."""
    kind = dict(LANES).get(span.lane, span.lane).rstrip("s")
    end = f"{fmt.clock(span.end)} ({fmt.span(span.end - span.start)})" if span.end else "still open"
    extra = [
        f"{k.replace('_', ' ')}: {fmt.bounded(v, 120)}"
        for k, v in span.detail.items()
        if k not in ("status", "tool", "action", "attempt", "prompt")
        and v not in (None, "", {}, [])
    ]
    return " · ".join(
        [
            f"{kind}: {fmt.bounded(span.label, 120)}",
            words(span.status),
            f"{fmt.clock(span.start)} → {end}",
            *extra[:4],
        ]
    )


class Bar:
    """One span's bar: where it goes (lane, row) and its rectangle at the view's zoom. No
    Qt item of its own: one ``BarsLayer`` paints the bars in sight (a scene item per bar
    made a 20 000-call run's timeline freeze the window for minutes)."""

    __slots__ = ("elided", "placed", "span", "text", "view")

    def __init__(self, placed: Placed, view: TimelineView) -> None:
        self.placed = placed
        self.span = placed.span
        self.view = view
        # made once (on the presentation pool for a large run), not at every paint
        self.text = fmt.bounded(f"{self.span.label} · {words(self.span.status)}", 300)
        self.elided: tuple[int, str] | None = None  # (width, text elided to it)

    def shown_text(self) -> str:
        """The bar's text as painted: agent text bounded and escaped."""
        return self.text

    def elided_text(self, metrics: QFontMetrics, width: float) -> str:
        """The text elided to ``width``, from the bar's cache: widths are taken in steps of
        ELIDE_STEP pixels, so a repaint (scroll, hover, another bar's update) elides nothing
        again, and a zoom only where a bar's width crosses a step."""
        step = int(width) // ELIDE_STEP * ELIDE_STEP
        if self.elided is None or self.elided[0] != step:
            self.elided = (step, elide(metrics, self.text, step))
        return self.elided[1]

    def rect(self) -> QRectF:
        view, p = self.view, self.placed
        x0, x1 = view.x_of(p.span.start), view.x_of(p.end)
        y = view.lane_top(p.lane) + LANE_PAD + p.row * (ROW_H + ROW_GAP)
        return QRectF(x0, y, max(x1 - x0, MIN_BAR), ROW_H)


def elide(metrics: QFontMetrics, text: str, width: int) -> str:
    """``text`` elided on the right to ``width`` pixels (the one place bars are elided)."""
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)


_STYLES: dict[str, tuple[QPen, QBrush, QPen]] = {}
NARROW = 6.0  # bars narrower than this (pixels) are plain rectangles, drawn in one call


def bar_style(status: str) -> tuple[QPen, QBrush, QPen]:
    """The outline, fill and open-edge pen of a bar of ``status``, made once (a 20,000-call
    timeline made three Qt objects per bar at every paint)."""
    style = _STYLES.get(status)
    if style is None:
        base = color(status)
        fill = QColor(base)
        fill.setAlpha(150)
        style = (
            QPen(base.darker(130), 0),
            QBrush(fill),
            QPen(base.darker(150), 1.5, Qt.PenStyle.DashLine),
        )
        _STYLES[status] = style
    return style


class Row:
    """The bars of one row of one lane, by start, with their starts, drawing ends and
    whether each is still open (made with the layout, on the presentation pool for a large
    run; each zoom paints them from a ``Plan``)."""

    __slots__ = ("bars", "ends", "open", "starts")

    def __init__(self, bars: list[Bar]) -> None:
        self.bars = bars
        self.starts = [b.span.start for b in bars]
        self.ends = [b.placed.end for b in bars]
        self.open = [b.span.end is None for b in bars]


class Layout:
    """The packed bars of one timeline, grouped by (lane, row)."""

    def __init__(self, bars: list[Bar], rows: list[int]) -> None:
        self.bars = bars
        self.rows = rows
        grouped: dict[tuple[int, int], list[Bar]] = {}
        for bar in bars:  # pack() gives each lane's bars by start
            grouped.setdefault((bar.placed.lane, bar.placed.row), []).append(bar)
        self.groups = {key: Row(group) for key, group in grouped.items()}
        self.by_id = {bar.span.id: bar for bar in bars}


EMPTY = Layout([], [0] * len(LANES))


def lay_out(
    spans: list[Span], until: float, view: TimelineView, ticket: Ticket | None = None
) -> Layout:
    """Pure Python, no Qt call: runs on the presentation pool for a large run."""
    placed, rows = pack(spans, until)
    return Layout([Bar(p, view) for p in placed], rows)


class Plan:
    """What one row paints at one zoom, in scene coordinates, made in one pass over the
    row's numbers and kept until the zoom changes: a scroll, a hover or a repaint reads the
    bars in sight from it by bisection (the row's bars were walked at every paint, and an
    open bar early in a crowded row made every paint walk the rest of the row).

    A bar that starts in the pixel column of the bar kept just before and ends inside it is
    left out (at most a few bars per pixel column); each kept bar is painted up to where the
    first later bar that reaches at least as far starts (that bar covers the rest of it).
    Rectangles are made when first painted."""

    __slots__ = ("bars", "ends", "narrow", "reach", "rects", "right", "starts", "top")

    def __init__(self, row: Row, pps: float, left: float, top: float) -> None:
        kept: list[int] = []
        xs0: list[float] = []
        xs1: list[float] = []
        last_column, last_x1 = -1, -1.0  # the pixel column and right edge of the bar kept last
        for i, (start, end) in enumerate(zip(row.starts, row.ends, strict=True)):
            x0 = left + start * pps
            x1 = max(left + end * pps, x0 + MIN_BAR)
            column = int(x0)
            if column == last_column and x1 <= last_x1:
                continue  # starts in the same pixel and ends inside the bar kept there
            last_column, last_x1 = column, x1
            kept.append(i)
            xs0.append(x0)
            xs1.append(x1)
        right = list(xs1)
        ends = [True] * len(kept)  # the bar's own right edge shows (not covered)
        later: list[int] = []  # kept bars after k, each reaching further than the next
        for k in range(len(kept) - 1, -1, -1):
            while later and xs1[later[-1]] < xs1[k]:
                later.pop()
            if later and xs0[later[-1]] < xs1[k]:  # covered from where that bar starts
                right[k] = max(xs0[later[-1]], xs0[k] + MIN_BAR)
                ends[k] = False
            later.append(k)
        is_open = row.open
        self.bars = [row.bars[i] for i in kept]
        self.starts = xs0
        self.right = right
        self.ends = ends
        # too narrow for rounding or text: drawn as plain rectangles with others of its status
        self.narrow = [
            r - x0 < NARROW and (not is_open[i] or not e)
            for i, x0, r, e in zip(kept, xs0, right, ends, strict=True)
        ]
        self.reach = list(accumulate(right, max))
        self.rects: list[QRectF | None] = [None] * len(kept)
        self.top = top

    def between(self, x0: float, x1: float) -> range:
        """Indexes of the kept bars painted between scene x0 and x1."""
        return range(bisect_left(self.reach, x0), bisect_right(self.starts, x1))

    def rect(self, k: int) -> QRectF:
        rect = self.rects[k]
        if rect is None:
            x0 = self.starts[k]
            rect = self.rects[k] = QRectF(x0, self.top, self.right[k] - x0, ROW_H)
        return rect


class BarsLayer(QGraphicsItem):
    """Paints the bars in the exposed area from each row's ``Plan`` (later ones over
    earlier ones), and finds the bar under a point (the latest painted there)."""

    def __init__(self, view: TimelineView) -> None:
        super().__init__()
        self._view = view
        self._hover: Bar | None = None
        self._rect = QRectF()
        self._plans: dict[tuple[int, int], Plan] = {}
        self._planned: tuple[float, float, Layout] | None = None  # (pps, t0, layout)
        self.setAcceptHoverEvents(True)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)  # exposedRect

    def boundingRect(self) -> QRectF:
        return self._rect

    def set_rect(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self._rect = rect
        self.update()

    def shown_texts(self) -> list[str]:
        return [b.shown_text() for b in self._view.bars]

    def _row_top(self, lane: int, row: int) -> float:
        return self._view.lane_top(lane) + LANE_PAD + row * (ROW_H + ROW_GAP)

    def plan(self, key: tuple[int, int]) -> Plan:
        """The row's plan at the view's zoom (made on first use after a zoom or a new run)."""
        view = self._view
        planned = (view.pps, view.t0, view.packed)
        if planned != self._planned:  # (a Layout compares by identity)
            self._plans.clear()
            self._planned = planned
        plan = self._plans.get(key)
        if plan is None:
            left = LABEL_W - view.t0 * view.pps
            plan = Plan(view.packed.groups[key], view.pps, left, self._row_top(*key))
            self._plans[key] = plan
        return plan

    def bar_at(self, pos: QPointF) -> Bar | None:
        for lane, n in self._view.packed.groups:
            top = self._row_top(lane, n)
            if not top <= pos.y() <= top + ROW_H:
                continue
            plan = self.plan((lane, n))
            x = pos.x()
            hits = [i for i in plan.between(x, x) if plan.starts[i] <= x <= plan.right[i]]
            return plan.bars[hits[-1]] if hits else None
        return None

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        view = self._view
        exposed = option.exposedRect
        text_color = view.palette().color(QPalette.ColorRole.Text)
        for key in view.packed.groups:
            top = self._row_top(*key)
            if top > exposed.bottom() or top + ROW_H < exposed.top():
                continue
            plan = self.plan(key)
            narrow: dict[str, list[QRectF]] = {}
            for i in plan.between(exposed.left(), exposed.right()):
                bar, rect = plan.bars[i], plan.rect(i)
                if plan.narrow[i]:  # too narrow for rounding or text
                    narrow.setdefault(bar.span.status, []).append(rect)
                else:
                    self._paint_bar(painter, bar, rect, text_color, ends_here=plan.ends[i])
            for status, rects in narrow.items():
                pen, brush, _open = bar_style(status)
                painter.setPen(pen)
                painter.setBrush(brush)
                painter.drawRects(rects)
        selected = view.item_for(view.selected_id) if view.selected_id else None
        if selected is not None:
            painter.setPen(QPen(view.palette().color(QPalette.ColorRole.Highlight), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(selected.rect().adjusted(-1, -1, 1, 1), 3, 3)

    @staticmethod
    def _paint_bar(
        painter: QPainter, bar: Bar, rect: QRectF, text_color: QColor, *, ends_here: bool = True
    ) -> None:
        pen, brush, open_pen = bar_style(bar.span.status)
        painter.setPen(pen)
        painter.setBrush(brush)
        painter.drawRoundedRect(rect, 3, 3)
        if bar.span.end is None and ends_here:  # still open: a dashed right edge
            painter.setPen(open_pen)
            painter.drawLine(rect.topRight(), rect.bottomRight())
        if rect.width() > 36:
            painter.setPen(text_color)
            text = bar.elided_text(painter.fontMetrics(), rect.width() - 8)
            painter.drawText(
                rect.adjusted(4, 0, -4, 0),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                text,
            )

    def hoverMoveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        bar = self.bar_at(event.pos())
        if bar is not self._hover:
            self._hover = bar
            self.setCursor(
                Qt.CursorShape.PointingHandCursor if bar is not None else Qt.CursorShape.ArrowCursor
            )
            self._view.set_hovered(bar.span if bar is not None else None)
        super().hoverMoveEvent(event)

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        if self._hover is not None:
            self._hover = None
            self._view.set_hovered(None)
        super().hoverLeaveEvent(event)


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
        self.setAccessibleName(tr("Visual timeline"))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.timeline: RunTimeline | None = None
        self.packed = EMPTY  # not `layout`: that is QWidget.layout()
        self.bars: list[Bar] = []
        self.rows = [0] * len(LANES)
        self._packing: Ticket | None = None  # a large run's bars, packed off the GUI thread
        self._layer = BarsLayer(self)
        self.scene().addItem(self._layer)
        self.t0 = self.t1 = 0.0
        self.pps = 1.0
        self.fitted = True
        self.cursor_time: float | None = None
        self.now_time: float | None = None  # "now" when the run was read, if it still waits
        self.clock = time.time  # what "now" is (tests fix it)
        self.now_timer = QTimer(self)
        self.now_timer.setInterval(NOW_MS)
        self.now_timer.timeout.connect(self._on_now)
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
        """Show ``tl``; a new run is fitted, the same run keeps its zoom and position. A run
        of more than PACK_INLINE spans is packed on the presentation pool: its bars appear
        when that is done (``timeline`` is the run shown until then)."""
        if self._packing is not None:
            self._packing.cancel()
            self._packing = None
        until, now = reach(tl, self.clock())
        if len(tl.spans) <= PACK_INLINE:
            self._show(tl, lay_out(tl.spans, until, self), now)
            return
        spans = tl.spans
        self._packing = PresentationPool.instance().run(
            lambda ticket: (tl, lay_out(spans, until, self, ticket), now),
            on_done=self._on_packed,
            owner=self,
        )

    @Slot()
    def _on_now(self) -> None:
        """Time passed: the open bars reach the new "now" (the same run keeps its zoom)."""
        if self.timeline is not None and self.now_time is not None and self.isVisible():
            self.set_timeline(self.timeline)

    def packing(self) -> bool:
        """A run's bars are still being packed off the GUI thread."""
        return self._packing is not None

    def _on_packed(self, result: tuple[RunTimeline, Layout, float | None]) -> None:
        self._packing = None
        self._show(*result)

    def _show(self, tl: RunTimeline, layout: Layout, now: float | None) -> None:
        same = self.timeline is not None and self.timeline.run_id == tl.run_id
        keep_scroll = self.horizontalScrollBar().value()
        self.timeline = tl
        self.t0, self.t1, self.now_time = tl.start, reach(tl, now or tl.end)[0], now
        if now is None:
            self.now_timer.stop()
        elif not self.now_timer.isActive():
            self.now_timer.start()
        self.packed, self.bars, self.rows = layout, layout.bars, layout.rows
        if self._density_item.scene() is None:
            self.scene().addItem(self._density_item)
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
        """The bars follow the zoom: their layer is repainted (each bar's rectangle is
        computed as it is painted, for the bars in sight only)."""
        width = self.x_of(self.t1) + RIGHT_PAD
        rect = QRectF(0, 0, width, self.content_height())
        self.scene().setSceneRect(rect)
        self._layer.set_rect(rect)
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
        self._density_item.setBrush(self.palette().color(QPalette.ColorRole.Highlight).lighter(120))

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
        return (
            max(self.t_of(left + LABEL_W), self.t0),
            min(self.t_of(left + self.viewport().width()), self.t1),
        )

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
        if abs(delta.x()) > abs(delta.y()) or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
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
        scene = self.mapToScene(pos.toPoint())
        bar = self._layer.bar_at(scene)
        if bar is not None:
            self.selected_id = bar.span.id
            self.viewport().update()
            self.span_clicked.emit(bar.span)
            return
        self.time_clicked.emit(min(max(self.t_of(scene.x()), self.t0), self.t1))

    def set_hovered(self, span: Span | None) -> None:
        self.hovered_span = span
        self.hovered.emit(span)

    def item_for(self, span_id: str) -> Bar | None:
        return self.packed.by_id.get(span_id)

    # ------------------------------------------------------------ painting
    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        pal = self.palette()
        painter.fillRect(rect, pal.color(QPalette.ColorRole.Base))
        stripe = pal.color(QPalette.ColorRole.AlternateBase)
        for lane in range(len(LANES) + 1):
            if lane % 2:
                top = self.lane_top(lane)
                bottom = self.lane_top(lane + 1) if lane < len(LANES) else self.content_height()
                painter.fillRect(QRectF(rect.left(), top, rect.width(), bottom - top), stripe)

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        painter.save()
        painter.resetTransform()  # from here on: viewport coordinates
        self._paint_cursor(painter)
        self._paint_axis(painter)
        self._paint_now(painter)
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

    def _paint_now(self, painter: QPainter) -> None:
        """The "now" marker: a dashed line where the open bars end, labelled in the axis."""
        if self.now_time is None:
            return
        x = self._vx(self.now_time)
        color = self.palette().color(QPalette.ColorRole.Link)
        painter.setPen(QPen(color, 1.5, Qt.PenStyle.DashLine))
        painter.drawLine(QPointF(x, AXIS_H - 6), QPointF(x, self.viewport().height()))
        painter.setPen(color)
        label = self._now_label(painter.fontMetrics())
        if label is not None:
            painter.drawText(QPointF(label[0], AXIS_H - 8), label[2])

    def _now_label(self, metrics: QFontMetrics) -> tuple[float, float, str] | None:
        """Where "now" is written in the axis (left, right, text): beside its line, in sight."""
        if self.now_time is None:
            return None
        x = self._vx(self.now_time)
        text = tr("now")
        width = metrics.horizontalAdvance(text)
        left = x + 3 if x + 3 + width <= self.viewport().width() else x - 3 - width
        return left, left + width, text

    def tick_labels(self, metrics: QFontMetrics) -> list[tuple[float, float, str]]:
        """The ticks' times as written in the axis (left, right, text); one that would run
        into "now" is not written (its tick mark stays)."""
        if self.timeline is None:
            return []
        start, end = self.visible_times()
        step = tick_step(1 / self.pps)
        now = self._now_label(metrics)
        out = []
        for t in ticks(start, end, step):
            text = tick_label(t, step)
            left = self._vx(t) + 3
            right = left + metrics.horizontalAdvance(text)
            if now is None or right + 4 <= now[0] or left >= now[1] + 4:
                out.append((left, right, text))
        return out

    def _paint_axis(self, painter: QPainter) -> None:
        pal = self.palette()
        width = self.viewport().width()
        painter.fillRect(QRectF(0, 0, width, AXIS_H), pal.color(QPalette.ColorRole.Window))
        painter.setPen(pal.color(QPalette.ColorRole.Mid))
        painter.drawLine(QPointF(0, AXIS_H - 0.5), QPointF(width, AXIS_H - 0.5))
        if self.timeline is None:
            return
        start, end = self.visible_times()
        painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
        for t in ticks(start, end, tick_step(1 / self.pps)):
            x = self._vx(t)
            painter.drawLine(QPointF(x, AXIS_H - 6), QPointF(x, AXIS_H))
        for left, _right, text in self.tick_labels(painter.fontMetrics()):
            painter.drawText(
                QRectF(left, 0, 120, AXIS_H - 4),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                text,
            )

    def _paint_labels(self, painter: QPainter) -> None:
        pal = self.palette()
        height = self.viewport().height()
        painter.fillRect(QRectF(0, AXIS_H, LABEL_W, height), pal.color(QPalette.ColorRole.Window))
        painter.setPen(pal.color(QPalette.ColorRole.Mid))
        painter.drawLine(QPointF(LABEL_W - 0.5, 0), QPointF(LABEL_W - 0.5, height))
        titles = [title for _name, title in LANES] + ["Events"]
        for lane, title in enumerate(titles):
            empty = lane < len(LANES) and not self.rows[lane]
            painter.setPen(
                pal.color(
                    QPalette.ColorRole.PlaceholderText if empty else QPalette.ColorRole.WindowText
                )
            )
            top = self._vy(self.lane_top(lane))
            bottom = self._vy(
                self.lane_top(lane + 1) if lane < len(LANES) else self.content_height()
            )
            painter.drawText(
                QRectF(8, top, LABEL_W - 12, bottom - top),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                f"{title} (none)" if empty else title,
            )

    def accessible_items(self) -> list[str]:
        """Every bar described in words (for screen readers and tests)."""
        return [span_text(i.span) for i in self.bars]
