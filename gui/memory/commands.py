"""Memory commands, each declared once (menu "Memory", the Ctrl+K palette, ? help, and the
buttons of the conflict review, the bulk panel and the entry, built from them).

A command calls the widget on screen (``ConflictReview.request``, ``BulkPanel.ask``,
``EntryDetail.toggle_pin`` ...), so the checks, dialogs and store calls are the widget's;
it is enabled only while the Memory page is shown and the widget on screen allows it.
The resolve commands (``resolve_commands``) also build the review's buttons in an inbox
item's detail, registered there under another prefix in the detail's own registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from proctor.core.models import ConflictStatus

from ..decide.commands import Revealing, resolve_commands
from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.i18n import QT_TR_NOOP

if TYPE_CHECKING:
    from ..decide.conflict_view import ConflictReview
    from .bulk import BulkPanel
    from .entry import EntryDetail
    from .page import MemoryPage

KEEP, TAKE = ConflictStatus.ACCEPTED_LOCAL, ConflictStatus.ACCEPTED_INCOMING
DISMISS, MERGE = ConflictStatus.DISMISSED, ConflictStatus.MERGED


def entry_commands(entry: Callable[[], EntryDetail | None]) -> list[ActionSpec]:
    """Edit, pin, unpin, confirm, remove and restore the entry on screen."""

    def run(name: str) -> Callable[[], None]:
        def go() -> None:
            if (shown := entry()) is not None:
                getattr(shown, name)()

        return go

    def can(check: str, flag: str | None = None, value: bool = False) -> Callable[[], bool]:
        def allowed() -> bool:
            shown = entry()
            e = shown.entry() if shown is not None else None
            return (
                e is not None
                and getattr(shown, check)()
                and (flag is None or getattr(e, flag) is value)
            )

        return allowed

    def shows(flag: str, value: bool) -> Callable[[], bool]:
        def visible() -> bool:
            shown = entry()
            e = shown.entry() if shown is not None else None
            return (e is not None and getattr(e, flag)) is value

        return visible

    return [
        ActionSpec(
            "memory.edit",
            QT_TR_NOOP("Edit entry"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Edit the entry's content"),
            handler=run("start_edit"),
            enabled=can("can_edit"),
            button=QT_TR_NOOP("&Edit"),
            section=1,
            no_icon="opens the editor in place; the word says it",
        ),
        ActionSpec(
            "memory.pin",
            QT_TR_NOOP("Pin entry"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Pin the entry"),
            handler=run("toggle_pin"),
            enabled=can("can_flag", "pinned", False),
            visible=shows("pinned", False),
            button=QT_TR_NOOP("&Pin"),
            section=1,
            no_icon="entry flag; shown in the entry's facts",
        ),
        ActionSpec(
            "memory.unpin",
            QT_TR_NOOP("Unpin entry"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Unpin the entry"),
            handler=run("toggle_pin"),
            enabled=can("can_flag", "pinned", True),
            visible=shows("pinned", True),
            button=QT_TR_NOOP("Un&pin"),
            section=1,
            no_icon="entry flag; shown in the entry's facts",
        ),
        ActionSpec(
            "memory.confirm",
            QT_TR_NOOP("Confirm entry"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Confirm the entry as true"),
            handler=run("confirm"),
            enabled=can("can_confirm"),
            button=QT_TR_NOOP("C&onfirm"),
            section=1,
            no_icon="entry flag; shown in the entry's facts",
        ),
        ActionSpec(
            "memory.remove",
            QT_TR_NOOP("Remove entry…"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Remove the entry (a restorable tombstone)"),
            handler=run("remove_or_restore"),
            enabled=can("can_flag", "deleted", False),
            visible=shows("deleted", False),
            button=QT_TR_NOOP("Re&move"),
            section=1,
            no_icon="asks first; a restorable tombstone",
        ),
        ActionSpec(
            "memory.restore",
            QT_TR_NOOP("Restore entry"),
            QT_TR_NOOP("Memory"),
            QT_TR_NOOP("Restore the removed entry"),
            handler=run("remove_or_restore"),
            enabled=can("can_flag", "deleted", True),
            visible=shows("deleted", True),
            button=QT_TR_NOOP("Res&tore"),
            section=1,
            no_icon="the reverse of Remove; the word says it",
        ),
    ]


class MemoryCommands:
    """The Memory page's commands, registered before its widgets are built (their buttons
    come from them); each looks up the widget on screen when it runs."""

    def __init__(self, page: MemoryPage, registry: ActionRegistry) -> None:
        self.page = page
        self.registry = registry

    def register(self) -> None:
        specs = resolve_commands("memory", self.review, self.bulk, self.revealing)
        specs += entry_commands(self.entry)
        for spec in specs:
            self.registry.register(spec, page=self.page)

    def on(self, pane: str) -> bool:
        """Whether ``pane`` is what the right side shows now."""
        right = getattr(self.page, "right", None)  # None while the page is being built
        return right is not None and right.currentWidget() is getattr(self.page, pane, None)

    def review(self) -> ConflictReview | None:
        return self.page.review if self.on("conflict_pane") else None

    def bulk(self) -> BulkPanel | None:
        return self.page.bulk if self.on("bulk") else None

    def entry(self) -> EntryDetail | None:
        return self.page.entry if self.on("entry") else None

    def revealing(self) -> Revealing | None:
        return self.entry() or self.review()
