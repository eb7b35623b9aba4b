"""A journal proxy that proves the GUI thread never calls the store.

Every method of the journal and of its services (``journal.inbox.list`` ...) is
wrapped: called on the GUI thread it raises ``GuiThreadStoreCall`` (strict mode, used
by tests and ``PROCTOR_DEBUG=1``) or logs an error once per method (release mode).
Plain attributes (path, actor, read_only, schema_revision) pass through.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from proctor.core import Journal

log = logging.getLogger(__name__)

SERVICES = frozenset({"runs", "approvals", "interactions", "memory", "effects", "inbox",
                      "audit", "changes"})
# Journal methods that never touch the file.
PURE = frozenset({"now", "new_id"})


class GuiThreadStoreCall(AssertionError):
    """A store call ran on the GUI thread (it must go through the task runner)."""


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


def _guarded(fn: Callable[..., Any], what: str, guard: ThreadGuard) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        guard.check(what)
        return fn(*args, **kwargs)

    return call


class _GuardedService:
    def __init__(self, name: str, service: Any, guard: ThreadGuard) -> None:
        self._name = name
        self._service = service
        self._guard = guard

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._service, attr)
        if callable(value):
            return _guarded(value, f"journal.{self._name}.{attr}", self._guard)
        return value


class GuardedJournal:
    """Looks like a Journal; every store call is checked against the GUI thread."""

    def __init__(self, journal: Journal, guard: ThreadGuard) -> None:
        self.unguarded = journal
        self.guard = guard
        self._services = {name: _GuardedService(name, getattr(journal, name), guard)
                          for name in SERVICES}

    def __getattr__(self, attr: str) -> Any:
        if attr in SERVICES:
            return self._services[attr]
        value = getattr(self.unguarded, attr)
        if callable(value) and attr not in PURE:
            return _guarded(value, f"journal.{attr}", self.guard)
        return value
