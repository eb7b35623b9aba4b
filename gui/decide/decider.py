"""Operator writes from the inbox: approve, deny, answer, dismiss, snooze, bulk, resolve an
effect.

Each click is one core call on the task runner with its own request id, so a retry
after "store busy" is idempotent. Results come back as signals on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from proctor.core import Journal, errors
from proctor.core.models import ApprovalScope, BulkResult, InboxItem

from ..infra.tasks import TaskRunner, request_id
from .items import item_key


class Decider(QObject):
    """Signals:
    done(str, object): a write for item key committed; the updated entity.
    refused(str, object): the store refused the write for item key; the exception.
    bulk_done(list, bool): per-item BulkResults of a bulk decision; True if approving.
    snoozed(list, list): keys snoozed, and (key, reason refused) pairs that failed.
    """

    done = Signal(str, object)
    refused = Signal(str, object)
    bulk_done = Signal(list, bool)
    snoozed = Signal(list, list)

    def __init__(
        self,
        journal: Journal,
        runner: TaskRunner,
        parent: QObject | None = None,
        settings: Any = None,
    ) -> None:
        super().__init__(parent)
        self._journal = journal
        self._runner = runner
        self._settings = settings
        self._retry: dict[str, Callable[[], Any]] = {}
        self.in_flight: set[str] = set()

    def hold(self) -> float:
        """Seconds a decision made here may be undone: the "Undo window" preference, read at
        each click (0: off, and without settings). Every page that decides (the Inbox, a
        run's "Waiting for you") decides through a Decider, so every one holds alike."""
        return float(self._settings.undo_seconds) if self._settings is not None else 0.0

    # ------------------------------------------------------------ single items
    def approve(
        self, item: InboxItem, *, reason: str = "", scope: ApprovalScope = ApprovalScope.ONCE
    ) -> None:
        approvals, rid, hold = self._journal.approvals, request_id(), self.hold()
        self._submit(
            item,
            lambda: approvals.decide(
                item.id,
                True,
                expected_version=item.version,
                reason=reason or None,
                scope=scope,
                request_id=rid,
                hold=hold,
            ),
        )

    def deny(self, item: InboxItem, *, reason: str) -> None:
        approvals, rid, hold = self._journal.approvals, request_id(), self.hold()
        self._submit(
            item,
            lambda: approvals.decide(
                item.id,
                False,
                expected_version=item.version,
                reason=reason,
                request_id=rid,
                hold=hold,
            ),
        )

    def approve_edited(
        self, item: InboxItem, action: dict, *, expected_version: int, reason: str = ""
    ) -> None:
        """Approve ``action``, the operator's edit of the requested one (held like Approve)."""
        approvals, rid, hold = self._journal.approvals, request_id(), self.hold()
        self._submit(
            item,
            lambda: approvals.approve_edited(
                item.id,
                action,
                expected_version=expected_version,
                reason=reason or None,
                request_id=rid,
                hold=hold,
            ),
        )

    def answer(self, item: InboxItem, response: Any, *, expected_version: int) -> None:
        """Answer a question (interaction) with ``response``, as the operator saw it."""
        questions, rid, hold = self._journal.questions, request_id(), self.hold()
        self._submit(
            item,
            lambda: questions.answer(
                item.id, response, expected_version=expected_version, request_id=rid, hold=hold
            ),
        )

    def dismiss(self, item: InboxItem, reason: str, *, expected_version: int) -> None:
        """Close a question without answering it; the agent is told ``reason``."""
        questions, rid, hold = self._journal.questions, request_id(), self.hold()
        self._submit(
            item,
            lambda: questions.dismiss(
                item.id, reason, expected_version=expected_version, request_id=rid, hold=hold
            ),
        )

    def resolve_effect(
        self, item: InboxItem, outcome: str, *, reason: str, external_id: str | None = None
    ) -> None:
        effects, rid = self._journal.effects, request_id()
        self._submit(
            item,
            lambda: effects.resolve(
                item.id,
                outcome,
                reason=reason,
                expected_version=item.version,
                external_id=external_id or None,
                request_id=rid,
            ),
        )

    def retry(self, key: str) -> bool:
        """Run the last refused write for ``key`` again (same request id: idempotent)."""
        fn = self._retry.get(key)
        if fn is None:
            return False
        self._run(key, fn)
        return True

    def submit(self, item: InboxItem, fn: Callable[[], Any]) -> None:
        """Run any single-item operator write ``fn`` for ``item`` (detail widgets of other
        kinds); the outcome arrives as ``done`` / ``refused`` like the built-in ones."""
        self._submit(item, fn)

    def _submit(self, item: InboxItem, fn: Callable[[], Any]) -> None:
        key = item_key(item)
        self._retry[key] = fn
        self._run(key, fn)

    def busy(self, key: str) -> bool:
        """A write for ``key`` is on its way (a second click would only be refused)."""
        return key in self.in_flight

    def _run(self, key: str, fn: Callable[[], Any]) -> None:
        self.in_flight.add(key)
        self._runner.run(
            fn,
            on_done=lambda result: self._on_done(key, result),
            on_error=lambda exc: self._on_refused(key, exc),
            owner=self,
            write=True,
        )

    def _on_done(self, key: str, result: object) -> None:
        self.in_flight.discard(key)
        self._retry.pop(key, None)
        self.done.emit(key, result)

    def _on_refused(self, key: str, exc: BaseException) -> None:
        self.in_flight.discard(key)
        if not isinstance(exc, errors.StoreBusy):
            self._retry.pop(key, None)
        self.refused.emit(key, exc)

    # ------------------------------------------------------------ many items
    def bulk(
        self,
        pairs: list[tuple[str, int]],
        approve: bool,
        *,
        reason: str = "",
        scope: ApprovalScope = ApprovalScope.ONCE,
    ) -> None:
        """Decide each (approval id, version shown) with the same reason and scope: the
        core's bulk decision, one transaction per approval, each held like one decision
        (the "Undo window" preference), so the batch may be undone while it is held."""
        approvals, rid, hold = self._journal.approvals, request_id(), self.hold()
        keys = {f"approval:{item_id}" for item_id, _version in pairs}
        self.in_flight |= keys
        self._runner.run(
            lambda: approvals.bulk_decide(
                pairs, approve, reason=reason or None, scope=scope, request_id=rid, hold=hold
            ),
            on_done=lambda results: self._on_bulk(keys, results, approve),
            on_error=lambda exc: self._on_bulk_error(keys, exc),
            owner=self,
            write=True,
        )

    def _on_bulk(self, keys: set[str], results: list[BulkResult], approve: bool) -> None:
        self.in_flight -= keys
        self.bulk_done.emit(results, approve)

    def _on_bulk_error(self, keys: set[str], exc: BaseException) -> None:
        self.in_flight -= keys
        self.refused.emit("", exc)

    def snooze(self, items: list[InboxItem], until: float | None) -> None:
        """Snooze (or wake, ``until`` None) ``items`` at the versions shown: the core's bulk
        snooze, one transaction per item."""
        inbox, rid = self._journal.inbox, request_id()
        work = [(i.kind, i.id, i.version) for i in items]
        keys = {item_key(i): i for i in items}
        self.in_flight |= set(keys)

        def run() -> tuple[list[str], list[tuple[str, str]]]:
            results = inbox.bulk_snooze(work, until, request_id=rid)
            ok = [item_key(i) for i, r in zip(items, results, strict=True) if r.ok]
            failed = [
                (item_key(i), r.error or "refused")
                for i, r in zip(items, results, strict=True)
                if not r.ok
            ]
            return ok, failed

        self._runner.run(
            run,
            on_done=lambda result: self._on_snoozed(set(keys), result),
            on_error=lambda exc: self._on_bulk_error(set(keys), exc),
            owner=self,
            write=True,
        )

    def _on_snoozed(self, keys: set[str], result: tuple[list[str], list[tuple[str, str]]]) -> None:
        self.in_flight -= keys
        self.snoozed.emit(*result)
