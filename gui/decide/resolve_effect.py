"""The form to resolve an ambiguous effect by hand: what happens next, spelled out before
the click; a mandatory reason; optional evidence (external id, URL, note); and a second
confirmation before a non-idempotent write is marked failed (it may then happen twice)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget

from proctor.core.models import Effect, EffectStatus, Receipt, SafetyClass

from ..infra.i18n import tr
from ..infra.tasks import request_id
from ..widgets import fmt
from ..widgets.dialogs import ConfirmDialog
from ..widgets.fmt import label
from ..widgets.labels import plain_label, section
from ..widgets.message_bar import Level, MessageBar
from .confirm import a_or_an

NEXT_COMMITTED = "Committed: the agent treats this as done and never retries it."
NEXT_FAILED = "Failed: the next attempt may run it again — if it did happen, it will happen twice."
RETRY_SAFE = frozenset({SafetyClass.SAFE_READ, SafetyClass.IDEMPOTENT_WRITE})
Draft = tuple[str, str, str, str]


def needs_second_confirm(e: Effect) -> bool:
    """Marking a non-idempotent write failed invites a second run: confirm it twice."""
    return e.safety_class not in RETRY_SAFE


def risk_text(e: Effect) -> str:
    if not needs_second_confirm(e):
        return tr(
            "This is {kind}: running it again is harmless, so “failed” is the safe "
            "answer when in doubt."
        ).format(kind=a_or_an(label(e.safety_class.value)))
    text = tr(
        "This is {kind}, not idempotent: if it did happen and you mark it failed, a "
        "retry does it a second time. You will be asked to confirm."
    ).format(kind=a_or_an(label(e.safety_class.value)))
    if e.idempotency_key:
        text += " " + tr(
            "Its idempotency key {key} protects a retry only if the receiving system honours it."
        ).format(key=fmt.bounded(e.idempotency_key, 80))
    return text


def strongest_receipt(receipts: Sequence[Receipt]) -> Receipt | None:
    """What the agent recorded while the effect ran (not a person's resolution): the newest
    receipt with an external id (a provider's request or payment id), else the newest."""
    recorded = [r for r in receipts if r.kind != "resolution"]
    with_id = [r for r in recorded if r.external_id]
    chosen = with_id or recorded
    return max(chosen, key=lambda r: r.created_at) if chosen else None


def evidence_text(e: Effect | None, receipts: Sequence[Receipt]) -> str:
    """One line beside the resolve buttons: the strongest evidence there is (issue 32)."""
    if e is None:
        return ""
    best = strongest_receipt(receipts)
    if best is None:
        return tr("Evidence: none — the agent recorded no receipt before the outcome was lost.")
    said = (
        tr("external id {external_id}").format(external_id=fmt.bounded(best.external_id, 120))
        if best.external_id
        else fmt.bounded(json.dumps(best.evidence, ensure_ascii=False, default=str), 160)
    )
    return tr("Evidence: the agent recorded {said} at {when} ({kind}, {status}).").format(
        said=said,
        when=fmt.clock(best.created_at),
        kind=fmt.bounded(best.kind, 40),
        status=fmt.bounded(best.status, 40),
    )


def confirm_failed(parent: QWidget | None, e: Effect) -> bool:
    """The second confirmation (mockable through ``ConfirmDialog.ask``)."""
    return ConfirmDialog.ask(
        parent,
        tr("Mark failed — it may happen twice"),
        tr(
            "“{tool}” ({safety}) is not idempotent.\n"
            "If it did happen, the agent's next attempt will do it again (attempt "
            "{attempt}).\n\nMark it failed anyway?"
        ).format(
            tool=fmt.bounded(e.tool, 80), safety=label(e.safety_class.value), attempt=e.attempt + 1
        ),
        ok=tr("Mark failed, allow a retry"),
    )


def resolve_call(
    effects: Any,
    e: Effect,
    outcome: EffectStatus,
    reason: str,
    external_id: str | None,
    evidence: dict | None,
) -> Callable[[], Any]:
    """The store call for one resolution, with its own request id (a retry is idempotent)."""
    rid, key, version = request_id(), e.key, e.version
    return lambda: effects.resolve(
        key,
        outcome,
        reason=reason,
        expected_version=version,
        external_id=external_id,
        evidence=evidence,
        request_id=rid,
    )


class ResolveForm(QWidget):
    """Reason and evidence fields with the consequences of each answer. The host adds the
    buttons and calls ``check()`` before it writes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message = MessageBar(self)
        self.next_committed = plain_label(NEXT_COMMITTED, self)
        self.next_failed = plain_label(NEXT_FAILED, self)
        self.risk = plain_label(parent=self, name="Muted")
        self.reason = QPlainTextEdit(self)
        self.reason.setAccessibleName(tr("Resolution reason"))
        self.reason.setPlaceholderText(tr("What really happened, and how you know (required)"))
        self.reason.setTabChangesFocus(True)
        self.reason.setMaximumHeight(64)
        self.external = self._line(
            "External id", "External id, e.g. payment or ticket number (optional)"
        )
        self.url = self._line("Evidence URL", "Link to the evidence (optional, kept as text)")
        self.note = self._line("Evidence note", "Anything else worth keeping (optional)")
        self.evidence_line = plain_label(parent=self)
        self.evidence_line.setAccessibleName(tr("Strongest evidence"))
        self.buttons = QVBoxLayout()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 8)
        layout.addWidget(self.message)
        layout.addWidget(section("What happens next", self))
        layout.addWidget(self.next_committed)
        layout.addWidget(self.next_failed)
        layout.addWidget(self.risk)
        layout.addWidget(self.reason)
        evidence = QHBoxLayout()
        evidence.addWidget(self.external, 2)
        evidence.addWidget(self.url, 3)
        layout.addLayout(evidence)
        layout.addWidget(self.note)
        layout.addWidget(self.evidence_line)  # right above the buttons, never below the fold
        layout.addLayout(self.buttons)

    def _line(self, name: str, placeholder: str) -> QLineEdit:
        line = QLineEdit(self)
        line.setAccessibleName(name)
        line.setPlaceholderText(placeholder)
        line.setMaxLength(2000)
        return line

    def set_effect(
        self, e: Effect | None, *, writable: bool, receipts: Sequence[Receipt] = ()
    ) -> None:
        can = e is not None and e.status == EffectStatus.AMBIGUOUS and writable
        self.risk.setText(risk_text(e) if e is not None else "")
        self.evidence_line.setText(evidence_text(e, receipts))
        self.evidence_line.setVisible(e is not None)
        for w in (self.reason, self.external, self.url, self.note):
            w.setEnabled(can)

    # ------------------------------------------------------------ values
    def reason_text(self) -> str:
        return self.reason.toPlainText().strip()

    def external_id(self) -> str | None:
        return self.external.text().strip() or None

    def evidence(self) -> dict | None:
        found = {
            k: v
            for k, v in (("url", self.url.text().strip()), ("note", self.note.text().strip()))
            if v
        }
        return found or None

    def draft(self) -> Draft:
        return (self.reason.toPlainText(), self.external.text(), self.url.text(), self.note.text())

    def set_draft(self, draft: Draft) -> None:
        reason, external, url, note = draft
        self.reason.setPlainText(reason)
        self.external.setText(external)
        self.url.setText(url)
        self.note.setText(note)

    def clear(self) -> None:
        self.set_draft(("", "", "", ""))
        self.message.clear()

    # ------------------------------------------------------------ checking
    def check(self, e: Effect | None, outcome: EffectStatus) -> bool:
        """True if the operator may resolve ``e`` to ``outcome`` now (reason given; the
        second confirmation answered yes where it is needed)."""
        if e is None or e.status != EffectStatus.AMBIGUOUS:
            self.message.show_message(
                tr("Only an ambiguous effect can be resolved by hand."), Level.WARNING
            )
            return False
        if not self.reason_text():
            self.message.show_message(
                tr(
                    "Write a reason first: what really happened, and how "
                    "you know. It is kept as evidence."
                ),
                Level.WARNING,
            )
            self.reason.setFocus()
            return False
        if (
            outcome == EffectStatus.FAILED
            and needs_second_confirm(e)
            and not confirm_failed(self, e)
        ):
            return False
        self.message.clear()
        return True
