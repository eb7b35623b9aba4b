"""The event timeline model: a 100 000-event run opens without loading it, blocks come
from an LRU, type filters map rows to sequences, and the model passes qtmodeltester."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.gui.infra.guard import GuardedJournal, ThreadGuard
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.runs import events_model
from proctor.gui.runs.events_model import BLOCK, CACHE_BLOCKS, EventBlockModel
from proctor.gui.runs.events_pane import EventTable

from ..timeline_data import T0, add_big_run

BIG = "run_big000000000000000001"
MID = "run_mid000000000000000001"
N_BIG = 100_000
N_MID = 1_000
WAIT = 15_000


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.db"
    Journal.open(path).close()
    add_big_run(path, BIG, N_BIG)
    add_big_run(path, MID, N_MID, title="A middling run")
    assert not Path(f"{path}-wal").exists()
    return path


@pytest.fixture
def journal(tmp_path, template):
    path = tmp_path / "big.db"
    shutil.copy2(template, path)
    runner = TaskRunner()
    j = GuardedJournal(Journal.open(path, actor=Actor.operator("alice")), ThreadGuard(strict=True))
    yield j, runner
    runner.shutdown()
    j.unguarded.close()
    assert j.guard.violations == []


def shown_table(qtbot, model) -> EventTable:
    table = EventTable(model)
    qtbot.addWidget(table)
    table.resize(900, 600)
    with qtbot.waitExposed(table):
        table.show()
    return table


def test_a_100k_event_run_opens_reading_only_what_is_shown(qtbot, journal):
    j, runner = journal
    model = EventBlockModel(runner)
    table = shown_table(qtbot, model)
    model.set_run(j, BIG, N_BIG)
    table.scrollToBottom()
    assert model.rowCount() == N_BIG  # the scroll bar is right at once
    qtbot.waitUntil(lambda: model.is_loaded(N_BIG - 1), timeout=WAIT)
    last = model.index(N_BIG - 1, 0)
    assert last.data() == str(N_BIG)
    assert model.event_at(N_BIG - 1).sequence == N_BIG
    assert model.fetched_rows <= 2 * BLOCK, model.fetched_rows  # not 100 000
    assert model.fetches <= 2
    table.scrollToTop()
    qtbot.waitUntil(lambda: model.is_loaded(0), timeout=WAIT)
    assert model.index(0, 2).data() == "run.started"
    assert model.fetched_rows <= 4 * BLOCK


def test_scrolling_top_to_bottom_keeps_a_bounded_cache(qtbot, journal):
    j, runner = journal
    model = EventBlockModel(runner)
    table = shown_table(qtbot, model)
    model.set_run(j, BIG, N_BIG)
    bar = table.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT)
    stops = range(0, bar.maximum() + 1, bar.maximum() // 60)
    for value in stops:
        bar.setValue(value)
        row = table.rowAt(table.viewport().height() // 2)
        qtbot.waitUntil(lambda r=row: model.is_loaded(r), timeout=WAIT)
    assert len(model._blocks) <= CACHE_BLOCKS
    assert model.fetches <= 2 * len(stops)  # the blocks on screen at each stop, no more
    assert model.fetched_rows < N_BIG // 4


def test_unwanted_blocks_are_not_fetched_while_dragging(qtbot, journal):
    j, runner = journal
    model = EventBlockModel(runner)
    model.set_run(j, BIG, N_BIG)
    for row in range(0, N_BIG, BLOCK):  # a wish for every block, no event loop between
        model.event_at(row)
    qtbot.waitUntil(lambda: not model._inflight, timeout=WAIT)
    assert model.fetches <= events_model.IN_FLIGHT + events_model.MAX_WANTED


def test_type_filter_maps_rows_to_sequences(qtbot, journal):
    j, runner = journal
    model = EventBlockModel(runner)
    with qtbot.waitSignal(model.shaped, timeout=WAIT):
        model.set_run(j, MID, N_MID, types=["log"])
    expected = [s for s in range(2, N_MID + 1) if s % 5 == 3]  # TYPES[3] == "log"
    assert model.rowCount() == len(expected)
    assert model.sequence_at(0) == expected[0] and model.sequence_at(10) == expected[10]
    assert model.row_of_sequence(expected[7]) == 7
    assert model.row_of_sequence(expected[7] + 1) == 8  # nearest at or after
    model.load_rows(0, 5)
    qtbot.waitUntil(lambda: model.is_loaded(5), timeout=WAIT)
    assert [model.event_at(r).type for r in range(6)] == ["log"] * 6
    assert [model.event_at(r).sequence for r in range(6)] == expected[:6]


def test_model_tester_unfiltered_filtered_and_growing(qtbot, qtmodeltester, journal, monkeypatch):
    j, runner = journal
    monkeypatch.setattr(events_model, "BLOCK", 64)
    model = EventBlockModel(runner)
    qtmodeltester.check(model)
    model.set_run(j, MID, 300)  # show only the first 300 of the run's events
    qtmodeltester.check(model)
    model.load_rows(0, 299)
    qtbot.waitUntil(lambda: all(model.is_loaded(r) for r in range(300)), timeout=WAIT)
    qtmodeltester.check(model)
    model.grow(N_MID)
    assert model.rowCount() == N_MID
    with qtbot.waitSignal(model.shaped, timeout=WAIT):
        model.set_run(j, MID, N_MID, types=["log", "tool.output"])
    qtmodeltester.check(model)
    assert model.rowCount() == 2 * len([s for s in range(2, N_MID + 1) if s % 5 == 3])
    model.clear()
    qtmodeltester.check(model)


def test_rows_show_sequence_time_type_and_summary(qtbot, journal):
    j, runner = journal
    model = EventBlockModel(runner)
    model.set_run(j, MID, N_MID)
    assert model.index(9, 0).data() == "10"  # the sequence is known before loading
    assert model.index(9, 2).data() == "…"
    qtbot.waitUntil(lambda: model.is_loaded(9), timeout=WAIT)
    event = model.event_at(9)
    assert event.created_at == pytest.approx(T0 + 10 * 0.01)
    assert model.index(9, 2).data() == event.type
    assert "line 10" in model.index(9, 3).data()


def test_a_tail_asked_for_during_a_tail_read_is_shown(qtbot, journal, monkeypatch):
    """Filtered and live: a second change while the first tail read is in flight waits
    (coalesce) with the older ``after``; its events must still appear, not be dropped."""
    j, runner = journal
    core = j.unguarded
    model = EventBlockModel(runner)
    with qtbot.waitSignal(model.shaped, timeout=WAIT):
        model.set_run(j, MID, N_MID, types=["log"])
    before = model.rowCount()
    read, release = threading.Event(), threading.Event()
    events = core.runs.events

    def first_read_held(*args, **kw):
        found = events(*args, **kw)
        if not read.is_set():
            read.set()
            release.wait(WAIT / 1000)
        return found

    monkeypatch.setattr(core.runs, "events", first_read_held)
    core.runs.append_event(MID, "log", {"text": "first"})
    model.grow(N_MID + 1)  # the first tail read runs, sees only the first event
    assert read.wait(WAIT / 1000)
    core.runs.append_event(MID, "log", {"text": "second"})
    model.grow(N_MID + 2)  # waits for the one in flight
    release.set()
    qtbot.waitUntil(lambda: model.rowCount() == before + 2, timeout=WAIT)
    assert model.sequence_at(before) == N_MID + 1
    assert model.sequence_at(before + 1) == N_MID + 2


def visible_rows(table) -> range:
    top = table.rowAt(0)
    bottom = table.rowAt(table.viewport().height() - 1)
    bottom = table.model().rowCount() - 1 if bottom < 0 else bottom
    return range(top, bottom + 1)


def test_each_scroll_position_reads_about_what_it_shows(qtbot, journal):
    """Dragging the scroll bar across a 100 000-event run: the rows read for each position
    are bounded by the rows it shows (a block is a small multiple of a screen: a position
    reads at most two), not by a fixed 200-row block (400 rows read for 25 shown)."""
    j, runner = journal
    model = EventBlockModel(runner)
    table = shown_table(qtbot, model)
    model.set_run(j, BIG, N_BIG)
    bar = table.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT)
    qtbot.waitUntil(lambda: all(model.is_loaded(r) for r in visible_rows(table)), timeout=WAIT)
    positions, shown = 40, len(visible_rows(table))
    before = model.fetched_rows
    for n in range(1, positions + 1):
        bar.setValue(round(bar.maximum() * n / positions))
        rows = visible_rows(table)
        qtbot.waitUntil(lambda r=rows: all(model.is_loaded(x) for x in r), timeout=WAIT)
    read = model.fetched_rows - before
    assert shown >= 10 and read <= 3 * shown * positions, (read, shown)
