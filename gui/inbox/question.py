"""Question detail (read-only view: prompt, options, request, expiry)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget

from proctor.core.models import InboxItem, InboxKind, Interaction, InteractionStatus

from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label, section
from .detail import DetailContext, DetailWidget

OPEN = (InteractionStatus.REQUESTED, InteractionStatus.PRESENTED)


def option_text(option: Any) -> str:
    if isinstance(option, dict):
        return str(option.get("label") or option.get("value") or fmt.pretty_json(option))
    return str(option)


class QuestionDetail(DetailWidget):
    kind = InboxKind.QUESTION

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName("Question state")
        self.prompt = BoundedText("Question", self)
        self.options = BoundedText("Options", self)
        self.request = JsonTree("Request", self)
        self.request.setMinimumHeight(140)
        self.body.addWidget(self.state)
        self.body.addWidget(section("Question", self))
        self.body.addWidget(self.prompt)
        self.body.addWidget(section("Options", self))
        self.body.addWidget(self.options)
        self.body.addWidget(self.request, 1)

    def show_row(self, item: InboxItem) -> None:
        self.title.setText(f"Question from {item.agent}")

    def fetcher(self, item: InboxItem) -> Any:
        interactions, item_id = self.ctx.journal.interactions, item.id
        return lambda: interactions.get(item_id)

    def show_entity(self, data: Interaction) -> None:
        self.entity = data
        self.title.setText(f"{data.kind.value.replace('_', ' ').capitalize()} from {data.agent}")
        self.prompt.set_text(data.prompt)
        self.options.set_text("\n".join(f"• {option_text(o)}" for o in data.options)
                              or "(free answer)")
        self.request.set_value(data.request)
        self.tick()

    def tick(self) -> None:
        q = self.entity
        if not isinstance(q, Interaction):
            return
        if q.status not in OPEN:
            who = f" by {q.resolved_by}" if q.resolved_by else ""
            self.state.setText(f"{q.status.value.capitalize()}{who} {fmt.clock(q.resolved_at)}")
            return
        expiry = "no expiry" if q.expires_at is None else \
            f"expires in {fmt.countdown(q.expires_at)}"
        self.state.setText(f"Waiting for {fmt.age(q.created_at)} · {expiry} · "
                           f"run: {q.run_title} (attempt {q.attempt})")
