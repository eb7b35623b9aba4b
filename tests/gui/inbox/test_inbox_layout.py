"""The inbox's top rows at a 1400 px window (issue 32 item 14, the last stop's notes): the
Views button's text fits beside its menu arrow, the Waiter column shows "nobody waited"
whole, no blank band is kept above the list for the held-arrivals bar while nothing is held,
and nothing moves when that bar comes and goes."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyle, QWidget

from ..conftest import WAIT_MS
from ..data import agent, request
from ..test_nothing_moves import laid_out, where

LEFT = Qt.MouseButton.LeftButton
AGENT = "claude-billing-reconciler"  # a long agent name widens the agent menu


def top(widget: QWidget, window: QWidget) -> int:
    return widget.mapTo(window, QPoint(0, 0)).y()


def bottom(widget: QWidget, window: QWidget) -> int:
    return top(widget, window) + widget.height()


def open_wide(qtbot, journal_path, open_desk):
    with agent(journal_path, AGENT) as a:
        run = a.runs.start("data-pipeline/nightly", "layout", agent=AGENT)
        first = request(a, run.id, "fs.write", {"path": "f"}, "w", safety_class="unsafe_write")
    window = open_desk(journal_path)
    window.resize(1400, 900)
    inbox = window.inbox
    qtbot.waitUntil(lambda: inbox.model.rowCount() == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: inbox.filters.agent.count() > 1, timeout=WAIT_MS)  # facets in
    laid_out()
    return window, first


def test_the_views_button_shows_its_whole_text_at_1400_px(qtbot, journal_path, open_desk):
    window, _ = open_wide(qtbot, journal_path, open_desk)
    filters, views = window.inbox.filters, window.inbox.views
    arrow = views.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, None, views)
    text = views.fontMetrics().horizontalAdvance(views.text())
    # the text is centred on the button and the menu arrow drawn in its right-hand corner:
    # it clears the arrow when the button has an arrow's room on either side of the text
    assert views.sizeHint().width() >= text + 2 * arrow
    assert views.width() >= views.sizeHint().width(), "the row squeezed the Views button"
    assert views.geometry().right() < filters.width(), "the Views button is cut at the edge"


def test_the_waiter_column_shows_its_longest_words(qtbot, journal_path, open_desk):
    from proctor.core.kernel import waiting
    from proctor.gui.inbox.model import COL_WAITER

    window, _ = open_wide(qtbot, journal_path, open_desk)
    table = window.inbox.table
    words = table.fontMetrics().horizontalAdvance(waiting.NOBODY)
    assert table.columnWidth(COL_WAITER) >= words + 12, "'nobody waited' is cut"


def test_no_band_is_kept_for_the_held_bar_and_nothing_moves_when_it_comes(
    qtbot, journal_path, open_desk
):
    window, _ = open_wide(qtbot, journal_path, open_desk)
    inbox = window.inbox
    # between the filter row and the list: the message bar's row (kept for banners), and
    # nothing else but the layout's spacing
    gap = top(inbox.table, window) - bottom(inbox.filters, window)
    assert gap <= inbox.message.height() + 3 * 8, f"a blank band of {gap} px above the list"
    assert not inbox.new_bar.text()
    watched = [
        inbox.filters.search,
        inbox.views,
        inbox.message,
        inbox.table.viewport(),
        inbox.detail,
    ]
    before = where(watched)
    QTest.mouseMove(inbox.table.viewport(), QPoint(40, 10))  # the operator works the list
    qtbot.waitUntil(inbox.pointer_on_list, timeout=WAIT_MS)
    with agent(journal_path, "late") as late:
        run = late.runs.start("shop", "late", agent="late")
        request(late, run.id, "fs.write", {"path": "g"}, "write it too")
    qtbot.waitUntil(lambda: "1 new request held" in inbox.new_bar.text(), timeout=WAIT_MS)
    laid_out()
    assert inbox.new_bar.isVisible() and inbox.new_bar.button.isVisible()
    assert where(watched) == before, "the held bar moved the page"
    label = inbox.new_bar.label
    inbox.new_bar.set_count(999)  # its longest words fit its share of the row at 1400 px
    assert label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()
    inbox.new_bar.set_count(1)
    # a banner while the bar shows: both are seen, and still nothing moves
    inbox.message.show_message("Approved fs.write f.")
    laid_out()
    assert inbox.message.isVisible() and inbox.new_bar.isVisible()
    assert where(watched) == before, "the banner beside the held bar moved the page"
    inbox.message.clear()
    qtbot.mouseClick(inbox.new_bar.button, LEFT)
    qtbot.waitUntil(lambda: not inbox.new_bar.text(), timeout=WAIT_MS)
    laid_out()
    assert where(watched) == before, "the held bar's going moved the page"
