"""Edit, then approve: a JSON editor for the action's arguments, checked as it is typed
(valid JSON, an object, the tool's input schema when the agent supplied one) with a diff
against what the agent asked for. ``ask()`` returns the edited action, or None."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Approval

from ..forms.diff import unified
from ..forms.validate import Checker
from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.dialogs import cancel_by_default
from ..widgets.labels import plain_label, section


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def edited_action(original: dict, text: str, checker: Checker | None) -> tuple[dict | None, str]:
    """(the edited action, "") or (None, what is wrong)."""
    try:
        args = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"Not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})."
    if not isinstance(args, dict):
        return None, "The arguments must be a JSON object."
    if checker is not None:
        problems = checker.problems(args)
        if problems:
            return None, "Does not fit the tool's schema: " + "; ".join(
                f"{p.where}: {p.message}" for p in problems[:5]
            )
    action = {**original, "args": args}
    if action == original:
        return None, "Unchanged: edit the arguments, or approve the action as it is."
    return action, ""


class EditActionDialog(QDialog):
    def __init__(self, parent: QWidget | None, approval: Approval) -> None:
        super().__init__(parent)
        self.setWindowTitle(
            tr("Edit, then approve — {action_name}").format(
                action_name=fmt.bounded(approval.action_name, 80)
            )
        )
        self.original = approval.action if isinstance(approval.action, dict) else {}
        self.checker = Checker(approval.input_schema) if approval.input_schema else None
        self.result_action: dict | None = None
        self.before = pretty(self.original.get("args", {}))
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName(tr("Edited arguments (JSON)"))
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setPlainText(self.before)
        self.diff = QPlainTextEdit(self)
        self.diff.setReadOnly(True)
        self.diff.setAccessibleName(tr("Diff against the requested arguments"))
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.problem = plain_label(parent=self)
        self.problem.setAccessibleName(tr("Problem with the edit"))
        schema_note = (
            "Checked against the tool's input schema."
            if self.checker
            else "The agent gave no input schema: any JSON object is accepted."
        )
        buttons = QDialogButtonBox(self)
        self.ok = buttons.addButton("Approve edited action", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        split = QSplitter(self)
        split.addWidget(self.editor)
        split.addWidget(self.diff)
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                tr(
                    "Tool {action_name} (the tool cannot change). {schema_note} The agent must run "
                    "the edited action; what it asked for stays as evidence."
                ).format(
                    action_name=fmt.bounded(approval.action_name, 120), schema_note=schema_note
                ),
                self,
            )
        )
        layout.addWidget(section("Arguments  |  diff against the request", self))
        layout.addWidget(split, 1)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.cancel = cancel_by_default(buttons, focus=False)  # the editor keeps the focus
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
        self.resize(860, 520)
        self.editor.textChanged.connect(self.check)
        self.check()

    @Slot()
    def check(self) -> None:
        text = self.editor.toPlainText()
        action, problem = edited_action(self.original, text, self.checker)
        self.result_action = action
        self.problem.setText(problem)
        self.ok.setEnabled(action is not None)
        after = pretty(action["args"]) if action is not None else text
        self.diff.setPlainText(unified(self.before, after, "args") or "(no change)")

    @Slot()
    def _accept(self) -> None:
        if self.result_action is not None:
            self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None, approval: Approval) -> dict | None:
        dialog = cls(parent, approval)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.result_action


__all__ = ["EditActionDialog", "edited_action"]
