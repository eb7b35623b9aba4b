"""A scripted operator on ``proctor demo`` (issue 32, "Done when"): the demo started as
``proctor demo`` starts it (an empty journal, the desk on it, the demo's builder filling
it behind the window, then live simulated agents trusting the operator's key), and an
operator making every kind of choice the desk offers, over and over, through the real
widgets of the real window (mouse clicks and typing with QTest; every dialog answered by
clicking its buttons): approve, deny (reason typed, or asked), approve with a rule
("Always in this run/space/project"), edit then approve, answer questions of every kind,
dismiss a question, snooze, resolve memory conflicts each way, resolve ambiguous effects
both ways, undo within the hold, retry a failed run, request a cancel — from the Inbox and
from a run's "Waiting for you" tab.

After the session it reads the journal: every run a live simulated agent failed, and every
retry an operator asked that no agent started, with the reason, told apart from what the
demo's own scripted faults do (crashes and lapsed leases make ambiguous effects, never a
failed run).

    QT_QPA_PLATFORM=offscreen uv run python tests/integration/operator_session.py --minutes 5
    Xvfb :99 -screen 0 1400x900x24 & DISPLAY=:99 uv run python \
        tests/integration/operator_session.py --minutes 30 --shots /tmp/session

``test_operator_session.py`` runs a short one in the suite.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REASON = "checked by the scripted operator"
WAIT_S = 30.0
LIVE_PREFIX = "sim-agent"  # sim/agents.py's name_prefix: the live agents' names


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


# ---------------------------------------------------------------- the session
@dataclass
class Tally:
    choices: Counter[str] = field(default_factory=Counter)
    live: Counter[str] = field(default_factory=Counter)  # choices on a live agent's item
    skipped: Counter[str] = field(default_factory=Counter)
    refused: list[str] = field(default_factory=list)  # a choice the desk refused, and why
    stuck: list[str] = field(default_factory=list)  # a choice that could not be made
    stale: int = 0  # inbox rows picked that the journal no longer had waiting

    def made(self, kind: str) -> None:
        self.choices[kind] += 1


class Demo:
    """``proctor demo`` in this process: the journal, the desk window, the live agents."""

    def __init__(self, folder: Path, *, agents: int, rate: float, seed: int, operator: str):
        from PySide6.QtCore import QSettings

        from proctor.cmd_desk import demo_folder, demo_trust
        from proctor.core import Actor, Journal
        from proctor.gui.infra.settings import DeskSettings
        from proctor.gui.shell.app import DeskApp, make_app
        from proctor.sim.demo import recent_start

        self.app = make_app()
        self.path = demo_folder(folder) / "journal.db"
        self.operator = operator
        trust = demo_trust(self.path.parent, operator)
        Journal.open(self.path, actor=Actor.agent("demo-builder")).close()
        self.settings = DeskSettings(
            QSettings(str(self.path.parent / "desk.ini"), QSettings.Format.IniFormat)
        )
        self.settings.undo_seconds = 5  # the desk's default hold
        self.desk = DeskApp(self.app, self.settings, None, strict=False)
        self.agents: Any = None
        self.filled = False
        self.fill: Any = None

        def on_window(window: Any) -> None:
            from proctor.gui.shell.demo_fill import DemoFill

            self.fill = DemoFill(window, self.path, seed=seed, start_time=recent_start())
            self.fill.filled.connect(window.inbox.show_new)
            self.fill.filled.connect(self._start_agents)
            self.fill.start()

        def _start() -> None:
            from proctor.sim.agents import start_agents

            self.agents = start_agents(
                self.path, agents=agents, rate=rate, seed=seed, trust=trust["path"]
            )
            self.filled = True

        self._start_agents = _start
        self.desk.on_window = on_window
        self.desk.open(self.path, operator=operator)
        self.window = wait_until(lambda: self.desk.window, "the desk window", 120)
        self.window.resize(1400, 860)
        wait_until(lambda: self.window.inbox.model.has_loaded, "the inbox", 120)
        wait_until(lambda: self.filled, "the demo journal filled", 600)
        self.reader = Journal.open(
            self.path, actor=Actor.operator("session-reader"), read_only=True
        )

    def stop(self) -> None:
        if self.agents is not None:
            self.agents.stop()
        with contextlib.suppress(Exception):
            self.reader.close()
        self.window.close()
        self.desk.runner.shutdown(10_000)
        self.desk.shutdown()


class Operator:
    """Makes one choice after another on the demo's desk window."""

    KINDS = (
        "approve",
        "deny",
        "deny_asked",
        "approve_rule",
        "edit_approve",
        "answer",
        "dismiss",
        "snooze",
        "conflict",
        "effect_committed",
        "effect_failed",
        "undo",
        "retry_run",
        "cancel_run",
    )

    def __init__(self, demo: Demo, seed: int, shots: str | None = None) -> None:
        self.demo, self.window = demo, demo.window
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.dialogs = DialogAnswerer()
        self.shots = shots
        self.shot_no = 0
        self.turn = 0
        self.where_turn = 0
        self.undo_done = False
        self.retried: dict[str, float] = {}
        self.conflict_turn = 0
        self.forced: Any = None
        self.acted_live = False
        self.last_total = 0
        self.log: Any = sys.stderr if os.environ.get("OPERATOR_SESSION_LOG") else None
        self.live_turns: Counter[str] = Counter()

    # ------------------------------------------------------------ places
    def inbox_items(self) -> list[Any]:
        return list(self.window.inbox.model.items())

    def waiting(self, item: Any) -> bool:
        """The journal has ``item`` waiting for a person now (the inbox may lag behind)."""
        from proctor.core.models import InboxFilter

        return bool(self.demo.reader.inbox.pick(InboxFilter(), [item.id]))

    def live(self, item: Any) -> bool:
        return str(item.agent).startswith(LIVE_PREFIX)

    def pick(self, kinds: set[str], test: Callable[[Any], bool] = lambda i: True) -> Any:
        """A waiting item of one of ``kinds``: a live agent's first, else any."""
        forced, self.forced = self.forced, None
        if forced is not None and forced.kind.value in kinds:
            if not self.waiting(forced):
                self.tally.stale += 1
                return None
            self.acted_live = True
            return forced
        items = [i for i in self.inbox_items() if i.kind.value in kinds and test(i)]
        live = [i for i in items if self.live(i)]
        pool = live or items
        chosen = self.rng.choice(pool) if pool else None
        if chosen is not None and not self.waiting(chosen):
            self.tally.stale += 1  # the inbox still lists what the journal has closed
            chosen = None
        self.acted_live = chosen is not None and self.live(chosen)
        return chosen

    def open_in_inbox(self, item: Any) -> Any:
        from proctor.gui.decide.items import item_key
        from proctor.gui.decide.settle import SETTLE_S

        self.window.go("inbox")
        inbox = self.window.inbox
        key = item_key(item)
        if inbox.model.row_of(key) < 0:
            if key in inbox.model.held:
                show = button_named(inbox, "Show them")
                if show is not None:
                    click(show)
                else:
                    inbox.show_new()
            wait_until(lambda: inbox.model.row_of(key) >= 0, f"inbox row {key}")
        row = inbox.model.row_of(key)
        table = inbox.table
        index = inbox.model.index(row, 1)
        table.scrollTo(index)
        click(table.viewport(), table.visualRect(index).center())
        detail = inbox.detail

        def shown() -> Any:
            w = detail.current()
            return w if w is not None and w.item is not None and w.item.id == item.id else None

        widget = wait_until(shown, f"the detail of {key}")
        wait_until(lambda: inbox.settle.read_for() >= SETTLE_S, "reading the item")
        return widget

    def open_in_run(self, item: Any) -> Any:
        """The item's run page, its "Waiting for you" tab, the item clicked there."""
        from PySide6.QtWidgets import QTabBar

        from proctor.gui.decide.items import item_key
        from proctor.gui.decide.settle import SETTLE_S

        self.open_run(item.run_id)
        detail = self.window.runs.detail
        pane = detail.pending
        bar = detail.tabs.findChild(QTabBar)
        index = detail.tabs.indexOf(pane)
        click(bar, bar.tabRect(index).center())
        key = item_key(item)

        from proctor.core.models import InboxFilter
        from proctor.gui.runs.pending import ITEM_ROLE

        def find() -> int:
            for r in range(pane.items.rowCount()):
                it = pane.items.item(r).data(ITEM_ROLE)
                if it is not None and item_key(it) == key:
                    return r + 1
            return 0

        try:
            r = wait_until(find, f"{key} in the run's Waiting for you") - 1
        except TimedOut as exc:
            listed = [
                item_key(pane.items.item(n).data(ITEM_ROLE)) for n in range(pane.items.rowCount())
            ]
            still = self.demo.reader.inbox.pick(InboxFilter(), [item.id])
            raise TimedOut(
                f"{exc}: run {detail.run_id} (facts read: {detail.facts is not None}) lists "
                f"{listed[:6]}; the journal says it is {'still' if still else 'no longer'} waiting"
            ) from None
        idx = pane.items.index(r, 0)
        click(pane.list.viewport(), pane.list.visualRect(idx).center())

        def shown() -> Any:
            w = pane.detail.current()
            return w if w is not None and w.item is not None and w.item.id == item.id else None

        widget = wait_until(shown, f"the run tab's detail of {key}")
        settle = widget.ctx.settle
        if settle is not None:
            wait_until(lambda: settle.read_for() >= SETTLE_S, "reading the item")
        else:
            from PySide6.QtTest import QTest

            QTest.qWait(int(SETTLE_S * 1000) + 50)  # as a person reads it
        return widget

    def open_run(self, run_id: str) -> None:
        self.window.follow_link(f"proctor://run/{run_id}")
        detail = self.window.runs.detail
        wait_until(lambda: detail.run is not None and detail.run.id == run_id, f"run {run_id}")

    def open_item(self, item: Any) -> tuple[Any, str]:
        """From the Inbox, or (every other time, when it has a run) the run's tab."""
        self.where_turn += 1
        if item.run_id and self.where_turn % 2 == 0:
            return self.open_in_run(item), "run"
        return self.open_in_inbox(item), "inbox"

    # ------------------------------------------------------------ choices
    # a live agent's waiting item is decided first, each way in turn (the demo's own
    # seeded items get every other kind of choice)
    LIVE_CHOICES = {  # noqa: RUF012 - a constant table
        "approval": (
            "approve",
            "edit_approve",
            "approve_rule",
            "deny",
            "undo",
            "deny_asked",
        ),
        "question": ("answer", "answer", "dismiss", "answer"),
        "effect": ("effect_failed", "effect_committed"),
        "conflict": ("conflict",),
    }

    def pause(self) -> None:
        """Between two choices the desk runs on (a person reads the screen): a moment, and
        longer when nothing could be chosen (new requests come in meanwhile)."""
        from PySide6.QtTest import QTest

        QTest.qWait(100 if self.tally.choices.total() > self.last_total else 1000)
        self.last_total = self.tally.choices.total()

    def let_in_arrivals(self) -> None:
        """New requests held behind "N new requests arrived" (so the list does not move under
        the pointer): the operator clicks its Show them."""
        inbox = self.window.inbox
        if inbox.model.held and self.window.current_page_id() == "inbox":
            show = button_named(inbox, "Show them")
            if show is not None and show.isEnabled():
                click(show)
            else:
                inbox.show_new()
        elif inbox.model.held:
            inbox.show_new()

    def one(self) -> None:
        self.let_in_arrivals()
        live = [i for i in self.inbox_items() if self.live(i)]
        self.forced = None
        if live and self.turn % 3 != 2:
            item = min(live, key=lambda i: i.created_at)
            choices = self.LIVE_CHOICES[item.kind.value]
            kind = choices[self.live_turns[item.kind.value] % len(choices)]
            self.live_turns[item.kind.value] += 1
            self.forced = item
        else:
            kind = self.KINDS[self.turn % len(self.KINDS)]
        self.turn += 1
        self.acted_live = False
        try:
            made = getattr(self, "do_" + kind)()
        except TimedOut as exc:
            self.tally.stuck.append(f"{kind}: timed out waiting for {exc}")
            made = None
        if self.log is not None:
            print(
                f"{time.strftime('%H:%M:%S')} {kind}: {made or 'skipped'}",
                file=self.log,
                flush=True,
            )
        if made:
            self.tally.made(made)
            if self.acted_live:
                self.tally.live[kind] += 1
        else:
            self.tally.skipped[kind] += 1

    def decided(self, widget: Any, what: str) -> None:
        """Wait until the store took the decision or refused it (then note why)."""
        from proctor.gui.decide.items import item_key

        key = item_key(widget.item)
        decider = widget.ctx.decider
        wait_until(lambda: not decider.busy(key), f"the decision on {key}")

    def approval(self) -> Any:
        return self.pick({"approval"})

    def do_approve(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        if not widget.approve_button.isEnabled():
            return None
        self.dialogs.plan("Approve")
        click(widget.approve_button)
        self.decided(widget, "approve")
        return f"approve ({where})"

    def do_deny(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        if not widget.deny_button.isEnabled():
            return None
        type_into(widget.reason, REASON)
        click(widget.deny_button)
        self.decided(widget, "deny")
        return f"deny, reason typed ({where})"

    def do_deny_asked(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        if not widget.deny_button.isEnabled():
            return None
        self.dialogs.plan("Deny")
        click(widget.deny_button)
        self.decided(widget, "deny")
        return f"deny, reason asked ({where})"

    def do_approve_rule(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        radios = [b for b in widget.scopes.buttons() if b.isVisible() and b.isEnabled()]
        if len(radios) < 2 or not widget.approve_button.isEnabled():
            return None
        n = 1 + self.rng.randrange(len(radios) - 1)
        radio = radios[n]
        label = radio.text()
        click(radio)
        panel = widget.rule_panel
        wait_until(lambda: panel.isVisible() and panel.base is not None, "the rule draft")
        if self.rng.random() < 0.5 and panel.apply.isEnabled():
            click(panel.apply)
        self.dialogs.plan("Approve", "Make", "Create", "Add")
        click(widget.approve_button)
        self.decided(widget, "approve with a rule")
        return f"approve with rule {label!r} ({where})"

    def do_edit_approve(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        if not widget.edit_button.isVisible() or not widget.edit_button.isEnabled():
            return None
        wait_until(lambda: widget.entity is not None, "the approval read")
        self.dialogs.plan("Approve edited action", "Approve")
        click(widget.edit_button)
        self.decided(widget, "edit, then approve")
        return f"edit, then approve ({where})"

    def question(self) -> Any:
        return self.pick({"question"})

    def do_answer(self) -> str | None:
        item = self.question()
        if item is None:
            return None
        widget, where = self.open_item(item)
        view = wait_until(lambda: widget.view, "the answer form")
        wait_until(lambda: widget.entity is not None, "the question read")
        kind = getattr(widget.entity, "kind", "?")
        kind = getattr(kind, "value", kind)
        for attempt in range(3):
            fill_form(view, self.rng, self.rng.randrange(4) + attempt)
            with contextlib.suppress(TimedOut):
                wait_until(lambda: widget.submit_button.isEnabled() and view.is_valid(), "Send", 3)
                break
        if not (widget.submit_button.isEnabled() and view.is_valid()):
            self.tally.stuck.append(
                f"answer {kind}: the form stayed invalid: {view.problem_texts()[:3]}"
            )
            return None
        self.dialogs.plan("Send", "Answer", "OK", "Yes")
        click(widget.submit_button)
        self.decided(widget, "answer")
        return f"answer {kind} ({where})"

    def do_dismiss(self) -> str | None:
        item = self.question()
        if item is None:
            return None
        widget, where = self.open_item(item)
        button = button_named(widget, "Dismiss")
        if button is None or not button.isEnabled():
            return None
        self.dialogs.plan("Dismiss")
        click(button)
        self.decided(widget, "dismiss")
        return f"dismiss a question ({where})"

    def do_snooze(self) -> str | None:
        # a demo item: a live agent's request snoozed for 15 minutes stops that agent for
        # as long (it waits, as it should), and the session would watch idle agents
        self.forced = None
        item = self.pick({"approval", "question", "effect", "conflict"}, lambda i: not self.live(i))
        if item is None:
            return None
        widget, where = self.open_item(item)
        button = button_named(widget, "Snooze")
        if button is None or not button.isEnabled():
            return None
        self.dialogs.plan("Snooze")
        click(button)
        return f"snooze {item.kind.value} ({where})"

    def do_conflict(self) -> str | None:
        item = self.pick({"conflict"})
        if item is None:
            return None
        widget, where = self.open_item(item)
        review = widget.review
        wait_until(lambda: review.data is not None, "the conflict read")
        ways = ("keep", "take", "merge", "dismiss")
        way = ways[self.conflict_turn % len(ways)]
        self.conflict_turn += 1
        button = getattr(review, f"{way}_button")
        if not button.isVisible() or not button.isEnabled():
            return None
        type_into(review.reason, REASON)
        if way == "merge":
            click(button)
            wait_until(review.merging, "the merge editor")
            type_into(review.merge_editor, " (merged)")
            button = review.merge_button
        click(button)
        self.decided(widget, way)
        return f"conflict: {way} ({where})"

    def effect(self) -> Any:
        return self.pick({"effect"})

    def resolve(self, outcome: str) -> str | None:
        item = self.effect()
        if item is None:
            return None
        widget, where = self.open_item(item)
        text = "Mark effect committed" if outcome == "committed" else "Mark effect failed"
        button = button_named(widget, text, text.replace("Mark effect ", "Mark "))
        form = getattr(widget, "form", None)
        if button is None or not button.isEnabled() or form is None:
            return None
        type_into(form.reason, REASON)
        self.dialogs.plan("Mark failed, allow a retry", "Mark", "OK")
        click(button)
        self.decided(widget, outcome)
        return f"effect: {outcome} ({where})"

    def do_effect_committed(self) -> str | None:
        return self.resolve("committed")

    def do_effect_failed(self) -> str | None:
        return self.resolve("failed")

    def do_undo(self) -> str | None:
        """Approve in the Inbox, then Undo within the hold."""
        item = self.pick({"approval"})
        if item is None:
            return None
        widget = self.open_in_inbox(item)
        if not widget.approve_button.isEnabled():
            return None
        bar = self.window.inbox.undo_bar
        self.dialogs.plan("Approve")
        click(widget.approve_button)
        self.decided(widget, "approve")
        if not bar.active():
            return None
        wait_until(lambda: bar.button.isVisible() and bar.button.isEnabled(), "Undo")
        click(bar.button)
        wait_until(lambda: not bar.active(), "the undo")
        return "undo an approval within the hold"

    def do_retry_run(self) -> str | None:
        reader = self.demo.reader
        failed = [
            r for r in reader.runs.list(status=["failed"], limit=200).items if not r.retry_pending
        ]
        live = [r for r in failed if r.agent.startswith(LIVE_PREFIX)]
        pool = live or failed
        if not pool:
            return None
        run = self.rng.choice(pool)
        self.open_run(run.id)
        detail = self.window.runs.detail
        button = button_named(detail, "Retry run")
        if button is None or not button.isEnabled():
            return None
        self.dialogs.plan("Retry run")
        click(button)
        wait_until(lambda: reader.runs.get(run.id).retry_pending, "the retry asked")
        self.retried[run.id] = time.time()
        return "retry a failed run"

    def do_cancel_run(self) -> str | None:
        reader = self.demo.reader
        running = [
            r
            for r in reader.runs.list(status=["running", "waiting"], limit=200).items
            if r.agent.startswith(LIVE_PREFIX) and not r.cancel_requested
        ]
        if not running or self.rng.random() < 0.5:  # now and then: cancels end runs early
            return None
        run = self.rng.choice(running)
        self.open_run(run.id)
        button = button_named(self.window.runs.detail, "Request cancel")
        if button is None or not button.isEnabled():
            return None
        self.acted_live = True
        self.dialogs.plan("Request cancel")
        click(button)
        wait_until(
            lambda: (now := reader.runs.get(run.id)).cancel_requested or now.status.terminal,
            "the cancel asked",
        )
        return "request cancel of a run"

    def screenshot(self) -> None:
        if not self.shots:
            return
        self.shot_no += 1
        target = f"{self.shots}-{self.shot_no}.png"
        if os.environ.get("DISPLAY") and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
            subprocess.run(["import", "-window", "root", target], check=False, timeout=30)
        else:
            self.window.grab().save(target)


# ---------------------------------------------------------------- the journal afterwards
def failures(reader: Any, since: float, retried: dict[str, float]) -> dict[str, list[str]]:
    """Every run that failed during the session, with its reason: "operator" when a
    person's choice on the run (an event an operator wrote: a decision, an answer, a
    resolution, a retry or cancel asked) came before the failure, else "other" (the demo's
    scripted faults never fail a run: a crash or a lapsed lease makes an ambiguous effect);
    and every retry asked that no agent started."""
    found: dict[str, list[str]] = {"operator": [], "other": [], "retry_not_honoured": []}
    for run in reader.runs.list(limit=1000).items:
        if run.updated_at < since:
            continue
        failed = [
            e
            for e in reader.runs.events(run.id, types=["run.failed"], limit=50)
            if e.created_at >= since
        ]
        for event in failed:
            why = str((event.payload or {}).get("error", run.error))
            earlier = reader.runs.events(run.id, limit=5000)
            chose = [
                e.type
                for e in earlier
                if e.sequence < event.sequence
                and e.actor.startswith("operator")
                and e.type != "interaction.presented"  # shown, not chosen
            ]
            line = f"{run.id} {run.agent} attempt {event.attempt}: {why}"
            cause = choice_behind(reader, why, since)
            if cause is None and chose:
                cause = f"after {', '.join(dict.fromkeys(chose))}"
            if cause is not None and not cause.startswith("not "):
                found["operator"].append(f"{line} ({cause})")
            else:
                found["other"].append(f"{line} ({cause or 'no choice of a person before it'})")
    for run_id, asked in retried.items():
        run = reader.runs.get(run_id)
        if run.retry_pending:
            found["retry_not_honoured"].append(
                f"{run_id} {run.agent}: retry asked {time.time() - asked:.0f} s ago, not started"
            )
    return found


def choice_behind(reader: Any, why: str, since: float) -> str | None:
    """Whose choice the failure names: an approval a person decided (or a rule a person
    made in this session) is an operator's choice; a rule of the demo journal's own
    history is not ("not ..."). None when the failure names no approval."""
    import re

    found = re.search(r"approval (apr_[0-9a-f]+)", why)
    if found is None:
        return None
    approval = reader.approvals.get(found.group(1))
    by = str(approval.decided_by or "")
    if by.startswith("rule:") and approval.rule_id:
        rule = reader.approvals.rule(approval.rule_id)
        if rule.created_at < since:
            return f"not a choice: a rule of the demo's history by {rule.created_by}"
        return f"a rule {rule.created_by} made in the session"
    return f"decided by {by}" if by else None


def summary(demo: Demo, op: Operator, since: float) -> dict:
    reader = demo.reader
    live = [
        r
        for r in reader.runs.list(limit=2000).items
        if r.agent.startswith(LIVE_PREFIX) and r.created_at >= since
    ]
    by_status = Counter(r.status.value for r in live)
    return {
        "journal": str(demo.path),
        "choices": dict(sorted(op.tally.choices.items())),
        "on_live_items": dict(sorted(op.tally.live.items())),
        "skipped": dict(sorted(op.tally.skipped.items())),
        "stuck": op.tally.stuck,
        "stale_inbox_rows": op.tally.stale,
        "dialogs": dict(op.dialogs.answered),
        "dialogs_unanswered": op.dialogs.unanswered,
        "live_runs": dict(by_status),
        "agents": demo.agents.totals() if demo.agents is not None else {},
        "failures": failures(reader, since, op.retried),
    }


def run_session(
    minutes: float,
    *,
    folder: Path,
    agents: int = 3,
    rate: float = 1.0,
    seed: int = 0,
    shots: str | None = None,
    shot_every_s: float = 300.0,
    until: Callable[[Operator], bool] | None = None,
    drain_s: float = 60.0,
) -> dict:
    """Start the demo, make choices for ``minutes`` (or until ``until(operator)``), stop
    the agents after they finished what waits, and return the summary."""
    demo = Demo(folder, agents=agents, rate=rate, seed=seed, operator="dana")
    try:
        since = time.time() - 5
        op = Operator(demo, seed, shots)
        end = time.monotonic() + minutes * 60
        next_shot = time.monotonic() + 20
        while time.monotonic() < end and not (until is not None and until(op)):
            op.one()
            if time.monotonic() >= next_shot:
                op.screenshot()
                next_shot = time.monotonic() + shot_every_s
            op.pause()
        drain(demo, op, drain_s)
        op.screenshot()
        return summary(demo, op, since)
    finally:
        demo.stop()


def drain(demo: Demo, op: Operator, seconds: float) -> None:
    """Decide what the live agents still wait on (approve, answer, resolve committed,
    keep) so that their runs end and the retries asked start (an agent starts one when it
    begins its next run), for up to ``seconds``."""
    reader = demo.reader
    end = time.monotonic() + seconds

    def done() -> bool:
        retrying = any(reader.runs.get(r).retry_pending for r in op.retried)
        return not retrying and not any(op.live(i) for i in op.inbox_items())

    while time.monotonic() < end and not done():
        op.let_in_arrivals()
        for kind in ("approve", "answer", "effect_committed", "conflict"):
            with contextlib.suppress(TimedOut):
                getattr(op, "do_" + kind)()
        op.pause()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--shots", default=None, help="screenshot prefix, e.g. /tmp/session")
    parser.add_argument("--shot-every", type=float, default=300.0)
    parser.add_argument("--json", type=Path, default=None, help="write the summary here")
    parser.add_argument(
        "--read",
        nargs=2,
        metavar=("JOURNAL", "SINCE"),
        help="only read a session's journal (its failures since epoch SINCE) again",
    )
    args = parser.parse_args(argv)
    if args.read:
        from proctor.core import Journal

        with Journal.open(args.read[0], read_only=True) as reader:
            found = failures(reader, float(args.read[1]), {})
        print(json.dumps(found, indent=2))
        return 1 if found["operator"] else 0
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where it is
    folder = args.dir or Path(tempfile.mkdtemp(prefix="operator-session-"))
    os.environ.setdefault("PROCTOR_KEYS_DIR", str(folder / "keys"))
    os.environ.setdefault("PROCTOR_KEY_STORE", "file")
    os.environ.setdefault("PROCTOR_STATE_DIR", str(folder / "state"))
    started = time.monotonic()
    result = run_session(
        args.minutes,
        folder=folder,
        agents=args.agents,
        rate=args.rate,
        seed=args.seed,
        shots=args.shots,
        shot_every_s=args.shot_every,
    )
    result["minutes"] = round((time.monotonic() - started) / 60, 1)
    text = json.dumps(result, indent=2, default=str)
    print(text, flush=True)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    bad = result["failures"]["operator"] + result["failures"]["retry_not_honoured"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
