"""Several pending conflicts resolved the same way with one confirmed action
("Take incoming for these 12")."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from proctor.core.memory.service import Memory
from proctor.core.models import Conflict, ConflictStatus

from ..decide.reveal import request_id
from ..infra.actions import ActionRegistry
from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.dialogs import ReasonDialog
from ..widgets.labels import plain_label

SHOWN = 12  # titles listed in the panel; a bulk decision acts on these only
# Declared at import (before a translator loads): marked here, translated where shown.
VERBS = {
    ConflictStatus.ACCEPTED_LOCAL: (
        QT_TR_NOOP("Keep local for"),
        QT_TR_NOOP("each entry stays as it is"),
    ),
    ConflictStatus.ACCEPTED_INCOMING: (
        QT_TR_NOOP("Take incoming for"),
        QT_TR_NOOP(
            "each entry gets the incoming text as its next version; "
            "an entry that changed after its conflict was recorded, or whose "
            "content is hidden as sensitive, is refused (review that one on its "
            "own)"
        ),
    ),
    ConflictStatus.DISMISSED: (
        QT_TR_NOOP("Dismiss"),
        QT_TR_NOOP("each incoming version is dropped"),
    ),
}


def bulk_resolve(
    memory: Memory, items: list[Conflict], choice: ConflictStatus, reason: str
) -> list[tuple[Conflict, str | None]]:
    """Runs on the task runner: the core's bulk resolution (one transaction per conflict,
    at the version the operator saw); each conflict with its refusal, if any."""
    results = memory.bulk_resolve(
        [(item.id, item.version) for item in items], choice, reason=reason, request_id=request_id()
    )
    return [
        (item, None if r.ok else (r.error or "refused"))
        for item, r in zip(items, results, strict=True)
    ]


def confirm_text(choice: ConflictStatus, items: list[Conflict]) -> tuple[str, str]:
    verb, effect = (tr(text) for text in VERBS[choice])
    n = len(items)
    title = tr("{verb} {n} conflicts").format(verb=verb, n=n)
    return title, tr("{verb} these {n} conflicts? {effect}.\nWhy? (required)").format(
        verb=verb, n=n, effect=effect.capitalize()
    )


class BulkPanel(QWidget):
    """Signals:
    resolve_requested(object, str): the choice and the reason, confirmed by the operator
        for every conflict in ``items``.
    buttons_changed(): the buttons were re-enabled for new items (the registry follows).
    """

    resolve_requested = Signal(object, str)
    buttons_changed = Signal()

    def __init__(
        self,
        registry: ActionRegistry,
        prefix: str,
        parent: QWidget | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """Its buttons are built from the resolve commands under ``prefix`` in ``registry``
        (gui/memory/commands.py)."""
        super().__init__(parent)
        self.items: list[Conflict] = []
        self.read_only = read_only
        self.title = plain_label(parent=self, name="DetailTitle")
        self.listing = plain_label(parent=self, name="Muted")
        self.buttons: dict[ConflictStatus, QPushButton] = {}
        self._texts: dict[ConflictStatus, str] = {}
        row = QHBoxLayout()
        for choice, mnemonic, command in (
            (ConflictStatus.ACCEPTED_LOCAL, "&Keep local for", "keep"),
            (ConflictStatus.ACCEPTED_INCOMING, "&Take incoming for", "take"),
            (ConflictStatus.DISMISSED, "&Dismiss", "dismiss"),
        ):
            button = registry.button(f"{prefix}.{command}", self)
            self.buttons[choice] = button
            self._texts[choice] = mnemonic
            row.addWidget(button)
        row.addStretch(1)
        note = plain_label(
            tr(
                "Merging needs one conflict at a time. Each conflict is its own "
                "transaction: one refused does not stop the others."
            ),
            self,
            name="Muted",
        )
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.listing)
        layout.addLayout(row)
        layout.addWidget(note)
        layout.addStretch(1)

    def show_items(self, items: list[Conflict]) -> None:
        """List the selected conflicts; a decision here applies to the listed ones only
        (the first ``SHOWN``): the rest were never shown, so they stay pending."""
        self.items = list(items)[:SHOWN]
        n = len(self.items)
        if len(items) > SHOWN:
            self.title.setText(
                tr("{n} shown of {m} selected; the rest stay pending").format(n=n, m=len(items))
            )
        else:
            self.title.setText(tr("{n} conflicts selected").format(n=n))
        lines = [
            f"• {fmt.bounded(c.title, 80)} — from {fmt.bounded(c.incoming_source, 50)}"
            for c in self.items
        ]
        self.listing.setText("\n".join(lines))
        for choice, button in self.buttons.items():
            button.setText(f"{self._texts[choice]} {n}")
            button.setAccessibleName(
                tr("{verb} {n} conflicts").format(verb=tr(VERBS[choice][0]), n=n)
            )
        self.buttons_changed.emit()  # the commands, and the buttons built from them

    def can_ask(self) -> bool:
        return not self.read_only and bool(self.items)

    def ask(self, choice: ConflictStatus) -> bool:
        """Confirm (stating the count) and ask the reason; emit if the operator agrees."""
        if self.read_only or not self.items:
            return False
        title, prompt = confirm_text(choice, self.items)
        reason = ReasonDialog.ask(self, title, prompt, ok=title, required=True)
        if not reason:
            return False
        self.resolve_requested.emit(choice, reason)
        return True
