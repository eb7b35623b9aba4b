"""Sidebar badges: counts re-read (off the GUI thread) when the change feed says so."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from proctor.core import Journal
from proctor.core.models import ChangeKind, ChangeSet, InboxKind, RunStatus

from ..infra.tasks import TaskRunner

THROTTLE_MS = 750
ACTIVE = [RunStatus.PENDING.value, RunStatus.RUNNING.value, RunStatus.WAITING_FOR_USER.value]
KINDS = frozenset(
    {
        ChangeKind.APPROVAL,
        ChangeKind.QUESTION,
        ChangeKind.CONFLICT,
        ChangeKind.EFFECT,
        ChangeKind.RUN,
        ChangeKind.AUDIT,
    }
)


def read_counts(journal: Journal) -> dict[str, int]:
    inbox = journal.inbox.counts()
    return {
        "inbox": sum(inbox.values()),
        "runs": journal.runs.count(status=ACTIVE),
        "memory": inbox[InboxKind.CONFLICT],
        "effects": inbox[InboxKind.EFFECT],
        "audit": journal.audit.count(),
        "approvals": inbox[InboxKind.APPROVAL],
        "questions": inbox[InboxKind.QUESTION],
    }


class Counts(QObject):
    """Signals:
    counted(dict): page id -> count (inbox, runs, memory, effects, audit, ...).
    """

    counted = Signal(dict)

    def __init__(self, journal: Journal, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._journal = journal
        self._runner = runner
        self._stopped = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(THROTTLE_MS)
        self._timer.timeout.connect(self.read)

    def stop(self) -> None:
        """The window closes: no more reads (one in flight is not reported)."""
        self._stopped = True
        self._timer.stop()
        self._runner.drop("counts", self)

    def on_changes(self, cs: ChangeSet) -> None:
        if cs.kinds() & KINDS:
            self.schedule()

    @Slot()
    def schedule(self) -> None:
        """Read the counts soon (at most once per THROTTLE_MS)."""
        if not self._stopped and not self._timer.isActive():
            self._timer.start()

    @Slot()
    def read(self) -> None:
        if self._stopped:
            return
        journal = self._journal
        self._runner.coalesce(
            "counts",
            lambda: read_counts(journal),
            on_done=self._on_counts,
            on_error=self._on_error,
            owner=self,
        )

    def _on_counts(self, counts: dict[str, int]) -> None:
        if not self._stopped:
            self.counted.emit(counts)

    def _on_error(self, _exc: BaseException) -> None:
        pass  # the next change reads again
