"""The integrity pane: the run's digest chain recomputed, and the first broken link.

Verification reads every event of the run (a few seconds for 100 000 events), so it runs
on the task runner when the pane is first shown for a run, and again on request.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.audit import timeline
from proctor.core.audit.timeline import ChainStatus
from proctor.core.models import RunEvent

from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.labels import plain_label, section
from ..widgets.run_status import status_icon
from .model import EventsModel

TRUST = (
    "The chain makes changes to the history detectable: each event's digest covers its "
    "content and the digest before it. It cannot stop a process with write access to "
    "the journal file from rewriting rows; it shows that it happened."
)


def signature_verdict(counts: dict[str, int] | None, trusted: bool) -> str:
    """The integrity view's count of the run's decisions by signature state."""
    if not counts or not any(counts.values()):
        return "Decisions: none in this run."
    text = (
        f"Decisions: {counts['signed']} signed, {counts['unsigned']} unsigned, "
        f"{counts['invalid']} invalid, {counts['automatic']} automatic (a rule or an "
        "expiry)"
    )
    if not trusted:
        text += (
            " — checked against the keys this journal records, which shows the rows "
            "match their signatures, not who holds the keys (set "
            "PROCTOR_TRUSTED_OPERATORS to check against a trust file)"
        )
    return text + "."


def verdict(status: ChainStatus) -> str:
    if status.ok:
        text = (
            f"The chain verifies: all {status.checked_events:,} events match their "
            f"digests and link to the event before."
        )
    else:
        where = status.problem.where if status.problem else "?"
        what = status.problem.what if status.problem else "problem"
        detail = status.problem.detail if status.problem else ""
        good = status.checked_events
        text = (
            f"The chain is broken at event #{status.broken_sequence}: {what} ({detail}).\n"
            f"Events #1–#{good} verify; from #{status.broken_sequence} on, this run's "
            f"history cannot be trusted.\nWhere: {where}"
        )
    if status.missing_triggers:
        text += (
            f"\nWarning: {len(status.missing_triggers)} evidence triggers are missing "
            "from this journal, so rows can be changed without an error."
        )
    return text


class IntegrityPane(QWidget):
    """Signals:
    sequence_chosen(int): show this event in the event list.
    checked(object): a verification finished (its ChainStatus).
    failed(object): the read failed.
    """

    sequence_chosen = Signal(int)
    checked = Signal(object)
    failed = Signal(object)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: str | None = None
        self.status: ChainStatus | None = None
        self.icon = QLabel(self)
        self.result = plain_label(tr("Not verified yet."), self)
        self.result.setAccessibleName(tr("Chain verification result"))
        self.verify_button = QPushButton(tr("Verify again"), self)
        self.verify_button.setAccessibleName(tr("Verify this run's digest chain again"))
        self.verify_button.clicked.connect(self.verify)
        self.show_button = QPushButton(tr("Show the broken event"), self)
        self.show_button.setAccessibleName(tr("Show the first broken event in the event list"))
        self.show_button.clicked.connect(self._show_broken)
        self.show_button.hide()
        self.around = EventsModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.around)
        self.table.setAccessibleName(tr("Events around the broken link"))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setMaximumHeight(170)
        self.around_title = section("Events around the broken link", self)
        self.table.hide()
        self.around_title.hide()
        top = QHBoxLayout()
        top.addWidget(self.icon)
        top.addWidget(self.result, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.show_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(buttons)
        layout.addWidget(self.around_title)
        layout.addWidget(self.table)
        layout.addWidget(plain_label(TRUST, self, name="Muted"))
        layout.addStretch(1)

    def show_run(self, run_id: str) -> None:
        if run_id != self.run_id:
            self.run_id = run_id
            self.status = None
            self.ctx.runner.drop("verify", self)  # the check of the run shown before
            self._set_idle("Not verified yet.")

    def needs_check(self) -> bool:
        return self.run_id is not None and self.status is None and not self.verifying()

    def verifying(self) -> bool:
        return self.ctx.runner.keyed("verify", self)

    @Slot()
    def verify(self) -> None:
        if self.run_id is None or self.verifying():
            return
        self.verify_button.setEnabled(False)
        self.result.setText(tr("Verifying the chain…"))
        journal, run_id = self.ctx.journal, self.run_id

        def check() -> tuple[str, ChainStatus, list[RunEvent], str]:
            status = timeline.chain_status(journal, run_id)
            around: list[RunEvent] = []
            if status.broken_sequence:
                around = journal.runs.events(
                    run_id, after=max(0, status.broken_sequence - 3), limit=5
                )
            signed = signature_verdict(
                journal.signatures.counts_for_run(run_id), journal.signatures.trusted
            )
            return run_id, status, around, signed

        self.ctx.runner.latest(
            "verify", check, on_done=self._on_checked, on_error=self._on_error, owner=self
        )

    def _on_checked(self, result: tuple[str, ChainStatus, list[RunEvent], str]) -> None:
        run_id, status, around, signed = result
        self.verify_button.setEnabled(True)
        if run_id != self.run_id:
            return
        self.status = status
        self.result.setText(f"{verdict(status)}\n{signed}")
        good = status.ok and not status.missing_triggers
        self.icon.setPixmap(status_icon("completed" if good else "failed", 22).pixmap(22, 22))
        broken = status.broken_sequence is not None
        self.show_button.setVisible(broken)
        if broken:
            self.show_button.setText(
                tr("Show event #{broken_sequence}").format(broken_sequence=status.broken_sequence)
            )
        self.around.set_rows(around)
        self.table.setVisible(bool(around))
        self.around_title.setVisible(bool(around))
        self.checked.emit(status)

    def _on_error(self, exc: BaseException) -> None:
        self._set_idle("Could not verify the chain.")
        self.failed.emit(exc)

    def _set_idle(self, text: str) -> None:
        self.verify_button.setEnabled(True)
        self.result.setText(text)
        self.icon.clear()
        self.show_button.hide()
        self.table.hide()
        self.around_title.hide()

    @Slot()
    def _show_broken(self) -> None:
        if self.status is not None and self.status.broken_sequence:
            self.sequence_chosen.emit(self.status.broken_sequence)
