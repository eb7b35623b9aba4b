"""Every page's commands are in the action registry (issue 4): the Ctrl+K palette lists
them, a menu holds them, they are enabled only on their page when their button is, and
running one goes through the page's own handler (checks, dialogs, store). Commands of
pages never shown together may share a key; single keys can still be switched off."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStackedWidget, QWidget

from proctor.core import Actor, Journal
from proctor.core.models import EffectStatus
from proctor.gui.infra.actions import ActionRegistry, ActionSpec
from proctor.gui.widgets.dialogs import ConfirmDialog, ReasonDialog
from proctor.gui.widgets.export import SaveDialog
from proctor.gui.widgets.palette import CommandPalette, ShortcutHelp

from .conftest import WAIT_MS
from .effects.test_effects_page import ambiguous, select
from .memory.test_memory_flow import open_entry

PAGE_COMMANDS = {
    "memory": [
        "memory.keep",
        "memory.take",
        "memory.merge",
        "memory.dismiss",
        "memory.reveal",
        "memory.edit",
        "memory.pin",
        "memory.unpin",
        "memory.confirm",
        "memory.remove",
        "memory.restore",
    ],
    "effects": ["effects.committed", "effects.failed", "effects.mark_lapsed"],
    "runs": [
        "runs.back",
        "runs.export_list",
        "runs.export_json",
        "runs.export_jsonl",
        "runs.copy",
        "runs.cancel",
    ],
    "audit": ["audit.verify", "audit.export"],
}


def palette(qtbot, window, query: str) -> CommandPalette:
    """Ctrl+K, then type ``query``."""
    key(
        qtbot,
        window,
        window.stack.currentWidget(),
        Qt.Key.Key_K,
        Qt.KeyboardModifier.ControlModifier,
    )
    qtbot.waitUntil(
        lambda: (
            window.findChild(CommandPalette) is not None
            and window.findChild(CommandPalette).isVisible()
        ),
        timeout=WAIT_MS,
    )
    found = window.findChild(CommandPalette)
    qtbot.keyClicks(found.search, query)
    return found


def key(qtbot, window, widget, k, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """Press a key on ``widget`` with the window active (a closed dialog gave it back)."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    widget.setFocus()
    qtbot.keyClick(widget, k, modifier)


def listed(found: CommandPalette) -> dict[str, bool]:
    """Command text -> enabled, as the palette lists them now."""
    model = found.model
    return {
        model.index(r, 0).data(): bool(model.flags(model.index(r, 0)) & Qt.ItemFlag.ItemIsEnabled)
        for r in range(model.rowCount())
    }


def run_first(qtbot, found: CommandPalette, text: str) -> None:
    """Enter on the palette runs its first row, which must be ``text``."""
    assert found.model.index(0, 0).data() == text
    qtbot.keyClick(found.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not found.isVisible(), timeout=WAIT_MS)


# ---------------------------------------------------------------- the registry


def test_pages_in_one_stack_share_a_key_others_do_not(qapp):
    host = QWidget()
    stack = QStackedWidget(host)
    first, second, outside = QWidget(), QWidget(), QWidget(host)
    stack.addWidget(first)
    stack.addWidget(second)
    registry = ActionRegistry(host, {"t.one": "C", "t.two": "C", "t.three": "C"})
    registry.register(ActionSpec("t.one", "One", "T"), lambda: None, page=first)
    registry.register(ActionSpec("t.two", "Two", "T"), lambda: None, page=second)
    assert registry.duplicates() == {}
    registry.register(ActionSpec("t.three", "Three", "T"), lambda: None, page=outside)
    assert registry.duplicates() == {"C": ["t.one", "t.two", "t.three"]}
    registry.set_single_keys(False)
    assert registry.action("t.one").shortcuts() == []
    host.deleteLater()


def test_every_page_command_is_in_a_menu_and_the_help(qtbot, populated, open_desk):
    window = open_desk(populated[0])
    assert window.registry.duplicates() == {}
    menus = {
        m.objectName(): {a.objectName() for a in m.actions()}
        for m in window.menuBar().findChildren(type(window.recent_menu))
    }
    for page, ids in PAGE_COMMANDS.items():
        assert set(ids) <= menus[f"menu.{page}"], page
    help_dialog = ShortcutHelp(window.registry, window)
    qtbot.addWidget(help_dialog)
    keys = {
        help_dialog.model.index(r, 0).data(): help_dialog.model.index(r, 2).data()
        for r in range(help_dialog.model.rowCount())
    }
    assert keys["Mark failed"] == "F" and keys["Mark effect failed"] == "F"
    assert keys["Mark committed"] == "C" and keys["Mark effect committed"] == "C"
    assert keys["Back to the run list"] == "Alt+Left" and keys["Pin entry"] == ""
    window.go("inbox")  # on the Inbox no other page's command is live
    for ids in PAGE_COMMANDS.values():
        assert not any(window.registry.action(i).isEnabled() for i in ids)


# ---------------------------------------------------------------- effects


def test_mark_failed_from_the_palette_asks_the_second_confirmation(
    qtbot, journal_path, open_desk, monkeypatch
):
    ambiguous(journal_path, "mail:1")  # an unsafe write: failed may make it happen twice
    window = open_desk(journal_path)
    window.go("effects")
    page = window.effects
    select(qtbot, page, "mail:1")
    asked: list[str] = []
    answer = [False]

    def ask(cls, parent, title, text, ok="OK"):
        asked.append(text)
        return answer[0]

    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(ask))
    found = palette(qtbot, window, "mark failed")
    assert listed(found)["Mark failed"] is True
    assert listed(found)["Mark effect failed"] is False  # the Inbox's, not on screen
    run_first(qtbot, found, "Mark failed")
    assert "Write a reason" in page.form.message.text() and not asked
    qtbot.keyClicks(page.form.reason, "the SMTP log has no DATA ack")
    run_first(qtbot, palette(qtbot, window, "mark failed"), "Mark failed")
    assert asked and "not idempotent" in asked[0]
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:1").status == EffectStatus.AMBIGUOUS
    answer[0] = True
    key(qtbot, window, page.table, Qt.Key.Key_F)  # the single key does the same
    qtbot.waitUntil(lambda: "Marked failed" in page.message.text(), timeout=WAIT_MS)
    assert len(asked) == 2
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:1").status == EffectStatus.FAILED
    assert not window.registry.action("effects.failed").isEnabled()


def test_the_single_key_works_as_soon_as_the_effect_is_shown(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "mail:3")
    window = open_desk(journal_path)
    window.go("effects")
    page = window.effects
    select(qtbot, page, "mail:3")
    key(qtbot, window, page.table, Qt.Key.Key_C)  # no palette, no menu opened before
    assert "Write a reason" in page.form.message.text()
    window.go("inbox")
    assert not window.registry.action("effects.committed").isEnabled()


def test_single_keys_off_leaves_the_effect_commands_in_the_palette(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "mail:2")
    window = open_desk(journal_path)
    window.registry.set_single_keys(False)
    for action_id in (
        "effects.failed",
        "effects.committed",
        "inbox.effect_failed",
        "inbox.effect_committed",
    ):
        assert window.registry.action(action_id).shortcuts() == []
    window.go("effects")
    select(qtbot, window.effects, "mail:2")
    qtbot.keyClicks(window.effects.form.reason, "receipt id 881 in the provider's log")
    key(qtbot, window, window.effects.table, Qt.Key.Key_C)  # switched off: nothing happens
    assert window.effects.message.text() == ""
    run_first(qtbot, palette(qtbot, window, "mark committed"), "Mark committed")
    qtbot.waitUntil(lambda: "Marked committed" in window.effects.message.text(), timeout=WAIT_MS)


# ---------------------------------------------------------------- memory


def test_pin_from_the_palette_pins_through_the_store(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add("project", "shop", "Cache TTL", "The cache lives for 60 s.")
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    found = palette(qtbot, window, "pin entry")
    assert listed(found) == {"Pin entry": True, "Unpin entry": False}
    run_first(qtbot, found, "Pin entry")
    qtbot.waitUntil(lambda: page.entry.entry().pinned, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        stored = j.memory.get(entry.id)
        assert stored.pinned and stored.version == 2
        assert j.memory.history(entry.id)[-1].actor == "operator:alice"
    qtbot.waitUntil(
        lambda: window.registry.action("memory.unpin").isEnabled(), timeout=WAIT_MS
    )  # the commands follow the buttons, no palette needed
    assert not window.registry.action("memory.pin").isEnabled()
    assert not window.registry.action("memory.keep").isEnabled()  # no conflict shown


def test_conflict_commands_resolve_one_or_several(qtbot, journal_path, open_desk, monkeypatch):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        one = a.memory.add("project", "shop", "Deploy day", "Tuesday")
        two = a.memory.add("project", "shop", "Freeze", "December")
        first = a.memory.record_conflict(one.id, "Thursday", incoming_source="db2").id
        second = a.memory.record_conflict(two.id, "November", incoming_source="db2").id
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 2, timeout=WAIT_MS)
    page.conflicts_table.setFocus()
    page.conflicts_table.selectAll()
    qtbot.waitUntil(lambda: page.right.currentWidget() is page.bulk, timeout=WAIT_MS)
    registry = window.registry
    assert registry.action("memory.dismiss").isEnabled()
    assert not registry.action("memory.merge").isEnabled()  # one at a time only
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "stale data"))
    assert registry.trigger("memory.dismiss")
    qtbot.waitUntil(lambda: "Dismissed for 2 of 2" in page.message.text(), timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert {j.memory.conflict(i).status.value for i in (first, second)} == {"dismissed"}


# ---------------------------------------------------------------- runs and audit


def test_run_commands_follow_the_view(qtbot, populated, open_desk, monkeypatch):
    path, ids = populated
    window = open_desk(path)
    window.show_run(ids["run"])
    runs, registry = window.runs, window.registry
    qtbot.waitUntil(lambda: registry.action("runs.cancel").isEnabled(), timeout=WAIT_MS)
    assert not registry.action("runs.export_list").isEnabled()  # the list is not shown
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "wrong branch"))
    run_first(qtbot, palette(qtbot, window, "request cancel"), "Request cancel…")
    qtbot.waitUntil(lambda: "Cancel requested" in runs.detail.message.text(), timeout=WAIT_MS)
    with Journal.open(path, read_only=True) as j:
        assert j.runs.get(ids["run"]).cancel_requested
    assert not registry.action("runs.cancel").isEnabled()
    key(
        qtbot,
        window,
        runs.detail.events_pane.table,
        Qt.Key.Key_Left,
        Qt.KeyboardModifier.AltModifier,
    )
    qtbot.waitUntil(lambda: not runs.showing_run(), timeout=WAIT_MS)
    assert registry.action("runs.export_list").isEnabled()
    assert not registry.action("runs.back").isEnabled()


def test_audit_verify_and_export_from_the_keyboard(
    qtbot, populated, open_desk, tmp_path, monkeypatch
):
    window = open_desk(populated[0])
    window.go("audit")
    page = window.audit
    with qtbot.waitSignal(page.verified, timeout=WAIT_MS) as verified:
        run_first(qtbot, palette(qtbot, window, "verify the audit"), "Verify the audit chain")
    assert verified.args[0].ok and "The audit chain verifies" in page.chain.text()
    out = tmp_path / "audit.csv"
    monkeypatch.setattr(SaveDialog, "ask", classmethod(lambda cls, *a: str(out)))
    key(qtbot, window, page.table, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "audit entries to" in page.message.text(), timeout=WAIT_MS)
    assert out.read_text(encoding="utf-8").startswith("sequence")
