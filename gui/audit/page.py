"""The Audit page: every operator action and automatic decision (who, what, when,
where from, before/after, reason, request), keyset-paged by sequence, newest first.

"Source" is where the decision was made (desk, cli, rule, expiry, mcp…), read from the
decision row written with the entry; "—" when no decision row records one.

Filters (actor, source, entity kind, run, time range) and the search box (actions, ids, reasons,
actors and the before/after JSON) run in SQL. The selected entry is shown whole, before
and after side by side, with "Copy JSON". "Verify chain" recomputes the audit log's own
digest chain and names the first broken link. "Export CSV…" writes what the filters show.
"""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.audit import timeline
from proctor.core.models import AuditEntry, ChangeKind, Page, VerifyReport

from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.event_summary import plain_tip
from ..widgets.export import Exporter
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label
from ..widgets.list_page import ListPage, choice_combo, fill_combo
from ..widgets.message_bar import Level
from ..widgets.paged_model import ITEM_ROLE, Column, PagedModel
from ..widgets.run_status import status_icon
from . import commands

VERIFY = "verify"  # the runner key of the chain check (one at a time)
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
TIME_CHOICES: list[tuple[str, Any]] = [
    ("Any time", None),
    ("Last hour", 3600),
    ("Last 24 hours", 86_400),
    ("Last 7 days", 7 * 86_400),
    ("Last 30 days", 30 * 86_400),
]


def change_text(a: AuditEntry) -> str:
    if a.before is None and a.after is None:
        return ""
    return (
        f"{fmt.bounded(fmt.pretty_json(a.before), 80)} → "
        f"{fmt.bounded(fmt.pretty_json(a.after), 80)}"
    )


def entry_json(a: AuditEntry) -> str:
    return json.dumps(a.model_dump(mode="json"), indent=2, ensure_ascii=False, sort_keys=True)


COLUMNS = [
    Column("#", lambda a: str(a.sequence), align=RIGHT, width=64),
    Column(
        QT_TR_NOOP("When"),
        lambda a: fmt.when(a.created_at),
        tip=lambda a: fmt.other(a.created_at),
        align=RIGHT,
        width=130,
        live=True,
    ),
    Column(QT_TR_NOOP("Actor"), lambda a: a.actor, width=160),
    Column(
        QT_TR_NOOP("Source"),
        lambda a: a.source or "—",
        tip=lambda a: plain_tip(
            f"decided from {a.source}"
            if a.source
            else "no decision row records where this was done"
        ),
        width=80,
    ),
    Column(QT_TR_NOOP("Action"), lambda a: a.action, width=190),
    Column(QT_TR_NOOP("Entity"), lambda a: f"{a.entity_kind} {a.entity_id}", width=220),
    Column(
        QT_TR_NOOP("Reason"),
        lambda a: a.reason or "",
        tip=lambda a: plain_tip(a.reason or ""),
        width=200,
    ),
    Column(QT_TR_NOOP("Change"), change_text, tip=lambda a: plain_tip(change_text(a)), width=300),
]


class AuditModel(PagedModel):
    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, COLUMNS, lambda a: a.id, lambda a: a.sequence, parent)
        self.filters: dict[str, Any] = {}

    def show(
        self,
        journal: Journal,
        *,
        action_prefix: str | None = None,
        entity_kind: str | None = None,
        **filters: Any,
    ) -> None:
        """Newest entries first; ``filters`` are those of ``audit.list``."""
        self.filters = {"action_prefix": action_prefix, "entity_kind": entity_kind, **filters}
        chosen = dict(self.filters)

        def fetch(cursor: str | None, limit: int) -> Page:
            return journal.audit.list(before=int(cursor) if cursor else None, limit=limit, **chosen)

        self.set_query(fetch)


class AuditDetail(QWidget):
    """The selected entry: facts, before and after, copy."""

    open_run = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry: AuditEntry | None = None
        self.facts = plain_label(tr("Select an entry to see it whole."), self)
        self.facts.setAccessibleName(tr("Audit entry"))
        self.before = JsonTree("Before", self)
        self.after = JsonTree("After", self)
        self.copy_button = QPushButton(tr("Copy entry as JSON"), self)
        self.copy_button.setAccessibleName(tr("Copy the audit entry as JSON"))
        self.copy_button.clicked.connect(self.copy)
        self.run_button = QPushButton(tr("Open run"), self)
        self.run_button.setAccessibleName(tr("Open the run of this entry"))
        self.run_button.clicked.connect(self._open_run)
        top = QHBoxLayout()
        top.addWidget(self.facts, 1)
        top.addWidget(self.run_button)
        top.addWidget(self.copy_button)
        pair = QHBoxLayout()
        pair.addWidget(self.before)
        pair.addWidget(self.after)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(top)
        layout.addLayout(pair, 1)
        self.show_entry(None)

    def show_entry(self, a: AuditEntry | None) -> None:
        self.entry = a
        self.copy_button.setEnabled(a is not None)
        self.run_button.setVisible(a is not None and bool(a.run_id))
        if a is None:
            self.facts.setText(tr("Select an entry to see it whole."))
            self.before.clear()
            self.after.clear()
            return
        lines = [
            f"#{a.sequence} · {fmt.clock(a.created_at)} · {a.actor}"
            + (f" (from {a.source})" if a.source else "")
            + f" · {a.action}",
            f"{a.entity_kind} {a.entity_id}" + (f" · run {a.run_id}" if a.run_id else ""),
        ]
        if a.reason:
            lines.append(f"reason: {fmt.bounded(a.reason, 600)}")
        if a.request_id:
            lines.append(f"request {a.request_id}")
        lines.append(f"digest {a.digest[:16]}… · previous {a.prev_digest[:16]}…")
        self.facts.setText("\n".join(lines))
        self.before.set_value(a.before)
        self.after.set_value(a.after)

    @Slot()
    def copy(self) -> None:
        if self.entry is not None:
            QGuiApplication.clipboard().setText(entry_json(self.entry))

    @Slot()
    def _open_run(self) -> None:
        if self.entry is not None and self.entry.run_id:
            self.open_run.emit(self.entry.run_id)


class AuditPage(ListPage):
    """Signals:
    open_run(str): the operator asked to see the run of an entry.
    verified(object): the audit chain was verified (a VerifyReport).
    """

    open_run = Signal(str)
    verified = Signal(object)
    change_kinds = frozenset({ChangeKind.AUDIT})
    title = "Audit"
    stretch_column = 7  # Change

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, AuditModel(ctx.runner), parent)
        self.search.setPlaceholderText(tr("Search actions, ids, reasons, changes"))
        self.search.setAccessibleName(tr("Search the audit log"))
        self.actor = choice_combo("Actor", [("All actors", None)], self)
        self.source = choice_combo("Source", [("All sources", None)], self)
        self.entity = choice_combo("Entity kind", [("All entities", None)], self)
        self.when = choice_combo("Time range", TIME_CHOICES, self)
        for combo in (self.actor, self.source, self.entity):
            combo.setMaximumWidth(260)
        self.run_filter = QLineEdit(self)
        self.run_filter.setClearButtonEnabled(True)
        self.run_filter.setPlaceholderText(tr("Run id"))
        self.run_filter.setAccessibleName(tr("Only entries of this run"))
        self.run_filter.setMaximumWidth(230)
        commands.register(self, ctx.registry)  # the buttons are built from the commands
        self.verify_button = ctx.registry.button("audit.verify", self)
        self.export_button = ctx.registry.button("audit.export", self)
        self.chain = plain_label(parent=self, name="Muted")
        self.chain.setAccessibleName(tr("Audit chain verification"))
        self.detail = AuditDetail(self)
        self.exporter = Exporter(ctx, self, self.message)
        self._build()

    def _build(self) -> None:
        row = QHBoxLayout()
        for widget in (self.actor, self.source, self.entity, self.when, self.run_filter):
            row.addWidget(widget)
        row.addStretch(1)
        row.addWidget(self.verify_button)
        row.addWidget(self.export_button)
        self.body.insertLayout(1, row)
        self.body.insertWidget(2, self.chain)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.add_main(split)
        for combo in (self.actor, self.source, self.entity, self.when):
            combo.currentIndexChanged.connect(self.apply_query)
        self.run_filter.editingFinished.connect(self.apply_query)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.detail.open_run.connect(self.open_run)

    # ------------------------------------------------------------ query
    def query_filters(self, now: float | None = None) -> dict[str, Any]:
        window = self.when.currentData()
        return {
            "actor": self.actor.currentData(),
            "source": self.source.currentData(),
            "entity_kind": self.entity.currentData(),
            "run_id": self.run_filter.text().strip() or None,
            "text": self.text(),
            "since": (now or time.time()) - window if window else None,
        }

    def apply_query(self) -> None:
        assert isinstance(self.model, AuditModel)
        filters = self.query_filters()
        self.model.show(
            self.journal, action_prefix=None, entity_kind=filters.pop("entity_kind"), **filters
        )

    def show_run_entries(self, run_id: str) -> None:
        self.run_filter.setText(run_id)
        self.apply_query()

    def start(self) -> None:
        super().start()
        self.load_facets()

    def refreshed(self) -> None:
        self.load_facets()

    def load_facets(self) -> None:
        journal = self.journal
        self.ctx.runner.coalesce(
            "facets",
            lambda: timeline.audit_facets(journal),
            on_done=self._on_facets,
            on_error=self._on_failed,
            owner=self,
        )

    def _on_facets(self, facets: dict[str, list[str]]) -> None:
        fill_combo(self.actor, "All actors", facets["actor"])
        fill_combo(self.source, "All sources", facets["source"])
        fill_combo(self.entity, "All entities", facets["entity_kind"])

    # ------------------------------------------------------------ selection
    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.detail.show_entry(current.data(ITEM_ROLE) if current.isValid() else None)

    # ------------------------------------------------------------ verify, export
    @Slot()
    def verify_chain(self) -> None:
        if self.verifying():
            return
        self.chain.setText(tr("Verifying the audit chain…"))
        journal = self.journal
        self.ctx.runner.latest(
            VERIFY,
            lambda: timeline.verify_audit(journal),
            on_done=self._on_verified,
            on_error=self._on_verify_error,
            owner=self,
        )
        self.ctx.registry.refresh()  # Verify is off while the check runs

    def verifying(self) -> bool:
        return self.ctx.runner.keyed(VERIFY, self)

    def _on_verified(self, report: VerifyReport) -> None:
        self.ctx.registry.refresh()
        self.chain.setObjectName("" if report.ok else "ChainBroken")
        if report.ok:
            self.chain.setText(
                tr(
                    "✓ The audit chain verifies: all {checked_audit:,} entries "
                    "match their digests and link to the one before."
                ).format(checked_audit=report.checked_audit)
            )
        else:
            first = report.problems[0]
            self.chain.setText(
                tr(
                    "✕ {what} at {where}: {detail}. {checked_audit:,} entries before it verify."
                ).format(
                    what=first.what,
                    where=first.where,
                    detail=first.detail,
                    checked_audit=report.checked_audit,
                )
            )
            self.message.show_message(
                tr("The audit chain is broken: {what} at {where}.").format(
                    what=first.what, where=first.where
                ),
                Level.ERROR,
            )
        self.verify_button.setIcon(status_icon("completed" if report.ok else "failed"))
        self.verified.emit(report)

    def _on_verify_error(self, exc: BaseException) -> None:
        self.ctx.registry.refresh()
        self.chain.setText(tr("Could not verify the audit chain."))
        self._on_failed(exc)

    @Slot()
    def export_csv(self) -> None:
        filters = self.query_filters()
        self.exporter.audit_csv({k: v for k, v in filters.items() if v is not None})
