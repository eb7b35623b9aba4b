"""Light and dark palettes on the Fusion style; follows the system unless overridden.

What a palette cannot say is done by ``DeskStyle`` (a QProxyStyle over Fusion) when it
polishes a widget, keyed by object name: ``Muted``, ``SectionLabel``, ``DetailTitle``,
``Mono``, ``Sidebar``, ``ApproveButton``, and ``MessageBar``/``Banner`` by their ``level``.
No application-wide style sheet: Qt's style-sheet style makes every widget creation and
every theme switch several times slower (measured: building the main window 415 ms of CPU
with the sheet, 95 ms without). Palette colours are files in ``proctor.resources``
(``themes/``); chip colours come from ``chip_colors``.
"""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Slot
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QWidget,
)

from proctor import resources


class ThemeMode(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


# Palette colours ship in proctor.resources (themes/light.json, themes/dark.json).
LIGHT = resources.palette("light")
DARK = resources.palette("dark")

# Safety classes, most dangerous last: (light, dark) background colours of their chips.
SAFETY = {
    "safe_read": ("#d8f1df", "#1f4a2b"),
    "idempotent_write": ("#dbe8fb", "#203b63"),
    "unsafe_write": ("#fcebc8", "#5a4313"),
    "external_side_effect": ("#fde0c8", "#5e3415"),
    "financial": ("#f8d3d3", "#642121"),
    "destructive": ("#f6c6c6", "#7a1d1d"),
}
KIND = {"approval": "#2f6fdf", "question": "#8053df", "conflict": "#138a7a", "effect": "#c2561b"}
# Word-diff highlights (deleted, inserted): these accents mixed into the palette's Base,
# more strongly on a dark Base, so the palette's Text stays readable on them (diff_colors).
DIFF_ACCENT = {"delete": "#e5534b", "insert": "#3fb950"}
DIFF_MIX = (0.3, 0.35)  # (light, dark) share of the accent
LENS_ACCENT = "#e3a008"  # the spans the risk lens read a fact from
LENS_MIX = (0.35, 0.4)  # (light, dark) share of the accent
OVER_BUDGET = ("#b42318", "#ff7b72")  # (light, dark) text of a number over its budget
LEVEL = {
    "info": ("#e3ecfb", "#1f2f4d"),
    "success": ("#dcf2e2", "#1d3b26"),
    "warning": ("#fcefcf", "#4a3b12"),
    "error": ("#f9dada", "#4d1e1e"),
}


def palette_for(dark: bool) -> QPalette:
    c = DARK if dark else LIGHT
    p = QPalette()
    role = QPalette.ColorRole
    for r, key in (
        (role.Window, "window"),
        (role.Base, "base"),
        (role.AlternateBase, "alt"),
        (role.Text, "text"),
        (role.WindowText, "text"),
        (role.ButtonText, "text"),
        (role.Button, "button"),
        (role.Highlight, "highlight"),
        (role.HighlightedText, "hl_text"),
        (role.Link, "link"),
        (role.ToolTipBase, "tooltip"),
        (role.ToolTipText, "text"),
        (role.PlaceholderText, "muted"),
        (role.Mid, "border"),
    ):
        p.setColor(r, QColor(c[key]))
    p.setColor(QPalette.ColorGroup.Disabled, role.Text, QColor(c["muted"]))
    p.setColor(QPalette.ColorGroup.Disabled, role.WindowText, QColor(c["muted"]))
    p.setColor(QPalette.ColorGroup.Disabled, role.ButtonText, QColor(c["muted"]))
    return p


ROLE = QPalette.ColorRole


def _recolour(widget: QWidget, colours: dict[ROLE, str]) -> None:
    palette = QPalette(widget.palette())
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    widget.setPalette(palette)


def _font(widget: QWidget, *, bold: bool = False, scale: float = 1.0) -> None:
    font = QFont(QApplication.font())
    if scale != 1.0:
        font.setPointSizeF(font.pointSizeF() * scale)
    if bold:
        font.setWeight(QFont.Weight.DemiBold)
    widget.setFont(font)


class DeskStyle(QProxyStyle):
    """Fusion, plus the desk's few named looks (applied when a widget is polished)."""

    def __init__(self, dark: bool) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self.dark = dark
        self.c = DARK if dark else LIGHT

    def polish(self, target):  # QWidget | QPalette | QApplication
        result = super().polish(target)
        if isinstance(target, QWidget):
            self._named(target, target.objectName())
        return result

    def _named(self, w: QWidget, name: str) -> None:
        c = self.c
        if name == "Muted":
            _recolour(w, {ROLE.WindowText: c["muted"], ROLE.Text: c["muted"]})
        elif name == "SectionLabel":
            _font(w, bold=True)
            _recolour(w, {ROLE.WindowText: c["muted"]})
        elif name == "DetailTitle":
            _font(w, bold=True, scale=1.45)
        elif name == "Mono":
            w.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        elif name == "ApproveButton":
            _font(w, bold=True)
        elif name == "Sidebar":
            _recolour(w, {ROLE.Base: c["alt"]})
        elif name in ("MessageBar", "Banner"):
            level = str(w.property("level") or "info")
            w.setAutoFillBackground(True)
            _recolour(w, {ROLE.Window: LEVEL.get(level, LEVEL["info"])[1 if self.dark else 0]})


class DarkDeskStyle(DeskStyle):
    """DeskStyle on the dark palette. Only this one overrides ``drawPrimitive`` in Python:
    Qt calls it for every primitive of every cell painted (a timeline page: ~200 calls),
    and on the light palette it had nothing to change."""

    def drawPrimitive(self, element, option, painter, widget=None):
        """On the dark palette Fusion outlines radio buttons and check boxes in a shade of
        the window colour (nearly invisible): draw them with a visible ring instead."""
        if element in INDICATORS:
            draw_indicator(element == INDICATORS[0], option, painter, self.c)
            return
        super().drawPrimitive(element, option, painter, widget)


INDICATORS = (
    QStyle.PrimitiveElement.PE_IndicatorRadioButton,
    QStyle.PrimitiveElement.PE_IndicatorCheckBox,
)


def desk_style(dark: bool) -> DeskStyle:
    return DarkDeskStyle(dark) if dark else DeskStyle(dark)


def draw_indicator(radio: bool, option: QStyleOption, painter: QPainter, c: dict) -> None:
    """A radio button (circle) or check box (rounded square): a ring in the muted text
    colour (the highlight when checked), the base inside, a dot or tick when checked."""
    state = option.state
    enabled = bool(state & QStyle.StateFlag.State_Enabled)
    on = bool(state & QStyle.StateFlag.State_On)
    partial = bool(state & QStyle.StateFlag.State_NoChange)
    rect = QRectF(option.rect).adjusted(1.5, 1.5, -1.5, -1.5)
    ring = QColor(c["highlight"] if (on or partial) and enabled else c["muted"])
    if not enabled:
        ring.setAlphaF(0.5)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(ring, 1.6))
    painter.setBrush(QColor(c["base"]))
    if radio:
        painter.drawEllipse(rect)
    else:
        painter.drawRoundedRect(rect, 2.5, 2.5)
    if on or partial:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(ring)
        inner = rect.adjusted(
            rect.width() * 0.27, rect.height() * 0.27, -rect.width() * 0.27, -rect.height() * 0.27
        )
        if radio:
            painter.drawEllipse(inner)
        elif partial:
            painter.drawRect(inner.adjusted(0, inner.height() * 0.3, 0, -inner.height() * 0.3))
        else:
            painter.setPen(QPen(QColor(c["text"]) if not enabled else ring, 2.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPolyline(
                [
                    inner.bottomLeft() + QPointF(0, -inner.height() * 0.45),
                    inner.bottomLeft() + QPointF(inner.width() * 0.38, 0),
                    inner.topRight(),
                ]
            )
    painter.restore()


def is_dark(mode: ThemeMode) -> bool:
    if mode == ThemeMode.DARK:
        return True
    if mode == ThemeMode.LIGHT:
        return False
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


class Theme(QObject):
    """Applies a mode to the application and follows system changes in SYSTEM mode."""

    def __init__(self, app: QApplication, mode: ThemeMode = ThemeMode.SYSTEM) -> None:
        super().__init__(app)
        self._app = app
        self.mode = mode
        self.dark = False
        app.styleHints().colorSchemeChanged.connect(self._on_system_changed)
        self.apply(mode)

    def apply(self, mode: ThemeMode) -> None:
        self.mode = ThemeMode(mode)
        self.dark = is_dark(self.mode)
        self._app.setStyle(desk_style(self.dark))
        self._app.setPalette(palette_for(self.dark))

    @Slot(Qt.ColorScheme)
    def _on_system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.mode == ThemeMode.SYSTEM:
            self.apply(self.mode)


def chip_colors(safety: str | None, dark: bool) -> QColor | None:
    pair = SAFETY.get(safety or "")
    return QColor(pair[1 if dark else 0]) if pair else None


def palette_is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def mix(base: QColor, accent: QColor, share: float) -> QColor:
    """``share`` of ``accent`` over ``base``."""
    return QColor.fromRgbF(
        *(
            b + (a - b) * share
            for b, a in (
                (base.redF(), accent.redF()),
                (base.greenF(), accent.greenF()),
                (base.blueF(), accent.blueF()),
            )
        )
    )


def diff_colors(palette: QPalette) -> dict[str, QColor]:
    """Backgrounds of deleted and inserted words on ``palette`` (any palette: light, dark,
    or the system's), keyed "delete" / "insert"."""
    base = palette.color(QPalette.ColorRole.Base)
    share = DIFF_MIX[1 if palette_is_dark(palette) else 0]
    return {op: mix(base, QColor(accent), share) for op, accent in DIFF_ACCENT.items()}


def highlight_color(palette: QPalette) -> QColor:
    """The background of a span the risk lens read a fact from, on ``palette``."""
    base = palette.color(QPalette.ColorRole.Base)
    return mix(base, QColor(LENS_ACCENT), LENS_MIX[1 if palette_is_dark(palette) else 0])


def over_budget_color(palette: QPalette) -> QColor:
    return QColor(OVER_BUDGET[1 if palette_is_dark(palette) else 0])


def kind_color(kind: str) -> QColor:
    return QColor(KIND.get(kind, "#777777"))
