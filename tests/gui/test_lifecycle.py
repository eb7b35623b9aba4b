"""What keeps the desk from crashing as it runs and closes: Python's cyclic collector runs
on the GUI thread while a task runner is open (a worker must never destroy a QObject),
a stopped watcher reports nothing more, and the journal closes after the calls in
flight."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QObject, QTimer

from proctor.core import Actor, Journal
from proctor.gui.infra.guard import GuardedJournal, ThreadGuard
from proctor.gui.infra.tasks import GuiThreadCollector, TaskRunner
from proctor.gui.infra.watcher import JournalWatcher

from .conftest import WAIT_MS
from .data import agent, request

GUI_THREAD = threading.get_ident()


class Cyclic(QObject):
    """A QObject only a reference cycle keeps alive (with a running timer, as widgets have):
    the cyclic collector destroys it, in whichever thread the collection runs."""

    died_on: list[int] = []  # noqa: RUF012 - a pydantic field default (copied per instance), not shared state

    def __init__(self) -> None:
        super().__init__()
        self.me = self
        self.timer = QTimer(self)
        self.timer.start(600_000)

    def __del__(self) -> None:
        Cyclic.died_on.append(threading.get_ident())


def churn() -> int:
    """Work on a worker thread that allocates enough to trigger many automatic collections."""
    kept = []
    for n in range(100_000):
        cycle: dict = {"n": n}
        cycle["self"] = cycle
        kept.append(cycle)
    return len(kept)


@pytest.fixture
def runner(qapp) -> Iterator[TaskRunner]:
    runner = TaskRunner()
    yield runner
    runner.shutdown()


def test_garbage_qobjects_die_on_the_gui_thread_while_workers_allocate(qtbot, runner):
    assert not gc.isenabled() and GuiThreadCollector.instance().pinned()
    Cyclic.died_on.clear()
    for _ in range(20):
        Cyclic()
    done = []
    for _ in range(3):
        runner.run(churn, on_done=done.append)
    qtbot.waitUntil(lambda: len(done) == 3, timeout=WAIT_MS)
    gc.collect()
    assert len(Cyclic.died_on) == 20
    assert set(Cyclic.died_on) == {GUI_THREAD}


def test_the_last_runner_to_shut_down_gives_collection_back(qapp):
    was = gc.isenabled()
    first, second = TaskRunner(), TaskRunner()
    assert not gc.isenabled()
    first.shutdown()
    first.shutdown()  # twice is once
    assert not gc.isenabled()
    second.shutdown()
    assert gc.isenabled() == was


def test_a_stopped_watcher_reports_nothing_more(qtbot, populated, runner):
    path, ids = populated
    journal = GuardedJournal(
        Journal.open(path, actor=Actor.operator("alice")), ThreadGuard(strict=True)
    )
    watcher = JournalWatcher(journal, runner)
    seen = []
    watcher.changed.connect(seen.append)
    watcher.start(0)  # every change of the journal is news
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT_MS)
    with agent(path, "coder") as a:
        request(a, ids["run"], "late", {}, "after the window closed")
    seen.clear()
    watcher.refresh_now()  # a read is on its way ...
    watcher.stop()  # ... when the window closes
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    watcher.refresh_now()
    assert runner.pending() == 0 and seen == []
    watcher.start(watcher.last_seq)  # started again, it reports again
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT_MS)
    runner.shutdown()
    journal.unguarded.close()


class SeesClose(ThreadGuard):
    """Says when close() has been called (it is checked first, before anything waits)."""

    def __init__(self) -> None:
        super().__init__(strict=False)
        self.closing = threading.Event()

    def check(self, what: str) -> None:
        if what == "journal.close":
            self.closing.set()
        super().check(what)


def test_the_journal_closes_after_the_calls_in_flight(journal_path):
    guard = SeesClose()
    journal = GuardedJournal(Journal.open(journal_path, actor=Actor.operator("alice")), guard)
    unguarded, order = journal.unguarded, []
    started, release = threading.Event(), threading.Event()
    count, close = unguarded.runs.count, unguarded.close

    def held_count(*args, **kwargs):
        started.set()
        release.wait(WAIT_MS / 1000)
        result = count(*args, **kwargs)
        order.append("read returned")
        return result

    def recorded_close() -> None:
        order.append("closed")
        close()

    unguarded.runs.count = held_count
    unguarded.close = recorded_close
    reader = threading.Thread(target=journal.runs.count)
    reader.start()
    assert started.wait(WAIT_MS / 1000)
    closer = threading.Thread(target=journal.close)
    closer.start()
    assert guard.closing.wait(WAIT_MS / 1000)  # close() has begun while the read runs
    release.set()
    reader.join(WAIT_MS / 1000)
    closer.join(WAIT_MS / 1000)
    assert order == ["read returned", "closed"]
    assert journal.calls.count() == 0


def test_a_closed_window_stops_every_pages_timers(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    for page_id in ("runs", "memory", "effects", "audit", "inbox"):
        window.go(page_id)  # each page starts its ticks once shown
    qtbot.waitUntil(lambda: window.runs.model.rowCount() > 0)
    assert [t for t in window.findChildren(QTimer) if t.isActive()]
    window.close()
    assert [
        t.objectName() or type(t.parent()).__name__
        for t in window.findChildren(QTimer)
        if t.isActive()
    ] == []


def test_calls_queued_behind_the_close_never_reopen_the_file(qtbot, journal_path):
    journal = GuardedJournal(
        Journal.open(journal_path, actor=Actor.operator("alice")), ThreadGuard(strict=True)
    )
    runner = TaskRunner()
    done, failed = [], []
    try:
        runner.run(journal.close)
        qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
        for _ in range(3):  # e.g. a page's timer fired as its window closed
            runner.run(journal.runs.count, on_done=done.append, on_error=failed.append)
        qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    finally:
        runner.shutdown()
    assert journal.calls.closed
    assert done == [] and failed == []  # dropped: nobody is told about a closed window's read
    engine = journal.unguarded._reader  # nothing opened the file again after the close
    assert engine.pool.checkedin() == 0 and engine.pool.checkedout() == 0
