"""The damage check (PRAGMA quick_check) can be stopped from another thread: the desk runs it
after its window is up and cancels it when the window closes (issue 33, target 2)."""

from __future__ import annotations

import threading

import pytest

from proctor.core import Actor, Journal, errors


def filled(tmp_path):
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as a:
        run = a.runs.start("p", "t")
        a.runs.append_events(run.id, [("step", {"n": n, "pad": "x" * 200}) for n in range(3000)])
    return path


def test_a_check_cancelled_while_it_runs_stops_with_cancelled(tmp_path):
    """``cancelled`` turns true on another thread while the PRAGMA runs (seen by SQLite's
    progress handler): the check stops with errors.Cancelled, and the journal's next read
    on that connection works (the handler is gone)."""
    path = filled(tmp_path)
    looks: list[int] = []
    stop = threading.Event()

    def cancelled() -> bool:
        looks.append(threading.get_ident())
        if len(looks) == 2:  # the check is under way: someone else stops it
            threading.Thread(target=stop.set).start()
            stop.wait(5)
        return stop.is_set()

    with Journal.open(path, actor=Actor.operator("dana")) as j:
        with pytest.raises(errors.Cancelled):
            j.integrity_check(quick=True, cancelled=cancelled)
        assert len(looks) >= 3  # looked at while running, not only before
        assert j.integrity_check(quick=True) == ["ok"]
        assert j.integrity_check(quick=True, cancelled=lambda: False) == ["ok"]


def test_a_check_cancelled_before_it_starts_does_not_start(tmp_path):
    path = filled(tmp_path)
    with Journal.open(path, actor=Actor.operator("dana")) as j, pytest.raises(errors.Cancelled):
        j.integrity_check(quick=True, cancelled=lambda: True)
