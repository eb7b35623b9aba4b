"""Memory conflict detail: the side-by-side review with word-level highlighting, the
field differences, and keep local / take incoming / merge / dismiss (with a reason)."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QVBoxLayout, QWidget

from proctor.core.models import ConflictStatus, InboxItem, InboxKind

from ..infra.actions import ActionRegistry
from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.message_bar import Level
from .commands import resolve_commands
from .conflict_view import ConflictData, ConflictReview, load_conflict, resolve_call
from .detail import DetailContext, DetailWidget
from .reveal import RevealState

ENTRY_CHECK_S = 2.0


class ConflictDetail(DetailWidget):
    kind = InboxKind.CONFLICT

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        self._drafts: dict[str, tuple[str | None, str]] = {}
        self._checked = 0.0
        self.reveals = RevealState()
        super().__init__(ctx, parent)
        self.reveals.setParent(self)
        self.body.addWidget(self.review)
        self.local, self.incoming = self.review.local, self.review.incoming
        self.review.resolve_requested.connect(self._on_resolve)
        self.review.reveal_requested.connect(self._on_reveal)
        self.review.open_run.connect(self.open_run)

    def footer(self) -> QVBoxLayout:
        # the review's buttons come from the resolve commands, in this detail's own registry
        # (they act on the conflict shown here; no menu, no keys)
        self.commands = ActionRegistry(self)
        for spec in resolve_commands("conflict", lambda: getattr(self, "review", None)):
            self.commands.register(spec)
        self.review = ConflictReview(
            self.reveals, self.commands, "conflict", self, read_only=self.ctx.read_only
        )
        self.review.buttons_changed.connect(self.commands.refresh)
        self.review.run_button.hide()  # the detail's header has "Open run"
        form = QVBoxLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addWidget(self.review.form)
        return form

    # ------------------------------------------------------------ drafts
    def leave_item(self) -> None:
        if self.item is not None:
            self._drafts[self.item.id] = self.review.draft()

    def enter_item(self, item: InboxItem) -> None:
        merged, reason = self._drafts.pop(item.id, (None, ""))
        self.review.set_draft(merged, reason)

    def forget_draft(self, item_id: str) -> None:
        self._drafts.pop(item_id, None)
        if self.item is not None and self.item.id == item_id:
            self.review.clear_draft()

    def focus_primary(self) -> None:
        self.review.reason.setFocus()

    # ------------------------------------------------------------ entity
    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary, 160))

    def fetcher(self, item: InboxItem) -> Any:
        memory, item_id = self.ctx.journal.memory, item.id
        return lambda: load_conflict(memory, item_id)

    def show_entity(self, data: ConflictData) -> None:
        self.entity = data.item
        self.title.setText(
            tr("Memory conflict: {title}").format(title=fmt.bounded(data.item.title, 120))
        )
        self.review.show_conflict(data)

    def tick(self) -> None:
        """Once a second: the waiting time; every few seconds, whether the entry moved on
        (the inbox is told about conflicts, not entries), reloading the review if so."""
        self.review.tick()
        data = self.review.data
        now = time.monotonic()
        if data is None or not self.review.is_pending() or now - self._checked < ENTRY_CHECK_S:
            return
        self._checked = now
        memory, entry_id, seen = self.ctx.journal.memory, data.entry.id, data.entry.version
        # coalesced: one check in flight; a slow store never piles them up
        self.ctx.runner.coalesce(
            "entry-check",
            lambda: memory.get(entry_id).version != seen,
            on_done=self._on_entry_checked,
            on_error=lambda _exc: None,
            owner=self,
        )

    def _on_entry_checked(self, moved: bool) -> None:
        if moved:
            self.reload()

    def is_pending(self) -> bool:
        return self.review.is_pending()

    # ------------------------------------------------------------ writes
    @Slot(object, object, str)
    def _on_resolve(self, choice: ConflictStatus, merged: str | None, reason: str) -> None:
        data = self.review.data
        if self.item is None or data is None or data.item.id != self.item.id:
            return
        self.message.show_message(tr("Saving your decision…"), Level.INFO)
        self.ctx.decider.submit(
            self.item, resolve_call(self.ctx.journal.memory, data, choice, merged, reason)
        )

    @Slot(str)
    def _on_reveal(self, entry_id: str) -> None:
        memory = self.ctx.journal.memory
        self.ctx.runner.run(
            lambda: memory.reveal(entry_id),
            on_done=self._on_revealed,
            on_error=self._on_load_error,
            owner=self,
            write=True,
        )

    def _on_revealed(self, entry: Any) -> None:
        self.reveals.add(entry.id)
