"""A rule is explicit before it exists: the rule an "Always …" approval will make, shown
and editable (resource pattern, condition, scope, expiry — a day by default, not for
ever), its impact preview (past requests it would have decided, by agent and tool; the
pending ones it would decide now, each openable) and the confirmation restating it.

The preview runs on the task runner; the condition is checked as it is typed (pure
Python, ``proctor.core.kernel.predicates``: nothing touches the store on the GUI thread)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from proctor.core import errors
from proctor.core.kernel import predicates
from proctor.core.models import Approval, InboxItem, RuleDraft, RulePreview

from ..infra.i18n import tr
from ..infra.tasks import request_id
from ..widgets import fmt
from ..widgets.dialogs import cancel_by_default
from ..widgets.labels import plain_label, plain_tip, reserve_lines
from .detail import DetailContext

EXPIRY_CHOICES = [
    ("1 hour", 3600.0),
    ("8 hours", 8 * 3600.0),
    ("24 hours", 86400.0),
    ("7 days", 7 * 86400.0),
    ("30 days", 30 * 86400.0),
    ("Never", None),
]
DEFAULT_EXPIRY = 2  # 24 hours
PREVIEW_DEBOUNCE_MS = 250
LISTED = 50


def draft_text(d: RuleDraft, now: float | None = None) -> str:
    """The rule in one sentence, as the confirmation restates it."""
    where = {
        "run": tr("run {run}").format(run=d.run_id),
        "space": tr("space {project}/{space}").format(project=d.project, space=d.space),
        "project": tr("project {project}").format(project=d.project),
    }.get(d.scope, d.scope)
    until = (
        tr("until {when}").format(when=fmt.clock(d.expires_at))
        if d.expires_at
        else tr("for ever (no expiry)")
    )
    when = " " + tr("when {predicate}").format(predicate=d.predicate) if d.predicate else ""
    return tr("{effect} {action} on resource {resource}{when}, in {where}, {until}").format(
        effect=d.effect.value.capitalize(),
        action=d.action_pattern,
        resource=d.resource_pattern,
        when=when,
        where=where,
        until=until,
    )


def preview_text(p: RulePreview) -> str:
    more = f" (of the newest {p.scanned:,} read)" if p.truncated else ""
    lines = [tr("Would have decided %n past request(s)", n=p.past_total) + f"{more}."]
    lines += [f"  {n} × {agent} · {tool}" for agent, tool, n in p.by_agent_tool[:10]]
    lines.append(tr("Would decide %n pending request(s) now.", n=len(p.pending)))
    return "\n".join(lines)


SUMMARY_LINES = 5  # the preview line's height, always: its text never moves what is below


def fit_lines(text: str, lines: int = SUMMARY_LINES) -> str:
    """``text`` in at most ``lines`` lines: the first, then as many of the middle ones as
    fit (the rest counted), then the last."""
    parts = text.split("\n")
    if len(parts) <= lines:
        return text
    middle = parts[1 : lines - 2]
    cut = len(parts) - 2 - len(middle)
    return "\n".join([parts[0], *middle, f"  … and {cut} more", parts[-1]])


class RuleDraftPanel(QFrame):
    """Signals:
    previewed(object): a RulePreview for the draft shown.
    open_run(str): the operator opened a request listed by the preview (its run id).
    """

    previewed = Signal(object)
    open_run = Signal(str)

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("RuleDraftPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.approval: Approval | None = None
        self.base: RuleDraft | None = None
        self.preview: RulePreview | None = None
        self.headline = plain_label(parent=self)
        self.headline.setAccessibleName(tr("The rule that will be made"))
        self.resource = QLineEdit(self)
        self.resource.setAccessibleName(tr("Rule resource pattern"))
        self.condition = QLineEdit(self)
        self.condition.setAccessibleName(tr("Rule condition"))
        self.condition.setPlaceholderText(
            tr("optional, e.g. args.amount <= 100  (see docs/rules.md)")
        )
        self.scope = QComboBox(self)
        self.scope.setAccessibleName(tr("Rule scope"))
        for label, value in (
            ("This run", "run"),
            ("This space", "space"),
            ("This project", "project"),
        ):
            self.scope.addItem(label, value)
        self.expiry = QComboBox(self)
        self.expiry.setAccessibleName(tr("Rule expiry"))
        for label, seconds in EXPIRY_CHOICES:
            self.expiry.addItem(label, seconds)
        self.expiry.setCurrentIndex(DEFAULT_EXPIRY)
        self.problem = plain_label(parent=self, name="Muted")
        self.problem.setAccessibleName(tr("Rule problem"))
        self.summary = plain_label(parent=self)
        self.summary.setAccessibleName(tr("Rule impact preview"))
        reserve_lines(self.problem)  # a problem coming and going moves nothing below it
        reserve_lines(self.summary, SUMMARY_LINES)  # nor does "Previewing…" → the preview
        self.past = QListWidget(self)
        self.past.setAccessibleName(tr("Past requests the rule would have decided"))
        self.past.setMaximumHeight(70)
        self.past.itemActivated.connect(self._open_item)
        self.past.itemDoubleClicked.connect(self._open_item)
        self.pending = QListWidget(self)
        self.pending.setAccessibleName(tr("Pending requests the rule would decide"))
        self.pending.setMaximumHeight(90)
        self.pending.itemActivated.connect(self._open_item)
        self.pending.itemDoubleClicked.connect(self._open_item)
        self.apply = QCheckBox(tr("Also decide the pending requests it matches"), self)
        self.apply.setAccessibleName(tr("Apply the rule to the pending requests it matches"))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PREVIEW_DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_preview)
        for edit in (self.resource, self.condition):
            edit.textChanged.connect(self._changed)
        self.scope.currentIndexChanged.connect(self._scope_changed)
        self.expiry.currentIndexChanged.connect(self._changed)
        form = QFormLayout()
        form.addRow(plain_label(tr("Resource"), self, selectable=False), self.resource)
        form.addRow(plain_label(tr("When"), self, selectable=False), self.condition)
        form.addRow(plain_label(tr("Scope"), self, selectable=False), self.scope)
        form.addRow(plain_label(tr("Expires after"), self, selectable=False), self.expiry)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.headline)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.summary)
        layout.addWidget(self.past)
        layout.addWidget(self.pending)
        layout.addWidget(self.apply)
        self.hide()

    # ------------------------------------------------------------ loading
    def load(self, approval: Approval, scope: str) -> None:
        """Show the rule approving ``approval`` with ``scope`` would make."""
        self.approval = approval
        approvals = self.ctx.journal.approvals
        self.preview = None
        self.show()
        self.ctx.runner.drop("preview", self)  # a preview of the previous draft is stale
        self.ctx.runner.latest(
            "draft",
            lambda: approvals.rule_draft(approval.id, scope),
            on_done=self._on_draft,
            on_error=self._on_error,
            owner=self,
        )

    def _on_draft(self, draft: RuleDraft) -> None:
        self.base = draft
        for widget in (self.resource, self.condition, self.scope):
            widget.blockSignals(True)
        self.resource.setText(draft.resource_pattern)
        self.condition.clear()
        self.scope.setCurrentIndex(max(0, self.scope.findData(draft.scope)))
        for widget in (self.resource, self.condition, self.scope):
            widget.blockSignals(False)
        self._changed()

    def _on_error(self, exc: BaseException) -> None:
        self.problem.setText(
            tr("Cannot draft the rule: {exc}").format(exc=fmt.bounded(str(exc), 300))
        )

    # ------------------------------------------------------------ the draft
    def draft(self, now: float | None = None) -> RuleDraft | None:
        """The rule as edited now, or None (with the reason shown) if it cannot be made."""
        if self.base is None or self.approval is None:
            return None
        try:
            condition = predicates.normalized(self.condition.text())
        except errors.ValidationError as err:
            self.problem.setText(err.message)
            return None
        resource = self.resource.text().strip()
        if not resource:
            self.problem.setText(tr("The resource pattern is empty (use * for any resource)."))
            return None
        seconds = self.expiry.currentData()
        scope = self.scope.currentData()
        a = self.approval
        self.problem.setText("")
        return self.base.model_copy(
            update={
                "resource_pattern": resource,
                "predicate": condition,
                "scope": scope,
                "run_id": a.run_id if scope == "run" else None,
                "project": a.project,
                "space": a.space if scope == "space" else None,
                "expires_at": None if seconds is None else (now or time.time()) + seconds,
            }
        )

    @Slot()
    def _scope_changed(self) -> None:
        self._changed()

    @Slot()
    def _changed(self) -> None:
        draft = self.draft()
        self.preview = None
        self.apply.setEnabled(False)
        if draft is None:
            self.headline.setText(tr("This rule cannot be made yet."))
            return
        self.headline.setText(
            tr("Approving will make the rule: {draft}.").format(draft=draft_text(draft))
        )
        self.summary.setText(tr("Previewing…"))
        self._timer.start()

    @Slot()
    def refresh_preview(self) -> None:
        draft = self.draft()
        if draft is None or self.approval is None:
            return
        approvals, exclude = self.ctx.journal.approvals, self.approval.id
        self.ctx.runner.latest(
            "preview",
            lambda: approvals.preview_rule(draft, exclude=exclude),
            on_done=self._on_preview,
            on_error=self._on_error,
            owner=self,
        )

    def _on_preview(self, preview: RulePreview) -> None:
        self.preview = preview
        self.summary.setText(fit_lines(preview_text(preview)))
        self.summary.setToolTip(plain_tip(preview_text(preview)))
        for view, hits, word in (
            (self.past, preview.past, "past"),
            (self.pending, preview.pending, "pending"),
        ):
            view.clear()
            for hit in hits[:LISTED]:
                item = QListWidgetItem(
                    fmt.bounded(
                        f"{word} · {hit.agent} · {hit.action_name} · {hit.status.value} · {hit.id}",
                        200,
                    ),
                    view,
                )
                item.setData(Qt.ItemDataRole.UserRole, hit.run_id)
                item.setToolTip(tr("Enter or double-click opens its run"))
        self.apply.setEnabled(bool(preview.pending))
        self.apply.setText(
            tr("Also decide the %n pending request(s) it matches", n=len(preview.pending))
        )
        self.previewed.emit(preview)

    @Slot(QListWidgetItem)
    def _open_item(self, item: QListWidgetItem) -> None:
        run_id = item.data(Qt.ItemDataRole.UserRole)
        if run_id:
            self.open_run.emit(run_id)

    def apply_to(self) -> list[tuple[str, int]]:
        if self.preview is None or not self.apply.isChecked():
            return []
        return [(h.id, h.version) for h in self.preview.pending]

    def approve(self, item: InboxItem, reason: str, host: QWidget) -> str:
        """Approve ``item`` and make the rule shown, as shown: confirm it (restated, with its
        impact), then decide, make it and apply it to the pending requests chosen, in one
        transaction (the decider's). Every page that decides approves through here; the
        answer is what to tell the operator."""
        draft = self.draft()
        if draft is None:
            return tr("The rule cannot be made as it stands: ") + (
                self.problem.text() or tr("wait for its draft.")
            )
        apply_to = self.apply_to()
        if not RuleConfirmDialog.ask(host, draft, self.preview, len(apply_to)):
            return tr("Not approved: you cancelled the rule's confirmation.")
        approvals, rid, version = self.ctx.journal.approvals, request_id(), item.version
        self.ctx.decider.submit(
            item,
            lambda: (
                approvals.decide_with_rule(
                    item.id,
                    draft,
                    expected_version=version,
                    reason=reason or None,
                    apply_to=apply_to,
                    request_id=rid,
                ).approval
            ),
        )
        return tr("Approving and making the rule…")


class RuleConfirmDialog(QDialog):
    """Restates the rule, its past impact and what it will decide now; OK makes it."""

    def __init__(self, parent: QWidget | None, text: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Approve and make this rule?"))
        label = plain_label(text, self)
        label.setAccessibleName(tr("The rule to be made"))
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton(
            "Approve and make the rule", QDialogButtonBox.ButtonRole.AcceptRole
        )
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
        self.cancel = cancel_by_default(buttons)  # Enter makes no rule

    @staticmethod
    def text(draft: RuleDraft, preview: RulePreview | None, applied: int) -> str:
        lines = [f"Approve this request and make the rule:\n{draft_text(draft)}."]
        if preview is not None:
            lines.append(preview_text(preview))
        lines.append(
            tr("It will also decide %n pending request(s) now.", n=applied)
            if applied
            else "It decides no pending request now; new requests it matches are "
            "decided as they arrive."
        )
        return "\n\n".join(lines)

    @classmethod
    def ask(
        cls, parent: QWidget | None, draft: RuleDraft, preview: RulePreview | None, applied: int
    ) -> bool:
        dialog = cls(parent, cls.text(draft, preview, applied))
        return dialog.exec() == QDialog.DialogCode.Accepted
