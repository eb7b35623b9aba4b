"""A journal proxy that proves the GUI thread never calls the store.

Every method of the journal and of its services (``journal.inbox.list`` ...) is
wrapped: called on the GUI thread it raises ``GuiThreadStoreCall`` (strict mode, used
by tests and ``PROCTOR_DEBUG=1``) or logs an error once per method (release mode).
Plain attributes (path, actor, read_only, schema_revision) pass through.

``close()`` refuses new store calls (``JournalClosed``, which the task runner drops
silently), then waits for the calls still running on worker threads before it closes the
journal: a window closing never pulls the journal from under a running read, and a task
queued behind the close never opens the file again.

``written``: the change set each write of this journal committed (the store hands it to
``Journal.on_commit`` with the commit, on the thread that wrote) goes to ``written.sink`` (the
window's watcher), so the desk's own writes reach its views through the change feed, the
same path as other processes' writes.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from proctor.core import Journal
from proctor.core.models import ChangeSet

log = logging.getLogger(__name__)

SERVICES = frozenset(
    {
        "runs",
        "approvals",
        "questions",
        "memory",
        "effects",
        "inbox",
        "audit",
        "changes",
        "overview",
        "signatures",
        "comments",
    }
)
# Journal methods that never touch the file.
PURE = frozenset({"now", "new_id"})
CLOSE_WAIT_S = 30.0  # close() waits this long at most for the calls in flight


class GuiThreadStoreCall(AssertionError):
    """A store call ran on the GUI thread (it must go through the task runner)."""


class JournalClosed(Exception):
    """A store call queued by a window that has closed its journal since: nothing to do."""


class ThreadGuard:
    """Knows the GUI thread; records and (strict) refuses store calls made on it."""

    def __init__(self, *, strict: bool) -> None:
        self.gui_thread = threading.get_ident()
        self.strict = strict
        self.violations: list[str] = []

    def check(self, what: str) -> None:
        if threading.get_ident() != self.gui_thread:
            return
        first = what not in self.violations
        self.violations.append(what)
        if self.strict:
            raise GuiThreadStoreCall(f"{what} was called on the GUI thread")
        if first:
            log.error("store call %s ran on the GUI thread", what, stack_info=True)


class InFlight:
    """Counts the store calls running now; ``close_and_wait`` refuses new ones and waits
    until none is left."""

    def __init__(self) -> None:
        self.closed = False
        self._count = 0
        self._idle = threading.Condition()

    def __enter__(self) -> None:
        with self._idle:
            if self.closed:
                raise JournalClosed("the journal was closed")
            self._count += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._idle:
            self._count -= 1
            if self._count == 0:
                self._idle.notify_all()

    def count(self) -> int:
        with self._idle:
            return self._count

    def close_and_wait(self, timeout: float) -> bool:
        with self._idle:
            self.closed = True
            return self._idle.wait_for(lambda: self._count == 0, timeout)


class WriteFeed:
    """Hands the change set each write of the journal committed (``Journal.on_commit``) to
    ``sink``, on the thread that wrote; without a sink nothing is handed on."""

    def __init__(self, journal: Journal) -> None:
        self.sink: Callable[[ChangeSet], None] | None = None
        journal.on_commit = self._committed

    def _committed(self, changes: ChangeSet) -> None:
        sink = self.sink
        if sink is None:
            return
        try:
            sink(changes)
        except RuntimeError:  # the window (and its watcher) is gone meanwhile
            log.debug("change rows written after the desk's watcher closed")


def _guarded(
    fn: Callable[..., Any], what: str, guard: ThreadGuard, calls: InFlight
) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        guard.check(what)
        with calls:
            return fn(*args, **kwargs)

    return call


class _GuardedService:
    def __init__(self, name: str, service: Any, guard: ThreadGuard, calls: InFlight) -> None:
        self._name = name
        self._service = service
        self._guard = guard
        self._calls = calls

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._service, attr)
        if callable(value):
            return _guarded(value, f"journal.{self._name}.{attr}", self._guard, self._calls)
        return value


class GuardedJournal:
    """Looks like a Journal; every store call is checked against the GUI thread."""

    def __init__(self, journal: Journal, guard: ThreadGuard) -> None:
        self.unguarded = journal
        self.guard = guard
        self.calls = InFlight()
        self.written = WriteFeed(journal)
        self._services = {
            name: _GuardedService(name, getattr(journal, name), guard, self.calls)
            for name in SERVICES
        }

    def __getattr__(self, attr: str) -> Any:
        if attr in SERVICES:
            return self._services[attr]
        value = getattr(self.unguarded, attr)
        if callable(value) and attr not in PURE:
            return _guarded(value, f"journal.{attr}", self.guard, self.calls)
        return value

    def close(self) -> None:
        """Close the journal once the store calls running on other threads have returned."""
        self.guard.check("journal.close")
        if not self.calls.close_and_wait(CLOSE_WAIT_S):
            log.warning("closing the journal with %d store calls still running", self.calls.count())
        self.unguarded.close()
