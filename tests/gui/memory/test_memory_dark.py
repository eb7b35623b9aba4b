"""Memory diff highlights on the dark palette: their colours come from the palette (readable
with its text on light and dark), and a theme switch re-colours a diff already on screen.
Saves tests/artifacts/memory-diff-dark.png (not committed) for a reviewer."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.core.memory.views import ScopeUsage
from proctor.core.models import MemoryScope
from proctor.gui.infra.theme import OVER_BUDGET, Theme, ThemeMode, diff_colors, palette_for
from proctor.gui.memory.scopes import ScopeTree, key_of
from proctor.gui.widgets.text_diff import DELETE, INSERT, DiffView, backgrounds, word_diff

from ..conftest import WAIT_MS
from ..test_resources import AA_TEXT, ARTIFACTS, contrast
from .test_memory_flow import open_conflict

LOCAL = "Deploys go out on Tuesday after the smoke tests pass.\nAsk Dana before a rollback."
INCOMING = "Deploys go out on Thursday after the smoke tests pass.\nAsk Dana before a rollback."


def expected(dark: bool) -> dict[str, set[str]]:
    colors = diff_colors(palette_for(dark))
    return {DELETE: {colors["delete"].name()}, INSERT: {colors["insert"].name()}}


def pixels(image: QImage) -> set[str]:
    return {
        QColor(image.pixel(x, y)).name()
        for x in range(image.width())
        for y in range(image.height())
    }


@pytest.fixture
def theme() -> Theme:
    theme = Theme(QApplication.instance(), ThemeMode.LIGHT)
    yield theme
    theme.apply(ThemeMode.LIGHT)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_highlights_are_readable_on_the_palette(qapp, dark):
    palette = palette_for(dark)
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    colors = diff_colors(palette)
    for color in colors.values():
        assert contrast(text, color) >= AA_TEXT  # the words on a highlight read well
        assert contrast(base, color) >= 1.25  # and the highlight stands out from the page
        assert (color.lightness() < 128) == dark  # a dark highlight on a dark palette
    assert colors["delete"].hue() != colors["insert"].hue()


def test_a_theme_switch_recolours_a_diff_on_screen(qtbot, theme):
    view = DiffView("both")
    qtbot.addWidget(view)
    view.show_pieces(word_diff(LOCAL, INCOMING))
    view.show()
    marked = view.marked()
    assert backgrounds(view.document()) == expected(False)
    theme.apply(ThemeMode.DARK)
    qtbot.waitUntil(lambda: backgrounds(view.document()) == expected(True), timeout=WAIT_MS)
    assert view.marked() == marked and view.toPlainText().startswith("Deploys")
    theme.apply(ThemeMode.LIGHT)
    qtbot.waitUntil(lambda: backgrounds(view.document()) == expected(False), timeout=WAIT_MS)


def test_over_budget_tokens_are_readable_after_a_theme_switch(qtbot, theme):
    tree = ScopeTree()
    qtbot.addWidget(tree)
    tree.show()
    big = ScopeUsage(
        scope=MemoryScope.PROJECT,
        scope_key="shop",
        entries=3,
        removed=0,
        pinned=0,
        chars=4000,
        conflicts=0,
    )
    tree.set_usage([big], 100)

    def over_colour() -> str:  # the rows are rebuilt: find the row each time
        tokens = tree._find(key_of(MemoryScope.PROJECT, "shop")).siblingAtColumn(2)
        return tokens.data(Qt.ItemDataRole.ForegroundRole).color().name()

    assert over_colour() == OVER_BUDGET[0]
    theme.apply(ThemeMode.DARK)
    qtbot.waitUntil(lambda: over_colour() == OVER_BUDGET[1], timeout=WAIT_MS)
    assert contrast(OVER_BUDGET[1], palette_for(True).color(QPalette.ColorRole.Base)) >= AA_TEXT
    assert contrast(OVER_BUDGET[0], palette_for(False).color(QPalette.ColorRole.Base)) >= AA_TEXT


def test_memory_conflict_in_the_dark_theme(qtbot, tmp_path: Path, open_desk, theme):
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("coder")) as agent:
        entry = agent.memory.add("project", "shop", "Deploy day", LOCAL, kind="constraint")
        item = agent.memory.record_conflict(entry.id, INCOMING, incoming_source="sync from laptop")
    window = open_desk(path)
    window.resize(1280, 800)
    window.go("memory")
    open_conflict(qtbot, window.memory, item.id)
    review = window.memory.review
    assert backgrounds(review.local.document()) == {DELETE: expected(False)[DELETE]}
    theme.apply(ThemeMode.DARK)
    qtbot.waitUntil(lambda: review.local.palette().base().color().lightness() < 80, timeout=WAIT_MS)
    for view, op in ((review.local, DELETE), (review.incoming, INSERT)):
        qtbot.waitUntil(
            lambda v=view, o=op: backgrounds(v.document()) == {o: expected(True)[o]},
            timeout=WAIT_MS,
        )
        seen = pixels(view.viewport().grab().toImage())
        assert expected(True)[op] <= seen  # the dark highlight is what is painted
        assert not expected(False)[op] & seen  # and no light one is left
    ARTIFACTS.mkdir(exist_ok=True)
    assert window.memory.grab().save(str(ARTIFACTS / "memory-diff-dark.png"))
