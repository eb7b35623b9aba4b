"""The scripted operator's hands (operator_session.py): waiting on the desk while Qt runs,
clicking and typing with QTest, answering modal dialogs by their buttons, filling answer
forms as a person would."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

REASON = "checked by the scripted operator"
WAIT_S = 30.0


# ---------------------------------------------------------------- waiting and input
class TimedOut(Exception):
    pass


def wait_until(cond: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Process Qt events until ``cond()`` is truthy (its value), else TimedOut."""
    from PySide6.QtTest import QTest

    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimedOut(what)
        QTest.qWait(20)


def click(widget: Any, pos: Any = None) -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QAbstractButton, QCheckBox, QRadioButton

    if pos is None and isinstance(widget, (QCheckBox, QRadioButton)):
        pos = QPoint(8, widget.height() // 2)  # on the indicator
    if pos is None and isinstance(widget, QAbstractButton):
        pos = widget.rect().center()
    if pos is None:
        QTest.mouseClick(widget, Qt.MouseButton.LeftButton)
    else:
        QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)


def type_into(widget: Any, text: str) -> None:
    """Click into a text field, put the cursor at its end and type ``text``."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    click(widget)
    QTest.keyClick(widget, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(widget, text)


def editable(edit: Any) -> bool:
    return bool(edit.isVisible() and edit.isEnabled() and not edit.isReadOnly())


def visible_buttons(widget: Any) -> list[Any]:
    from PySide6.QtWidgets import QAbstractButton

    return [b for b in widget.findChildren(QAbstractButton) if b.isVisible()]


def button_named(widget: Any, *texts: str) -> Any:
    """The visible button of ``widget`` whose text (without &) starts with one of ``texts``."""
    for b in visible_buttons(widget):
        label = b.text().replace("&", "")
        if any(label.startswith(t) for t in texts):
            return b
    return None


# ---------------------------------------------------------------- dialogs
class DialogAnswerer:
    """Answers the next modal dialogs by clicking their buttons: ``plan(button=...)`` says
    which button (a text prefix; else the accept button), ``edit`` edits an action's
    arguments first. Polls on a timer: a dialog's ``exec`` runs its own event loop."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.wanted: list[str] = []
        self.answered: Counter[str] = Counter()
        self.unanswered: list[str] = []
        self.timer = QTimer()
        self.timer.setInterval(60)
        self.timer.timeout.connect(self._poll)
        self.timer.start()
        self._seen: set[int] = set()
        self._shown_at: dict[int, float] = {}

    def plan(self, *buttons: str) -> None:
        self.wanted = list(buttons)

    def _poll(self) -> None:
        from PySide6.QtWidgets import QApplication

        w = QApplication.activeModalWidget()
        if w is None or not w.isVisible():
            return
        key = id(w)
        first = self._shown_at.setdefault(key, time.monotonic())
        if time.monotonic() - first < 0.35:  # as a person: read it first (settle guards)
            return
        if time.monotonic() - first > 20:  # it cannot be answered: say so, and close it
            self.unanswered.append(f"{type(w).__name__} {w.windowTitle()!r}")
            w.reject() if hasattr(w, "reject") else w.close()
            return
        if key in self._seen:
            return
        self._seen.add(key)
        try:
            self._answer(w)
        finally:
            self._seen.discard(key) if w.isVisible() else None

    def _answer(self, w: Any) -> None:
        from PySide6.QtWidgets import (
            QDialogButtonBox,
            QLineEdit,
            QListWidget,
            QMessageBox,
            QPlainTextEdit,
        )

        from proctor.gui.decide.edit_action import EditActionDialog

        title = w.windowTitle()
        self.answered[type(w).__name__] += 1
        if isinstance(w, EditActionDialog):
            edit_arguments(w)
        elif not isinstance(w, QMessageBox):
            for edit in w.findChildren(QPlainTextEdit):
                if editable(edit) and not edit.toPlainText().strip():
                    type_into(edit, REASON)
            for line in w.findChildren(QLineEdit):
                if editable(line) and not line.text().strip():
                    type_into(line, REASON)
            for lst in w.findChildren(QListWidget):  # the snooze presets: the first (soonest)
                if lst.isVisible() and lst.count():
                    rect = lst.visualItemRect(lst.item(0))
                    click(lst.viewport(), rect.center())
        buttons = visible_buttons(w)
        target = None
        for want in self.wanted:
            target = next((b for b in buttons if b.text().replace("&", "").startswith(want)), None)
            if target is not None:
                break
        if target is None:
            boxes = w.findChildren(QDialogButtonBox)
            for box in boxes:
                for b in box.buttons():
                    if (
                        box.buttonRole(b)
                        in (
                            QDialogButtonBox.ButtonRole.AcceptRole,
                            QDialogButtonBox.ButtonRole.YesRole,
                        )
                        and b.isVisible()
                    ):
                        target = b
        if target is None:
            raise RuntimeError(f"no button to answer dialog {title!r}")
        wait_until(target.isEnabled, f"the {target.text()!r} button of {title!r}", 10)
        self.wanted = []
        click(target)


def edit_arguments(dialog: Any) -> None:
    """Edit the first string argument in the dialog's JSON editor: the cursor put before
    the closing quote of its line (a JSON string is one line), " (edited)" typed there."""
    from PySide6.QtTest import QTest

    editor = dialog.editor
    text = editor.toPlainText()
    args = json.loads(text)
    name = next((k for k, v in args.items() if isinstance(v, str) and v), None)
    if name is None:
        raise RuntimeError("no text argument to edit")
    start = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(json.dumps(name) + ': "'):
            body = line.rstrip("\n").rstrip(",")
            end = start + len(body) - 1  # before the closing quote
            break
        start += len(line)
    else:
        raise RuntimeError(f"argument {name!r} not found in the editor")
    click(editor)
    cursor = editor.textCursor()
    cursor.setPosition(end)
    editor.setTextCursor(cursor)
    QTest.keyClicks(editor, " (edited)")
    wait_until(dialog.ok.isEnabled, "an edit the dialog accepts", 10)


# ---------------------------------------------------------------- forms
def fill_form(view: Any, rng: random.Random, choice: int) -> None:
    """Fill what an answer view asks for, as a person would: pick the ``choice``-th option
    of a group, tick, type into empty text fields, pick from combo boxes."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import (
        QAbstractSpinBox,
        QButtonGroup,
        QCheckBox,
        QComboBox,
        QLineEdit,
        QPlainTextEdit,
        QTextEdit,
    )

    from proctor.gui.forms.credentials import CredentialView

    groups = [g for g in view.findChildren(QButtonGroup) if g.buttons()]
    if isinstance(view, CredentialView):  # a reference: the demo has no OS keyring
        click(view.use_ref)
        groups = []
    for g in groups:
        shown = [b for b in g.buttons() if b.isVisible() and b.isEnabled()]
        if shown and (g.checkedButton() is None or len(groups) == 1):
            click(shown[choice % len(shown)])
    for combo in view.findChildren(QComboBox):
        if combo.isVisible() and combo.isEnabled() and combo.count() > 1 and not combo.isEditable():
            click(combo)
            QTest.keyClick(combo.view() if combo.view().isVisible() else combo, Qt.Key.Key_Down)
            QTest.keyClick(combo.view() if combo.view().isVisible() else combo, Qt.Key.Key_Return)
    for combo in view.findChildren(QComboBox):
        if (
            combo.isVisible()
            and combo.isEnabled()
            and combo.isEditable()
            and not combo.currentText()
        ):
            if combo.count():  # a suggestion, picked from the list
                click(combo)
                QTest.keyClick(combo, Qt.Key.Key_Down)
            else:
                type_into(combo.lineEdit(), "vault://demo/deploy-token")
    for line in view.findChildren(QLineEdit):
        if (
            line.isVisible()
            and line.isEnabled()
            and not line.isReadOnly()
            and not line.text()
            and not isinstance(line.parent(), (QComboBox, QAbstractSpinBox))
        ):
            type_into(line, text_for(line, rng))
    for edit in view.findChildren(QPlainTextEdit) + view.findChildren(QTextEdit):
        if editable(edit) and not edit.toPlainText().strip():
            type_into(edit, "answered by the scripted operator")
    for box in view.findChildren(QCheckBox):
        if box.isVisible() and box.isEnabled() and not box.isChecked() and rng.random() < 0.5:
            click(box)


def text_for(line: Any, rng: random.Random) -> str:
    """What a person types into a form's line: what its field's schema asks for (its
    example, its format), read from the field the line belongs to."""
    from proctor.sim.content import sample_for_schema

    node = getattr(line.parent(), "node", None)
    if node is not None:
        kind = getattr(node, "kind", "")
        if kind == "datetime":
            return "2026-12-24T09:00:00+00:00"
        if kind == "email":
            return "ops@example.invalid"
        if kind == "uri":
            return "https://example.invalid/ok"
        value = sample_for_schema(dict(node.schema))
        if not isinstance(value, (dict, list)):
            return str(value)
    return f"ok-{rng.randint(1, 9)}"
