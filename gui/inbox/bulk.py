"""Bulk approve / deny: the confirmation lists every approval, counts them by safety class,
and states the scope and reason that will be applied to each (the ones visible in the
decision form).

Approving shows each action whole, as the detail does (what the desk shows is what is
decided): approvals whose actions do not fit in one box together (``BOX_CHARS``) are held
back and named, to be approved one at a time. Denying lets nothing happen, so its list
names each by tool and resource only."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from proctor.core.approvals.service import safety_counts
from proctor.core.models import Approval, ApprovalScope

from ..infra.i18n import tr
from ..widgets import bounded_text
from ..widgets.action_text import BOX_CHARS
from ..widgets.dialogs import cancel_by_default
from ..widgets.fmt import pretty_json, resource_text, visible
from ..widgets.labels import plain_label, section

RESOURCE_MAX = 2_000  # characters of one resource in the list (the detail shows it whole)
SCOPE_TEXT = {
    ApprovalScope.ONCE: "once each",
    ApprovalScope.RUN: "always in this run — each approval also creates a rule that approves "
    "the same action in its run without asking",
    ApprovalScope.SPACE: "always in this space — each approval also creates a rule that "
    "approves the same action in its space without asking",
}


def item_line(a: Approval) -> str:
    resource = resource_text(a.action)
    if len(resource) > RESOURCE_MAX:
        resource = resource[:RESOURCE_MAX] + f" [+{len(resource) - RESOURCE_MAX:,} characters]"
    safety = a.safety_class.value.replace("_", " ")
    return visible(f"{a.action_name}  {resource}  ({safety}; {a.agent}, {a.id})")


def item_text(a: Approval, budget: int | None = None) -> str | None:
    """One approval with its whole action, as approving it will decide it, in display lines
    of at most bounded_text.LINE_CHARS (one unbroken line is laid out whole); None when its action alone
    is longer than ``budget`` (it is not escaped and broken up only to be held back)."""
    safety = a.safety_class.value.replace("_", " ")
    action = pretty_json(a.action)
    if budget is not None and len(action) > budget:
        return None
    body = "\n".join("    " + line for line in action.split("\n"))
    head = visible(f"{a.action_name}  ({safety}; {a.agent}, {a.id})")
    return bounded_text.chunk_lines(head + "\n" + visible(body), bounded_text.LINE_CHARS)


def fit(
    approvals: list[Approval], budget: int = BOX_CHARS
) -> tuple[list[str], list[Approval], list[Approval]]:
    """The texts shown, the approvals they show, and those held back because their actions do
    not fit in the box beside the others (in order; a held one never hides a later small one)."""
    texts: list[str] = []
    shown: list[Approval] = []
    held: list[Approval] = []
    for a in approvals:
        text = item_text(a, budget)
        if text is None or len(text) > budget:
            held.append(a)
            continue
        budget -= len(text) + 2
        texts.append(text)
        shown.append(a)
    return texts, shown, held


def held_text(held: list[Approval]) -> str:
    n = len(held)
    names = ", ".join(visible(f"{a.action_name} ({a.id})") for a in held[:5])
    more = f" and {n - 5:,} more" if n > 5 else ""
    return (
        f"{n} {'approval is' if n == 1 else 'approvals are'} not approved here: "
        f"{'its action is' if n == 1 else 'their actions are'} too long to show beside "
        f"the others ({names}{more}). Open each to approve it."
    )


def counts_text(approvals: list[Approval]) -> str:
    return ", ".join(f"{n} {cls.replace('_', ' ')}" for cls, n in safety_counts(approvals).items())


def summary(
    approvals: list[Approval], approve: bool, scope: ApprovalScope, reason: str, skipped: int
) -> str:
    n = len(approvals)
    noun = "approval" if n == 1 else "approvals"
    lines = [f"{'Approve' if approve else 'Deny'} {n} {noun}: {counts_text(approvals)}."]
    if approve:
        lines.append(f"Scope: {SCOPE_TEXT[scope]}.")
        lines.append(f"Reason: {visible(reason)}" if reason else "Reason: none given.")
    else:
        lines.append("Each agent is told your reason.")
    if skipped:
        lines.append(
            tr("%n other selected item(s) left as they are (not pending approvals).", n=skipped)
        )
    return "\n".join(lines)


class BulkDecisionDialog(QDialog):
    """The whole list, then Approve N / Deny N (deny needs a reason, pre-filled with the one
    typed in the form)."""

    def __init__(
        self,
        parent: QWidget | None,
        approvals: list[Approval],
        *,
        approve: bool,
        scope: ApprovalScope,
        reason: str,
        skipped: int = 0,
    ) -> None:
        super().__init__(parent)
        n = len(approvals)
        verb = "Approve" if approve else "Deny"
        self.approve = approve
        if approve:
            texts, self.decided, held = fit(approvals)
        else:
            texts, self.decided, held = [item_line(a) for a in approvals], approvals, []
        n = len(self.decided)
        self.setWindowTitle(f"{verb} {n} {'approval' if n == 1 else 'approvals'}")
        lines = [summary(self.decided, approve, scope, reason, skipped)] if n else []
        self.summary = plain_label("\n".join(lines + ([held_text(held)] if held else [])), self)
        self.summary.setAccessibleName(tr("What will be decided"))
        self.listing = QPlainTextEdit(self)
        self.listing.setReadOnly(True)
        self.listing.setAccessibleName(tr("Every approval to be decided"))
        self.listing.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.listing.setPlainText(("\n\n" if approve else "\n").join(texts))
        self.reason = QPlainTextEdit(self)
        self.reason.setAccessibleName(tr("Reason"))
        self.reason.setPlaceholderText(tr("Reason (required)"))
        self.reason.setTabChangesFocus(True)
        self.reason.setPlainText(reason)
        self.reason.setMaximumHeight(70)
        self.reason.setVisible(not approve)
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton(f"{verb} {n}", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.reason.textChanged.connect(self._update)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(section("Each item", self))
        layout.addWidget(self.listing, 1)
        if not approve:
            layout.addWidget(section("Why deny them?", self))
        layout.addWidget(self.reason)
        layout.addWidget(buttons)
        self.cancel = cancel_by_default(buttons, focus=approve)  # Enter decides nothing
        if not approve:
            self.reason.setFocus(Qt.FocusReason.OtherFocusReason)
        self.resize(720, 420)
        self._update()

    @Slot()
    def _update(self) -> None:
        self.ok.setEnabled(
            bool(self.decided) and (self.approve or bool(self.reason.toPlainText().strip()))
        )

    def listed(self) -> list[str]:
        """One entry per approval listed (its lines joined)."""
        return self.listing.toPlainText().split("\n\n" if self.approve else "\n")

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        approvals: list[Approval],
        *,
        approve: bool,
        scope: ApprovalScope,
        reason: str,
        skipped: int = 0,
    ) -> tuple[str, list[Approval]] | None:
        """The reason to apply (may be empty when approving) and the approvals the dialog
        showed whole, or None if cancelled."""
        dialog = cls(
            parent, approvals, approve=approve, scope=scope, reason=reason, skipped=skipped
        )
        if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.decided:
            return None
        return (reason if approve else dialog.reason.toPlainText().strip()), dialog.decided
