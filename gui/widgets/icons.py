"""SVG icons shipped in ``proctor.resources`` (the top-level ``resources/icons`` folder),
found through importlib.resources so they load the same from a wheel and a bundle."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QIcon, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from proctor import resources


@cache
def icon(name: str) -> QIcon:
    """``icon("kind-approval")`` -> QIcon from resources/icons/kind-approval.svg.

    An unknown name gives an empty icon (tests/gui/test_resources.py checks that every
    name the code uses exists). The app icon also gets its rendered PNG sizes, which
    window managers and docks prefer over scaling the SVG down.
    """
    if not resources.exists("icons", f"{name}.svg"):
        return QIcon()
    result = QIcon(str(resources.path("icons", f"{name}.svg")))
    if name == "proctor":
        for size in resources.APP_ICON_SIZES:
            png = ("icons", "app", f"proctor-{size}.png")
            if resources.exists(*png):
                result.addFile(str(resources.path(*png)))
    return result


def kind_icon(kind: str) -> QIcon:
    return icon(f"kind-{kind}")


def render_svg(svg: str | Path, size: int) -> QImage:
    """``svg`` drawn on a transparent ``size``×``size`` image (the app icon's PNG sizes)."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(svg)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image
