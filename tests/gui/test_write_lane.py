"""A click's write never waits for reads (issue 24, the desk's click -> committed): writes
run on a lane of their own, and their outcome is delivered on the GUI thread ahead of
the reads' results already waiting there. Real worker threads; reads held on events."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

from proctor.gui.infra.tasks import TaskRunner

WAIT = 10_000


def held(gate: threading.Event, started: list, value: object):
    def fn():
        started.append(value)
        assert gate.wait(20)
        return value

    return fn


def workers_done(runner: TaskRunner) -> None:
    """Block the GUI thread (no event is processed) until every worker has finished and
    posted its outcome."""
    for pool in (runner._pool, getattr(runner, "_writer", None)):
        if pool is not None:
            assert pool.waitForDone(WAIT)


def test_a_write_does_not_queue_behind_reads_that_fill_the_pool(qtbot, runner):
    owner, gate, started, got = QObject(), threading.Event(), [], []
    try:
        for n in range(5):  # three running, two more waiting for a thread
            runner.run(held(gate, started, f"read {n}"), on_done=got.append, owner=owner)
        qtbot.waitUntil(lambda: len(started) == 3, timeout=WAIT)
        runner.run(lambda: "write", on_done=got.append, owner=owner, write=True)
        qtbot.waitUntil(lambda: "write" in got, timeout=WAIT)  # while every read is held
        assert got == ["write"]
    finally:
        gate.set()
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT)
    assert sorted(got) == ["read 0", "read 1", "read 2", "read 3", "read 4", "write"]


def test_writes_run_one_after_another_in_the_order_asked(qtbot, runner):
    owner, gate, started, got = QObject(), threading.Event(), [], []
    runner.run(held(gate, started, "first"), on_done=got.append, owner=owner, write=True)
    runner.run(
        lambda: started.append("second") or "second", on_done=got.append, owner=owner, write=True
    )
    qtbot.waitUntil(lambda: started == ["first"], timeout=WAIT)
    assert started == ["first"]  # the second write waits for the first
    gate.set()
    qtbot.waitUntil(lambda: got == ["first", "second"], timeout=WAIT)


def test_a_write_outcome_goes_ahead_of_read_results_waiting_for_the_gui_thread(qtbot, runner):
    owner, got = QObject(), []
    for n in range(4):
        runner.run(lambda n=n: f"read {n}", on_done=got.append, owner=owner)
    workers_done(runner)  # the reads' results wait for the GUI thread
    runner.run(lambda: "write", on_done=got.append, owner=owner, write=True)
    workers_done(runner)  # ... and the write's outcome after them
    assert got == []
    qtbot.waitUntil(lambda: len(got) == 5, timeout=WAIT)
    assert got[0] == "write"
    assert sorted(got[1:]) == ["read 0", "read 1", "read 2", "read 3"]


def test_a_write_error_goes_ahead_too(qtbot, runner):
    owner, got = QObject(), []

    def refused():
        raise RuntimeError("refused")

    for n in range(3):
        runner.run(lambda n=n: f"read {n}", on_done=got.append, owner=owner)
    workers_done(runner)
    runner.run(
        refused, on_done=got.append, on_error=lambda e: got.append(str(e)), owner=owner, write=True
    )
    workers_done(runner)
    qtbot.waitUntil(lambda: len(got) == 4, timeout=WAIT)
    assert got[0] == "refused"
    assert sorted(got[1:]) == ["read 0", "read 1", "read 2"]


def test_shutdown_waits_for_a_write_on_its_lane(qtbot, qapp):
    runner, gate, started, got = TaskRunner(threads=1), threading.Event(), [], []
    runner.run(held(gate, started, "write"), on_done=got.append, write=True)
    qtbot.waitUntil(lambda: started == ["write"], timeout=WAIT)
    threading.Timer(0.2, gate.set).start()
    assert runner.shutdown(WAIT)
    assert runner.pending() == 0
