"""Ambiguous effect detail: what is known, and the form to resolve it by hand."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget

from proctor.core.models import Effect, EffectStatus, InboxItem, InboxKind, Receipt

from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.json_tree import JsonTree
from .approval import action_button
from ..widgets.labels import plain_label, section
from .detail import DetailContext, DetailWidget


class EffectDetail(DetailWidget):
    kind = InboxKind.EFFECT

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        self._drafts: dict[str, tuple[str, str]] = {}
        super().__init__(ctx, parent)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName("Effect state")
        self.facts = plain_label(parent=self)
        self.why = BoundedText("Why the outcome is unknown", self)
        self.action = JsonTree("Action", self)
        self.action.setMinimumHeight(150)
        self.receipts = plain_label(parent=self, name="Muted")
        self.body.addWidget(self.state)
        self.body.addWidget(self.facts)
        self.body.addWidget(section("Why the outcome is unknown", self))
        self.body.addWidget(self.why)
        self.body.addWidget(self.action, 1)
        self.body.addWidget(self.receipts)

    def footer(self) -> QVBoxLayout:
        self.reason = QPlainTextEdit(self)
        self.reason.setAccessibleName("Resolution reason")
        self.reason.setPlaceholderText("What really happened, and how you know (required)")
        self.reason.setTabChangesFocus(True)
        self.reason.setMaximumHeight(64)
        self.external = QLineEdit(self)
        self.external.setAccessibleName("External id")
        self.external.setPlaceholderText("External id, e.g. the payment or ticket number "
                                         "(optional)")
        registry = self.ctx.registry
        buttons = QHBoxLayout()
        buttons.addWidget(action_button(registry, "inbox.effect_committed", self))
        buttons.addWidget(action_button(registry, "inbox.effect_failed", self))
        buttons.addWidget(action_button(registry, "inbox.snooze", self))
        buttons.addStretch(1)
        form = QVBoxLayout()
        form.setContentsMargins(8, 4, 8, 8)
        form.addWidget(section("Resolve by hand", self))
        form.addWidget(self.reason)
        form.addWidget(self.external)
        form.addLayout(buttons)
        return form

    def reason_text(self) -> str:
        return self.reason.toPlainText().strip()

    def external_id(self) -> str:
        return self.external.text().strip()

    def leave_item(self) -> None:
        if self.item is not None:
            self._drafts[self.item.id] = (self.reason.toPlainText(), self.external.text())

    def enter_item(self, item: InboxItem) -> None:
        reason, external = self._drafts.pop(item.id, ("", ""))
        self.reason.setPlainText(reason)
        self.external.setText(external)

    def forget_draft(self, item_id: str) -> None:
        self._drafts.pop(item_id, None)
        if self.item is not None and self.item.id == item_id:
            self.reason.clear()
            self.external.clear()

    def focus_primary(self) -> None:
        self.reason.setFocus()

    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary, 160))

    def fetcher(self, item: InboxItem) -> Any:
        effects, key = self.ctx.journal.effects, item.id
        return lambda: (effects.get(key), effects.receipts(key))

    def show_entity(self, data: tuple[Effect, list[Receipt]]) -> None:
        effect, receipts = data
        self.entity = effect
        self.title.setText(f"Effect {effect.tool}: outcome unknown"
                           if effect.status == EffectStatus.AMBIGUOUS
                           else f"Effect {effect.tool}: {effect.status.value}")
        self.facts.setText(f"Key: {effect.key}  ·  attempt {effect.attempt}  ·  safety: "
                           f"{effect.safety_class.value.replace('_', ' ')}  ·  lease owner: "
                           f"{effect.lease_owner or '—'}")
        self.why.set_text("\n".join(x for x in (effect.ambiguous_reason, effect.error) if x)
                          or "No reason was recorded.")
        self.action.set_value(effect.action)
        self.receipts.setText(f"{len(receipts)} receipt(s) on record" if receipts
                              else "No receipts on record")
        if effect.status == EffectStatus.AMBIGUOUS:
            self.state.setText(f"Ambiguous since {fmt.clock(effect.updated_at)} — only a person "
                               "can say whether it happened")
        else:
            self.state.setText(f"{effect.status.value.capitalize()}"
                               + (f" by {effect.resolved_by}: {effect.resolution_reason}"
                                  if effect.resolved_by else ""))

    def is_pending(self) -> bool:
        return isinstance(self.entity, Effect) and self.entity.status == EffectStatus.AMBIGUOUS
