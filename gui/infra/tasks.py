"""The one task runner: every store call runs on a worker thread (QThreadPool);
results and errors come back on the GUI thread. Writes (``write=True``: an operator's
decision) have a lane of their own, one thread, so a click never waits for reads.

Usage::

    runner.run(lambda: journal.inbox.list(f), on_done=self._show_page, owner=self)

``on_done(result)`` / ``on_error(exc)`` are called on the GUI thread, and only while
``owner`` (a QObject) is still alive. Without ``on_error`` the runner's default error
handler (the error presenter) receives the exception.

Two kinds of keyed reads replace hand-kept generation counters and in-flight flags (a key
is scoped by its owner, so ``"detail"`` on two pages are two keys)::

    runner.latest("detail", lambda: journal.effects.context(key), on_done=..., owner=self)
    runner.coalesce("facts", lambda: journal.overview.facts(), on_done=..., owner=self)

- ``latest``: a newer request with the same key drops the older one's result (and error);
  the newest one's outcome is delivered.
- ``coalesce``: one read in flight per key; requests made meanwhile wait, and only the last
  of them runs once the one in flight is delivered.
- ``drop(key, owner)``: forget whatever is in flight or waiting for a key (its outcome is
  not delivered), e.g. when the page moves to another item.

Python objects die on the GUI thread, never on a worker: a worker keeps no reference to
a task's callbacks, and its result crosses over in a box the GUI thread empties. While a
runner is open, Python's cyclic garbage collector runs on the GUI thread only
(``GuiThreadCollector``): left automatic, it runs in whichever thread happens to allocate,
and a worker collecting a cycle that holds a QObject destroys that QObject on the wrong
thread (an intermittent segfault).
"""

from __future__ import annotations

import gc
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QObject,
    QRunnable,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
    Slot,
)

from proctor.core import errors

from .guard import JournalClosed

log = logging.getLogger(__name__)

BUSY_AFTER_MS = 250  # a write that takes longer than this shows "busy" in the status bar
COLLECT_EVERY_MS = 500  # the GUI thread looks this often whether a collection is due


@dataclass
class Task:
    id: int
    fn: Callable[[], Any]
    on_done: Callable[[Any], None] | None
    on_error: Callable[[BaseException], None] | None
    owner: QObject | None
    write: bool
    started: float = field(default_factory=time.monotonic)
    key: Hashable | None = None  # a keyed read (latest / coalesce); scoped by owner
    long: bool = False  # on the long lane (TaskRunner.run)


@dataclass
class _Request:
    """A coalesced read waiting for the one in flight with its key."""

    fn: Callable[[], Any]
    on_done: Callable[[Any], None] | None
    on_error: Callable[[BaseException], None] | None
    owner: QObject | None


class GuiThreadCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread while runners are open.

    ``hold()`` (a runner opens) turns automatic collection off and starts a GUI-thread timer
    that collects each generation when its threshold is passed, as the automatic collector
    would; ``release()`` (the last open runner shuts down) collects once and turns automatic
    collection back on. One per process: ``GuiThreadCollector.instance()``.
    """

    _instance: GuiThreadCollector | None = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._holders = 0
        self._pinned = False
        self._was_enabled = True
        self._timer = QTimer(self)
        self._timer.setInterval(COLLECT_EVERY_MS)
        self._timer.timeout.connect(self.collect_due)

    @classmethod
    def instance(cls) -> GuiThreadCollector:
        if cls._instance is None or not shiboken6.isValid(cls._instance):
            cls._instance = cls(QCoreApplication.instance())
        return cls._instance

    def hold(self) -> None:
        """A runner opens; without a Qt application (no GUI thread, no event loop) the
        collector stays automatic."""
        if not self._pinned and QCoreApplication.instance() is not None:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._timer.start()
            self._pinned = True
        self._holders += 1

    def release(self) -> None:
        if self._holders == 0:
            return
        self._holders -= 1
        if self._holders == 0 and self._pinned:
            self._pinned = False
            self._timer.stop()
            gc.collect()
            if self._was_enabled:
                gc.enable()

    def pinned(self) -> bool:
        """True while collection runs on the GUI thread only."""
        return self._pinned

    @Slot()
    def collect_due(self) -> None:
        """Collect the oldest generation whose count has passed its threshold."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        for generation in (2, 1, 0):
            if thresholds[generation] and counts[generation] > thresholds[generation]:
                gc.collect(generation)
                return


URGENT = QEvent.Type(QEvent.registerEventType())  # a write's outcome is ready
HIGH_PRIORITY = Qt.EventPriority.HighEventPriority.value


class _Relay(QObject):
    """Carries a finished task from its worker thread to the GUI thread: the worker puts the
    outcome in ``boxes`` and emits the task id; the GUI thread takes it out.

    A write's outcome (``urgent``) goes ahead of everything else waiting for the GUI thread:
    the worker posts a high-priority event, so the commit of a click is delivered before
    the results of reads that finished earlier and the change-driven work they bring."""

    finished = Signal(int)
    finished_now = Signal(int)  # emitted on the GUI thread (connected directly)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._boxes: dict[int, tuple[bool, object]] = {}
        self._urgent: list[int] = []

    def put(self, task_id: int, ok: bool, payload: object) -> None:
        with self._lock:
            self._boxes[task_id] = (ok, payload)

    def post_urgent(self, task_id: int) -> None:
        """From the worker: deliver ``task_id`` before any other event waiting."""
        with self._lock:
            self._urgent.append(task_id)
        QCoreApplication.postEvent(self, QEvent(URGENT), HIGH_PRIORITY)

    def event(self, event: QEvent) -> bool:
        if event.type() != URGENT:
            return super().event(event)
        while True:  # one at a time: an outcome posted meanwhile (a modal) keeps its place
            with self._lock:
                if not self._urgent:
                    return True
                task_id = self._urgent.pop(0)
            self.finished_now.emit(task_id)

    def take(self, task_id: int) -> tuple[bool, object]:
        with self._lock:
            return self._boxes.pop(task_id, (False, None))

    def clear(self) -> None:
        with self._lock:
            self._boxes.clear()


class _Job(QRunnable):
    """Runs one task's ``fn``; it holds nothing else of the task (its callbacks and owner
    stay with the runner, on the GUI thread)."""

    def __init__(
        self, task_id: int, fn: Callable[[], Any], relay: _Relay, *, urgent: bool = False
    ) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._id = task_id
        self._fn: Callable[[], Any] | None = fn
        self._relay = relay
        self._urgent = urgent

    def run(self) -> None:
        fn, self._fn = self._fn, None
        try:
            assert fn is not None  # a task runs once
            self._relay.put(self._id, True, fn())
        except Exception as exc:  # noqa: BLE001 - delivered to on_error on the GUI thread
            self._relay.put(self._id, False, exc)
        del fn  # the runner's Task still holds it: the last reference goes on the GUI thread
        if self._urgent:
            self._relay.post_urgent(self._id)
        else:
            self._relay.finished.emit(self._id)


class TaskRunner(QObject):
    """Runs store calls off the GUI thread.

    Signals:
        busy_changed(bool): a write has been running longer than BUSY_AFTER_MS, or ended.
        store_failed(object): a task failed with a store-level error (StoreError).
        store_succeeded(): a task succeeded after a store-level failure.
        idle(): no task is in flight any more.
    """

    busy_changed = Signal(bool)
    store_failed = Signal(object)
    store_succeeded = Signal()
    idle = Signal()

    def __init__(self, parent: QObject | None = None, *, threads: int = 3) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)  # reads (and other work that writes nothing)
        self._pool.setMaxThreadCount(threads)
        # threads never expire: each keeps its store connections for the desk's lifetime (a
        # new thread would open new ones; an expired Qt thread's are never given back)
        self._pool.setExpiryTimeout(-1)
        # the writer lane: writes (an operator's click) run on a thread of their own, in the
        # order asked, never queued behind reads however many the pool has waiting or running
        self._writer = QThreadPool(self)
        self._writer.setMaxThreadCount(1)
        self._writer.setExpiryTimeout(-1)
        # the long lane: a read of the whole file (the damage check) runs on a thread of
        # its own, so it never holds one of the reads' threads for seconds
        self._long = QThreadPool(self)
        self._long.setMaxThreadCount(1)
        self._long.setExpiryTimeout(-1)
        self._relay = _Relay(self)
        self._relay.finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._relay.finished_now.connect(self._deliver, Qt.ConnectionType.DirectConnection)
        self._collector = GuiThreadCollector.instance()
        self._collector.hold()
        self._tasks: dict[int, Task] = {}
        self._latest: dict[Hashable, int] = {}  # key -> the task whose outcome counts
        self._coalescing: dict[Hashable, int] = {}  # key -> the coalesced task in flight
        self._waiting: dict[Hashable, _Request] = {}  # key -> the last request meanwhile
        self._ids = itertools.count(1)
        self._gui_thread = threading.get_ident()
        self._closed = False
        self._store_failing = False
        self._busy = False
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_AFTER_MS)
        self._busy_timer.timeout.connect(self._check_busy)
        self.default_error: Callable[[BaseException], None] = self._log_error

    # ------------------------------------------------------------ API
    def run(
        self,
        fn: Callable[[], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        owner: QObject | None = None,
        write: bool = False,
        long: bool = False,
    ) -> int:
        """Queue ``fn`` on a worker thread; returns the task id. ``long``: a read that takes
        seconds (the damage check) runs on its own lane, one at a time, never in the way
        of the other reads."""
        if self._closed:
            return 0
        task = Task(next(self._ids), fn, on_done, on_error, owner, write, long=long)
        return self._start(task)

    def latest(
        self,
        key: Hashable,
        fn: Callable[[], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        owner: QObject | None = None,
    ) -> int:
        """Queue the read ``fn``; a later ``latest`` with the same key (and owner) drops
        this one's outcome. Returns the task id."""
        if self._closed:
            return 0
        scoped = _scoped(key, owner)
        task = Task(next(self._ids), fn, on_done, on_error, owner, False, key=scoped)
        self._latest[scoped] = task.id
        return self._start(task)

    def coalesce(
        self,
        key: Hashable,
        fn: Callable[[], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        owner: QObject | None = None,
    ) -> int:
        """Run the read ``fn`` now, or, while a read with the same key (and owner) is in
        flight, after it (only the last such request runs). Returns the task id, or 0 when
        the request waits."""
        if self._closed:
            return 0
        scoped = _scoped(key, owner)
        if scoped in self._coalescing:
            self._waiting[scoped] = _Request(fn, on_done, on_error, owner)
            return 0
        task = Task(next(self._ids), fn, on_done, on_error, owner, False, key=scoped)
        self._coalescing[scoped] = task.id
        return self._start(task)

    def drop(self, key: Hashable, owner: QObject | None = None) -> None:
        """Forget the keyed read in flight or waiting for ``key``: its outcome is dropped."""
        scoped = _scoped(key, owner)
        self._latest.pop(scoped, None)
        self._waiting.pop(scoped, None)
        self._coalescing.pop(scoped, None)

    def keyed(self, key: Hashable, owner: QObject | None = None) -> bool:
        """A keyed read for ``key`` is in flight or waiting."""
        scoped = _scoped(key, owner)
        return scoped in self._latest or scoped in self._coalescing or scoped in self._waiting

    def waiting(self, key: Hashable, owner: QObject | None = None) -> bool:
        """A coalesced request for ``key`` waits for the one in flight."""
        return _scoped(key, owner) in self._waiting

    def _start(self, task: Task) -> int:
        self._tasks[task.id] = task
        if task.write and not self._busy_timer.isActive():
            self._busy_timer.start()
        pool = self._writer if task.write else self._long if task.long else self._pool
        pool.start(_Job(task.id, task.fn, self._relay, urgent=task.write))
        return task.id

    def pending(self) -> int:
        return len(self._tasks) + len(self._waiting)

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Refuse new tasks and wait for queued and running ones (results are dropped).
        True if no task is left."""
        if not self._closed:
            self._closed = True
            self._busy_timer.stop()
            self._collector.release()
        started = time.monotonic()
        done = self._writer.waitForDone(timeout_ms)
        left = (
            -1 if timeout_ms < 0 else max(0, timeout_ms - int((time.monotonic() - started) * 1000))
        )
        done = self._pool.waitForDone(left) and done
        left = (
            -1 if timeout_ms < 0 else max(0, timeout_ms - int((time.monotonic() - started) * 1000))
        )
        done = self._long.waitForDone(left) and done
        if done:
            self._tasks.clear()
            self._latest.clear()
            self._coalescing.clear()
            self._waiting.clear()
            self._relay.clear()
        return done

    def closed(self) -> bool:
        return self._closed

    def is_gui_thread(self) -> bool:
        return threading.get_ident() == self._gui_thread

    # ------------------------------------------------------------ delivery
    @Slot(int)
    def _deliver(self, task_id: int) -> None:
        ok, payload = self._relay.take(task_id)
        task = self._tasks.pop(task_id, None)
        if self._closed:
            return
        self._check_busy()
        if task is None:
            return
        try:
            if self._settle_key(task):  # else a newer request with its key took over, or dropped
                self._hand_over(task, ok, payload)
        finally:
            self._follow_up(task)
            self._idle_if_done()

    def _hand_over(self, task: Task, ok: bool, payload: object) -> None:
        if isinstance(payload, JournalClosed):  # its window closed the journal meanwhile
            return
        self._track_store_health(ok, payload)
        if task.owner is not None and not shiboken6.isValid(task.owner):
            return
        if ok:
            if task.on_done is not None:
                task.on_done(payload)
        elif task.on_error is not None:
            task.on_error(payload)  # type: ignore[arg-type]
        else:
            self.default_error(payload)  # type: ignore[arg-type]

    def _settle_key(self, task: Task) -> bool:
        """A keyed task is done: True if its outcome is to be delivered."""
        if task.key is None:
            return True
        if self._latest.get(task.key) == task.id:
            del self._latest[task.key]
            return True
        return self._coalescing.get(task.key) == task.id

    def _follow_up(self, task: Task) -> None:
        """After a coalesced read is delivered, the last request made meanwhile (even from
        its own ``on_done``) starts: it reads what the delivery left, never before it."""
        if task.key is None or self._coalescing.get(task.key) != task.id:
            return
        del self._coalescing[task.key]
        waiting = self._waiting.pop(task.key, None)
        if waiting is not None and (waiting.owner is None or shiboken6.isValid(waiting.owner)):
            follow = Task(
                next(self._ids),
                waiting.fn,
                waiting.on_done,
                waiting.on_error,
                waiting.owner,
                False,
                key=task.key,
            )
            self._coalescing[task.key] = follow.id
            self._start(follow)

    def _idle_if_done(self) -> None:
        if not self._tasks and not self._waiting:
            self.idle.emit()

    def _track_store_health(self, ok: bool, payload: object) -> None:
        if (
            not ok
            and isinstance(payload, errors.StoreError)
            and not isinstance(payload, errors.StoreReadOnly)
        ):
            self._store_failing = True
            self.store_failed.emit(payload)
        elif ok and self._store_failing:
            self._store_failing = False
            self.store_succeeded.emit()

    @Slot()
    def _check_busy(self) -> None:
        now = time.monotonic()
        slow = any(
            t.write and (now - t.started) * 1000 >= BUSY_AFTER_MS for t in self._tasks.values()
        )
        if slow != self._busy:
            self._busy = slow
            self.busy_changed.emit(slow)
        if any(t.write for t in self._tasks.values()):
            self._busy_timer.start()

    @staticmethod
    def _log_error(exc: BaseException) -> None:
        log.error("store task failed", exc_info=exc)


def _scoped(key: Hashable, owner: QObject | None) -> Hashable:
    return (0 if owner is None else id(owner), key)


class Ticket:
    """One piece of presentation work. ``cancel()`` asks it to stop; the work polls
    ``cancelled()`` and its result is dropped either way. Safe to use from any thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    def cancelled(self) -> bool:
        return self._event.is_set()


class PresentationCancelled(Exception):
    """Raised inside presentation work that noticed its ticket was cancelled."""


@dataclass
class _Shown:
    ticket: Ticket
    on_done: Callable[[Any], None] | None
    owner: QObject | None


class PresentationPool(QObject):
    """Presentation work on agent data — diffs, highlighting, preparing text for layout — on
    its own worker threads: never on the GUI thread, and never in the store's task runner
    (``TaskRunner``), so a store call never waits behind a diff. Each piece of work gets a
    ``Ticket``; a view cancels the ticket of what it no longer shows (the operator moved on)
    and the work stops at its next check. Results come back on the GUI thread (``on_done``),
    only while ``owner`` lives and the ticket is not cancelled.

    One per process: ``PresentationPool.instance()``.
    """

    _instance: PresentationPool | None = None

    def __init__(self, parent: QObject | None = None, *, threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._relay = _Relay(self)
        self._relay.finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._work: dict[int, _Shown] = {}
        self._ids = itertools.count(1)

    @classmethod
    def instance(cls) -> PresentationPool:
        if cls._instance is None or not shiboken6.isValid(cls._instance):
            cls._instance = cls(QCoreApplication.instance())
        return cls._instance

    def run(
        self,
        fn: Callable[[Ticket], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        owner: QObject | None = None,
    ) -> Ticket:
        """Queue ``fn(ticket)`` on a presentation worker; returns its ticket."""
        ticket = Ticket()
        task_id = next(self._ids)
        self._work[task_id] = _Shown(ticket, on_done, owner)
        self._pool.start(
            _Job(task_id, lambda: None if ticket.cancelled() else fn(ticket), self._relay)
        )
        return ticket

    def pending(self) -> int:
        """Pieces of work queued or running whose results have not come back yet."""
        return len(self._work)

    def cancel_all(self) -> None:
        for shown in self._work.values():
            shown.ticket.cancel()

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Cancel everything and wait for the workers (at shutdown)."""
        self.cancel_all()
        done = self._pool.waitForDone(timeout_ms)
        if done:
            self._work.clear()
            self._relay.clear()
        return done

    @Slot(int)
    def _deliver(self, task_id: int) -> None:
        ok, payload = self._relay.take(task_id)
        shown = self._work.pop(task_id, None)
        if shown is None or shown.ticket.cancelled():
            return
        if shown.owner is not None and not shiboken6.isValid(shown.owner):
            return
        if not ok:
            if not isinstance(payload, PresentationCancelled):
                log.error("presentation work failed", exc_info=payload)  # type: ignore[arg-type]
            return
        if shown.on_done is not None:
            shown.on_done(payload)


def request_id() -> str:
    """A new request id for one write from the desk (a retried write reuses it)."""
    return f"desk-{uuid.uuid4().hex}"
