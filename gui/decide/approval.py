"""Approval detail: the action shown whole, and the decision form."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.approvals.service import json_changes
from proctor.core.lens import Lens, lens_of
from proctor.core.models import Approval, ApprovalScope, ApprovalStatus, InboxItem, InboxKind

from ..infra.i18n import tr
from ..infra.tasks import PresentationPool
from ..widgets import fmt
from ..widgets.action_text import ActionText
from ..widgets.bounded_text import BoundedText
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label, plain_tip, section
from ..widgets.prepare import INLINE_CHARS, text_size
from .confirm import confirmed, restated_action
from .detail import DetailContext, DetailWidget
from .edit_action import EditActionDialog
from .lens_line import LensLine
from .policy_line import PolicyView, policy_head, policy_view, progress_text
from .rule_draft import RuleDraftPanel
from .similar import SimilarModel

TAMPERED = (
    "Tampered with: the stored action no longer matches the digest it was requested "
    "with. The journal was changed outside Proctor, so what is shown here may not be "
    "what the agent asked for. It cannot be approved or denied; run `proctor verify`."
)
SCOPES = (
    (ApprovalScope.ONCE, "Once"),
    (ApprovalScope.RUN, "Always in this run"),
    (ApprovalScope.SPACE, "Always in this space"),
)


def outcome_text(a: Approval) -> str:
    """What happened to a decided approval, and who did it."""
    if a.status == ApprovalStatus.PENDING:
        return ""
    who = a.decided_by or ("the agent" if a.status == ApprovalStatus.CANCELLED else "someone")
    when = fmt.clock(a.decided_at) if a.decided_at else ""
    text = f"{a.status.value.capitalize()} by {who}" + (f" at {when}" if when else "")
    if a.decision_reason:
        text += f": {fmt.bounded(a.decision_reason, 300)}"
    if a.edited:
        text += f" — edited before approval: {edit_text(a)}"
    if a.consumed_at:
        text += f" — consumed by the agent at {fmt.clock(a.consumed_at)}"
    return text


def edit_text(a: Approval) -> str:
    """How the operator edited the action (path: before → after), bounded."""
    if not a.edited:
        return ""
    parts = []
    for change in json_changes(a.action, a.approved_action)[:6]:
        before = (
            fmt.bounded(fmt.pretty_json(change.get("before")), 60)
            if "before" in change
            else "(absent)"
        )
        after = (
            fmt.bounded(fmt.pretty_json(change.get("after")), 60)
            if "after" in change
            else "(removed)"
        )
        parts.append(f"{change['path']}: {before} → {after}")
    return "; ".join(parts) or "re-serialized"


def action_button(registry: Any, action_id: str, parent: QWidget) -> QToolButton:
    button = QToolButton(parent)
    button.setDefaultAction(registry.action(action_id))
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    button.setMinimumWidth(96)
    button.setAccessibleName(registry.action(action_id).text())
    return button


class ApprovalDetail(DetailWidget):
    kind = InboxKind.APPROVAL

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        self._drafts: dict[str, str] = {}
        super().__init__(ctx, parent)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName(tr("Approval state"))
        self.tampered = plain_label(TAMPERED, self, name="Banner")
        self.tampered.setProperty("level", "error")
        self.tampered.setAccessibleName(TAMPERED)
        self.tampered.hide()
        self.facts = plain_label(parent=self)
        # under a policy: its progress ("1 of 2 approvals — alice approved at 10:02 …")
        self.policy_line = plain_label(parent=self, name="PolicyProgress")
        self.policy_line.setAccessibleName(tr("Approval policy progress"))
        self.policy_line.hide()
        self.policy = PolicyView(None, None, None)
        self.agent_reason = BoundedText("Agent's reason", self)
        self.action_text = ActionText("What it will do", self)
        self.args = JsonTree("Action and arguments", self)
        self.args.setMinimumHeight(170)
        self.digest = QLineEdit(self)
        self.digest.setReadOnly(True)
        self.digest.setFrame(False)
        self.digest.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.digest.setAccessibleName(tr("Action digest"))
        self.copy_digest = QPushButton(tr("Copy"), self)
        self.copy_digest.setAccessibleName(tr("Copy the action digest"))
        self.copy_digest.clicked.connect(self._copy_digest)
        self.lens: Lens | None = None  # what the risk lens reads, loaded with the entity
        self.similar = SimilarModel(self)
        self.similar_view = self._similar_view()
        self._build_body()

    def _similar_view(self) -> QTableView:
        view = QTableView(self)
        view.setModel(self.similar)
        view.setAccessibleName(tr("Similar past decisions"))
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.verticalHeader().hide()
        view.setShowGrid(False)
        view.setMaximumHeight(150)
        view.setWordWrap(False)
        view.verticalHeader().setDefaultSectionSize(26)
        header = view.horizontalHeader()
        for col, width in enumerate((128, 76, 130, 200)):
            header.resizeSection(col, width)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        return view

    def _build_body(self) -> None:
        self.body.addWidget(self.tampered)
        self.body.addWidget(self.state)
        self.body.addWidget(self.policy_line)
        self.body.addWidget(self.facts)
        self.body.addWidget(section("Agent's reason", self))
        self.body.addWidget(self.agent_reason)
        self.body.addWidget(self.action_text)
        self.body.addWidget(self.args, 1)
        digest_row = QHBoxLayout()
        digest_row.addWidget(section("Action digest", self))
        digest_row.addWidget(self.digest, 1)
        digest_row.addWidget(self.copy_digest)
        self.body.addLayout(digest_row)
        self.body.addWidget(section("Similar past decisions", self))
        self.body.addWidget(self.similar_view)

    def footer(self) -> QVBoxLayout:
        registry = self.ctx.registry
        self.reason = QPlainTextEdit(self)
        self.reason.setAccessibleName(tr("Your reason"))
        self.reason.setPlaceholderText(
            tr("Your reason — required to deny  (Ctrl+Enter approves, Ctrl+Shift+Enter denies)")
        )
        self.reason.setTabChangesFocus(True)
        self.reason.setMaximumHeight(72)
        self.scopes = QButtonGroup(self)
        scope_row = QHBoxLayout()
        scope_row.addWidget(section("Scope", self))
        for n, (scope, text) in enumerate(SCOPES):
            radio = QRadioButton(text, self)
            radio.setAccessibleName(tr("Scope: {text}").format(text=text))
            radio.setProperty("scope", scope.value)
            self.scopes.addButton(radio, n)
            scope_row.addWidget(radio)
        self.scopes.button(0).setChecked(True)
        scope_row.addStretch(1)
        self.approve_button = action_button(registry, "inbox.approve", self)
        self.approve_button.setObjectName("ApproveButton")
        self.rule_panel = RuleDraftPanel(self.ctx, self)
        self.rule_panel.open_run.connect(self.open_run)
        self.scopes.idToggled.connect(self._on_scope_toggled)
        self.edit_button = QPushButton(tr("Edit, then approve…"), self)
        self.edit_button.setObjectName("EditApproveButton")
        self.edit_button.setAccessibleName(tr("Edit the action's arguments, then approve it"))
        self.edit_button.clicked.connect(self.edit_and_approve)
        # approve and deny in a box of their own: a tampered item disables the box
        self.decision_buttons = QWidget(self)
        decide_row = QHBoxLayout(self.decision_buttons)
        decide_row.setContentsMargins(0, 0, 0, 0)
        decide_row.addWidget(self.approve_button)
        decide_row.addWidget(self.edit_button)
        self.deny_button = action_button(registry, "inbox.deny", self)
        decide_row.addWidget(self.deny_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.decision_buttons)
        buttons.addWidget(action_button(registry, "inbox.snooze", self))
        buttons.addStretch(1)
        self.lens_line = LensLine(self)
        # why this operator cannot approve now (a step already taken; not their stage)
        self.turn_note = plain_label(parent=self, name="TurnNote")
        self.turn_note.setProperty("level", "warning")
        self.turn_note.hide()
        form = QVBoxLayout()
        form.setContentsMargins(8, 4, 8, 8)
        form.addWidget(self.lens_line.read)
        form.addWidget(self.lens_line.new)
        form.addWidget(self.reason)
        form.addLayout(scope_row)
        form.addWidget(self.rule_panel)
        form.addWidget(self.turn_note)
        form.addLayout(buttons)
        return form

    # ------------------------------------------------------------ drafts
    def reason_text(self) -> str:
        return self.reason.toPlainText().strip()

    def scope(self) -> ApprovalScope:
        button = self.scopes.checkedButton()
        return ApprovalScope(button.property("scope")) if button else ApprovalScope.ONCE

    def leave_item(self) -> None:
        if self.item is not None:
            self._drafts[self.item.id] = self.reason.toPlainText()

    def enter_item(self, item: InboxItem) -> None:
        self.tampered.hide()
        self.lens = None
        self._show_policy(PolicyView(None, None, None))
        self.lens_line.set_lens(None)
        self.decision_buttons.setEnabled(True)
        self.reason.setPlainText(self._drafts.pop(item.id, ""))
        self.scopes.button(0).setChecked(True)
        self.rule_panel.hide()
        self._set_decidable(True)  # inbox rows wait for a decision; the entity says for sure

    def forget_draft(self, item_id: str) -> None:
        self._drafts.pop(item_id, None)
        if self.item is not None and self.item.id == item_id:
            self.reason.clear()

    def focus_primary(self) -> None:
        self.reason.setFocus()

    # ------------------------------------------------------------ entity
    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary.split(":", 1)[0], 120))
        self.title.setToolTip(plain_tip(item.summary))

    def fetcher(self, item: InboxItem) -> Any:
        journal, item_id = self.ctx.journal, item.id
        approvals = journal.approvals

        def fetch() -> tuple[Approval, list[Approval], Lens, PolicyView]:
            approval, similar = approvals.get(item_id), approvals.similar(item_id, limit=10)
            lens = lens_of(approval, similar)  # parsed here, off the GUI
            return approval, similar, lens, policy_view(journal, item_id)

        return fetch

    def show_entity(self, data: tuple[Approval, list[Approval], Lens, PolicyView]) -> None:
        approval, similar, lens, policy = data
        self.entity, self.lens = approval, lens
        self._show_policy(policy)
        self.lens_line.set_lens(lens)
        self.title.setText(approval.action_name)
        self.args.set_value(approval.action)
        self.action_text.set_action(approval.action, lens.reading.facts)  # highlights its facts
        if text_size(approval.action) > INLINE_CHARS:  # its confirmation's text, made ready
            PresentationPool.instance().run(lambda _ticket: restated_action(approval), owner=self)
        self.agent_reason.set_text(approval.reason)
        self.digest.setText(approval.action_digest)
        self.digest.setCursorPosition(0)
        self.facts.setText(
            tr(
                "Safety: {safety_class}  ·  requested scope: {requested_scope}  ·  on expiry: "
                "{on_expiry}\nRun: {run_title} (attempt {attempt})"
            ).format(
                safety_class=approval.safety_class.value.replace("_", " "),
                requested_scope=approval.requested_scope.value,
                on_expiry=approval.on_expiry.value.replace("_", " "),
                run_title=fmt.bounded(approval.run_title, 120),
                attempt=approval.attempt,
            )
        )
        self.similar.set_rows(similar)
        self.tampered.setVisible(approval.tampered)
        self.decision_buttons.setEnabled(not approval.tampered)
        self.ctx.registry.refresh()  # the approve/deny commands follow (can_decide)
        self.tick()
        self._set_decidable(approval.status == ApprovalStatus.PENDING)

    def _set_decidable(self, pending: bool) -> None:
        """Decided (here or elsewhere): the form stays readable, its controls are off. Under
        a policy a request is approved once, as it was asked (no scope, no edit)."""
        governed = self.policy.progress is not None
        for button in (*self.scopes.buttons(), self.edit_button):
            button.setEnabled(pending and not self.ctx.read_only and not governed)
        self.reason.setReadOnly(not pending)

    def _show_policy(self, policy: PolicyView) -> None:
        self.policy = policy
        p = policy.progress
        lines = [] if p is None else [policy_head(p), progress_text(p)]
        if policy.assignee:
            lines.append(tr("Assigned to {name}").format(name=fmt.bounded(policy.assignee, 80)))
        self.policy_line.setText("\n".join(lines))
        self.policy_line.setVisible(bool(lines))
        self.turn_note.setText(policy.why_not or "")
        self.turn_note.setVisible(bool(policy.why_not) and self.is_pending())

    def decidable(self) -> bool:
        """Pending, and this operator may take its step (under a policy: not taken yet, and
        the stage it waits for is theirs; the core refuses the same)."""
        return self.is_pending() and self.policy.why_not is None

    def tick(self) -> None:
        a = self.entity
        if not isinstance(a, Approval):
            return
        if a.status != ApprovalStatus.PENDING:
            self.state.setText(outcome_text(a))
            return
        expiry = (
            tr("no expiry")
            if a.expires_at is None
            else (
                tr("expires in {countdown} ({clock})").format(
                    countdown=fmt.countdown(a.expires_at), clock=fmt.clock(a.expires_at)
                )
                if fmt.countdown(a.expires_at) != "expired"
                else tr("past its expiry")
            )
        )
        self.state.setText(
            tr("Pending for {created_at} · {expiry}").format(
                created_at=fmt.age(a.created_at), expiry=expiry
            )
        )

    def is_tampered(self) -> bool:
        """The approval shown was rewritten outside Proctor: it cannot be decided here."""
        return isinstance(self.entity, Approval) and self.entity.tampered

    def is_pending(self) -> bool:
        return isinstance(self.entity, Approval) and self.entity.status == ApprovalStatus.PENDING

    # ------------------------------------------------------------ rules and edits
    @Slot(int, bool)
    def _on_scope_toggled(self, _button: int, checked: bool) -> None:
        if not checked:
            return
        scope = self.scope()
        if scope == ApprovalScope.ONCE or not self.is_pending():
            self.rule_panel.hide()
            return
        self.rule_panel.load(self.entity, scope.value)

    def makes_rule(self) -> bool:
        """Approving now makes a rule (a scope other than once is chosen)."""
        return self.scope() != ApprovalScope.ONCE and self.rule_panel.isVisible()

    def approve(self) -> str:
        """Approve the approval shown, exactly as this form says: once (asking first when it
        is risky), or with the rule the rule panel shows (its own confirmation). The one
        approve of every page that decides (the Inbox, a run's "Waiting for you"); the
        answer is what to tell the operator."""
        a, item = self.entity, self.item
        if not isinstance(a, Approval) or item is None or a.id != item.id:
            return tr("Not approved: the action is still loading. Approve again once it is shown.")
        reason, scope = self.reason_text(), self.scope()
        if self.makes_rule():
            return self.rule_panel.approve(item, reason, self)
        if not confirmed(self, self.ctx.settings, a, scope, reason, self.lens):
            return tr("Not approved: you cancelled the confirmation.")
        self.ctx.decider.approve(item, reason=reason, scope=scope)
        return tr("Approving…")

    @Slot()
    def edit_and_approve(self) -> None:
        """Open the editor; approve the edited action (one decision) if the operator does."""
        a, item = self.entity, self.item
        if (
            not isinstance(a, Approval)
            or item is None
            or not self.is_pending()
            or self.ctx.read_only
            or a.tampered
        ):
            return
        action = EditActionDialog.ask(self, a)
        if action is None:
            return
        reason = self.reason_text()
        edited = a.model_copy(update={"action": action})  # what the confirmation restates
        lens = lens_of(a, action=action)  # the edit, read as the requested action was
        if not confirmed(self, self.ctx.settings, edited, ApprovalScope.ONCE, reason, lens):
            self.message.show_message(tr("Not approved: you cancelled the confirmation."))
            return
        self.message.show_message(tr("Approving the edited action…"))
        self.ctx.decider.approve_edited(item, action, expected_version=a.version, reason=reason)

    @Slot()
    def _copy_digest(self) -> None:
        QGuiApplication.clipboard().setText(self.digest.text())
