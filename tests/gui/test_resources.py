"""Resources: every icon the code names exists (through importlib.resources), every action
has an icon or a documented reason for none, the app icon PNGs match their SVG, icons are
readable on both palettes, and the light and dark palettes meet WCAG contrast (computed
here); a screenshot of the inbox in each palette goes to tests/artifacts/."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from proctor import resources
from proctor.core import models
from proctor.gui.infra.theme import LEVEL, SAFETY, Theme, ThemeMode, palette_for
from proctor.gui.shell.mainwindow import PAGES
from proctor.gui.widgets.icons import icon, kind_icon
from proctor.gui.widgets.icons import render_svg as render
from proctor.gui.widgets.run_status import STYLE, status_icon

GUI = Path(__file__).resolve().parents[2] / "gui"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
STATUS_ENUMS = (
    models.RunStatus,
    models.AttemptStatus,
    models.ToolCallStatus,
    models.ApprovalStatus,
    models.QuestionStatus,
    models.ConflictStatus,
    models.EffectStatus,
)
TEXT_ROLES = [  # (foreground, background) pairs people read text in
    ("Text", "Base"),
    ("Text", "AlternateBase"),
    ("WindowText", "Window"),
    ("ButtonText", "Button"),
    ("HighlightedText", "Highlight"),
    ("ToolTipText", "ToolTipBase"),
    ("PlaceholderText", "Base"),
    ("Link", "Base"),
]
AA_TEXT, AA_GRAPHICS = 4.5, 3.0  # WCAG 2.1 1.4.3 (text) and 1.4.11 (non-text contrast)


def luminance(color: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor | str, b: QColor | str) -> float:
    high, low = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (high + 0.05) / (low + 0.05)


# ------------------------------------------------------------------ icons exist
def names_in_code() -> tuple[set[str], set[str]]:
    """Literal icon("name") calls and icon="name" declarations (ActionSpec), and the
    prefixes of f-string ones (icon(f"page-{…}"), icon=f"page-{…}")."""
    literal, prefixes = set(), set()
    for path in GUI.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        literal |= set(re.findall(r'\bicon(?:\(|=)"([\w-]+)"', text))
        prefixes |= set(re.findall(r'\bicon(?:\(|=)f"([\w-]+)\{', text))
    return literal, prefixes


def test_every_icon_named_in_the_code_exists(qapp):
    literal, prefixes = names_in_code()
    assert literal, "the scan found no icon() calls: the pattern is stale"
    families = {"page-": [pid for pid, _ in PAGES], "kind-": list(models.InboxKind)}
    assert prefixes <= set(families), f"a new icon family to check here: {prefixes}"
    names = literal | {
        f"{prefix}{member}" for prefix, members in families.items() for member in members
    }
    missing = sorted(n for n in names if not resources.exists("icons", f"{n}.svg"))
    assert missing == []
    assert all(not icon(n).isNull() for n in names)
    assert all(not kind_icon(kind).isNull() for kind in models.InboxKind)


def test_every_status_has_an_explicit_icon(qapp):
    statuses = {status.value for enum in STATUS_ENUMS for status in enum}
    assert sorted(statuses - set(STYLE)) == []
    for status in statuses:
        assert not status_icon(status).isNull(), status
        assert not status_icon(status).pixmap(16, 16).isNull(), status


def test_every_action_has_an_icon_or_a_reason_for_none(populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    registered = {spec.id for spec in window.registry.specs()}
    # an icon, or the reason for none, is given in the command's own declaration (ActionSpec)
    icons = {s.id for s in window.registry.specs() if s.icon}
    text_only = {s.id: s.no_icon for s in window.registry.specs() if s.no_icon}
    both = icons & set(text_only)
    assert both == set()
    undecided = registered - icons - set(text_only)
    assert undecided == set(), "give these an icon in their ActionSpec or say why not"
    stale = (icons | set(text_only)) - registered
    assert stale == set()
    for action_id in registered:
        has_icon = not window.registry.action(action_id).icon().isNull()
        assert has_icon == (action_id in icons), action_id
    assert all(reason.strip() for reason in text_only.values())


@pytest.mark.parametrize("size", resources.APP_ICON_SIZES)
def test_app_icon_pngs_exist_at_their_size_and_match_the_svg(qapp, size):
    png = QImage(str(resources.path("icons", "app", f"proctor-{size}.png")))
    assert (png.width(), png.height()) == (size, size)
    fresh = render(resources.path("icons", "proctor.svg"), size)
    png = png.convertToFormat(QImage.Format.Format_ARGB32)
    step = max(1, size // 32)
    diffs = [
        abs(QColor(png.pixel(x, y)).lightness() - QColor(fresh.pixel(x, y)).lightness())
        for x in range(0, size, step)
        for y in range(0, size, step)
    ]
    assert sum(diffs) / len(diffs) < 4, "re-run packaging/make_icons.py after editing the SVG"


# ------------------------------------------------------------------ icons readable
def svg_colours(name: str) -> tuple[str | None, set[str]]:
    """(badge fill or None, the other colours drawn). A badge is a first <rect> filling
    most of the canvas: the marks on it are read against it, not against the window."""
    root = ET.fromstring(resources.read_text("icons", f"{name}.svg"))
    shapes = list(root)
    badge = None
    first = shapes[0]
    if first.tag.endswith("rect") and float(first.get("width", 0)) >= 0.8 * float(
        root.get("width")
    ):
        badge = first.get("fill")
        shapes = shapes[1:]
    colours = {shape.get(attr) for shape in shapes for attr in ("fill", "stroke")}
    return badge, {c for c in colours if c and c != "none"}


@pytest.mark.parametrize("name", resources.icon_names())
def test_icons_are_readable_on_the_light_and_the_dark_palette(name):
    backgrounds = [
        resources.palette(theme)[role]
        for theme in ("light", "dark")
        for role in ("window", "base", "alt")
    ]
    badge, marks = svg_colours(name)
    if badge is not None:
        assert min(contrast(badge, bg) for bg in backgrounds) >= AA_GRAPHICS
        assert min(contrast(mark, badge) for mark in marks) >= AA_GRAPHICS
        return
    white_marks = {m for m in marks if QColor(m) == QColor("#ffffff")}
    drawn = marks - white_marks
    assert drawn and min(contrast(c, bg) for c in drawn for bg in backgrounds) >= AA_GRAPHICS
    for mark in white_marks:  # white is only drawn on a coloured shape of the same icon
        assert min(contrast(mark, c) for c in drawn) >= AA_GRAPHICS


# ------------------------------------------------------------------ palettes
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_palette_text_roles_meet_wcag_aa(qapp, dark):
    palette = palette_for(dark)
    role = QPalette.ColorRole
    for fg, bg in TEXT_ROLES:
        ratio = contrast(palette.color(getattr(role, fg)), palette.color(getattr(role, bg)))
        assert ratio >= AA_TEXT, f"{fg} on {bg}: {ratio:.2f}"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_chips_and_message_bars_meet_wcag_aa(qapp, dark):
    text = palette_for(dark).color(QPalette.ColorRole.Text)
    for name, pair in list(SAFETY.items()) + list(LEVEL.items()):
        ratio = contrast(text, pair[1 if dark else 0])
        assert ratio >= AA_TEXT, f"{name}: {ratio:.2f}"


def test_palettes_come_from_resources(qapp):
    role = QPalette.ColorRole
    for dark, name in ((False, "light"), (True, "dark")):
        colours = resources.palette(name)
        palette = palette_for(dark)
        for r, key in (
            (role.Window, "window"),
            (role.Base, "base"),
            (role.Text, "text"),
            (role.Highlight, "highlight"),
            (role.PlaceholderText, "muted"),
        ):
            assert palette.color(r).name() == colours[key], (name, key)


def inbox_shot(qtbot, window, name: str) -> QImage:
    QApplication.processEvents()
    image = window.inbox.grab().toImage()
    ARTIFACTS.mkdir(exist_ok=True)
    assert image.save(str(ARTIFACTS / name))
    return image


def test_inbox_screenshots_in_both_palettes(qtbot, populated, open_desk):
    path, _ = populated
    app = QApplication.instance()
    theme = Theme(app, ThemeMode.LIGHT)  # before the window: restyling it later costs seconds
    try:
        window = open_desk(path)
        window.resize(1280, 800)
        qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 6)
        for mode, name in ((ThemeMode.LIGHT, "light"), (ThemeMode.DARK, "dark")):
            if theme.mode != mode:
                theme.apply(mode)
            palette = app.palette()
            for fg, bg in TEXT_ROLES:  # what the app really uses
                assert (
                    contrast(
                        palette.color(getattr(QPalette.ColorRole, fg)),
                        palette.color(getattr(QPalette.ColorRole, bg)),
                    )
                    >= AA_TEXT
                )
            image = inbox_shot(qtbot, window, f"inbox-{name}.png")
            table = window.inbox.table
            corner = table.viewport().mapTo(window.inbox, table.viewport().rect().bottomRight())
            seen = QColor(image.pixel(corner.x() - 2, corner.y() - 2))
            expected = resources.palette(name)
            assert seen.name() in (expected["base"], expected["alt"]), (name, seen.name())
    finally:
        theme.apply(ThemeMode.LIGHT)
