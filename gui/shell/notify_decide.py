"""Approve or Deny from the desktop notification (issue 37), with the desk's guards: offered
only for one approval the core's confirmation rule lets through without a second step (the
operator's confirmation preference, once scope), never on a read-only journal; committed
through the desk's decider with the approval's version as notified, so a decision made
elsewhere meanwhile is refused (nothing written) and said so."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from proctor.core import Journal, errors
from proctor.core.lens import lens_of
from proctor.core.models import ApprovalScope, ApprovalStatus, InboxItem, InboxKind

from ..decide.confirm import risks
from ..decide.decider import Decider
from ..decide.items import item_key
from ..infra.i18n import tr
from ..infra.settings import DeskSettings
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.message_bar import Level
from .notify import Notifier

DENY_REASON = "denied from the desktop notification"
# refusals that mean the request moved on without this decision
MOVED_ON = (errors.StaleVersion, errors.AlreadyDecided, errors.Expired, errors.NotFound)


def may_decide(journal: Journal, item: InboxItem, confirm: frozenset[str]) -> bool:
    """Whether a notification about ``item`` may carry Approve and Deny (a store read)."""
    if item.kind is not InboxKind.APPROVAL or journal.read_only:
        return False
    a = journal.approvals.get(item.id)
    if a.status is not ApprovalStatus.PENDING or a.version != item.version:
        return False
    return not risks(a, ApprovalScope.ONCE, confirm, time.time(), lens_of(a))


class NotifyDecide(QObject):
    """Signals: told(str): what became of a decision taken on a notification."""

    told = Signal(str)

    def __init__(
        self,
        journal: Journal,
        runner: TaskRunner,
        settings: DeskSettings,
        decider: Decider,
        notifier: Notifier,
    ) -> None:
        super().__init__(notifier)
        self._journal, self._runner, self._settings = journal, runner, settings
        self._decider, self._notifier = decider, notifier
        self._asked: dict[str, tuple[InboxItem, str]] = {}  # key -> (item, action) in flight
        notifier.offer = self.offer
        notifier.decision_requested.connect(self.decide)
        decider.done.connect(self._on_done)
        decider.refused.connect(self._on_refused)

    def offer(self, item: InboxItem, tell: Callable[[bool], None]) -> None:
        journal, confirm = self._journal, self._settings.confirm
        self._runner.run(
            lambda: may_decide(journal, item, confirm),
            on_done=tell,
            on_error=lambda _exc: tell(False),
            owner=self,
        )

    def decide(self, item: InboxItem, action: str) -> None:
        if self._journal.read_only:
            self._tell(item, tr("Not decided: this journal is open read-only."), Level.WARNING)
            return
        self._asked[item_key(item)] = (item, action)
        if action == "approve":
            self._decider.approve(item)
        else:
            self._decider.deny(item, reason=DENY_REASON)

    def _on_done(self, key: str, _result: object) -> None:
        asked = self._asked.pop(key, None)
        if asked is not None:
            item, action = asked
            done = tr("Approved") if action == "approve" else tr("Denied")
            self._tell(item, f"{done}: {fmt.bounded(item.summary, 140)}", Level.SUCCESS)

    def _on_refused(self, key: str, exc: BaseException) -> None:
        asked = self._asked.pop(key, None)
        if asked is None:
            return
        item, action = asked
        verb = tr("Not approved") if action == "approve" else tr("Not denied")
        why = (
            tr("it was decided elsewhere meanwhile; nothing was written")
            if isinstance(exc, MOVED_ON)
            else fmt.bounded(str(exc), 200)
        )
        self._tell(item, f"{verb}: {fmt.bounded(item.summary, 100)} — {why}.", Level.WARNING)

    def _tell(self, item: InboxItem, text: str, level: Level) -> None:
        self._notifier.tell(item, text, level)
        self.told.emit(text)
