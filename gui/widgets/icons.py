"""SVG icons shipped in gui/resources."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


@cache
def icon(name: str) -> QIcon:
    """``icon("kind-approval")`` -> QIcon from resources/kind-approval.svg (empty if missing)."""
    path = RESOURCES / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def kind_icon(kind: str) -> QIcon:
    return icon(f"kind-{kind}")
