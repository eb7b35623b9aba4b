"""Memory conflict detail (read-only view: the local and the incoming version)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from proctor.core.models import InboxItem, InboxKind, Reconciliation, ReconciliationStatus

from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.labels import plain_label, section
from .detail import DetailContext, DetailWidget


class ConflictDetail(DetailWidget):
    kind = InboxKind.MEMORY

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName("Conflict state")
        self.local = BoundedText("Local version", self)
        self.incoming = BoundedText("Incoming version", self)
        self.local_title = section("Local", self)
        self.incoming_title = section("Incoming", self)
        columns = QHBoxLayout()
        for title, text in ((self.local_title, self.local), (self.incoming_title, self.incoming)):
            column = QVBoxLayout()
            column.addWidget(title)
            column.addWidget(text)
            column.addStretch(1)
            columns.addLayout(column, 1)
        self.body.addWidget(self.state)
        self.body.addLayout(columns)

    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary, 160))

    def fetcher(self, item: InboxItem) -> Any:
        memory, item_id = self.ctx.journal.memory, item.id
        return lambda: memory.reconciliation(item_id)

    def show_entity(self, data: Reconciliation) -> None:
        self.entity = data
        self.title.setText(f"Memory conflict: {fmt.bounded(data.title, 120)}")
        self.local_title.setText(f"Local (version {data.local_version})")
        self.incoming_title.setText(f"Incoming from {fmt.bounded(data.incoming_source, 80)}")
        self.local.set_text(data.local_content)
        self.incoming.set_text(data.incoming_content)
        if data.status == ReconciliationStatus.PENDING:
            self.state.setText(f"Pending for {fmt.age(data.created_at)} · "
                               f"{data.scope.value} {data.scope_key}")
        else:
            self.state.setText(f"{data.status.value.replace('_', ' ').capitalize()} by "
                               f"{data.resolved_by} at {fmt.clock(data.resolved_at)}")
