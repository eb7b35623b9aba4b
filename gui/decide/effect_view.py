"""Everything known about one side effect, read-only: state (with a live lease countdown),
key, action, agent, run, attempt, times, lease, why it became ambiguous, the tool call's
request and (partial) result, the receipts with their evidence, safety class and
idempotency key. Used by the Effects page and the inbox detail of kind "effect"."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QItemSelection, Signal, Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.effects.views import EffectContext
from proctor.core.models import Effect, EffectStatus, Receipt

from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.fmt import label
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label, section
from ..widgets.list_model import RowsModel
from ..widgets.tables import row_table

LIVE = (EffectStatus.RESERVED, EffectStatus.EXECUTING)
RECEIPT_HEADERS = (
    QT_TR_NOOP("When"),
    QT_TR_NOOP("Kind"),
    QT_TR_NOOP("Status"),
    QT_TR_NOOP("External id"),
    QT_TR_NOOP("By"),
)
FACTS = (
    "Key",
    "Action",
    "Agent",
    "Run",
    "Attempt",
    "Reserved",
    "Started",
    "Lease",
    "Safety class",
    "Idempotency key",
    "Approval",
)


def lapsed(e: Effect, now: float | None = None) -> bool:
    """A live effect whose lease expired, not yet marked ambiguous."""
    return (
        e.status in LIVE
        and e.lease_expires_at is not None
        and e.lease_expires_at <= (now or time.time())
    )


def lease_text(e: Effect, now: float | None = None) -> str:
    length = fmt.span(e.lease_seconds)
    if e.status not in LIVE:
        return tr("{length} lease (held by {owner}; ended)").format(
            length=length, owner=e.lease_owner or "—"
        )
    if e.lease_expires_at is None:
        return tr("{length} lease held by {owner}").format(
            length=length, owner=e.lease_owner or "—"
        )
    left = e.lease_expires_at - (now or time.time())
    if left > 0:
        return tr("held by {owner} · {left} left of {length}").format(
            owner=e.lease_owner or "—", left=fmt.span(left), length=length
        )
    return tr("lapsed {ago} ago · was held by {owner} for {length}").format(
        ago=fmt.span(-left), owner=e.lease_owner or "—", length=length
    )


def state_text(e: Effect, now: float | None = None) -> str:
    if e.status == EffectStatus.AMBIGUOUS:
        return tr(
            "Outcome unknown since {when} — only a person can say whether it happened."
        ).format(when=fmt.clock(e.updated_at))
    if lapsed(e, now):
        return tr(
            "{status}, but the lease lapsed {span} ago and nobody has marked it ambiguous yet."
        ).format(
            status=e.status.value.capitalize(),
            span=fmt.span((now or time.time()) - (e.lease_expires_at or 0)),
        )
    if e.status in LIVE:
        return tr("{status} — {lease}.").format(
            status=e.status.value.capitalize(), lease=lease_text(e, now)
        )
    who = e.resolved_by or tr("the agent")
    text = tr("{status} by {who} at {when}").format(
        status=e.status.value.capitalize(), who=who, when=fmt.clock(e.updated_at)
    )
    if e.resolution_reason:
        text += f": {fmt.bounded(e.resolution_reason, 300)}"
    elif e.error:
        text += f": {fmt.bounded(e.error, 300)}"
    return text


def fact_values(c: EffectContext) -> dict[str, str]:
    e, run = c.effect, c.run
    return {
        "Key": e.key,
        "Action": e.tool,
        "Agent": run.agent if run else (e.lease_owner or "—"),
        "Run": f"{fmt.bounded(run.title, 80)} ({run.id}, {run.status.value})"
        if run
        else (e.run_id or "— (no run)"),
        "Attempt": str(e.attempt),
        "Reserved": fmt.clock(e.created_at),
        "Started": fmt.clock(e.started_at) if e.started_at else "— (never began)",
        "Lease": lease_text(e),
        "Safety class": label(e.safety_class.value),
        "Idempotency key": e.idempotency_key or "— (none: a retry is not deduplicated)",
        "Approval": c.approval.id
        + (
            f" (approved by {c.approval.decided_by})"
            if c.approval and c.approval.decided_by
            else ""
        )
        if c.approval
        else "—",
    }


def receipt_cells(r: Receipt) -> tuple[str, ...]:
    return (fmt.clock(r.created_at), r.kind, r.status, r.external_id or "—", r.actor)


class EffectView(QWidget):
    """Signals:
    open_run(str): the operator asked to see the effect's run.
    """

    open_run = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context: EffectContext | None = None
        self.state = plain_label(parent=self)
        self.state.setAccessibleName(tr("Effect state"))
        self.facts: dict[str, Any] = {}
        form = QFormLayout()
        for name in FACTS:
            value = plain_label(parent=self)
            value.setAccessibleName(name)
            self.facts[name] = value
            form.addRow(plain_label(name, self, name="Muted", selectable=False), value)
        self.offers_run = True  # False where the host has its own "Open run" (the inbox)
        self.run_button = QPushButton(tr("Open the r&un"), self)
        self.run_button.setAccessibleName(tr("Open the run of this effect"))
        self.run_button.clicked.connect(self._on_open_run)
        self.why = BoundedText("Why the outcome is unknown", self)
        self.prior_error = BoundedText("Prior error", self)
        self.action = JsonTree("Action", self)
        self.request = JsonTree("Tool call request", self)
        self.result = JsonTree("Result so far (partial)", self)
        self.tool_note = plain_label(parent=self, name="Muted")
        for tree in (self.action, self.request, self.result):
            tree.setMinimumHeight(120)
        self.receipts = RowsModel(
            RECEIPT_HEADERS, receipt_cells, self, tip=lambda r: f"digest {r.digest}"
        )
        self.receipts_view = self._receipts_view()
        self.evidence = JsonTree("Evidence of the selected receipt", self)
        self.evidence.setMinimumHeight(110)
        self._build(form)

    def _receipts_view(self) -> QTableView:
        view = row_table(self.receipts, "Receipts", self, (120, 90, 90, 170, 150))
        view.setTabKeyNavigation(False)
        view.setMaximumHeight(140)
        view.verticalHeader().setDefaultSectionSize(24)
        view.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        view.selectionModel().selectionChanged.connect(self._on_receipt)
        return view

    def _build(self, form: QFormLayout) -> None:
        head = QHBoxLayout()
        head.addWidget(self.state, 1)
        head.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addLayout(form)
        self.why_title = section("Why the outcome is unknown", self)
        self.error_title = section("Prior error", self)
        for widget in (
            self.why_title,
            self.why,
            self.error_title,
            self.prior_error,
            self.action,
            section("Tool call", self),
            self.tool_note,
            self.request,
            self.result,
            section("Receipts", self),
            self.receipts_view,
            self.evidence,
        ):
            layout.addWidget(widget)

    # ------------------------------------------------------------ showing
    def show_context(self, c: EffectContext) -> None:
        self.context = c
        e = c.effect
        for name, value in fact_values(c).items():
            self.facts[name].setText(fmt.bounded(value, 400))
        self.run_button.setVisible(self.offers_run and bool(e.run_id))
        self.why.set_text(e.ambiguous_reason or "")
        self.prior_error.set_text(e.error or "")
        for widget in (self.why_title, self.why):
            widget.setVisible(bool(e.ambiguous_reason))
        for widget in (self.error_title, self.prior_error):
            widget.setVisible(bool(e.error))
        self.action.set_value(e.action)
        self._show_tool_call(c)
        self.receipts.set_rows(c.receipts)
        self.evidence.setVisible(bool(c.receipts))
        if c.receipts:
            self.receipts_view.selectRow(len(c.receipts) - 1)
        self.tick()

    def _show_tool_call(self, c: EffectContext) -> None:
        call, e = c.tool_call, c.effect
        if call is None:
            self.tool_note.setText(tr("No tool call is linked to this effect."))
        else:
            status = label(call.status.value)
            error = f" · error: {fmt.bounded(call.error, 200)}" if call.error else ""
            self.tool_note.setText(
                tr("{tool} · {status} · recorded {created_at}{error}").format(
                    tool=call.tool,
                    status=status,
                    created_at=fmt.clock(call.created_at),
                    error=error,
                )
            )
        self.request.setVisible(call is not None)
        if call is not None:
            self.request.set_value(call.request)
        # the effect's own result first: what the agent recorded when it lost track (the
        # ``partial_result`` of mark_ambiguous) or its committed result
        partial = e.result if e.result is not None else (call.result if call else None)
        self.result.setVisible(partial is not None)
        self.result.set_title(
            "Result" if e.status == EffectStatus.COMMITTED else "Result so far (partial)"
        )
        if partial is not None:
            self.result.set_value(partial)

    def tick(self) -> None:
        """Once a second: the lease countdown."""
        if self.context is None:
            return
        e = self.context.effect
        self.state.setText(state_text(e))
        self.facts["Lease"].setText(lease_text(e))

    @Slot(QItemSelection, QItemSelection)
    def _on_receipt(self, *_: Any) -> None:
        rows = self.receipts_view.selectionModel().selectedRows()
        r = self.receipts.item(rows[0].row()) if rows else None
        if r is not None:
            self.evidence.set_value(r.evidence)

    @Slot()
    def _on_open_run(self) -> None:
        if self.context is not None and self.context.effect.run_id:
            self.open_run.emit(self.context.effect.run_id)
