"""Ambiguous effect detail: everything known about it, what each answer leads to, and the
form to resolve it by hand (reason required, evidence optional, a second confirmation
before a non-idempotent write is marked failed)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from proctor.core.effects.views import EffectContext
from proctor.core.models import Effect, EffectStatus, InboxItem, InboxKind

from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.message_bar import Level
from .approval import action_button
from .detail import DetailContext, DetailWidget
from .effect_view import EffectView
from .resolve_effect import Draft, ResolveForm, resolve_call

EMPTY: Draft = ("", "", "", "")


class EffectDetail(DetailWidget):
    kind = InboxKind.EFFECT

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        self._drafts: dict[str, Draft] = {}
        super().__init__(ctx, parent)
        self.view = EffectView(self)
        self.view.offers_run = False  # the detail's header has "Open run"
        self.view.run_button.hide()
        self.body.addWidget(self.view)

    def footer(self) -> QVBoxLayout:
        self.form = ResolveForm(self)
        self.reason, self.external = self.form.reason, self.form.external
        registry = self.ctx.registry
        buttons = QHBoxLayout()
        buttons.addWidget(action_button(registry, "inbox.effect_committed", self))
        buttons.addWidget(action_button(registry, "inbox.effect_failed", self))
        buttons.addWidget(action_button(registry, "inbox.snooze", self))
        buttons.addStretch(1)
        self.form.buttons.addLayout(buttons)
        form = QVBoxLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addWidget(self.form)
        return form

    # ------------------------------------------------------------ drafts
    def reason_text(self) -> str:
        return self.form.reason_text()

    def external_id(self) -> str:
        return self.form.external_id() or ""

    def leave_item(self) -> None:
        if self.item is not None:
            self._drafts[self.item.id] = self.form.draft()

    def enter_item(self, item: InboxItem) -> None:
        self.form.set_draft(self._drafts.pop(item.id, EMPTY))
        self.form.message.clear()

    def forget_draft(self, item_id: str) -> None:
        self._drafts.pop(item_id, None)
        if self.item is not None and self.item.id == item_id:
            self.form.clear()

    def focus_primary(self) -> None:
        self.form.reason.setFocus()

    # ------------------------------------------------------------ entity
    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary, 160))

    def fetcher(self, item: InboxItem) -> Any:
        effects, key = self.ctx.journal.effects, item.id
        return lambda: effects.context(key)

    def show_entity(self, data: EffectContext) -> None:
        effect = data.effect
        self.entity = effect
        self.title.setText(
            tr("{tool}: outcome unknown").format(tool=effect.tool)
            if effect.status == EffectStatus.AMBIGUOUS
            else f"{effect.tool}: {effect.status.value}"
        )
        self.view.show_context(data)
        self.form.set_effect(effect, writable=not self.ctx.read_only, receipts=data.receipts)

    def tick(self) -> None:
        self.view.tick()

    def is_pending(self) -> bool:
        return isinstance(self.entity, Effect) and self.entity.status == EffectStatus.AMBIGUOUS

    # ------------------------------------------------------------ resolving
    def resolve(self, outcome: EffectStatus) -> bool:
        """Check the form (reason, second confirmation) and submit through the decider."""
        effect = self.entity if isinstance(self.entity, Effect) else None
        if self.item is None or self.ctx.read_only or not self.form.check(effect, outcome):
            return False
        assert effect is not None
        self.message.show_message(
            tr("Marking {outcome}…").format(outcome=outcome.value), Level.INFO
        )
        self.ctx.decider.submit(
            self.item,
            resolve_call(
                self.ctx.journal.effects,
                effect,
                outcome,
                self.form.reason_text(),
                self.form.external_id(),
                self.form.evidence(),
            ),
        )
        return True
