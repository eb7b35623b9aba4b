"""The visual timeline: lanes and rows, ticks, zoom around the mouse, fit, pan, hover in
plain words, clicks on bars and on the event lane."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from proctor.core.audit.timeline import RunTimeline, Span
from proctor.gui.timeline.layout import MAX_ROWS, pack, tick_label, tick_step, ticks
from proctor.gui.timeline.pane import HINT, TimelinePane
from proctor.gui.timeline.view import LABEL_W, TimelineView, span_text

from ..data import HOSTILE_REASON

T = 1_750_000_000.0


def span(
    lane: str, sid: str, start: float, end: float | None, status: str = "succeeded", **detail
) -> Span:
    return Span(
        lane=lane,
        id=sid,
        label=detail.pop("label", sid),
        status=status,
        start=T + start,
        end=None if end is None else T + end,
        detail=detail,
    )


SPANS = [
    span("attempt", "a1", 0, 40, "interrupted"),
    span("attempt", "a2", 40, None, "running"),
    span("tool", "t1", 1, 5),
    span("tool", "t2", 2, 3, "failed", error="boom"),
    span("tool", "t3", 6, 9),
    span("approval", "p1", 10, None, "pending"),
    span("question", "q1", 12, 20, "resolved"),
    span("effect", "e1", 21, 22, "ambiguous"),
]


def test_pack_puts_overlaps_on_separate_rows():
    placed, rows = pack(SPANS, T + 60)
    by_id = {p.span.id: p for p in placed}
    assert by_id["t1"].row == 0 and by_id["t2"].row == 1 and by_id["t3"].row == 0
    assert rows == [1, 2, 1, 1, 1]
    assert pack([], T)[1] == [0] * 5  # empty lanes have no rows (drawn as a thin strip)
    assert by_id["p1"].end == T + 60  # an open span runs to the end
    crowd = [span("tool", f"c{n}", 0, 10) for n in range(MAX_ROWS + 3)]
    placed, rows = pack(crowd, T + 10)
    assert rows[1] == MAX_ROWS and max(p.row for p in placed) == MAX_ROWS - 1


def test_ticks_are_round_and_labelled():
    assert tick_step(1 / 100) == 1  # 100 px per second, labels >= 90 px apart
    assert tick_step(1 / 100_000) == 0.001
    assert tick_step(60) >= 3600
    assert ticks(T + 0.5, T + 3.2, 1) == [T + 1, T + 2, T + 3]
    assert tick_label(T + 0.25, 0.05).endswith(".250")
    assert len(ticks(0, 10**9, 1)) == 500  # bounded


@pytest.fixture
def view(qtbot):
    view = TimelineView()
    view.clock = lambda: T + 60  # "now": the run's newest event
    qtbot.addWidget(view)
    view.resize(800, 300)
    with qtbot.waitExposed(view):
        view.show()
    view.set_timeline(RunTimeline(run_id="r1", start=T, end=T + 60, live=True, spans=SPANS))
    return view


def test_fit_then_zoom_keeps_the_time_under_the_mouse(view):
    assert view.fitted
    assert view.x_of(T + 60) <= view.viewport().width()
    anchor = 400.0
    before = view.t_of(view.horizontalScrollBar().value() + anchor)
    view.zoom(8, anchor)
    after = view.t_of(view.horizontalScrollBar().value() + anchor)
    assert not view.fitted and after == pytest.approx(before, abs=1 / view.pps)
    view.zoom(1 / 1000)  # never further out than the whole run
    assert view.fitted
    view.zoom(1e12)
    assert view.pps == pytest.approx(50_000)


def test_bars_follow_the_zoom(view):
    bar = view.item_for("t3")
    width = bar.rect().width()
    view.zoom(4)
    assert bar.rect().width() == pytest.approx(width * 4, rel=0.02)
    view.fit()
    assert bar.rect().width() == pytest.approx(width, rel=0.02)


def test_keys_zoom_and_fit(qtbot, view):
    pps = view.pps
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.pps == pytest.approx(pps * 1.5)
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.pps == pytest.approx(pps)


def test_clicks_report_bars_and_times(qtbot, view):
    bar = view.item_for("q1")
    with qtbot.waitSignal(view.span_clicked) as clicked:
        view.click_at(QPointF(view.mapFromScene(bar.rect().center())))
    assert clicked.args[0].id == "q1" and view.selected_id == "q1"
    lane_y = view.density_top() + 10
    x = view.x_of(T + 30) - view.horizontalScrollBar().value()
    with qtbot.waitSignal(view.time_clicked) as at:
        view.click_at(QPointF(x, lane_y))
    assert at.args[0] == pytest.approx(T + 30, abs=1 / view.pps)
    with qtbot.assertNotEmitted(view.time_clicked):
        view.click_at(QPointF(LABEL_W / 2, lane_y))  # the lane titles are not a time


def test_a_real_mouse_click_and_a_drag(qtbot, view):
    bar = view.item_for("t1")
    point = view.mapFromScene(bar.rect().center())
    with qtbot.waitSignal(view.span_clicked):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    with qtbot.assertNotEmitted(view.span_clicked):
        qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
        qtbot.mouseMove(view.viewport(), point + QPoint(40, 0))
        qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=point + QPoint(40, 0))


def test_same_run_keeps_zoom_new_run_is_fitted(view):
    view.zoom(5)
    pps = view.pps
    view.set_timeline(RunTimeline(run_id="r1", start=T, end=T + 61, live=True, spans=SPANS))
    assert view.pps == pps and not view.fitted
    view.set_timeline(RunTimeline(run_id="r2", start=T, end=T + 10, live=False, spans=[]))
    assert view.fitted and view.bars == []


def test_density_and_cursor(view):
    view.set_density(T, T + 60, [0, 5, 10, 0])
    assert not view._density_item.path().isEmpty()
    view.set_cursor(T + 30)
    assert view.cursor_time == T + 30
    view.grab()  # paints axis, labels, cursor and bars without errors


def test_hover_text_is_plain_words(qtbot):
    hostile = span(
        "approval", "h1", 0, None, "pending", label=HOSTILE_REASON, reason=HOSTILE_REASON
    )
    text = span_text(hostile)
    assert text.startswith("Approval: I need this <b>bold</b>")
    assert "pending" in text and "still open" in text
    pane = TimelinePane(ctx=None)
    qtbot.addWidget(pane)
    pane.view.set_hovered(hostile)
    assert pane.info.text() == text
    assert pane.info.textFormat() == Qt.TextFormat.PlainText
    pane.view.set_hovered(None)
    assert pane.info.text() == HINT
