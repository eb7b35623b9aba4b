"""Issue 32 item 4: Enter pressed right after a dialog opens does nothing that cannot be
undone. Generated from every QDialog the desk defines (an import walk over proctor.gui):
each is either listed as one that acts irreversibly — built here with real data, opened
with ``exec()``, and sent Enter on whatever has the focus: it must not accept — or listed
with the reason its OK changes nothing that cannot be undone. A new dialog in neither list
fails the first test. Then the headline case through the real desk: the effect's "Mark
failed — it may happen twice" confirmation, answered with Enter, leaves the effect ambiguous.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog

import proctor.gui
from proctor.core import Actor, Journal
from proctor.core.models import Approval, ApprovalScope, EffectStatus

from .conftest import WAIT_MS
from .data import agent, request

# What a dialog's accept does, when it can be undone (or does nothing at all).
REVERSIBLE = {
    "AboutDialog": "shows facts only",
    "CommandPalette": "runs a command the operator picks by name; each command confirms itself",
    "ConnectDialog": "connects to a journal: nothing is written",
    "ErrorDialog": "shows an error",
    "PreferencesDialog": "saves preferences, changed back the same way",
    "RangeDialog": "picks a time range for a view",
    "ShortcutHelp": "shows the shortcuts",
    "SnoozeDialog": "snoozes: undone by Unsnooze",
    "TextViewer": "shows a text",
    "WelcomeDialog": "opens a journal file: nothing is written",
}


def all_dialogs() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(proctor.gui.__path__, "proctor.gui."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, QDialog) and value.__module__ == module.__name__:
                found[name] = value
    return found


def an_approval(path: Path) -> Approval:
    with agent(path, "coder") as a:
        run = a.runs.start("shop", "dialogs", agent="coder")
        approval_id = request(
            a, run.id, "db.migrate", {"db": "prod"}, "Migrate.", safety_class="destructive"
        )
    with Journal.open(path, actor=Actor.operator("alice"), read_only=True) as j:
        return j.approvals.get(approval_id)


def build_confirm_dialog(_path: Path) -> QDialog:
    from proctor.gui.widgets.dialogs import ConfirmDialog

    return ConfirmDialog(None, "Mark failed — it may happen twice", "Mark it failed?", "Mark")


def build_reason_dialog(_path: Path) -> QDialog:
    from proctor.gui.widgets.dialogs import ReasonDialog

    return ReasonDialog(None, "Deny", "Why?", "Deny", False, "a reason typed already")


def build_confirm_approval(path: Path) -> QDialog:
    from proctor.gui.decide.confirm import ConfirmApproval, restate

    return ConfirmApproval(None, restate(an_approval(path), ApprovalScope.ONCE, "", ["Risky."]))


def build_rule_confirm(_path: Path) -> QDialog:
    from proctor.gui.decide.rule_draft import RuleConfirmDialog

    return RuleConfirmDialog(None, "Approve this request and make the rule: fs.write *.")


def build_bulk_approve(path: Path) -> QDialog:
    from proctor.gui.inbox.bulk import BulkDecisionDialog

    approval = an_approval(path)
    return BulkDecisionDialog(None, [approval], approve=True, scope=ApprovalScope.ONCE, reason="")


def build_bulk_deny(path: Path) -> QDialog:
    from proctor.gui.inbox.bulk import BulkDecisionDialog

    approval = an_approval(path)
    return BulkDecisionDialog(None, [approval], approve=False, scope=ApprovalScope.ONCE, reason="x")


def build_edit_action(path: Path) -> QDialog:
    from proctor.gui.decide.edit_action import EditActionDialog

    return EditActionDialog(None, an_approval(path))


def build_old_schema(path: Path) -> QDialog:
    from proctor.gui.shell.old_schema import OldSchemaDialog

    return OldSchemaDialog(None, path, "0001", "0008x")


def build_new_policy(path: Path) -> QDialog:
    from types import SimpleNamespace

    from proctor.gui.rules.new_policy import NewPolicyDialog

    ctx = SimpleNamespace(journal=Journal.open(path, read_only=True), runner=None)
    dialog = NewPolicyDialog(ctx, None)  # type: ignore[arg-type] - only its journal is read
    dialog.destroyed.connect(ctx.journal.close)
    return dialog


# Dialogs whose accept cannot be undone (decides, makes a rule, migrates, marks failed).
IRREVERSIBLE: dict[str, list[Callable[[Path], QDialog]]] = {
    "ConfirmDialog": [build_confirm_dialog],
    "ReasonDialog": [build_reason_dialog],
    "ConfirmApproval": [build_confirm_approval],
    "RuleConfirmDialog": [build_rule_confirm],
    "BulkDecisionDialog": [build_bulk_approve, build_bulk_deny],
    "EditActionDialog": [build_edit_action],
    "OldSchemaDialog": [build_old_schema],
    "NewPolicyDialog": [build_new_policy],  # makes a policy
}
BUILDERS = [b for builders in IRREVERSIBLE.values() for b in builders]


def test_every_dialog_of_the_desk_is_listed() -> None:
    found = set(all_dialogs())
    assert found, "the walk found no dialog"
    assert found - set(IRREVERSIBLE) - set(REVERSIBLE) == set(), "list the new dialog here"
    assert set(IRREVERSIBLE) | set(REVERSIBLE) <= found, "a listed dialog is gone: drop it"


def press_enter_when_open(qtbot, pressed: list[str]) -> None:
    """Once the modal dialog is up and active: Enter on its focus widget, then close it
    (if Enter left it open) with reject()."""

    def step() -> None:
        dialog = QApplication.activeModalWidget()
        assert dialog is not None
        dialog.activateWindow()
        qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)
        target = QApplication.focusWidget() or dialog
        pressed.append(type(target).__name__)
        QTest.keyClick(target, Qt.Key.Key_Return)
        if dialog.isVisible():
            QTimer.singleShot(0, dialog.reject)

    QTimer.singleShot(0, step)


@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__ for b in BUILDERS])
def test_enter_right_after_it_opens_accepts_nothing(qtbot, journal_path, build) -> None:
    dialog = build(journal_path)
    qtbot.addWidget(dialog)
    pressed: list[str] = []
    press_enter_when_open(qtbot, pressed)
    result = dialog.exec()
    assert pressed, "Enter was never pressed"
    assert result == QDialog.DialogCode.Rejected, f"Enter on {pressed[0]} accepted it"
    assert getattr(dialog, "choice", "cancel") == "cancel"  # the old-schema dialog's answer


def test_enter_on_mark_failed_leaves_the_effect_ambiguous(qtbot, journal_path, open_desk) -> None:
    from .effects.test_effects_page import ambiguous, effects_page, select

    ambiguous(journal_path, "mail:enter")
    window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "mail:enter")
    qtbot.keyClicks(page.form.reason, "no idea whether the mail went out")
    pressed: list[str] = []
    press_enter_when_open(qtbot, pressed)
    qtbot.mouseClick(page.failed_button, Qt.MouseButton.LeftButton)
    assert pressed, "the second confirmation never opened"
    runner = window.services.runner
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:enter").status == EffectStatus.AMBIGUOUS
