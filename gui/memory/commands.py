"""Memory commands in the action registry (menu "Memory", the Ctrl+K palette, ? help).

Each command presses the button of the widget on screen (the conflict review, the bulk
panel or the entry), so the checks, dialogs and store calls are the buttons' own; a
command is enabled only while the Memory page is shown and its button could be pressed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QT_TR_NOOP
from PySide6.QtWidgets import QAbstractButton

from proctor.core.models import ReconciliationStatus

from ..actions import ActionRegistry, ActionSpec
from .page import MemoryPage

KEEP, TAKE = ReconciliationStatus.ACCEPTED_LOCAL, ReconciliationStatus.ACCEPTED_INCOMING
DISMISS = ReconciliationStatus.DISMISSED
SPECS = [
    ActionSpec("memory.keep", QT_TR_NOOP("Keep local"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Resolve the conflict(s): keep the entry as it is (a reason is required)")),
    ActionSpec("memory.take", QT_TR_NOOP("Take incoming"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Resolve the conflict(s): the incoming text becomes the entry's next version")),
    ActionSpec("memory.merge", QT_TR_NOOP("Merge…"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Write the entry's text yourself from both versions; again to save the merge")),
    ActionSpec("memory.dismiss", QT_TR_NOOP("Dismiss the incoming version"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Resolve the conflict(s): drop the incoming version")),
    ActionSpec("memory.reveal", QT_TR_NOOP("Reveal sensitive content"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Show the hidden content (the reveal is audited)")),
    ActionSpec("memory.edit", QT_TR_NOOP("Edit entry"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Edit the entry's content")),
    ActionSpec("memory.pin", QT_TR_NOOP("Pin entry"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Pin the entry")),
    ActionSpec("memory.unpin", QT_TR_NOOP("Unpin entry"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Unpin the entry")),
    ActionSpec("memory.confirm", QT_TR_NOOP("Confirm entry"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Confirm the entry as true")),
    ActionSpec("memory.remove", QT_TR_NOOP("Remove entry…"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Remove the entry (a restorable tombstone)")),
    ActionSpec("memory.restore", QT_TR_NOOP("Restore entry"), QT_TR_NOOP("Memory"),
               QT_TR_NOOP("Restore the removed entry")),
]


class MemoryCommands:
    """The Memory page's commands; ``register`` declares them in the window's registry."""

    def __init__(self, page: MemoryPage, registry: ActionRegistry) -> None:
        self.page = page
        self.registry = registry

    def register(self) -> None:
        entry, review = self.page.entry, self.page.review
        handlers: dict[str, Callable[[], None]] = {
            "memory.keep": partial(self.resolve, KEEP),
            "memory.take": partial(self.resolve, TAKE),
            "memory.merge": review.merge_button.click,
            "memory.dismiss": partial(self.resolve, DISMISS),
            "memory.reveal": self.reveal,
            "memory.edit": entry.edit_button.click,
            "memory.pin": entry.pin_button.click, "memory.unpin": entry.pin_button.click,
            "memory.confirm": entry.confirm_button.click,
            "memory.remove": entry.remove_button.click,
            "memory.restore": entry.remove_button.click,
        }
        enabled: dict[str, Callable[[], bool]] = {
            "memory.keep": partial(self.can_resolve, KEEP),
            "memory.take": partial(self.can_resolve, TAKE),
            "memory.merge": lambda: self.on_review() and review.merge_button.isEnabled(),
            "memory.dismiss": partial(self.can_resolve, DISMISS),
            "memory.reveal": lambda: self.reveal_button() is not None,
            "memory.edit": lambda: self.entry_can(entry.edit_button),
            "memory.pin": partial(self.entry_flag, "pinned", False, entry.pin_button),
            "memory.unpin": partial(self.entry_flag, "pinned", True, entry.pin_button),
            "memory.confirm": lambda: self.entry_can(entry.confirm_button),
            "memory.remove": partial(self.entry_flag, "deleted", False, entry.remove_button),
            "memory.restore": partial(self.entry_flag, "deleted", True, entry.remove_button),
        }
        for spec in SPECS:
            self.registry.register(spec, handlers[spec.id], enabled[spec.id], page=self.page)

    # ------------------------------------------------------------ what is on screen
    def on_review(self) -> bool:
        return self.page.right.currentWidget() is self.page.conflict_pane

    def on_bulk(self) -> bool:
        return self.page.right.currentWidget() is self.page.bulk

    def on_entry(self) -> bool:
        return self.page.right.currentWidget() is self.page.entry

    def choice_button(self, choice: ReconciliationStatus) -> QAbstractButton | None:
        """The button of ``choice`` in the widget shown (review or bulk panel)."""
        if self.on_bulk():
            return self.page.bulk.buttons.get(choice)
        if self.on_review():
            review = self.page.review
            return {KEEP: review.keep_button, TAKE: review.take_button,
                    DISMISS: review.dismiss_button}[choice]
        return None

    # ------------------------------------------------------------ enablement
    def can_resolve(self, choice: ReconciliationStatus) -> bool:
        button = self.choice_button(choice)
        return button is not None and button.isEnabled()

    def entry_can(self, button: QAbstractButton) -> bool:
        return self.on_entry() and self.page.entry.entry() is not None and button.isEnabled()

    def entry_flag(self, flag: str, value: bool, button: QAbstractButton) -> bool:
        """The entry's ``flag`` is ``value`` and ``button`` (which toggles it) is live."""
        e = self.page.entry.entry()
        return self.entry_can(button) and e is not None and getattr(e, flag) is value

    def reveal_button(self) -> QAbstractButton | None:
        button = self.page.entry.reveal_button if self.on_entry() else \
            self.page.review.reveal_button if self.on_review() else None
        live = button is not None and not button.isHidden() and button.isEnabled()
        return button if live else None

    # ------------------------------------------------------------ running
    def resolve(self, choice: ReconciliationStatus) -> None:
        button = self.choice_button(choice)
        if button is not None:
            button.click()

    def reveal(self) -> None:
        button = self.reveal_button()
        if button is not None:
            button.click()
