"""Bulk-selected rows look different from the cursor row; radio buttons and check boxes
are clearly visible on the dark palette (issue 16, smaller items)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QCheckBox, QRadioButton, QVBoxLayout, QWidget

from proctor.gui.infra.theme import Theme, ThemeMode, palette_for
from proctor.gui.widgets.delegates import bulk_tint

from ..conftest import WAIT_MS
from ..data import agent, request
from ..test_resources import contrast

NON_TEXT = 3.0  # WCAG 1.4.11: a control's boundary against what is next to it


@pytest.fixture
def theme() -> Theme:
    theme = Theme(QApplication.instance(), ThemeMode.LIGHT)
    yield theme
    theme.apply(ThemeMode.LIGHT)


def approvals(path, n: int) -> list[str]:
    with agent(path, "ops-bot") as a:
        run = a.runs.start("infra", "Tidy", agent="ops-bot")
        return [
            request(a, run.id, "shell.exec", {"command": f"echo {k}"}, "needed") for k in range(n)
        ]


def row_color(table, image: QImage, row: int) -> QColor:
    """The background in the middle of a row's Age cell, right of its text."""
    rect = table.visualRect(table.model().index(row, 3))
    return QColor(image.pixel(rect.right() - 3, rect.center().y()))


def press(qtbot, window, key: Qt.Key) -> None:
    qtbot.waitUntil(window.isActiveWindow)
    window.inbox.table.setFocus()
    qtbot.keyClick(window.inbox.table, key)


@pytest.mark.parametrize("mode", [ThemeMode.LIGHT, ThemeMode.DARK], ids=["light", "dark"])
def test_bulk_selection_is_not_painted_as_the_cursor(qtbot, journal_path, open_desk, theme, mode):
    theme.apply(mode)
    ids = approvals(journal_path, 4)
    window = open_desk(journal_path)
    table, model = window.inbox.table, window.inbox.model
    qtbot.waitUntil(lambda: model.rowCount() == 4, timeout=WAIT_MS)
    window.inbox.set_current_row(0)
    for _ in range(3):  # x j x j x: rows 0-2 selected, then k: the cursor on row 1
        press(qtbot, window, Qt.Key.Key_X)
        press(qtbot, window, Qt.Key.Key_J)
    press(qtbot, window, Qt.Key.Key_K)
    press(qtbot, window, Qt.Key.Key_K)
    assert len(window.inbox.targets()) == 3 and table.currentIndex().row() == 1
    assert len(ids) == 4
    image = table.viewport().grab().toImage()
    palette = table.palette()
    selected, unselected = row_color(table, image, 0), row_color(table, image, 3)
    highlight = palette.color(palette.ColorRole.Highlight)
    assert selected.name() == bulk_tint(palette).color().name()  # tinted, not highlighted
    assert selected.name() != highlight.name()
    assert contrast(selected, unselected) > 1.1  # and still clearly selected
    # the cursor row has a frame in the highlight colour along its top edge
    rect = table.visualRect(model.index(1, 3))
    edge = {
        QColor(image.pixel(x, rect.top() + 1)).name()
        for x in range(rect.left() + 2, rect.right() - 2)
    }
    assert edge == {highlight.name()}
    top_of_row0 = QColor(
        image.pixel(rect.center().x(), table.visualRect(model.index(0, 3)).top() + 1)
    ).name()
    assert top_of_row0 != highlight.name()  # a selected row that is not the cursor: no frame


def indicator_contrast(widget: QWidget, window: QColor) -> float:
    """The strongest contrast between the indicator's pixels and the window behind it."""
    image = widget.grab().toImage()
    size = widget.style().pixelMetric(widget.style().PixelMetric.PM_ExclusiveIndicatorWidth)
    y0 = (image.height() - size) // 2
    best = 1.0
    for x in range(size + 4):
        for y in range(max(0, y0 - 2), min(image.height(), y0 + size + 2)):
            best = max(best, contrast(QColor(image.pixel(x, y)), window))
    return best


def test_dark_radio_buttons_and_check_boxes_are_clearly_visible(qtbot, theme):
    theme.apply(ThemeMode.DARK)
    box = QWidget()
    qtbot.addWidget(box)
    layout = QVBoxLayout(box)
    off, on = QRadioButton("Once", box), QRadioButton("Always in this run", box)
    check = QCheckBox("Snoozed", box)
    for w in (off, on, check):
        layout.addWidget(w)
    on.setChecked(True)
    box.show()
    qtbot.waitExposed(box)
    window = palette_for(True).color(palette_for(True).ColorRole.Window)
    for widget in (off, on, check):
        assert indicator_contrast(widget, window) >= NON_TEXT, widget.text()


def test_the_light_style_paints_primitives_without_calling_python(qtbot, theme):
    """Qt calls the style's drawPrimitive for every primitive of every cell it paints (a
    timeline page: ~200 calls): on the light palette, where the desk changes nothing, no
    Python override sits in that path; the dark one keeps its visible indicator rings."""
    from PySide6.QtWidgets import QProxyStyle

    theme.apply(ThemeMode.LIGHT)
    assert type(QApplication.style()).drawPrimitive is QProxyStyle.drawPrimitive
    theme.apply(ThemeMode.DARK)
    assert type(QApplication.style()).drawPrimitive is not QProxyStyle.drawPrimitive
