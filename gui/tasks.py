"""The one task runner: every store call runs on a worker thread (QThreadPool);
results and errors come back on the GUI thread.

Usage::

    runner.run(lambda: journal.inbox.list(f), on_done=self._show_page, owner=self)

``on_done(result)`` / ``on_error(exc)`` are called on the GUI thread, and only while
``owner`` (a QObject) is still alive. Without ``on_error`` the runner's default error
handler (the error presenter) receives the exception.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot

from proctor.core import errors

log = logging.getLogger(__name__)

BUSY_AFTER_MS = 250  # a write that takes longer than this shows "busy" in the status bar


@dataclass
class Task:
    id: int
    fn: Callable[[], Any]
    on_done: Callable[[Any], None] | None
    on_error: Callable[[BaseException], None] | None
    owner: QObject | None
    write: bool
    started: float = field(default_factory=time.monotonic)


class _Relay(QObject):
    """Carries a finished task from its worker thread to the GUI thread."""

    finished = Signal(int, bool, object)


class _Job(QRunnable):
    def __init__(self, task: Task, relay: _Relay) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._task = task
        self._relay = relay

    def run(self) -> None:
        try:
            result = self._task.fn()
        except Exception as exc:  # delivered to on_error on the GUI thread
            self._relay.finished.emit(self._task.id, False, exc)
        else:
            self._relay.finished.emit(self._task.id, True, result)


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
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._relay = _Relay(self)
        self._relay.finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._tasks: dict[int, Task] = {}
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
    def run(self, fn: Callable[[], Any], *, on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[BaseException], None] | None = None,
            owner: QObject | None = None, write: bool = False) -> int:
        """Queue ``fn`` on a worker thread; returns the task id."""
        if self._closed:
            return 0
        task = Task(next(self._ids), fn, on_done, on_error, owner, write)
        self._tasks[task.id] = task
        if write and not self._busy_timer.isActive():
            self._busy_timer.start()
        self._pool.start(_Job(task, self._relay), 1 if write else 0)  # clicks jump the queue
        return task.id

    def pending(self) -> int:
        return len(self._tasks)

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Refuse new tasks and wait for running ones (results are dropped)."""
        self._closed = True
        done = self._pool.waitForDone(timeout_ms)
        self._tasks.clear()
        return done

    def is_gui_thread(self) -> bool:
        return threading.get_ident() == self._gui_thread

    # ------------------------------------------------------------ delivery
    @Slot(int, bool, object)
    def _deliver(self, task_id: int, ok: bool, payload: object) -> None:
        task = self._tasks.pop(task_id, None)
        self._check_busy()
        if task is None:
            return
        self._track_store_health(ok, payload)
        if task.owner is not None and not shiboken6.isValid(task.owner):
            return
        try:
            if ok:
                if task.on_done is not None:
                    task.on_done(payload)
            elif task.on_error is not None:
                task.on_error(payload)  # type: ignore[arg-type]
            else:
                self.default_error(payload)  # type: ignore[arg-type]
        finally:
            if not self._tasks:
                self.idle.emit()

    def _track_store_health(self, ok: bool, payload: object) -> None:
        if not ok and isinstance(payload, errors.StoreError) \
                and not isinstance(payload, errors.StoreReadOnly):
            self._store_failing = True
            self.store_failed.emit(payload)
        elif ok and self._store_failing:
            self._store_failing = False
            self.store_succeeded.emit()

    @Slot()
    def _check_busy(self) -> None:
        now = time.monotonic()
        slow = any(t.write and (now - t.started) * 1000 >= BUSY_AFTER_MS
                   for t in self._tasks.values())
        if slow != self._busy:
            self._busy = slow
            self.busy_changed.emit(slow)
        if any(t.write for t in self._tasks.values()):
            self._busy_timer.start()

    @staticmethod
    def _log_error(exc: BaseException) -> None:
        log.error("store task failed", exc_info=exc)
