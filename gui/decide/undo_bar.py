"""Undo a decision for a few seconds (issue 37): after Approve, Deny, an edited approval,
an answer or a dismissal with a hold (the "Undo window" preference), a bar says what was
decided and offers "Undo (5 s)", counting down; the button or Ctrl+Z takes the decision
back (``Approvals.undo``, ``Questions.undo``: the item is open again, the undo recorded as
a decision of its own). The agent acts on the decision only once the hold has passed, so
an undo in time reaches no agent. Every page that decides (the Inbox, a run's "Waiting for
you") has one.

The bar's room is kept while it is hidden (like the inbox's "new requests" bar), so
nothing moves under the pointer when it comes and goes.

Signals:
    undone(object): the approval or question, open again (a batch's: its BulkResults).
    changed(): an undo came on offer or went (what Ctrl+Z does changed).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QWidget

from proctor.core import Journal
from proctor.core.models import Approval, Question

from ..infra.errors import ErrorPresenter
from ..infra.i18n import tr
from ..infra.tasks import TaskRunner, request_id
from ..widgets import fmt
from ..widgets.labels import plain_label, plain_tip, reserve_lines
from .commands import decided_text
from .confirm import action_label
from .undo_batch import Batch, batch_text, batch_undone_text, held_batch

TICK_MS = 200  # the countdown's step (it shows whole seconds)


class UndoBar(QFrame):
    undone = Signal(object)
    changed = Signal()

    def __init__(
        self,
        journal: Journal,
        runner: TaskRunner,
        presenter: ErrorPresenter | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._journal, self._runner, self._presenter = journal, runner, presenter
        self._approval: Approval | Question | Batch | None = None
        self._ends = 0.0  # monotonic: when the hold ends (no store call to count down)
        self._busy = False
        self.label = reserve_lines(plain_label(parent=self, selectable=False))
        self.button = QPushButton(tr("Undo (5 s)"), self)
        self.button.setAccessibleName(tr("Undo the decision"))
        self.button.setToolTip(tr("Take the decision back (Ctrl+Z); the agent has not acted"))
        self.button.clicked.connect(self.undo)
        # the widest the button's text gets: its width never changes while it counts down
        self.button.setMinimumWidth(
            self.button.fontMetrics().horizontalAdvance(tr("Undo ({seconds} s)").format(seconds=60))
            + 24
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 2, 6, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # its room is kept: nothing moves for it
        self.setSizePolicy(policy)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._update)
        self.hide()

    # ------------------------------------------------------------ state
    def offer(self, result: object) -> None:
        """After a decision: offer its undo while its hold lasts (nothing without a hold)."""
        at = decided_at(result)
        if not isinstance(result, Approval | Question) or at is None:
            return
        left = None if result.hold_until is None else result.hold_until - self._journal.now()
        if left is None or left <= 0:
            return  # no hold, or it ended before the result came: the store refuses an undo
        self._approval = result
        self._ends = time.monotonic() + left  # the store's hold, not one counted from here
        self._busy = False
        self._tick.start()
        self._update()
        self.show()
        self.changed.emit()

    def offer_batch(self, results: list, approve: bool) -> None:
        """After a bulk approve or deny: offer to undo the whole batch while it is held."""
        batch = held_batch(results, approve, self._journal.now())
        if batch is None:
            return
        self._approval = batch
        self._ends = time.monotonic() + (batch.hold_until - self._journal.now())
        self._busy = False
        self._tick.start()
        self._update()
        self.show()
        self.changed.emit()

    def active(self) -> bool:
        """An undo is on offer now (Ctrl+Z would take it back)."""
        return self._approval is not None and not self._busy and self.remaining() > 0

    def remaining(self) -> float:
        return max(0.0, self._ends - time.monotonic())

    def approval(self) -> Approval | Question | Batch | None:
        """What the bar offers to undo (an approval, a question or a bulk decision's batch)."""
        return self._approval

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""

    def _update(self) -> None:
        a = self._approval
        left = self.remaining()
        if a is None or left <= 0:
            self._close()
            return
        seconds = max(1, int(left + 0.999))
        self.label.setText(
            (
                tr("{what} — the agent acts on them in {seconds} s")
                if isinstance(a, Batch)
                else tr("{what} — the agent acts on it in {seconds} s")
            ).format(
                what=batch_text(a) if isinstance(a, Batch) else decided_text(a), seconds=seconds
            )
        )
        self.label.setToolTip(plain_tip(self.label.text()))
        self.button.setText(tr("Undo ({seconds} s)").format(seconds=seconds))
        self.button.setEnabled(not self._busy)

    def _close(self) -> None:
        was = self._approval is not None
        self._tick.stop()
        self._approval = None
        self._busy = False
        self.hide()
        if was:
            self.changed.emit()

    # ------------------------------------------------------------ the undo
    def undo(self) -> bool:
        """Take the offered decision back (one store call on the task runner). False when
        nothing is on offer (the hold passed, or it is on its way already)."""
        a = self._approval
        if a is None or not self.active():
            return False
        self._busy = True
        self.button.setEnabled(False)
        rid = request_id()
        if isinstance(a, Batch):
            approvals, items = self._journal.approvals, list(a.items)
            self._runner.run(
                lambda: approvals.bulk_undo(items, request_id=rid),
                on_done=self._on_undone,
                on_error=self._on_refused,
                owner=self,
                write=True,
            )
            return True
        version = a.version
        service = self._journal.approvals if isinstance(a, Approval) else self._journal.questions
        self._runner.run(
            lambda: service.undo(a.id, expected_version=version, request_id=rid),
            on_done=self._on_undone,
            on_error=self._on_refused,
            owner=self,
            write=True,
        )
        return True

    def _on_undone(self, result: object) -> None:
        self._close()
        self.undone.emit(result)

    def _on_refused(self, exc: BaseException) -> None:
        self._close()
        if self._presenter is not None:
            self._presenter.present(exc, action=tr("Undo"))


def decided_at(result: object) -> float | None:
    """When ``result`` (a decision's outcome) was decided: an approval's ``decided_at``, a
    question's ``resolved_at``; None for anything else."""
    if isinstance(result, Approval):
        return result.decided_at
    if isinstance(result, Question):
        return result.resolved_at
    return None


def undone_text(result: object) -> str:
    """What the page says once an undo is through: the item is open again, by name (a
    batch's: how many, and any that stands)."""
    if isinstance(result, list):
        return batch_undone_text(result)
    if isinstance(result, Approval):
        return tr("Undone: {what} is pending again; the agent was not told").format(
            what=action_label(result)
        )
    if isinstance(result, Question):
        first = next((line for line in result.prompt.splitlines() if line.strip()), "")
        return tr("Undone: “{what}” is open again; the agent was not told").format(
            what=fmt.bounded(first or result.kind.value, 80)
        )
    return tr("Undone; the agent was not told")
