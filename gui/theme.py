"""Light and dark palettes on the Fusion style; follows the system unless overridden.

The style sheet only adds what a palette cannot say (chips, the message bar levels,
the sidebar badges); colours for painted chips come from ``chip_colors``. Palettes and
the style sheet template are files in ``proctor.resources`` (``themes/``).
"""

from __future__ import annotations

from enum import StrEnum
from string import Template

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from proctor import resources


class ThemeMode(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


# Palette colours and the style sheet template ship in proctor.resources (themes/).
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
KIND = {"approval": "#2f6fdf", "question": "#8053df", "memory": "#138a7a", "effect": "#c2561b"}
LEVEL = {"info": ("#e3ecfb", "#1f2f4d"), "success": ("#dcf2e2", "#1d3b26"),
         "warning": ("#fcefcf", "#4a3b12"), "error": ("#f9dada", "#4d1e1e")}


def palette_for(dark: bool) -> QPalette:
    c = DARK if dark else LIGHT
    p = QPalette()
    role = QPalette.ColorRole
    for r, key in ((role.Window, "window"), (role.Base, "base"), (role.AlternateBase, "alt"),
                   (role.Text, "text"), (role.WindowText, "text"), (role.ButtonText, "text"),
                   (role.Button, "button"), (role.Highlight, "highlight"),
                   (role.HighlightedText, "hl_text"), (role.Link, "link"),
                   (role.ToolTipBase, "tooltip"), (role.ToolTipText, "text"),
                   (role.PlaceholderText, "muted"), (role.Mid, "border")):
        p.setColor(r, QColor(c[key]))
    p.setColor(QPalette.ColorGroup.Disabled, role.Text, QColor(c["muted"]))
    p.setColor(QPalette.ColorGroup.Disabled, role.WindowText, QColor(c["muted"]))
    p.setColor(QPalette.ColorGroup.Disabled, role.ButtonText, QColor(c["muted"]))
    return p


def style_sheet(dark: bool) -> str:
    i = 1 if dark else 0
    c = DARK if dark else LIGHT
    levels = "\n".join(
        f'#MessageBar[level="{name}"] {{ background: {colors[i]}; border: 1px solid {c["border"]};'
        f" border-radius: 6px; }}" for name, colors in LEVEL.items())
    template = Template(resources.read_text("themes", "desk.qss"))
    return template.substitute(c, levels=levels, info=LEVEL["info"][i])


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
        app.setStyle("Fusion")
        app.styleHints().colorSchemeChanged.connect(self._on_system_changed)
        self.apply(mode)

    def apply(self, mode: ThemeMode) -> None:
        self.mode = ThemeMode(mode)
        self.dark = is_dark(self.mode)
        self._app.setPalette(palette_for(self.dark))
        self._app.setStyleSheet(style_sheet(self.dark))

    @Slot(Qt.ColorScheme)
    def _on_system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.mode == ThemeMode.SYSTEM:
            self.apply(self.mode)


def chip_colors(safety: str | None, dark: bool) -> QColor | None:
    pair = SAFETY.get(safety or "")
    return QColor(pair[1 if dark else 0]) if pair else None


def kind_color(kind: str) -> QColor:
    return QColor(KIND.get(kind, "#777777"))
