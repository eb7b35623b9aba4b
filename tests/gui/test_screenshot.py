"""Saves pictures of the desk over a populated journal to tests/artifacts/ (not committed)
so a reviewer can look at them; checks they are real pictures, not blank."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from proctor.gui.infra.theme import Theme, ThemeMode

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def distinct_colours(image) -> int:  # QImage
    step = max(1, image.width() // 120)
    return len(
        {
            image.pixel(x, y)
            for x in range(0, image.width(), step)
            for y in range(0, image.height(), step)
        }
    )


def shoot(qtbot, window, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    image = window.grab().toImage()
    assert image.save(str(path))
    assert distinct_colours(image) > 20
    return path


def test_screenshots_of_the_desk(qtbot, populated, open_desk):
    path, ids = populated
    Theme(QApplication.instance(), ThemeMode.LIGHT)  # the style sheet the app applies
    window = open_desk(path)
    window.resize(1400, 880)
    inbox = window.inbox
    key = f"approval:{ids['payment']}"
    qtbot.waitUntil(lambda: inbox.model.row_of(key) >= 0)
    inbox.set_current_row(inbox.model.row_of(key))
    detail = inbox.detail
    qtbot.waitUntil(
        lambda: detail.current().entity is not None and detail.current().entity.id == ids["payment"]
    )
    qtbot.waitUntil(lambda: detail.current().similar.rowCount() == 1)
    qtbot.waitUntil(lambda: window.sidebar_model.count("inbox") == 6)
    assert shoot(qtbot, window, "desk-inbox.png").stat().st_size > 10_000
    theme = Theme(QApplication.instance(), ThemeMode.DARK)
    try:  # palette changes reach the widgets through posted events
        qtbot.waitUntil(lambda: window.inbox.table.palette().base().color().lightness() < 80)
        shoot(qtbot, window, "desk-inbox-dark.png")
    finally:
        theme.apply(ThemeMode.LIGHT)
