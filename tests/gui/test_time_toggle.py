"""View > Absolute times: every page's times switch between "12m ago" and the wall time,
live (a repaint, no reload), kept in the preferences; the tooltip shows the other form.
The run timeline marks "now" and draws what still waits up to it."""

from __future__ import annotations

import time

from PySide6.QtCore import QModelIndex, Qt

from proctor.core.audit.timeline import RunTimeline, Span
from proctor.gui.inbox.model import COL_AGE
from proctor.gui.timeline.layout import tick_step, ticks
from proctor.gui.timeline.view import TimelineView, reach
from proctor.gui.widgets import fmt

from .conftest import WAIT_MS


def cell(model, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    return model.data(model.index(row, col), role)


def test_the_toggle_switches_every_time_live_and_is_remembered(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    inbox = window.inbox.model
    qtbot.waitUntil(lambda: inbox.rowCount() > 0, timeout=WAIT_MS)
    item = inbox.item(0)
    window.inbox.table.setCurrentIndex(inbox.index(0, 1))
    qtbot.waitUntil(lambda: window.inbox.detail.current() is not None, timeout=WAIT_MS)
    detail = window.inbox.detail.current()
    assert "requested " + fmt.age(item.created_at) + " ago" in detail.subtitle.text()
    assert cell(inbox, 0, COL_AGE) == fmt.age(item.created_at)
    assert fmt.clock(item.created_at) in cell(inbox, 0, COL_AGE, Qt.ItemDataRole.ToolTipRole)
    changed: list[QModelIndex] = []
    inbox.dataChanged.connect(lambda a, b, roles=(): changed.append(a))
    resets: list[int] = []
    inbox.modelReset.connect(lambda: resets.append(1))
    try:
        assert window.registry.trigger("app.absolute_times")
        assert changed and not resets  # repainted, not reloaded
        assert inbox.headerData(COL_AGE, Qt.Orientation.Horizontal) == "Requested"
        assert cell(inbox, 0, COL_AGE) == fmt.clock(item.created_at)
        header = window.inbox.table.horizontalHeader()
        shown = window.inbox.table.fontMetrics().horizontalAdvance(fmt.clock(item.created_at))
        assert header.sectionSize(COL_AGE) > shown  # widened: the time is not elided
        tip = cell(inbox, 0, COL_AGE, Qt.ItemDataRole.ToolTipRole)
        assert "ago" in tip
        assert "requested " + fmt.clock(item.created_at) in detail.subtitle.text()
        assert "ago" in detail.subtitle.toolTip()
        assert window.settings.absolute_times is True
        runs = window.runs.model
        qtbot.waitUntil(lambda: runs.rowCount() > 0, timeout=WAIT_MS)
        started = [runs.headerData(c, Qt.Orientation.Horizontal) for c in range(runs.columnCount())]
        col = started.index("Started")
        run = runs.item(0)
        assert cell(runs, 0, col) == fmt.clock(run.created_at)
        assert window.registry.trigger("app.absolute_times")
        assert cell(runs, 0, col).endswith(" ago")
        assert cell(inbox, 0, COL_AGE) == fmt.age(item.created_at)
        assert header.sectionSize(COL_AGE) == 64  # and narrow again
        assert inbox.headerData(COL_AGE, Qt.Orientation.Horizontal) == "Age"
        assert window.settings.absolute_times is False
    finally:
        fmt.set_absolute(False)


def test_absolute_times_carry_the_date_when_not_today():
    fmt.set_absolute(True)
    try:
        yesterday = time.time() - 86_400 * 2
        assert fmt.since(yesterday) == time.strftime("%Y-%m-%d %H:%M", time.localtime(yesterday))
        assert fmt.other(yesterday).endswith(" ago")
    finally:
        fmt.set_absolute(False)
    assert fmt.when(time.time() + 300).startswith("in ")


def test_the_timeline_marks_now_and_draws_what_waits_up_to_it(qtbot):
    start = time.time() - 600
    spans = [
        Span(
            lane="attempt", id="a1", label="a1", status="running", start=start, end=None, detail={}
        ),
        Span(
            lane="approval",
            id="p1",
            label="p1",
            status="pending",
            start=start + 10,
            end=None,
            detail={},
        ),
        Span(
            lane="tool",
            id="t1",
            label="t1",
            status="succeeded",
            start=start,
            end=start + 5,
            detail={},
        ),
    ]
    tl = RunTimeline(run_id="r1", start=start, end=start + 20, live=True, spans=spans)
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(800, 300)
    with qtbot.waitExposed(view):
        view.show()
    before = time.time()
    view.set_timeline(tl)
    assert view.now_time is not None and view.now_time >= before
    assert view.t1 >= view.now_time  # the timeline reaches now ...
    pending = view.item_for("p1")
    assert pending is not None and pending.placed.end >= before  # ... and so does the open bar
    assert view.x_of(pending.placed.end) == view.x_of(view.now_time)
    done = tl.model_copy(
        update={"live": False, "spans": [s.model_copy(update={"end": start + 20}) for s in spans]}
    )
    assert reach(done) == (start + 20, None)  # nothing waits: no marker
    view.grab()  # the marker paints
    later = view.now_time + 30
    view.clock = lambda: later
    view.now_timer.timeout.emit()  # as the timer does every few seconds
    assert view.now_time == later and view.item_for("p1").placed.end == later
    view.set_timeline(done)
    assert view.now_time is None and not view.now_timer.isActive()


def test_no_tick_time_is_written_over_now(qtbot):
    """At any width and age the axis's "now" (written left of its line at the right edge)
    and the ticks' times never overlap: a tick that would run into it keeps its mark, not
    its time."""
    view = TimelineView()
    qtbot.addWidget(view)
    with qtbot.waitExposed(view):
        view.show()
    crowded = 0
    for elapsed in (33.0, 61.0, 600.0, 7_300.0):
        start = time.time() - elapsed
        spans = [
            Span(
                lane="attempt",
                id="a",
                label="a",
                status="running",
                start=start,
                end=None,
                detail={},
            )
        ]
        tl = RunTimeline(run_id=f"r{elapsed}", start=start, end=start + 1, live=True, spans=spans)
        for width in range(420, 1320, 23):
            view.resize(width, 300)
            view.set_timeline(tl)
            view.fit()
            metrics = view.fontMetrics()
            now = view._now_label(metrics)
            assert now is not None
            labels = view.tick_labels(metrics)
            crowded += len(list(ticks(*view.visible_times(), tick_step(1 / view.pps)))) - len(
                labels
            )
            for left, right, text in labels:
                assert right + 4 <= now[0] or left >= now[1] + 4, (elapsed, width, text, now)
    assert crowded > 0  # the case arose: some tick's time was left out for "now"
