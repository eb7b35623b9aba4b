"""The Rules page's approval policies (docs/policies.md): who must approve what. Each policy
whole — what it matches, what it needs (its stages, escalation and deadline), who made it —
the requests it would have governed and the pending ones it matches (its preview, as a
rule draft's), New policy… (drafted and previewed first, ``new_policy.py``) and Revoke…
with a reason (a revoked policy stays listed as history)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.policies.models import Policy, PolicyDraft, PolicyPreview

from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.dialogs import ReasonDialog
from ..widgets.labels import plain_label, section
from ..widgets.list_model import Index, ListModel
from ..widgets.message_bar import Level, MessageBar
from .new_policy import NewPolicyDialog

POLICY_TITLES = (
    QT_TR_NOOP("State"),
    QT_TR_NOOP("Name"),
    QT_TR_NOOP("Tool"),
    QT_TR_NOOP("Resource"),
    QT_TR_NOOP("Needs"),
    QT_TR_NOOP("Made by"),
)
HIT_TITLES = (
    QT_TR_NOOP("Filed"),
    QT_TR_NOOP("Status"),
    QT_TR_NOOP("Agent"),
    QT_TR_NOOP("Tool"),
    QT_TR_NOOP("Request"),
)


def policy_facts(p: Policy) -> str:
    """The policy in plain lines (operators' text, bounded all the same)."""
    where = f"in {p.project}" if p.project != "*" else "in every project"
    lines = [
        f"{p.name}",
        f"{p.action_pattern} on {p.resource_pattern} {where}"
        + (f", space {p.space}" if p.space else "")
        + (f", {p.safety_class.value.replace('_', ' ')} only" if p.safety_class else ""),
        f"when {p.predicate}" if p.predicate else "no condition on the arguments",
        f"needs {p.needs()} (distinct people, never the requester)",
        f"made by {p.created_by} at {fmt.clock(p.created_at)}",
    ]
    if p.revoked_at is not None:
        lines.append(
            f"revoked by {p.revoked_by} at {fmt.clock(p.revoked_at)}"
            + (f": {p.revoke_reason}" if p.revoke_reason else "")
        )
    return "\n".join(fmt.bounded(line, 800) for line in lines)  # each line bounded, kept a line


def draft_of(p: Policy) -> PolicyDraft:
    return PolicyDraft(**p.model_dump(include=set(PolicyDraft.model_fields)))


class PoliciesModel(ListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(POLICY_TITLES, parent)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        p: Policy | None = self.item(index.row())
        if p is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        return (
            "active" if p.revoked_at is None else "revoked",
            fmt.bounded(p.name, 80),
            fmt.bounded(p.action_pattern, 80),
            fmt.bounded(p.resource_pattern, 80),
            fmt.bounded(p.needs(), 120),
            fmt.bounded(p.created_by, 80),
        )[index.column()]


class HitsModel(ListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(HIT_TITLES, parent)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        hit = self.item(index.row())
        if hit is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        return (
            fmt.clock(hit.created_at),
            hit.status.value,
            fmt.bounded(hit.agent, 80),
            fmt.bounded(hit.action_name, 80),
            hit.id,
        )[index.column()]


def table(model: ListModel, name: str, parent: QWidget) -> QTableView:
    view = QTableView(parent)
    view.setModel(model)
    view.setAccessibleName(name)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().hide()
    view.horizontalHeader().setStretchLastSection(True)
    return view


class PoliciesPanel(QWidget):
    """The policies list, the selected policy's facts and preview, and Revoke….

    Signals:
        open_run(str): show the run of a request the preview lists (Enter or double-click).
    """

    open_run = Signal(str)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.writable = not bool(getattr(ctx.journal, "read_only", False))
        self.policy: Policy | None = None
        self.active_only = QCheckBox(tr("Active only"), self)
        self.active_only.setAccessibleName(tr("Show only policies not revoked"))
        self.active_only.toggled.connect(self.reload)
        self.model = PoliciesModel(self)
        self.table = table(self.model, tr("Approval policies"), self)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.facts = plain_label(tr("Select a policy to see it whole."), self)
        self.facts.setAccessibleName(tr("Policy"))
        self.hits = HitsModel(self)
        self.hits_view = table(self.hits, tr("Requests this policy governs"), self)
        self.hits_view.doubleClicked.connect(self._open_hit)
        self.hits_view.activated.connect(self._open_hit)
        self.hits_title = section(
            "Requests it would have governed, and pending ones it matches", self
        )
        self.revoke_button = QPushButton(tr("Revoke…"), self)
        self.revoke_button.setObjectName("RevokePolicyButton")
        self.revoke_button.setAccessibleName(tr("Revoke this policy"))
        self.revoke_button.clicked.connect(self.revoke)
        self.new_button = QPushButton(tr("New policy…"), self)
        self.new_button.setAccessibleName(tr("Draft a new approval policy, previewed first"))
        self.new_button.setEnabled(self.writable)
        self.new_button.clicked.connect(self.new_policy)
        self.message = MessageBar(self)
        self._build()
        self.show_policy(None, None)

    def _build(self) -> None:
        detail = QWidget(self)
        top = QHBoxLayout()
        top.addWidget(self.facts, 1)
        top.addWidget(self.revoke_button, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout(detail)
        column.setContentsMargins(0, 4, 0, 0)
        column.addWidget(self.message)
        column.addLayout(top)
        column.addWidget(self.hits_title)
        column.addWidget(self.hits_view, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(detail)
        split.setSizes([300, 420])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        bar.addWidget(self.active_only)
        bar.addStretch(1)
        bar.addWidget(self.new_button)
        layout.addLayout(bar)
        layout.addWidget(split, 1)

    # ------------------------------------------------------------ loading
    @Slot()
    def reload(self) -> None:
        policies, active = self.ctx.journal.policies, self.active_only.isChecked()
        self.ctx.runner.latest(
            "policies",
            lambda: policies.list(active_only=active),
            on_done=self._on_list,
            on_error=self._on_error,
            owner=self,
        )

    def _on_list(self, rows: list[Policy]) -> None:
        chosen = self.policy.id if self.policy is not None else None
        self.model.set_rows(rows)
        row = next((n for n, p in enumerate(rows) if p.id == chosen), 0 if rows else -1)
        if row >= 0:
            self.table.selectRow(row)
        else:
            self.show_policy(None, None)

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        policy = self.model.item(current.row()) if current.isValid() else None
        if policy is None:
            return
        policies = self.ctx.journal.policies
        self.show_policy(policy, None)
        self.ctx.runner.latest(
            "policy-preview",
            lambda: (policy, policies.preview(draft_of(policy))),
            on_done=lambda got: self.show_policy(*got),
            on_error=self._on_error,
            owner=self,
        )

    def show_policy(self, policy: Policy | None, preview: PolicyPreview | None) -> None:
        self.policy = policy
        self.revoke_button.setEnabled(
            policy is not None and policy.revoked_at is None and self.writable
        )
        self.facts.setText(
            policy_facts(policy) if policy else tr("Select a policy to see it whole.")
        )
        hits = [*preview.pending, *preview.past] if preview is not None else []
        self.hits.set_rows(hits)
        if preview is not None:
            self.hits_title.setText(
                tr(
                    "{pending} pending it matches, {past} of {total} past it would have governed"
                ).format(
                    pending=len(preview.pending), past=len(preview.past), total=preview.past_total
                )
            )

    def _on_error(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message)

    @Slot(QModelIndex)
    def _open_hit(self, index: QModelIndex) -> None:
        hit = self.hits.item(index.row())
        if hit is not None:
            self.open_run.emit(hit.run_id)

    # ------------------------------------------------------------ new, revoke
    @Slot()
    def new_policy(self) -> None:
        dialog = NewPolicyDialog(self.ctx, self)
        if dialog.exec() != QDialog.DialogCode.Accepted or dialog.draft is None:
            return
        draft, reason, policies = dialog.draft, dialog.reason or None, self.ctx.journal.policies
        self.ctx.runner.run(
            lambda: policies.add(draft, reason=reason, source="desk"),
            on_done=self._on_made,
            on_error=self._on_error,
            owner=self,
            write=True,
        )

    def _on_made(self, policy: Policy) -> None:
        self.message.show_message(
            tr("Made the policy “{name}”: it governs the requests filed from now on.").format(
                name=fmt.bounded(policy.name, 200)
            ),
            Level.SUCCESS,
        )
        self.policy = policy
        self.reload()

    @Slot()
    def revoke(self) -> None:
        policy = self.policy
        if policy is None or policy.revoked_at is not None:
            return
        reason = ReasonDialog.ask(
            self,
            tr("Revoke policy"),
            tr(
                "Revoke the policy “{name}” (needs {needs})? Requests filed from now on are "
                "not governed by it; those already under it keep it. Why?"
            ).format(name=fmt.bounded(policy.name, 200), needs=fmt.bounded(policy.needs(), 200)),
            ok=tr("Revoke"),
            required=True,
        )
        if not reason:
            return
        policies = self.ctx.journal.policies
        self.ctx.runner.run(
            lambda: policies.revoke(policy.id, reason, source="desk"),
            on_done=self._on_revoked,
            on_error=self._on_error,
            owner=self,
            write=True,
        )

    def _on_revoked(self, policy: Policy) -> None:
        self.message.show_message(
            tr("Revoked the policy “{name}”.").format(name=fmt.bounded(policy.name, 200)),
            Level.SUCCESS,
        )
        self.reload()
