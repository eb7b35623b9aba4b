"""Issue 32 item 17 (the desk's part): the desk says things as a person would. Recipients in a
confirmation and a banner read "a, b", never a Python list; "an external side effect";
"1 item" / "3 items", never "item(s)"; the snooze picker's date in the desk's one format;
file dialogs open where the operator last chose a file, never in the current directory;
the Connect dialog says the fields win over a pasted URL and why the keyring box is off;
the shortcut help lists the triage keys first."""

from __future__ import annotations

import re
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from proctor.core import Actor, Journal
from proctor.gui.decide.confirm import ConfirmApproval
from proctor.gui.infra.i18n import tr
from proctor.gui.shell.connect import ConnectDialog
from proctor.gui.widgets.dialogs import OpenJournalDialog, SnoozeDialog
from proctor.gui.widgets.export import SaveDialog
from proctor.gui.widgets.message_bar import MessageBar
from proctor.gui.widgets.palette import ShortcutHelp

from .conftest import WAIT_MS, settled
from .driver import Desk

LEFT = Qt.MouseButton.LeftButton
TO = ["jonas@example.com", "mia@example.com"]
PLURAL_OF_ONE = (  # "approval(s)", or "1 approvals"
    r"\w\(s\)|\b1 (?:memory )?(?:approvals|questions|conflicts|effects|items|requests|entries)\b"
)


def banners(window) -> list[str]:
    return [b.text() for b in window.findChildren(MessageBar) if b.isVisible() and b.text()]


def test_recipients_and_articles_read_as_words(qtbot, journal_path, open_desk, monkeypatch):
    with Journal.open(journal_path, actor=Actor.agent("mailer")) as a:
        run = a.runs.start("crm", "welcome mails", agent="mailer")
        approval = a.approvals.request(
            run.id,
            {"tool": "email.send", "args": {"to": TO, "subject": "Hi"}},
            reason="welcome them",
            safety_class="external_side_effect",
        )
    asked = []
    monkeypatch.setattr(
        ConfirmApproval, "ask", classmethod(lambda cls, parent, what: asked.append(what) or True)
    )
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{approval.id}")
    settled(qtbot, window)
    qtbot.mouseClick(detail.approve_button, LEFT)
    qtbot.waitUntil(lambda: any("Approved" in b for b in banners(window)), timeout=WAIT_MS)
    [what] = asked
    assert what.headline == "Approve email.send jonas@example.com, mia@example.com"
    assert "It is an external side effect action." in what.risks
    said = next(b for b in banners(window) if "Approved" in b)
    assert "email.send jonas@example.com, mia@example.com" in said and "['" not in said


def test_counts_say_item_or_items(qtbot, journal_path, open_desk, monkeypatch):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "plurals", agent="coder")
        asked = a.questions.ask(run.id, "question", "Which one?")
    monkeypatch.setattr(SnoozeDialog, "ask", classmethod(lambda cls, *a, **k: time.time() + 3600))
    window = open_desk(journal_path)
    Desk(qtbot, window).open_inbox_item(f"question:{asked.id}")
    settled(qtbot, window)
    window.inbox_commands.snooze()
    qtbot.waitUntil(lambda: "Snoozed 1 item." in banners(window), timeout=WAIT_MS)
    assert tr("Snoozed %n item(s).", n=3) == "Snoozed 3 items."
    assert tr("Snoozed %n item(s).", n=1) == "Snoozed 1 item."


def test_the_snooze_picker_writes_dates_one_way(qtbot):
    dialog = SnoozeDialog(None, 1, time.time())
    qtbot.addWidget(dialog)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", dialog.when.text()), dialog.when.text()


def test_file_dialogs_open_where_the_last_file_was(qtbot, settings, tmp_path, monkeypatch):
    opened: list[str] = []
    chosen = tmp_path / "journals" / "work.db"
    chosen.parent.mkdir()
    monkeypatch.chdir(tmp_path)  # the current directory is never where a dialog opens

    def fake_open(_parent, _title, folder, _filters):
        opened.append(folder)
        return str(chosen), ""

    def fake_save(_parent, _title, suggested, _filters):
        opened.append(suggested)
        return str(tmp_path / "exports" / "run.json"), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake_open))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save))
    assert OpenJournalDialog.ask(None, "", settings) == str(chosen)
    assert opened[0] == str(Path.home())
    OpenJournalDialog.ask(None, "", settings)
    assert opened[1] == str(chosen.parent)  # remembered
    SaveDialog.ask(None, "Export", "run.json", "json", settings)
    SaveDialog.ask(None, "Export", "run.json", "json", settings)
    assert opened[2] == str(Path.home() / "run.json")
    assert opened[3] == str(tmp_path / "exports" / "run.json")


def test_connect_says_what_wins_and_why_the_keyring_box_is_off(qtbot):
    dialog = ConnectDialog(None, [], keyring_usable=(False, "no keyring backend"))
    qtbot.addWidget(dialog)
    assert "the fields are what Proctor connects with" in dialog.url_note.text()
    assert not dialog.remember.isEnabled()
    assert "no keyring backend" in dialog.remember.toolTip()


def test_the_shortcut_help_lists_the_triage_keys_first(qtbot, journal_path, open_desk):
    window = open_desk(journal_path)
    help_ = ShortcutHelp(window.registry, window)
    qtbot.addWidget(help_)
    first = [help_.model._rows[n].id for n in range(6)]
    assert first == [
        "inbox.next",
        "inbox.prev",
        "inbox.approve",
        "inbox.deny",
        "inbox.snooze",
        "inbox.open",
    ]


def test_memory_conflicts_show_the_entry_and_its_version(qtbot, journal_path, open_desk):
    from .memory.test_memory_page import fill, loaded

    fill(journal_path)
    window = open_desk(journal_path)
    window.resize(1024, 768)  # a laptop screen: the list pane is narrow
    window.go("memory")
    page = window.memory
    loaded(qtbot, page.conflicts)
    table = page.conflicts_table
    qtbot.waitUntil(table.isVisible, timeout=WAIT_MS)
    page.splitter.setSizes([260, 450, 610])  # the page's own split: the list pane 450 px wide
    table.resize(450, 300)
    qtbot.waitUntil(lambda: table.viewport().width() > 400, timeout=WAIT_MS)
    assert table.columnWidth(0) >= 150, (
        f"the Entry column is squeezed: {table.columnWidth(0)} of {table.viewport().width()}"
    )
    titles = [page.conflicts.headerData(n, Qt.Orientation.Horizontal) for n in range(5)]
    assert "Recorded at" not in titles and titles[3] == "Entry version"
    assert page.conflicts.index(0, 3).data() == "v1"


def test_rule_patterns_read_as_what_they_match(qtbot, journal_path, open_desk):
    from proctor.core.approvals.rules import glob_escape

    from .rules.test_rules_page import cell, row_of
    from .runs.test_runs_page import open_page

    with Journal.open(journal_path, actor=Actor.agent("mailer")) as a:
        run = a.runs.start("crm", "mails", agent="mailer")
    exact = glob_escape(str(["k.watanabe@example.com", "mia@example.com"]))  # as made from
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:  # an approval
        one = bob.approvals.add_rule("allow", "email.send", resource_pattern=exact, run_id=run.id)
        many = bob.approvals.add_rule("allow", "fs.*", resource_pattern="src/*.py", run_id=run.id)
    window = open_desk(journal_path)
    page = open_page(qtbot, window, "rules")
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=WAIT_MS)
    shown = cell(page, row_of(page, one.id), "Resource")
    assert shown == "k.watanabe@example.com, mia@example.com", shown
    assert cell(page, row_of(page, many.id), "Resource") == "src/*.py"  # a real pattern
    assert cell(page, row_of(page, many.id), "Tool") == "fs.*"


def test_the_keyring_choice_is_off_and_says_why(qtbot, journal_path, open_desk, monkeypatch):
    from proctor.gui.forms import credentials

    monkeypatch.setattr(credentials.CredentialView, "keyring_known", None)
    from proctor.gui.decide import question

    monkeypatch.setattr(question, "keyring_status", lambda: (False, "no keyring backend"))
    with Journal.open(journal_path, actor=Actor.agent("asker")) as a:
        run = a.runs.start("shop", "keys", agent="asker")
        qid = a.questions.ask(run.id, "credential_binding", "Stripe key?").id
    window = open_desk(journal_path)
    view = Desk(qtbot, window).open_question(qid).view
    qtbot.waitUntil(lambda: "no keyring backend" in view.new_secret.toolTip(), timeout=WAIT_MS)
    assert not view.new_secret.isEnabled()


def test_no_tip_or_status_line_says_s_in_brackets(qtbot, populated, open_desk):
    """Every command's tooltip, and what the status bar says while the pointer is on it
    (its status tip), reads as words: "each selected approval", never "approval(s)"; so do
    the tooltips of the widgets on every page."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QWidget

    path, ids = populated
    window = open_desk(path)
    Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    said = []
    for action in window.findChildren(QAction):
        window.statusBar().clearMessage()
        action.hover()  # the status bar shows its status tip, as under the pointer
        said += [action.text(), action.toolTip(), action.statusTip()]
        said.append(window.statusBar().currentMessage())
    for page in ("inbox", "runs", "effects", "memory", "rules", "audit"):
        window.go(page)
        said += [w.toolTip() for w in window.findChildren(QWidget) if w.isVisible()]
    sidebar = window.sidebar_model
    qtbot.waitUntil(lambda: bool(sidebar.count("inbox")), timeout=WAIT_MS)
    said += [
        str(sidebar.index(row).data(Qt.ItemDataRole.ToolTipRole) or "")
        for row in range(sidebar.rowCount())
    ]
    bracketed = sorted({s for s in said if re.search(PLURAL_OF_ONE, s)})
    assert bracketed == []
