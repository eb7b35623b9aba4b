"""A command is one declaration: its menu entry, toolbar button, palette row, ? line,
shortcut, icon, enablement and handler all come from the one ActionSpec."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenuBar, QToolBar, QWidget

from proctor.gui.infra.actions import ActionRegistry, ActionSpec
from proctor.gui.widgets.palette import ShortcutHelp

from .conftest import WAIT_MS
from .driver import Desk
from .effects.test_effects_page import ambiguous, effects_page, select
from .test_page_commands import key, listed, palette


def test_one_spec_makes_the_menu_entry_toolbar_button_key_icon_and_handler(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    registry, ran, allowed = ActionRegistry(host), [], [True]
    registry.register(
        ActionSpec(
            "demo.hello",
            "Say hello",
            "Demo",
            "Greets",
            handler=lambda: ran.append("hello"),
            enabled=lambda: allowed[0],
            shortcut="Ctrl+Shift+H",
            icon="action-about",
            toolbar=True,
        )
    )
    bar, toolbar = QMenuBar(host), QToolBar(host)
    menus = registry.build_menus(bar, {"Demo": []})
    registry.build_toolbar(toolbar)
    action = registry.action("demo.hello")
    assert action in menus["Demo"].actions() and action in toolbar.actions()
    assert registry.effective_shortcut("demo.hello") == "Ctrl+Shift+H"
    assert not action.icon().isNull()
    assert registry.trigger("demo.hello") and ran == ["hello"]
    allowed[0] = False
    assert not registry.trigger("demo.hello") and ran == ["hello"]


def test_the_effects_open_run_command_is_declared_once(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "mail:1")
    window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "mail:1")
    registry = window.registry
    menu = window.menuBar().findChild(type(window.menuBar().actions()[0].menu()), "menu.effects")
    assert registry.action("effects.open_run") in menu.actions()
    assert not registry.action("effects.open_run").icon().isNull()
    help_dialog = ShortcutHelp(registry, window)
    qtbot.addWidget(help_dialog)
    keys = {
        help_dialog.model.index(r, 0).data(): help_dialog.model.index(r, 2).data()
        for r in range(help_dialog.model.rowCount())
    }
    assert keys["Open the effect's run"] == "O"
    found = palette(qtbot, window, "effect's run")
    assert listed(found) == {"Open the effect's run": True}
    found.close()
    run_id = page.effect().run_id
    key(qtbot, window, page.table, Qt.Key.Key_O)
    qtbot.waitUntil(
        lambda: window.current_page_id() == "runs" and window.runs.detail.run_id == run_id,
        timeout=WAIT_MS,
    )
    assert not registry.action("effects.open_run").isEnabled()  # off the Effects page


def test_a_button_is_built_from_its_command(qtbot):
    """The button runs the command, is enabled and shown as the command says, and one
    button may stand for two commands (Remove / Restore), showing the one that applies."""
    host = QWidget()
    qtbot.addWidget(host)
    registry, ran, state = ActionRegistry(host), [], {"on": False, "deleted": False}
    registry.register(
        ActionSpec(
            "demo.remove",
            "Remove",
            "Demo",
            handler=lambda: ran.append("rm"),
            enabled=lambda: state["on"],
            button="Re&move",
            visible=lambda: not state["deleted"],
        )
    )
    registry.register(
        ActionSpec(
            "demo.restore",
            "Restore",
            "Demo",
            handler=lambda: ran.append("restore"),
            button="Res&tore",
            visible=lambda: state["deleted"],
        )
    )
    button = registry.button(("demo.remove", "demo.restore"), host)
    host.show()
    assert button.text() == "Re&move" and not button.isEnabled()
    state["on"] = True
    registry.refresh()
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert ran == ["rm"]
    state["deleted"] = True
    registry.refresh()
    assert button.text() == "Res&tore" and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert ran == ["rm", "restore"]


def test_the_effects_and_memory_buttons_are_their_commands(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "mail:1")
    window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "mail:1")
    registry = window.registry
    assert page.committed_button.action_id == "effects.committed"
    assert page.failed_button.action_id == "effects.failed"
    assert page.lapsed_button.action_id == "effects.mark_lapsed"
    assert page.committed_button.isEnabled() == registry.action("effects.committed").isEnabled()
    memory = window.memory
    assert memory.review.keep_button.action_id == "memory.keep"
    assert memory.bulk.buttons[next(iter(memory.bulk.buttons))].action_id == "memory.keep"
    assert memory.entry.edit_button.action_id == "memory.edit"
    assert memory.entry.remove_button.ids == ["memory.remove", "memory.restore"]


def test_copy_the_item_id_is_one_declaration(qtbot, populated, open_desk):
    """A command added with one ActionSpec (gui/inbox/commands.py ``inbox.copy_id``): it is
    in the Inbox menu, the palette and ? with its key, and copies the id of the item shown."""
    path, ids = populated
    window = open_desk(path)
    registry = window.registry
    menu = window.menuBar().findChild(type(window.recent_menu), "menu.inbox")
    assert registry.action("inbox.copy_id") in menu.actions()
    help_dialog = ShortcutHelp(registry, window)
    qtbot.addWidget(help_dialog)
    keys = {
        help_dialog.model.index(r, 0).data(): help_dialog.model.index(r, 2).data()
        for r in range(help_dialog.model.rowCount())
    }
    assert keys["Copy the item's id"] == "Ctrl+Shift+C"
    Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    QGuiApplication.clipboard().clear()
    key(
        qtbot,
        window,
        window.inbox.table,
        Qt.Key.Key_C,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() == ids["approval"], timeout=WAIT_MS)
    found = palette(qtbot, window, "item's id")
    assert listed(found) == {"Copy the item's id": True}
    found.close()


def test_a_runs_header_cancel_and_export_are_their_commands(qtbot, populated, open_desk):
    """The run header's Request cancel is the runs.cancel command (enabled as it is) and its
    Export menu holds the registered export commands, not copies wired to the handlers."""
    from .runs.test_runs_detail import open_run

    path, ids = populated
    window = open_desk(path)
    detail = open_run(qtbot, window, ids["run"])
    registry = window.registry
    assert detail.cancel_button.action_id == "runs.cancel"
    assert detail.cancel_button.isEnabled() == registry.action("runs.cancel").isEnabled()
    assert detail.export_button.menu().actions() == [
        registry.action(i) for i in ("runs.export_json", "runs.export_jsonl", "runs.copy")
    ]
