"""How a status looks: a word, a shape and a colour (never the colour alone).

Shapes are drawn, not loaded: ▶ running, ⏸ waiting for you, ✓ completed, ✕ failed,
⊘ cancelled, ! interrupted, ○ pending. The same table serves runs, attempts, tool
calls, approvals, questions and effects (the timeline bars use the colours).
"""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap, QPolygonF

# status -> (shape, colour)
STYLE: dict[str, tuple[str, str]] = {
    "pending": ("ring", "#7a8294"),
    "requested": ("ring", "#7a8294"),
    "presented": ("ring", "#7a8294"),
    "reserved": ("ring", "#7a8294"),
    "running": ("play", "#2f6fdf"),
    "executing": ("play", "#2f6fdf"),
    "waiting_for_user": ("pause", "#c27c0e"),
    "completed": ("check", "#1e8a4c"),
    "succeeded": ("check", "#1e8a4c"),
    "approved": ("check", "#1e8a4c"),
    "resolved": ("check", "#1e8a4c"),
    "committed": ("check", "#1e8a4c"),
    "failed": ("cross", "#cc3333"),
    "denied": ("cross", "#cc3333"),
    "outcome_unknown": ("warn", "#c2561b"),
    "ambiguous": ("warn", "#c2561b"),
    "interrupted": ("warn", "#c2561b"),
    "cancelled": ("slash", "#6b6f7a"),
    "expired": ("slash", "#6b6f7a"),
}
WORDS = {"waiting_for_user": "waiting for you", "outcome_unknown": "outcome unknown"}


def words(status: str) -> str:
    return WORDS.get(status, status.replace("_", " "))


def color(status: str) -> QColor:
    return QColor(STYLE.get(status, ("ring", "#7a8294"))[1])


@cache
def status_icon(status: str, size: int = 14) -> QIcon:
    shape, hex_color = STYLE.get(status, ("ring", "#7a8294"))
    pixmap = QPixmap(size * 2, size * 2)  # drawn at 2x for high-dpi screens
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    draw_shape(painter, shape, QColor(hex_color), QRectF(1, 1, size - 2, size - 2))
    painter.end()
    return QIcon(pixmap)


def draw_shape(painter: QPainter, shape: str, c: QColor, r: QRectF) -> None:
    pen = QPen(c, max(1.6, r.width() / 7))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    x, y, w, h = r.x(), r.y(), r.width(), r.height()
    if shape == "play":
        painter.setBrush(c)
        painter.drawPolygon(QPolygonF([QPointF(x + w * 0.2, y), QPointF(x + w, y + h / 2),
                                       QPointF(x + w * 0.2, y + h)]))
    elif shape == "pause":
        painter.setBrush(c)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRect(QRectF(x + w * 0.15, y, w * 0.25, h))
        painter.drawRect(QRectF(x + w * 0.6, y, w * 0.25, h))
    elif shape == "check":
        path = QPainterPath(QPointF(x + w * 0.1, y + h * 0.55))
        path.lineTo(x + w * 0.4, y + h * 0.85)
        path.lineTo(x + w * 0.95, y + h * 0.15)
        painter.drawPath(path)
    elif shape == "cross":
        painter.drawLine(QPointF(x + w * 0.15, y + h * 0.15), QPointF(x + w * 0.85, y + h * 0.85))
        painter.drawLine(QPointF(x + w * 0.85, y + h * 0.15), QPointF(x + w * 0.15, y + h * 0.85))
    elif shape == "slash":
        painter.drawEllipse(r.adjusted(1, 1, -1, -1))
        painter.drawLine(QPointF(x + w * 0.25, y + h * 0.75), QPointF(x + w * 0.75, y + h * 0.25))
    elif shape == "warn":
        painter.setBrush(c)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawPolygon(QPolygonF([QPointF(x + w / 2, y), QPointF(x + w, y + h),
                                       QPointF(x, y + h)]))
        painter.setPen(QPen(QColor("#ffffff"), max(1.4, w / 8)))
        painter.drawLine(QPointF(x + w / 2, y + h * 0.35), QPointF(x + w / 2, y + h * 0.68))
        painter.drawPoint(QPointF(x + w / 2, y + h * 0.85))
    else:
        painter.drawEllipse(r.adjusted(1, 1, -1, -1))
