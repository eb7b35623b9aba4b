"""Confirm by risk: approving a risky action takes a second, deliberate step.

Which approvals ask is the core's rule (``proctor.core.approvals.confirm.risks``, which
``proctor approve`` follows too) over a preference (``DeskSettings.confirm``, tokens of
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

import threading
import time
from collections import OrderedDict
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

from proctor.core.approvals.confirm import SCOPE_WORDS
from proctor.core.approvals.confirm import risks as approval_risks
from proctor.core.lens import Lens
from proctor.core.models import Approval, ApprovalScope

from ..infra.i18n import tr
from ..infra.settings import DEFAULT_CONFIRM
from ..widgets import fmt
from ..widgets.action_text import BOX_CHARS
from ..widgets.bounded_text import LINE_CHARS, preview
from ..widgets.labels import plain_label, section


@dataclass(frozen=True)
class Restatement:
    """What the confirmation says: the action, why it asks, and what will be recorded."""

    headline: str  # "Approve db.migrate on shop-prod: sessions"
    risks: tuple[str, ...]  # why it asks, one line each
    action: str  # the action, pretty JSON: a bounded, escaped head (action_preview)
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
    approval: Approval,
    scope: ApprovalScope,
    confirm: frozenset[str],
    now: float,
    lens: Lens | None = None,
) -> list[str]:
    """Why approving ``approval`` with ``scope`` needs a second step (empty: it does not): the
    core's rule, the one ``proctor approve`` follows too, with the desk's box size and what
    the risk lens read (an action that reads stronger than declared asks as that class)."""
    detected = lens.detected() if lens is not None else None
    return approval_risks(approval, scope, now, confirm, shown_chars=BOX_CHARS, detected=detected)


def restate(approval: Approval, scope: ApprovalScope, reason: str, found: list[str]) -> Restatement:
    scope_text = (
        "Once"
        if scope not in SCOPE_WORDS
        else f"Always, for {SCOPE_WORDS[scope]} — creates a standing rule"
    )
    return Restatement(
        headline=f"Approve {action_label(approval)}",
        risks=tuple(found),
        action=restated_action(approval),
        scope=scope_text,
        reason=reason,
    )


def action_preview(action: Any) -> str:
    """The action as the dialog shows it: its first BOX_CHARS characters of pretty JSON,
    escaped, in display lines of at most LINE_CHARS (a 3 MB line was laid out whole)."""
    head, left = preview(fmt.pretty_json(action), BOX_CHARS, LINE_CHARS)
    return head + (f"\n… {left:,} more characters — Show all in the action box" if left else "")


KEPT = 8  # restated actions kept (those of the approvals shown last)
_kept: OrderedDict[tuple[str, str], str] = OrderedDict()
_kept_lock = threading.Lock()


def restated_action(approval: Approval) -> str:
    """``action_preview`` of the approval's action, kept by approval and action digest: the
    approval's page makes a large one on the presentation pool when it shows the approval,
    so its confirmation finds it ready (escaping a 200,000-character head and dumping the
    whole action took the click's event for 30-70 ms)."""
    key = (approval.id, approval.action_digest)
    with _kept_lock:
        text = _kept.get(key)
    if text is None:
        text = action_preview(approval.action)
        with _kept_lock:
            _kept[key] = text
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return text


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
        self.action.setPlainText(what.action)  # a bounded layout (action_preview)
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
    parent: QWidget | None,
    settings: Any,
    approval: Approval,
    scope: ApprovalScope,
    reason: str,
    lens: Lens | None = None,
) -> bool:
    """True when approving may go ahead: nothing risky, or the operator confirmed it."""
    chosen = settings.confirm if settings is not None else DEFAULT_CONFIRM
    found = risks(approval, scope, chosen, time.time(), lens)
    return not found or ConfirmApproval.ask(parent, restate(approval, scope, reason, found))
