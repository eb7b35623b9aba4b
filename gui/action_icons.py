"""The commands that show no icon in menus and the command palette, each with the reason.

Every action id in the registry either names an icon in its declaration (ActionSpec.icon,
a name in resources/icons) or is in TEXT_ONLY with the reason it has none;
tests/gui/test_resources.py holds the registry of a real window to this, so a new command
must pick one.
"""

from __future__ import annotations

# every icon is named in its command's own declaration (ActionSpec.icon); none is left here
ICONS: dict[str, str] = {}

TEXT_ONLY: dict[str, str] = {
    "inbox.next": "list movement (j); the key is the affordance",
    "inbox.prev": "list movement (k); the key is the affordance",
    "inbox.open": "Enter on the list; moves focus, no command of its own",
    "inbox.back": "Escape; moves focus back to the list",
    "inbox.toggle_select": "bulk selection toggle (x); its state shows as the row's check",
    "inbox.snoozed": "a checkable filter; the menu shows its check mark",
    "inbox.show_new": "the \"N new\" bar's button says it; the key is N",
    "memory.take": "a choice beside Keep local; no distinct picture for it",
    "memory.merge": "opens the merge editor; the word says it",
    "memory.reveal": "an audited look; an eye icon would make it look casual",
    "memory.edit": "opens the editor in place; the word says it",
    "memory.pin": "entry flag; shown in the entry's facts",
    "memory.unpin": "entry flag; shown in the entry's facts",
    "memory.confirm": "entry flag; shown in the entry's facts",
    "memory.remove": "asks first; a restorable tombstone",
    "memory.restore": "the reverse of Remove; the word says it",
    "runs.export_list": "file export; the dialog that follows says where",
    "runs.export_json": "file export; the dialog that follows says where",
    "runs.export_jsonl": "file export; the dialog that follows says where",
    "runs.copy": "clipboard copy; nothing to show",
    "audit.verify": "its result is the status line's tick or cross",
    "audit.export": "file export; the dialog that follows says where",
}
