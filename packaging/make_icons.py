"""Render the app icon (resources/icons/proctor.svg) to the PNG sizes desktops want, and
optionally a contact sheet of every icon on the light and dark palettes for a review.

    uv run python packaging/make_icons.py                 # writes resources/icons/app/*.png
    uv run python packaging/make_icons.py --sheet out.png # plus the contact sheet

Run it after changing proctor.svg and commit the PNGs (tests/gui/test_resources.py checks
that each PNG exists at its size and matches the SVG).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter

from proctor import resources
from proctor.gui.widgets.icons import render_svg as render

APP_DIR = Path(resources.path("icons")) / "app"


def write_app_pngs(folder: Path = APP_DIR) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    svg = resources.path("icons", "proctor.svg")
    written = []
    for size in resources.APP_ICON_SIZES:
        out = folder / f"proctor-{size}.png"
        if not render(svg, size).save(str(out)):
            raise OSError(f"could not write {out}")
        written.append(out)
    return written


def contact_sheet(out: Path, cell: int = 40) -> None:
    """Every icon at 24 px on the light (top row) and dark (bottom row) window colour."""
    names = resources.icon_names()
    image = QImage(cell * len(names), cell * 2, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    for row, theme in enumerate(("light", "dark")):
        painter.fillRect(
            0, row * cell, image.width(), cell, QColor(resources.palette(theme)["window"])
        )
        for col, name in enumerate(names):
            icon = render(resources.path("icons", f"{name}.svg"), 24)
            painter.drawImage(col * cell + (cell - 24) // 2, row * cell + (cell - 24) // 2, icon)
    painter.end()
    image.save(str(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sheet", type=Path, help="also write a contact sheet of every icon")
    args = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    for path in write_app_pngs():
        print(path)
    if args.sheet:
        contact_sheet(args.sheet)
        print(args.sheet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
