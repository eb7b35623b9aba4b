"""``lock_poll``: a write waiting for another process's write lock tries its BEGIN IMMEDIATE
again every ``lock_poll`` seconds (SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20,
25 ... ms between tries, is off for that BEGIN only), takes the lock once it is freed, and
gives up as StoreBusy after the busy timeout; every statement after the BEGIN keeps the busy
timeout. The desk opens its journal so (gui/shell/app.py LOCK_POLL_S). Raw sqlite3 holds
the lock, as an agent's transaction would."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
import types
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.storage import db

pytestmark = pytest.mark.sqlite_only


def copy_of(template_journal: Path, tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    shutil.copy(template_journal, path)
    return path


def counted_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sleeps between tries of core's own wait for the lock (db's ``time`` only)."""
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(db, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=sleep))
    return slept


def until(cond, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_a_write_waiting_for_the_lock_tries_again_each_poll_and_takes_it_when_freed(
    template_journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_of(template_journal, tmp_path)
    slept = counted_sleeps(monkeypatch)
    with Journal.open(path, actor=Actor.agent("a"), lock_poll=0.001, lock_patience=0) as journal:
        run = journal.runs.start("p", "lock poll", agent="a")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process's write transaction
        wrote = threading.Event()

        def write() -> None:
            journal.runs.append_event(run.id, "note", {"n": 1})
            wrote.set()

        worker = threading.Thread(target=write)
        worker.start()
        try:
            # SQLite's own busy handler would wait inside the driver without these sleeps
            assert until(lambda: len(slept) >= 5), "the write did not try again by itself"
            assert not wrote.is_set() and set(slept) == {0.001}
        finally:
            holder.execute("COMMIT")
            holder.close()
        worker.join(20)
        assert wrote.is_set()
        tries = len(slept)
        # after the BEGIN the connection has its busy timeout back, and a free lock is
        # taken at the first try (no sleep)
        timeout = journal.write(lambda tx: tx.conn.exec_driver_sql("PRAGMA busy_timeout").scalar())
        assert timeout == int(db.BUSY_TIMEOUT_S * 1000) and len(slept) == tries
        assert [e.sequence for e in journal.runs.events(run.id)][-1] == 2


def test_a_write_that_never_gets_the_lock_is_busy_after_the_timeout_and_writes_nothing(
    template_journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_of(template_journal, tmp_path)
    slept = counted_sleeps(monkeypatch)
    with Journal.open(
        path, actor=Actor.agent("a"), lock_poll=0.001, lock_patience=0, busy_timeout=0.05
    ) as j:
        run = j.runs.start("p", "lock poll", agent="a")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(errors.StoreBusy):
                j.runs.append_event(run.id, "note", {"n": 1})
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert slept, "it waited by polling"
        assert j.runs.get(run.id).last_sequence == 1  # the run's start only
        j.runs.append_event(run.id, "note", {"n": 2})  # the lock is free: it writes
        assert j.runs.get(run.id).last_sequence == 2


def test_by_default_a_write_waits_in_sqlites_handler_first_then_polls(
    template_journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every process's default (db.LOCK_PATIENCE_S in SQLite's busy handler, then a try
    every db.LOCK_POLL_S): behind agents whose writes never pause, the handler alone let one
    waiter sleep its 25-100 ms steps while the others took turns, until its busy timeout
    (tests/integration/test_contention.py saw StoreBusy so under load); a waiter past its
    patience polls. The handler's own waits are SQLite's: they are not core's sleeps."""
    path = copy_of(template_journal, tmp_path)
    slept = counted_sleeps(monkeypatch)
    with Journal.open(path, actor=Actor.agent("a")) as journal:
        assert journal.lock_wait == db.LockWait(db.LOCK_POLL_S, db.LOCK_PATIENCE_S)
        run = journal.runs.start("p", "lock poll", agent="a")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        worker = threading.Thread(target=lambda: journal.runs.append_event(run.id, "n", {}))
        worker.start()
        try:
            assert until(lambda: len(slept) >= 5), "past its patience the write did not poll"
            assert set(slept) == {db.LOCK_POLL_S}
        finally:
            holder.execute("COMMIT")
            holder.close()
        worker.join(20)
        assert journal.runs.get(run.id).last_sequence == 2
        # after the BEGIN the connection has its busy timeout back
        timeout = journal.write(lambda tx: tx.conn.exec_driver_sql("PRAGMA busy_timeout").scalar())
        assert timeout == int(db.BUSY_TIMEOUT_S * 1000)
