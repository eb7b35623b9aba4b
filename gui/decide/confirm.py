"""Confirm by risk: approving a risky action takes a second, deliberate step.

Which approvals ask is a preference (``DeskSettings.confirm``, tokens of
``settings.CONFIRM_CHOICES``): by default destructive, financial and external-side-effect
actions, anything past or within ``NEAR_EXPIRY_S`` of its expiry, and any decision that
creates a standing rule (scope "always in this run / space"). An action of a safety class
the desk does not know always asks, and so does an action longer than the desk's boxes show
at once (``action_text.BOX_CHARS``). Denying never asks (it lets nothing happen).

The dialog restates the action in full (tool, resource, every argument, monospaced and
wrapped), says why it asks, and its default button is Cancel: Enter, or a second press
of the key that opened it, approves nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Approval, ApprovalScope

from ..infra.i18n import tr
from ..infra.settings import CONFIRM_CHOICES, DEFAULT_CONFIRM, NEAR_EXPIRY, STANDING_RULE
from ..widgets import fmt
from ..widgets.action_text import BOX_CHARS
from ..widgets.labels import plain_label, section

NEAR_EXPIRY_S = 120.0  # approving this close to the expiry (or after it) asks first
KNOWN_CLASSES = frozenset(token for token, _text in CONFIRM_CHOICES) - {NEAR_EXPIRY, STANDING_RULE}
SCOPE_WORDS = {ApprovalScope.RUN: "the rest of this run", ApprovalScope.SPACE: "this space"}


@dataclass(frozen=True)
class Restatement:
    """What the confirmation says: the action, why it asks, and what will be recorded."""

    headline: str  # "Approve db.migrate on shop-prod: sessions"
    risks: tuple[str, ...]  # why it asks, one line each
    action: str  # the whole action, pretty JSON (agent text: shown plain, escaped)
    scope: str  # "Once" / "Always in this run — creates a standing rule"
    reason: str  # the operator's reason ("" for none)


def a_or_an(words: str) -> str:
    """ "an external side effect", "a destructive": the article English wants."""
    return f"an {words}" if words[:1].lower() in "aeiou" else f"a {words}"


def action_label(approval: Approval) -> str:
    """Tool and resource, one line (agent text, bounded and escaped)."""
    resource = fmt.resource_text(approval.action)
    text = f"{approval.action_name} {resource}".strip() if resource else approval.action_name
    return fmt.bounded(text, 120)


def risks(
    approval: Approval, scope: ApprovalScope, confirm: frozenset[str], now: float
) -> list[str]:
    """Why approving ``approval`` with ``scope`` needs a second step (empty: it does not)."""
    found = []
    safety = str(getattr(approval.safety_class, "value", approval.safety_class) or "")
    if safety not in KNOWN_CLASSES:
        found.append(f"Its safety class “{fmt.bounded(safety, 40)}” is not one the desk knows.")
    elif safety in confirm:
        found.append(f"It is {a_or_an(safety.replace('_', ' '))} action.")
    if NEAR_EXPIRY in confirm and approval.expires_at is not None:
        left = approval.expires_at - now
        if left <= 0:
            found.append(f"It is past its expiry (expired {fmt.span(-left)} ago).")
        elif left <= NEAR_EXPIRY_S:
            found.append(f"It expires in {fmt.span(left)}.")
    if STANDING_RULE in confirm and scope in SCOPE_WORDS:
        found.append(
            f"It creates a standing rule: {approval.action_name} on this resource "
            f"is allowed without asking for {SCOPE_WORDS[scope]}."
        )
    size = len(fmt.pretty_json(approval.action))
    if size > BOX_CHARS:  # always asks: the box shows only the start of such an action
        found.append(
            f"Its action is {size:,} characters long; the desk's boxes show the "
            f"first {BOX_CHARS:,}. Read the rest with Show all or Copy first."
        )
    return found


def restate(approval: Approval, scope: ApprovalScope, reason: str, found: list[str]) -> Restatement:
    scope_text = (
        "Once"
        if scope not in SCOPE_WORDS
        else f"Always, for {SCOPE_WORDS[scope]} — creates a standing rule"
    )
    return Restatement(
        headline=f"Approve {action_label(approval)}",
        risks=tuple(found),
        action=fmt.visible(fmt.pretty_json(approval.action)),
        scope=scope_text,
        reason=reason,
    )


class ConfirmApproval(QDialog):
    """The second step before a risky approval; ``ask()`` is the one entry (mockable)."""

    def __init__(self, parent: QWidget | None, what: Restatement) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Confirm the approval"))
        self.setAccessibleName(tr("Confirm the approval"))
        self.headline = plain_label(what.headline, self, name="DetailTitle")
        self.why = plain_label("\n".join(f"• {r}" for r in what.risks), self)
        self.why.setAccessibleName(tr("Why the desk asks"))
        self.action = QPlainTextEdit(self)
        self.action.setReadOnly(True)
        self.action.setAccessibleName(tr("The whole action"))
        self.action.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.action.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.action.setPlainText(what.action[:BOX_CHARS])  # a bounded layout (the risk says so)
        self.action.setMinimumSize(520, 160)
        reason = fmt.visible(what.reason) if what.reason else "(none)"
        self.recorded = plain_label(
            tr("Scope: {scope}\nYour reason: {reason}").format(scope=what.scope, reason=reason),
            self,
        )
        self.recorded.setAccessibleName(tr("What will be recorded"))
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton("Approve", QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setAccessibleName(what.headline)
        self.ok.setAutoDefault(False)
        self.cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel.setDefault(True)  # Enter cancels: approving takes a deliberate choice
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.why)
        layout.addWidget(section("The whole action", self))
        layout.addWidget(self.action, 1)
        layout.addWidget(self.recorded)
        layout.addWidget(buttons)
        self.cancel.setFocus(Qt.FocusReason.OtherFocusReason)

    @classmethod
    def ask(cls, parent: QWidget | None, what: Restatement) -> bool:
        return cls(parent, what).exec() == QDialog.DialogCode.Accepted


def confirmed(
    parent: QWidget | None, settings: Any, approval: Approval, scope: ApprovalScope, reason: str
) -> bool:
    """True when approving may go ahead: nothing risky, or the operator confirmed it."""
    chosen = settings.confirm if settings is not None else DEFAULT_CONFIRM
    found = risks(approval, scope, chosen, time.time())
    return not found or ConfirmApproval.ask(parent, restate(approval, scope, reason, found))
