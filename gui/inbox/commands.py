"""Inbox commands: declared in the action registry, carried out through the Decider."""

from __future__ import annotations

import time
from functools import partial
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication

from proctor.core import errors
from proctor.core.kernel.links import link_url, linkable
from proctor.core.models import (
    Approval,
    ApprovalScope,
    ApprovalStatus,
    BulkResult,
    EffectStatus,
    InboxItem,
    InboxKind,
)

from ..decide import settle
from ..decide.approval import ApprovalDetail
from ..decide.commands import decided_text, decision_commands
from ..decide.detail import DetailWidget
from ..decide.effect import EffectDetail
from ..decide.question import QuestionDetail
from ..decide.undo_bar import UndoBar, undone_text
from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import BUSY_AFTER_MS
from ..widgets.dialogs import ReasonDialog, SnoozeDialog
from ..widgets.message_bar import BANNER_CLOSE_MS, NOTE_CLOSE_MS, Level
from .bulk import BulkDecisionDialog
from .mine import AssignCommand, Assigned, assign_commands
from .model import item_key
from .page import InboxPage

WIDGET = Qt.ShortcutContext.WidgetShortcut
WORKING_AFTER_MS = BUSY_AFTER_MS  # a write still on its way after this says so in the detail
RECENT_S = 8.0  # the banner tells of every item this desk decided within this many seconds
RECENT_NAMED = 2  # ... naming them all up to this many
UNDO = "inbox.undo"  # the one command that is not the inbox's alone (add_undo_bar)
D = TypeVar("D", bound=DetailWidget)


def still_waits(result: object) -> bool:
    """A write that leaves its item waiting: a step under a policy (the approval waits for
    the others), an assignment."""
    pending = isinstance(result, Approval) and result.status == ApprovalStatus.PENDING
    return pending or isinstance(result, Assigned)


def commands(c: InboxCommands) -> list[ActionSpec]:
    """Every inbox command: what it says, where it shows, its key and icon, when it is
    enabled and what it does."""
    page = c.page
    return [
        *decision_commands(c),
        *assign_commands(c.assigning),
        ActionSpec(
            "inbox.undo",
            QT_TR_NOOP("Undo the decision"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP(
                "Take back the decision just made (an approval, a denial, an answer or a "
                "dismissal) while its undo window lasts (the agent has not acted on it)"
            ),
            handler=c.undo_shown,
            enabled=c.can_undo_shown,
            shortcut="Ctrl+Z",
            section=1,
            no_icon="the undo bar's button is the affordance",
        ),
        ActionSpec(
            "inbox.wake",
            QT_TR_NOOP("Wake now"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Bring each selected snoozed item back now"),
            handler=c.wake,
            enabled=c.can_wake,
            icon="action-wake",
        ),
        ActionSpec(
            "inbox.toggle_select",
            QT_TR_NOOP("Select / unselect"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Add the current item to the selection, or take it out"),
            handler=page.toggle_select,
            shortcut="X",
            section=1,
            no_icon="bulk selection toggle (x); its state shows as the row's check",
        ),
        ActionSpec(
            "inbox.snoozed",
            QT_TR_NOOP("Show snoozed items"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Toggle the Snoozed filter"),
            handler=page.filters.snoozed.toggle,
            section=1,
            no_icon="a checkable filter; the menu shows its check mark",
        ),
        ActionSpec(
            "inbox.show_new",
            QT_TR_NOOP("Show new requests"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Show the requests that arrived while you were working the list"),
            handler=page.show_new,
            enabled=lambda: bool(page.model.held),
            shortcut="N",
            section=1,
            no_icon='the "N new" bar\'s button says it; the key is N',
        ),
        ActionSpec(
            "inbox.open_run",
            QT_TR_NOOP("Open the item's run"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Show the run in Runs"),
            handler=c.open_run,
            enabled=c.has_run,
            icon="page-runs",
            section=1,
        ),
        ActionSpec(
            "inbox.copy_id",
            QT_TR_NOOP("Copy the item's id"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("The id of the item shown, to the clipboard (for the CLI)"),
            handler=lambda: QGuiApplication.clipboard().setText(c.targets()[0].id),
            enabled=lambda: len(c.targets()) == 1,
            shortcut="Ctrl+Shift+C",
            section=1,
            no_icon="clipboard copy; nothing to show",
        ),
        ActionSpec(
            "inbox.copy_link",
            QT_TR_NOOP("Copy link"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP(
                "A proctor://item/… link to the item shown, to the clipboard "
                "(`proctor open LINK` shows it)"
            ),
            handler=c.copy_link,
            enabled=c.can_link,
            shortcut="Ctrl+Shift+L",
            section=1,
            no_icon="clipboard copy; nothing to show",
        ),
        ActionSpec(
            "inbox.next",
            QT_TR_NOOP("Next item"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Move to the next item"),
            handler=partial(page.move_by, 1),
            shortcut="J",
            section=3,
            also=("Go",),
            no_icon="list movement (j); the key is the affordance",
        ),
        ActionSpec(
            "inbox.prev",
            QT_TR_NOOP("Previous item"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Move to the previous item"),
            handler=partial(page.move_by, -1),
            shortcut="K",
            section=3,
            also=("Go",),
            no_icon="list movement (k); the key is the affordance",
        ),
        ActionSpec(
            "inbox.open",
            QT_TR_NOOP("Open item"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Go to the item's reason field"),
            context=WIDGET,
            handler=c.open,
            shortcut="Return",
            section=3,
            also=("Go",),
            no_icon="Enter on the list; moves focus, no command of its own",
        ),
        ActionSpec(
            "inbox.back",
            QT_TR_NOOP("Back to the list"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Return to the list; clear selection"),
            handler=c.back,
            shortcut="Escape",
            section=3,
            also=("Go",),
            no_icon="Escape; moves focus back to the list",
        ),
        ActionSpec(
            "inbox.search",
            QT_TR_NOOP("Search the inbox"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Focus the search field"),
            handler=page.filters.focus_search,
            shortcut="/",
            icon="action-search",
            section=3,
            also=("Go",),
        ),
    ]


def recent_summary(texts: list[str]) -> str:
    """One line for the decisions of the last RECENT_S seconds, oldest first: two are named
    both; more name the newest and count the others by what was done ("Approved fs.write;
    also 2 approved, 1 denied"), so a quick run of decisions never makes a line that is cut."""
    if len(texts) <= RECENT_NAMED:
        return "; ".join(texts)
    counts: dict[str, int] = {}
    for text in texts[:-1]:
        verb = text.split(" ", 1)[0].rstrip(":").lower()
        counts[verb] = counts.get(verb, 0) + 1
    earlier = ", ".join(f"{n} {verb}" for verb, n in counts.items())
    return f"{texts[-1]}; also {earlier} just before"


class InboxCommands(QObject):
    def __init__(self, page: InboxPage, registry: ActionRegistry) -> None:
        super().__init__(page)
        self.page = page
        self.registry = registry
        self.decider = page.decider
        self.assigning = AssignCommand(page, self.targets)
        self._recent: list[tuple[float, str]] = []  # (when, what) this desk decided lately
        self._undo_bars: list[UndoBar] = []  # every page's undo bar (add_undo_bar)
        self._connect()

    def register(self) -> None:
        # every inbox command acts on the inbox's items: only while the inbox is on screen
        # (a key pressed on another page must not approve or move what nobody sees)
        for spec in commands(self):
            # Undo acts on the bar on screen, on whichever page decided (add_undo_bar)
            self.registry.register(spec, page=None if spec.id == UNDO else self.page)
        self.registry.attach("inbox.open", self.page.table)
        self.registry.context_menu(
            self.page.table,
            ("inbox.assign", "inbox.copy_link", "inbox.copy_id", "inbox.open_run"),
        )

    def _connect(self) -> None:
        self.decider.done.connect(self._on_done)
        self.decider.refused.connect(self._on_refused)
        self.decider.bulk_done.connect(self._on_bulk_done)
        self.decider.snoozed.connect(self._on_snoozed)
        self.page.undo_bar.undone.connect(self._on_undone)
        self.add_undo_bar(self.page.undo_bar)

    # ------------------------------------------------------------ undo
    def add_undo_bar(self, bar: UndoBar) -> None:
        """Another page's undo bar (a run's "Waiting for you"): Ctrl+Z takes back the
        decision of the bar on screen, whichever page made it."""
        self._undo_bars.append(bar)
        bar.changed.connect(self.registry.refresh)

    def _shown_bar(self) -> UndoBar | None:
        """The undo bar on screen with an undo on offer (a bar on a page not shown is not:
        a key pressed on one page never takes back what another shows)."""
        return next((b for b in self._undo_bars if b.isVisible() and b.active()), None)

    def can_undo_shown(self) -> bool:
        return self._shown_bar() is not None

    def undo_shown(self) -> bool:
        bar = self._shown_bar()
        return bar is not None and bar.undo()

    # ------------------------------------------------------------ enablement
    def targets(self) -> list[InboxItem]:
        """The items a command acts on: none while the inbox is not the page on screen
        (a single-key shortcut pressed on another page must never decide inbox items)."""
        return self.registry.once(("inbox.targets", id(self)), self._targets)

    def _targets(self) -> list[InboxItem]:
        return self.page.targets() if self.page.isVisible() else []

    def writable(self) -> bool:
        return not self.page.read_only

    def can_decide(self) -> bool:
        targets = self.targets()
        if not self.writable() or not targets:
            return False
        if len(targets) == 1:
            return self._decidable(targets[0])
        return any(t.kind == InboxKind.APPROVAL for t in targets)

    def _decidable(self, item: InboxItem) -> bool:
        """An approval not yet known to be decided, and not rewritten outside Proctor: once
        the detail shows it decided (by another operator, the CLI, an expiry) or tampered
        with (core refuses it too), Approve and Deny are off at once."""
        if item.kind != InboxKind.APPROVAL:
            return False
        detail = self._detail_for(item, ApprovalDetail)
        if detail is not None and detail.is_tampered():
            return False
        if (
            detail is not None
            and isinstance(detail.entity, Approval)
            and detail.entity.id == item.id
        ):
            return detail.decidable()
        return True

    def can_snooze(self) -> bool:
        return self.writable() and bool(self.targets())

    def can_wake(self) -> bool:
        return self.can_snooze() and self.page.model.filter.snoozed

    def can_dismiss(self) -> bool:
        targets = self.targets()
        if not self.writable() or len(targets) != 1 or targets[0].kind != InboxKind.QUESTION:
            return False
        detail = self._detail_for(targets[0], QuestionDetail)
        return detail is not None and detail.can_dismiss()

    def dismiss(self) -> None:
        targets = self.targets()
        if self.can_dismiss():
            detail = self._detail_for(targets[0], QuestionDetail)
            if detail is not None:
                detail.dismiss()  # asks the reason, then submits (as the detail's button)

    def can_resolve(self) -> bool:
        targets = self.targets()
        return self.writable() and len(targets) == 1 and targets[0].kind == InboxKind.EFFECT

    def can_link(self) -> bool:
        items = self.targets()
        return len(items) == 1 and linkable(items[0].id)

    def copy_link(self) -> None:
        QGuiApplication.clipboard().setText(link_url("item", self.targets()[0].id))

    def has_run(self) -> bool:
        targets = self.targets()
        return len(targets) == 1 and bool(targets[0].run_id)

    # ------------------------------------------------------------ navigation
    def open(self) -> None:
        widget = self.page.detail.current()
        if widget is not None:
            widget.focus_primary()

    def back(self) -> None:
        if self.page.table.hasFocus():
            self.page.clear_selection()
        self.page.focus_list()

    def open_run(self) -> None:
        targets = self.targets()
        if targets and targets[0].run_id:
            self.page.open_run.emit(targets[0].run_id)

    # ------------------------------------------------------------ deciding
    def approve(self) -> None:
        approvals = self._approvals()
        if len(self.targets()) > 1:
            self._bulk(approvals, approve=True)
        elif approvals:
            item = approvals[0]
            if self._held(item, "approved"):
                return
            detail = self._detail_for(item, ApprovalDetail)
            if detail is None:
                self._note(
                    item,
                    "Not approved: the action is still loading. Approve again once it is shown.",
                )
                return
            # the form's own approve: once, or with the rule its panel shows (one flow,
            # the same on every page that decides)
            text = detail.approve()
            if self.decider.busy(item_key(item)):
                self._working(item, text)
            else:
                self._note(item, text)

    def deny(self) -> None:
        approvals = self._approvals()
        if len(self.targets()) > 1:
            self._bulk(approvals, approve=False)
        elif approvals:
            item = approvals[0]
            if self._held(item, "denied"):
                return
            detail = self._detail_for(item, ApprovalDetail)
            reason = detail.reason_text() if detail else ""
            if not reason:
                reason = (
                    ReasonDialog.ask(
                        self.page,
                        tr("Deny"),
                        tr("Why deny this action? The agent is told your reason."),
                        ok=tr("Deny"),
                        required=True,
                    )
                    or ""
                )
            if reason:
                self.decider.deny(item, reason=reason)
                self._working(item, "Denying…")

    def _held(self, item: InboxItem, verb: str) -> bool:
        """True (and a quiet note) when a decision on ``item`` now would not be deliberate:
        it has just come on screen (the desk advanced to it, or a click landed on it)."""
        if not self.page.settle.too_soon(item_key(item)):
            return False
        self._note(
            item, f"Not {verb}: this item has only just come on screen. Read it, then decide again."
        )
        return True

    def _note(self, item: InboxItem, text: str) -> None:
        """An unobtrusive note next to the item (it closes by itself)."""
        widget = self.page.detail.current()
        shown = widget is not None and widget.item is not None and widget.item.id == item.id
        bar = widget.message if shown and widget is not None else self.page.message
        bar.show_message(text, Level.INFO, close_after_ms=NOTE_CLOSE_MS)

    def _bulk(self, approvals: list[InboxItem], *, approve: bool) -> None:
        """Decide several approvals with the scope and reason visible in the decision form:
        read them whole (off the GUI thread), list every one in the confirmation, then
        decide each at the version the confirmation showed."""
        skipped = len(self.targets()) - len(approvals)
        if not approvals:
            return
        form = self.page.detail.current()
        form = form if isinstance(form, ApprovalDetail) else None
        reason = form.reason_text() if form is not None else ""
        scope = form.scope() if form is not None and approve else ApprovalScope.ONCE
        journal, ids = self.page.journal, [a.id for a in approvals]
        self.page.ctx.runner.run(
            lambda: journal.approvals.many(ids),
            on_done=partial(self._confirm_bulk, approve, scope, reason, skipped),
            on_error=partial(self._on_refused, ""),
            owner=self,
        )

    def _confirm_bulk(
        self,
        approve: bool,
        scope: ApprovalScope,
        reason: str,
        skipped: int,
        fetched: list[Approval],
    ) -> None:
        pending = [a for a in fetched if a.status == ApprovalStatus.PENDING]
        skipped += len(fetched) - len(pending)
        if not pending:
            self.page.message.show_message(
                tr("None of the selected approvals is pending any more."), Level.WARNING
            )
            return
        answer = BulkDecisionDialog.ask(
            self.page, pending, approve=approve, scope=scope, reason=reason, skipped=skipped
        )
        if answer is None:
            return
        reason, chosen = answer
        n = len(chosen)
        noun = "approval" if n == 1 else "approvals"
        self.page.message.show_message(f"{'Approving' if approve else 'Denying'} {n} {noun}…")
        self.decider.bulk([(a.id, a.version) for a in chosen], approve, reason=reason, scope=scope)

    def snooze(self) -> None:
        targets = self.targets()
        if not targets:
            return
        until = SnoozeDialog.ask(self.page, len(targets), time.time())
        if until is not None:
            self.decider.snooze(targets, until)

    def wake(self) -> None:
        targets = self.targets()
        if targets:
            self.decider.snooze(targets, None)

    def resolve_effect(self, outcome: EffectStatus) -> None:
        targets = self.targets()
        if len(targets) != 1 or targets[0].kind != InboxKind.EFFECT:
            return
        item = targets[0]
        detail = self._detail_for(item, EffectDetail)
        if detail is not None:
            detail.resolve(outcome)  # the detail checks, confirms and submits with the evidence

    # ------------------------------------------------------------ outcomes
    def _on_done(self, key: str, result: object) -> None:
        if still_waits(result):  # the row stays: say so, and stay on it
            self._recent_decision(decided_text(result))
            return
        self.page.undo_bar.offer(result)  # "Undo (5 s)" while the decision is held
        self.page.mark_decided({key})
        self.page.advance_from(key)
        item_id = key.split(":", 1)[1]
        widget = self.page.detail.current()
        if widget is not None and hasattr(widget, "forget_draft"):
            widget.forget_draft(item_id)
        self._recent_decision(decided_text(result))
        if widget is not None and widget.item is not None and item_key(widget.item) == key:
            widget.message.clear()
        if self.page.isVisible():
            self.page.focus_list()  # the next key is a command, never typed into a field

    def _on_undone(self, result: object) -> None:
        self.page.message.show_message(
            undone_text(result),
            Level.SUCCESS,
            close_after_ms=BANNER_CLOSE_MS,
        )

    def _recent_decision(self, text: str) -> None:
        """The banner names every item decided in the last RECENT_S seconds (a second
        decision never hides the first), and closes by itself."""
        now = settle.now()
        self._recent = [(t, s) for t, s in self._recent if now - t < RECENT_S]
        self._recent.append((now, text))
        self.page.message.show_message(
            recent_summary([s for _t, s in self._recent]),
            Level.SUCCESS,
            close_after_ms=BANNER_CLOSE_MS,
        )

    def _on_refused(self, key: str, exc: BaseException) -> None:
        widget = self.page.detail.current()
        shown = widget is not None and widget.item is not None and item_key(widget.item) == key
        retry = isinstance(exc, errors.StoreBusy) and bool(key)
        inline = widget.message if shown and widget is not None else self.page.message
        self.page.ctx.presenter.present(
            exc,
            inline=inline,
            action="Retry" if retry else None,
            on_action=partial(self.decider.retry, key) if retry else None,
        )
        if shown and widget is not None:
            widget.reload()
        if key:
            self.page.model.patch({key})

    def _on_bulk_done(self, results: list[BulkResult], approve: bool) -> None:
        self.page.undo_bar.offer_batch(results, approve)  # the batch's "Undo (5 s)"
        ok = [r for r in results if r.ok]
        bad = [r for r in results if not r.ok]
        self.page.mark_decided({f"approval:{r.id}" for r in ok})
        verb = "Approved" if approve else "Denied"
        text = f"{verb} {len(ok)} of {len(results)}."
        if bad:
            text += f" {len(bad)} refused: " + "; ".join(r.error or "" for r in bad[:3])
        self.page.message.show_message(text, Level.WARNING if bad else Level.SUCCESS)
        self.page.clear_selection()

    def _on_snoozed(self, ok: list[str], failed: list) -> None:
        self.page.mark_decided(set(ok))
        text = (
            tr("Snoozed %n item(s).", n=len(ok))
            if not self.page.model.filter.snoozed
            else tr("Woke %n item(s).", n=len(ok))
        )
        if failed:
            text += f" {len(failed)} refused: {failed[0][1]}"
        self.page.message.show_message(
            text,
            Level.WARNING if failed else Level.SUCCESS,
            close_after_ms=None if failed else BANNER_CLOSE_MS,
        )
        self.page.clear_selection()

    # ------------------------------------------------------------ helpers
    def _approvals(self) -> list[InboxItem]:
        """Approvals among the targets, minus those already decided or being decided here."""
        return [
            t
            for t in self.targets()
            if t.kind == InboxKind.APPROVAL
            and not self.decider.busy(item_key(t))
            and item_key(t) not in self.page.decided
        ]

    def _detail_for(self, item: InboxItem, cls: type[D]) -> D | None:
        widget = self.page.detail.current()
        if isinstance(widget, cls) and widget.item is not None and widget.item.id == item.id:
            return widget
        return None

    def _working(self, item: InboxItem, text: str) -> None:
        """Say the write is on its way ("Approving…") once it has taken WORKING_AFTER_MS: a
        write back sooner shows its outcome straight away, with no flash of the note and no
        relayout and repaint of the detail while the write runs (the GUI thread stays free
        to take the commit the moment it is back)."""
        QTimer.singleShot(
            WORKING_AFTER_MS, self, partial(self._still_working, item_key(item), item.id, text)
        )

    def _still_working(self, key: str, item_id: str, text: str) -> None:
        if not self.decider.busy(key):
            return
        widget = self.page.detail.current()
        if widget is not None and widget.item is not None and widget.item.id == item_id:
            widget.message.show_message(text, Level.INFO)
