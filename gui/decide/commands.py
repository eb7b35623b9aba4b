"""The commands that decide one item, declared once and registered by every page that
decides: approve, deny, snooze and resolve an effect (``decision_commands``: the inbox's,
and a run's "Waiting for you" tab's), and resolving a memory conflict
(``resolve_commands``: the Memory page's, and an inbox item's detail's)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from proctor.core.models import Approval, ConflictStatus, EffectStatus, Question, QuestionStatus

from ..infra.actions import ActionSpec
from ..infra.i18n import QT_TR_NOOP
from ..widgets import fmt
from .confirm import action_label

if TYPE_CHECKING:
    from .conflict_view import ConflictReview

    class BulkPanel(Protocol):
        def ask(self, choice: ConflictStatus) -> object: ...
        def can_ask(self) -> bool: ...


KEEP, TAKE = ConflictStatus.ACCEPTED_LOCAL, ConflictStatus.ACCEPTED_INCOMING
DISMISS, MERGE = ConflictStatus.DISMISSED, ConflictStatus.MERGED


class Decisions(Protocol):
    """What the decision commands act through (the inbox, or a run's pending pane)."""

    def approve(self) -> None: ...
    def deny(self) -> None: ...
    def snooze(self) -> None: ...
    def dismiss(self) -> None: ...
    def resolve_effect(self, outcome: EffectStatus) -> None: ...
    def can_decide(self) -> bool: ...
    def can_dismiss(self) -> bool: ...
    def can_snooze(self) -> bool: ...
    def can_resolve(self) -> bool: ...


def decision_commands(d: Decisions) -> list[ActionSpec]:
    """Approve, deny, snooze, dismiss a question and resolve an effect: the inbox's, and a
    run's pending pane's."""
    return [
        ActionSpec(
            "inbox.approve",
            QT_TR_NOOP("Approve"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Approve each selected approval"),
            handler=d.approve,
            enabled=d.can_decide,
            shortcut="A; Ctrl+Return",
            icon="action-approve",
            toolbar=2,
        ),
        ActionSpec(
            "inbox.deny",
            QT_TR_NOOP("Deny…"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Deny each selected approval, with a reason"),
            handler=d.deny,
            enabled=d.can_decide,
            shortcut="D; Ctrl+Shift+Return",
            icon="action-deny",
            toolbar=2,
        ),
        ActionSpec(
            "inbox.snooze",
            QT_TR_NOOP("Snooze…"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Hide each selected item until later"),
            handler=d.snooze,
            enabled=d.can_snooze,
            shortcut="S",
            icon="action-snooze",
            toolbar=2,
        ),
        ActionSpec(
            "inbox.dismiss",
            QT_TR_NOOP("Dismiss question…"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Close the question without answering; the agent is told your reason"),
            handler=d.dismiss,
            enabled=d.can_dismiss,
            icon="status-cancelled",
            button=QT_TR_NOOP("Dis&miss…"),
        ),
        ActionSpec(
            "inbox.effect_committed",
            QT_TR_NOOP("Mark effect committed"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("The effect happened (a reason is required)"),
            handler=partial(d.resolve_effect, EffectStatus.COMMITTED),
            enabled=d.can_resolve,
            shortcut="C",
            icon="status-done",
            section=2,
        ),
        ActionSpec(
            "inbox.effect_failed",
            QT_TR_NOOP("Mark effect failed"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("The effect did not happen (a reason is required)"),
            handler=partial(d.resolve_effect, EffectStatus.FAILED),
            enabled=d.can_resolve,
            shortcut="F",
            icon="status-failed",
            section=2,
        ),
    ]


class Revealing(Protocol):
    """A widget that may hide sensitive content until it is revealed (audited)."""

    def hides(self) -> bool: ...
    def can_reveal(self) -> bool: ...
    def reveal(self) -> None: ...


def resolve_commands(
    prefix: str,
    review: Callable[[], ConflictReview | None],
    bulk: Callable[[], BulkPanel | None] = lambda: None,
    revealing: Callable[[], Revealing | None] | None = None,
) -> list[ActionSpec]:
    """Keep, take, merge, dismiss and reveal, acting on the bulk panel or the review on
    screen (``review()`` / ``bulk()``: the widget, or None while it is not shown)."""
    showing = revealing or review

    def choose(choice: ConflictStatus) -> None:
        if (panel := bulk()) is not None:
            panel.ask(choice)
        elif (shown := review()) is not None:
            shown.request(choice)

    def can_choose(choice: ConflictStatus) -> bool:
        if (panel := bulk()) is not None:
            return panel.can_ask()
        shown = review()
        return shown is not None and shown.can(choice)

    def merge() -> None:
        if (shown := review()) is not None:
            shown.merge()

    def reveal() -> None:
        if (shown := showing()) is not None:
            shown.reveal()

    return [
        ActionSpec(
            f"{prefix}.keep",
            QT_TR_NOOP("Keep local"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP(
                "Resolve each selected conflict: keep the entry as it is (a reason is required)"
            ),
            handler=partial(choose, KEEP),
            enabled=partial(can_choose, KEEP),
            icon="status-done",
            button=QT_TR_NOOP("&Keep local"),
        ),
        ActionSpec(
            f"{prefix}.take",
            QT_TR_NOOP("Take incoming"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP(
                "Resolve each selected conflict: the incoming text becomes the entry's next version"
            ),
            handler=partial(choose, TAKE),
            enabled=partial(can_choose, TAKE),
            button=QT_TR_NOOP("&Take incoming"),
            no_icon="a choice beside Keep local; no distinct picture for it",
        ),
        ActionSpec(
            f"{prefix}.merge",
            QT_TR_NOOP("Merge…"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP(
                "Write the entry's text yourself from both versions; again to save the merge"
            ),
            handler=merge,
            enabled=lambda: bulk() is None and can_choose(MERGE),
            button=QT_TR_NOOP("&Merge…"),
            no_icon="opens the merge editor; the word says it",
        ),
        ActionSpec(
            f"{prefix}.dismiss",
            QT_TR_NOOP("Dismiss the incoming version"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Resolve each selected conflict: drop the incoming version"),
            handler=partial(choose, DISMISS),
            enabled=partial(can_choose, DISMISS),
            icon="action-deny",
            button=QT_TR_NOOP("&Dismiss"),
        ),
        ActionSpec(
            f"{prefix}.reveal",
            QT_TR_NOOP("Reveal sensitive content"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Show the hidden content (the reveal is audited)"),
            handler=reveal,
            enabled=lambda: (s := showing()) is not None and s.can_reveal(),
            visible=lambda: (s := showing()) is not None and s.hides(),
            button=QT_TR_NOOP("Reve&al"),
            section=1,
            no_icon="an audited look; an eye icon would make it look casual",
        ),
    ]


def decided_text(result: object) -> str:
    """What was decided, by name: "Approved payments.refund acct_9", "Answered “Which
    currency?”" (agent text, bounded and escaped; never an id alone when a name exists)."""
    told = getattr(result, "told", None)
    if callable(told):  # an assignment says what it did itself
        return str(told())
    if isinstance(result, Approval) and result.status.value == "pending":  # a policy's step
        return f"Your step on {action_label(result)} is recorded; it waits for more approvers"
    if isinstance(result, Approval):
        verb = {"approved": "Approved", "denied": "Denied"}.get(
            result.status.value, result.status.value.capitalize()
        )
        return f"{verb} {action_label(result)}"
    if isinstance(result, Question):
        first = next((line for line in result.prompt.splitlines() if line.strip()), "")
        verb = "Dismissed" if result.status == QuestionStatus.DISMISSED else "Answered"
        return f"{verb} “{fmt.bounded(first or result.kind.value, 80)}”"
    status = getattr(result, "status", "")
    verb = str(getattr(status, "value", status) or "done").replace("_", " ").capitalize()
    for attr in ("tool", "action_name", "title", "key", "id"):
        value = getattr(result, attr, None)
        if value:
            return f"{verb}: {fmt.bounded(value, 80)}"
    return verb
