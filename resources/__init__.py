"""Proctor's files that are not code: icons, theme palettes, the desktop entry.

The top-level ``resources/`` folder is the package ``proctor.resources`` (setuptools
``package-dir``), so the same lookup works from a source checkout, an installed wheel
and a PyInstaller bundle: everything goes through ``importlib.resources``.

Layout::

    icons/<name>.svg            app, item kinds, pages, statuses, actions (24 px grid)
    icons/app/proctor-<N>.png   the app icon rendered at N = 16 … 512 (packaging/make_icons.py)
    themes/<light|dark>.json    palette colours (role -> #rrggbb)
    linux/<APP_ID>.desktop      the desktop entry `proctor install-desktop` installs
"""

from __future__ import annotations

import atexit
import importlib.resources as ir
import json
from contextlib import ExitStack
from functools import cache
from pathlib import Path

APP_ID = "dev.proctor.Desk"
APP_ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

_files = ExitStack()
atexit.register(_files.close)


def path(*parts: str) -> Path:
    """A real file system path for a resource (``path("icons", "proctor.svg")``).

    Wheels and bundles keep resources as plain files, so this is normally the file
    itself; from a zip import it is extracted once and kept until the process exits.
    """
    traversable = ir.files(__name__).joinpath(*parts)
    if isinstance(traversable, Path):
        return traversable
    return _files.enter_context(ir.as_file(traversable))


def exists(*parts: str) -> bool:
    return ir.files(__name__).joinpath(*parts).is_file()


def read_text(*parts: str) -> str:
    return ir.files(__name__).joinpath(*parts).read_text(encoding="utf-8")


def read_bytes(*parts: str) -> bytes:
    return ir.files(__name__).joinpath(*parts).read_bytes()


def icon_names() -> list[str]:
    """Every ``icons/<name>.svg`` shipped (names without the extension)."""
    folder = ir.files(__name__).joinpath("icons")
    return sorted(item.name[:-4] for item in folder.iterdir() if item.name.endswith(".svg"))


@cache
def palette(name: str) -> dict[str, str]:
    """The colours of theme ``name`` ("light" or "dark"): role -> "#rrggbb"."""
    return dict(json.loads(read_text("themes", f"{name}.json")))
