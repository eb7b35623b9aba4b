"""Decide a run's waiting items from the run itself.

The list holds the run's open approvals, questions, memory conflicts and ambiguous
effects; the detail is the inbox's own detail widget for the kind (DETAIL_WIDGETS),
driven by a Decider. The inbox widgets' buttons are actions from a registry; this pane
gives them a private registry whose actions act on *this* pane's item and carry no
shortcuts (the window's shortcuts stay with the inbox).
"""

from __future__ import annotations

import dataclasses
import time

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal, Slot
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from proctor.core import errors
from proctor.core.models import Approval, EffectStatus, InboxItem, InboxKind

from ..decide.approval import ApprovalDetail
from ..decide.commands import decided_text, decision_commands
from ..decide.decider import Decider
from ..decide.detail import DetailContext, DetailPane
from ..decide.items import KIND_TITLES, item_key
from ..decide.kinds import DETAIL_WIDGETS
from ..decide.question import QuestionDetail
from ..decide.undo_bar import UndoBar, undone_text
from ..infra.actions import ActionRegistry
from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.dialogs import ReasonDialog, SnoozeDialog
from ..widgets.event_summary import plain_tip
from ..widgets.icons import kind_icon
from ..widgets.labels import plain_label
from ..widgets.message_bar import Level, MessageBar

ACTION_IDS = (
    "inbox.approve",
    "inbox.deny",
    "inbox.snooze",
    "inbox.dismiss",
    "inbox.effect_committed",
    "inbox.effect_failed",
)
ITEM_ROLE = Qt.ItemDataRole.UserRole + 1


def private_registry(host: QWidget) -> ActionRegistry:
    """A registry for the pane's detail widgets: same texts, no shortcuts."""
    return ActionRegistry(host, {action_id: "" for action_id in ACTION_IDS})


class PendingCommands(QObject):
    """Approve, deny, snooze and resolve the pane's current item through its Decider."""

    def __init__(self, pane: PendingPane) -> None:
        super().__init__(pane)
        self.pane = pane
        self.decider = pane.decider

    def register(self, registry: ActionRegistry) -> None:
        for spec in decision_commands(self):  # the inbox's declarations, on this pane
            registry.register(dataclasses.replace(spec, context=Qt.ShortcutContext.WidgetShortcut))

    def can_snooze(self) -> bool:
        return not self.pane.read_only and self.pane.current_item() is not None

    def can_decide(self) -> bool:
        """As in the Inbox: an approval not being decided here, not decided here already,
        and not shown decided (elsewhere) or tampered with by its detail."""
        item = self.pane.current_item()
        if not self._is(InboxKind.APPROVAL) or item is None:
            return False
        key = item_key(item)
        if self.decider.busy(key) or key in self.pane.decided_keys:
            return False
        widget = self.pane.detail.current()
        if (
            not isinstance(widget, ApprovalDetail)
            or widget.item is None
            or widget.item.id != item.id
        ):
            return True  # still loading: approve() refuses until the action is shown
        if widget.is_tampered():
            return False
        entity = widget.entity
        return widget.decidable() if isinstance(entity, Approval) and entity.id == item.id else True

    def can_resolve(self) -> bool:
        return self._is(InboxKind.EFFECT)

    def can_dismiss(self) -> bool:
        widget = self.pane.detail.current()
        return (
            self._is(InboxKind.QUESTION)
            and isinstance(widget, QuestionDetail)
            and widget.can_dismiss()
        )

    def dismiss(self) -> None:
        widget = self.pane.detail.current()
        if self.can_dismiss() and isinstance(widget, QuestionDetail):
            widget.dismiss()

    def _is(self, kind: InboxKind) -> bool:
        item = self.pane.current_item()
        return self.can_snooze() and item is not None and item.kind == kind

    def approve(self) -> None:
        """The detail form's own approve, as in the Inbox: once, or with the rule its panel
        shows (the resource, condition, scope, expiry and pending requests chosen there)."""
        item, widget = self.pane.current_item(), self.pane.detail.current()
        if item is None or item.kind != InboxKind.APPROVAL:
            return
        if not isinstance(widget, ApprovalDetail) or widget.item is None:
            self.pane.working(item, "Not approved: the action is still loading.")
            return
        self.pane.working(item, widget.approve())
        self.pane.registry.refresh()  # busy now: Approve and Deny are off

    def deny(self) -> None:
        item, widget = self.pane.current_item(), self.pane.detail.current()
        if item is None or item.kind != InboxKind.APPROVAL:
            return
        reason = (
            widget.reason_text() if widget is not None and hasattr(widget, "reason_text") else ""
        )
        if not reason:
            reason = (
                ReasonDialog.ask(
                    self.pane,
                    tr("Deny"),
                    tr("Why deny this action? The agent is told your reason."),
                    ok=tr("Deny"),
                    required=True,
                )
                or ""
            )
        if reason:
            self.pane.working(item, "Denying…")
            self.decider.deny(item, reason=reason)
            self.pane.registry.refresh()

    def snooze(self) -> None:
        item = self.pane.current_item()
        if item is None:
            return
        until = SnoozeDialog.ask(self.pane, 1, time.time())
        if until is not None:
            self.decider.snooze([item], until)

    def resolve_effect(self, outcome: EffectStatus) -> None:
        """The effect detail checks (reason, the second confirmation for a non-idempotent
        write) and submits with the evidence, exactly as in the Inbox."""
        item, widget = self.pane.current_item(), self.pane.detail.current()
        if (
            item is None
            or item.kind != InboxKind.EFFECT
            or widget is None
            or not hasattr(widget, "resolve")
        ):
            return
        widget.resolve(outcome)


class PendingPane(QWidget):
    """Signals:
    decided(): something of this run was decided here (the run should refresh).
    open_run(str): a detail asked to open a run.
    """

    decided = Signal()
    open_run = Signal(str)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.read_only = bool(ctx.journal.read_only)
        self.decider = Decider(ctx.journal, ctx.runner, self, ctx.settings)
        # "Undo (N s)" after a decision made here, as in the Inbox (the same bar and hold)
        self.undo_bar = UndoBar(ctx.journal, ctx.runner, ctx.presenter, self)
        self.decided_keys: set[str] = set()  # keys decided here (gone with the next refresh)
        self.registry = private_registry(self)
        self.commands = PendingCommands(self)
        self.commands.register(self.registry)
        self.message = MessageBar(self)
        self.run_id: str | None = None  # the run shown (set by the run detail)
        self.items = QStandardItemModel(self)
        self.list = QListView(self)
        self.list.setModel(self.items)
        self.list.setAccessibleName(tr("Items of this run waiting for you"))
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setMaximumWidth(360)
        self.empty = plain_label(
            tr("Nothing of this run waits for you."), self, name="Muted", selectable=False
        )
        self.detail = DetailPane(
            DetailContext(
                ctx.journal,
                ctx.runner,
                ctx.presenter,
                self.registry,
                self.decider,
                self.read_only,
                ctx.settings,
            ),
            DETAIL_WIDGETS,
            self,
        )
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.list)
        split.addWidget(self.detail)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.message)
        layout.addWidget(self.empty)
        layout.addWidget(split, 1)
        layout.addWidget(self.undo_bar)  # its room is kept: the list never moves for it
        self.list.selectionModel().currentChanged.connect(self._on_current)
        self.decider.done.connect(self._on_done)
        self.decider.refused.connect(self._on_refused)
        self.decider.snoozed.connect(self._on_snoozed)
        self.undo_bar.undone.connect(self._on_undone)
        self.detail.open_run.connect(self.open_run)

    # ------------------------------------------------------------ items
    def set_items(self, items: list[InboxItem]) -> None:
        """Show the run's waiting items; the current one stays current if still there."""
        keep = self.current_item()
        self.items.clear()
        for item in items:
            line = QStandardItem(
                kind_icon(item.kind.value),
                f"{KIND_TITLES.get(item.kind.value, item.kind.value)}: "
                f"{fmt.bounded(item.summary, 160)}",
            )
            line.setData(item, ITEM_ROLE)
            line.setToolTip(plain_tip(fmt.bounded(item.summary, 600)))
            line.setEditable(False)
            self.items.appendRow(line)
        self.empty.setVisible(not items)
        keys = [item_key(i) for i in items]
        row = keys.index(item_key(keep)) if keep is not None and item_key(keep) in keys else 0
        if items:
            self.list.setCurrentIndex(self.items.index(row, 0))
            self.detail.show_item(items[row])
        else:
            self.detail.show_empty("Nothing of this run waits for you.")
        self.registry.refresh()

    def current_item(self) -> InboxItem | None:
        index = self.list.currentIndex()
        return index.data(ITEM_ROLE) if index.isValid() else None

    def count(self) -> int:
        return self.items.rowCount()

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = current.data(ITEM_ROLE) if current.isValid() else None
        self.detail.show_item(item)
        self.registry.refresh()

    def working(self, item: InboxItem, text: str) -> None:
        widget = self.detail.current()
        if widget is not None and widget.item is not None and widget.item.id == item.id:
            widget.message.show_message(text, Level.INFO)

    # ------------------------------------------------------------ outcomes
    def _on_done(self, key: str, result: object) -> None:
        self.undo_bar.offer(result)  # "Undo (5 s)" while the decision is held
        self.decided_keys.add(key)
        self.registry.refresh()
        widget = self.detail.current()
        if widget is not None and hasattr(widget, "forget_draft"):
            widget.forget_draft(key.split(":", 1)[1])
        if widget is not None:
            widget.message.clear()
        about = getattr(result, "run_id", None)
        if about is None or about == self.run_id:  # said on the run it was decided for only
            text = decided_text(result)
            self.message.show_message(text, Level.SUCCESS, about=about or self.run_id)
        self.decided.emit()

    def _on_undone(self, result: object) -> None:
        """The decision is taken back: the item is open again here (the run refreshes)."""
        key = item_key_of(result)
        self.decided_keys.discard(key)
        self.message.show_message(undone_text(result), Level.SUCCESS, about=self.run_id)
        self.registry.refresh()
        self.decided.emit()

    def _on_refused(self, key: str, exc: BaseException) -> None:
        widget = self.detail.current()
        shown = widget is not None and widget.item is not None and item_key(widget.item) == key
        inline = widget.message if shown and widget is not None else self.message
        retry = isinstance(exc, errors.StoreBusy) and bool(key)
        self.ctx.presenter.present(
            exc,
            inline=inline,
            action="Retry" if retry else None,
            on_action=(lambda: self.decider.retry(key)) if retry else None,
        )
        if shown and widget is not None:
            widget.reload()
        self.registry.refresh()
        self.decided.emit()

    def _on_snoozed(self, ok: list[str], failed: list) -> None:
        text = tr("Snoozed %n item(s).", n=len(ok))
        if failed:
            text += f" Refused: {failed[0][1]}"
        self.message.show_message(
            text, Level.WARNING if failed else Level.SUCCESS, about=self.run_id
        )
        self.decided.emit()


def item_key_of(result: object) -> str:
    """The inbox key of a decided approval or question (``approval:ID``, ``question:ID``)."""
    kind = "approval" if isinstance(result, Approval) else "question"
    return f"{kind}:{getattr(result, 'id', '')}"
