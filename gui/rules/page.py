"""The Rules page, in two tabs. Standing rules: every approval rule — effect, what it
matches (tool, resource, condition), scope (run / space / project), who made it from which
decision, expiry, how many requests it decided (each openable: its run opens) — and Revoke
(an audited transaction with a reason; revoked rules stay listed as history). Approval
policies: who must approve what (``policies.py``)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.models import Approval, ChangeKind, Page, RuleUsage

from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.dialogs import ReasonDialog
from ..widgets.event_summary import plain_tip
from ..widgets.labels import plain_label, section
from ..widgets.list_model import Index, ListModel
from ..widgets.list_page import ListPage
from ..widgets.message_bar import Level, MessageBar
from ..widgets.paged_model import Column, PagedModel
from .policies import PoliciesPanel


def made_text(rule: Any) -> str:
    if rule.source_approval_id:
        return tr("{who} from {approval}").format(
            who=rule.created_by, approval=rule.source_approval_id
        )
    return rule.created_by


def expiry_text(rule: Any) -> str:
    return fmt.clock(rule.expires_at) if rule.expires_at else tr("never")


COLUMNS = [
    Column(QT_TR_NOOP("State"), lambda u: u.state, width=70),
    Column(QT_TR_NOOP("Effect"), lambda u: u.rule.effect.value, width=60),
    Column(
        QT_TR_NOOP("Tool"),
        lambda u: fmt.bounded(fmt.pattern_text(u.rule.action_pattern), 120),
        width=140,
    ),
    Column(
        QT_TR_NOOP("Resource"),
        lambda u: fmt.bounded(fmt.pattern_text(u.rule.resource_pattern), 160),
        width=160,
        tip=lambda u: plain_tip(u.rule.resource_pattern),
    ),
    Column(
        QT_TR_NOOP("When"),
        lambda u: fmt.bounded(u.rule.predicate or "—", 160),
        width=180,
        tip=lambda u: plain_tip(u.rule.predicate or "no condition"),
    ),
    Column(QT_TR_NOOP("Scope"), lambda u: fmt.bounded(u.rule.scope_text, 120), width=160),
    Column(QT_TR_NOOP("Expires"), lambda u: expiry_text(u.rule), width=130),
    Column(
        QT_TR_NOOP("Decided"),
        lambda u: str(u.decided),
        width=64,
        align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
    ),
    Column(QT_TR_NOOP("Made by"), lambda u: fmt.bounded(made_text(u.rule), 160), width=220),
]


def matches_text(u: RuleUsage, text: str) -> bool:
    r = u.rule
    hay = " ".join(
        [
            r.id,
            r.effect.value,
            r.action_pattern,
            r.resource_pattern,
            r.predicate or "",
            r.scope_text,
            r.created_by,
            u.state,
        ]
    ).lower()
    return text.lower() in hay


class RulesModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(
            runner, COLUMNS, lambda u: u.rule.id, lambda u: (u.rule.created_at, u.rule.id), parent
        )

    def show(self, journal: Journal, *, text: str = "", active_only: bool = False) -> None:
        approvals = journal.approvals

        def fetch(_cursor: str | None, _limit: int) -> Page:
            rows = approvals.rule_usage(active_only=active_only)
            return Page(items=[u for u in rows if not text or matches_text(u, text)])

        self.set_query(fetch)


DECIDED_TITLES = ("When", "Status", "Agent", "Tool", "Request")


class DecidedModel(ListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(DECIDED_TITLES, parent)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        a: Approval | None = self.item(index.row())
        if a is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        return (
            fmt.clock(a.decided_at),
            a.status.value,
            fmt.bounded(a.agent, 80),
            fmt.bounded(a.action_name, 80),
            a.id,
        )[index.column()]


class RuleDetail(QWidget):
    """The selected rule whole, the requests it decided (double-click opens its run),
    and Revoke.

    Signals:
        open_run(str): show this run (of a decided request, or of the source decision).
        revoke_requested(object): the operator asked to revoke this RuleUsage.
    """

    open_run = Signal(str)
    revoke_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.usage: RuleUsage | None = None
        self.source: Approval | None = None
        self.facts = plain_label(tr("Select a rule to see it whole."), self)
        self.facts.setAccessibleName(tr("Rule"))
        self.decided = DecidedModel(self)
        self.decided_view = QTableView(self)
        self.decided_view.setModel(self.decided)
        self.decided_view.setAccessibleName(tr("Requests this rule decided"))
        self.decided_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.decided_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.decided_view.verticalHeader().hide()
        self.decided_view.horizontalHeader().setStretchLastSection(True)
        self.decided_view.doubleClicked.connect(self._open_decided)
        self.decided_view.activated.connect(self._open_decided)
        self.source_button = QPushButton(tr("Open the decision it was made from"), self)
        self.source_button.clicked.connect(self._open_source)
        self.revoke_button = QPushButton(tr("Revoke…"), self)
        self.revoke_button.setObjectName("RevokeRuleButton")
        self.revoke_button.setAccessibleName(tr("Revoke this rule"))
        self.revoke_button.clicked.connect(self._revoke)
        top = QHBoxLayout()
        top.addWidget(self.facts, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.revoke_button)
        buttons.addWidget(self.source_button)
        buttons.addStretch(1)
        top.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(top)
        layout.addWidget(section("Requests it decided (Enter or double-click opens the run)", self))
        layout.addWidget(self.decided_view, 1)
        self.show_rule(None, [], None)

    def show_rule(
        self,
        usage: RuleUsage | None,
        decided: list[Approval],
        source: Approval | None,
        *,
        writable: bool = True,
    ) -> None:
        self.usage, self.source = usage, source
        self.decided.set_rows(decided)
        self.revoke_button.setEnabled(usage is not None and usage.state != "revoked" and writable)
        self.source_button.setVisible(source is not None)
        if usage is None:
            self.facts.setText(tr("Select a rule to see it whole."))
            return
        r = usage.rule
        lines = [
            f"{r.effect.value.capitalize()} {r.action_pattern} on {r.resource_pattern}",
            f"when {r.predicate}" if r.predicate else "no condition on the arguments",
            f"scope: {r.scope_text} · expires: {expiry_text(r)} · {usage.state}",
            f"made by {made_text(r)} at {fmt.clock(r.created_at)}",
            tr("decided %n request(s)", n=usage.decided),
        ]
        if r.revoked_at:
            lines.append(
                f"revoked by {r.revoked_by} at {fmt.clock(r.revoked_at)}"
                + (f": {r.revoke_reason}" if r.revoke_reason else "")
            )
        self.facts.setText("\n".join(fmt.bounded(line, 800) for line in lines))  # line by line

    @Slot(QModelIndex)
    def _open_decided(self, index: QModelIndex) -> None:
        a = self.decided.item(index.row())
        if a is not None:
            self.open_run.emit(a.run_id)

    @Slot()
    def _open_source(self) -> None:
        if self.source is not None:
            self.open_run.emit(self.source.run_id)

    @Slot()
    def _revoke(self) -> None:
        if self.usage is not None:
            self.revoke_requested.emit(self.usage)


class RulesPage(ListPage):
    """Signals:
    open_run(str): the operator asked to see a run.
    revoked(object): a rule was revoked (the updated ApprovalRule).
    """

    open_run = Signal(str)
    revoked = Signal(object)
    change_kinds = frozenset({ChangeKind.RULE, ChangeKind.APPROVAL})
    title = "Rules"
    stretch_column = 8

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, RulesModel(ctx.runner), parent)
        self.read_only = bool(getattr(ctx.journal, "read_only", False))
        self.active_only = QCheckBox(tr("Active only"), self)
        self.active_only.setAccessibleName(tr("Show only rules not revoked"))
        self.active_only.toggled.connect(self.apply_query)
        self.layout_top.insertWidget(2, self.active_only)
        self.detail = RuleDetail(self)
        self.detail.open_run.connect(self.open_run)
        self.detail.revoke_requested.connect(self.revoke)
        self.detail_message = MessageBar(self)
        side = QWidget(self)
        column = QVBoxLayout(side)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.detail_message)
        column.addWidget(self.detail, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(side)
        split.setSizes([420, 300])
        # who must approve what: the approval policies, beside the rules that decide alone
        self.policies = PoliciesPanel(ctx, self)
        self.policies.open_run.connect(self.open_run)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName(tr("Standing rules or approval policies"))
        self.tabs.addTab(split, tr("Standing rules"))
        self.tabs.addTab(self.policies, tr("Approval policies"))
        self.add_main(self.tabs)
        self.policies.reload()
        self.rule_id: str | None = None
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.model.loaded.connect(self._select_first)

    def apply_query(self) -> None:
        assert isinstance(self.model, RulesModel)
        self.model.show(
            self.journal, text=self.search.text().strip(), active_only=self.active_only.isChecked()
        )

    def focus_list(self) -> None:
        self.table.setFocus()

    def refreshed(self) -> None:
        self.reload_detail()
        self.policies.reload()

    @Slot()
    def _select_first(self) -> None:
        if not self.table.currentIndex().isValid() and self.model.rowCount():
            self.table.selectRow(0)
        elif self.rule_id is not None:
            self.reload_detail()

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        usage = self.model.item(current.row()) if current.isValid() else None
        if usage is not None:
            self.rule_id = usage.rule.id
            self.reload_detail()

    def reload_detail(self) -> None:
        if self.rule_id is None:
            return
        rule_id, approvals = self.rule_id, self.journal.approvals

        def fetch() -> tuple[RuleUsage | None, list[Approval], Approval | None]:
            usage = next((u for u in approvals.rule_usage() if u.rule.id == rule_id), None)
            source = None
            if usage is not None and usage.rule.source_approval_id:
                source = approvals.get(usage.rule.source_approval_id)
            return usage, approvals.decided_by_rule(rule_id), source

        self.ctx.runner.latest(
            "detail", fetch, on_done=self._on_detail, on_error=self._on_detail_error, owner=self
        )

    def _on_detail(self, result: tuple) -> None:
        usage, decided, source = result
        self.detail.show_rule(usage, decided, source, writable=not self.read_only)

    def _on_detail_error(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.detail_message)

    # ------------------------------------------------------------ revoke
    @Slot(object)
    def revoke(self, usage: RuleUsage) -> None:
        r = usage.rule
        reason = ReasonDialog.ask(
            self,
            tr("Revoke rule"),
            tr(
                "Revoke the rule “{effect} {action_pattern} on {resource_pattern}”"
                " ({scope_text})? It stops deciding at once and stays listed as history. "
                "Why?"
            ).format(
                effect=r.effect.value,
                action_pattern=r.action_pattern,
                resource_pattern=r.resource_pattern,
                scope_text=r.scope_text,
            ),
            ok=tr("Revoke"),
            required=True,
        )
        if not reason:
            return
        approvals = self.journal.approvals
        self.ctx.runner.run(
            lambda: approvals.revoke_rule(r.id, expected_version=r.version, reason=reason),
            on_done=self._on_revoked,
            on_error=self._on_detail_error,
            owner=self,
            write=True,
        )

    def _on_revoked(self, rule: Any) -> None:
        self.detail_message.show_message(tr("Revoked {id}.").format(id=rule.id), Level.INFO)
        self.revoked.emit(rule)
