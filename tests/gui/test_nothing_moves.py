"""Issue 32 item 14: nothing moves under the pointer. A form's "N problems to fix" line and
each field's problem line, the rule editor's preview and problem lines, and the banners
above a page's list and detail take their room whether shown or not: the decision buttons
and the form's fields stay where they were (``mapToGlobal``) while those come and go."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from proctor.core import Actor, Journal
from proctor.gui.widgets.message_bar import MessageBar

from .conftest import WAIT_MS, settled
from .data import agent, request
from .driver import Desk

LEFT = Qt.MouseButton.LeftButton
SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 3},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "count": {"type": "integer", "title": "Count", "minimum": 1},
        "notes": {"type": "string", "title": "Notes"},
    },
}


def where(widgets: list[QWidget]) -> list[tuple[int, int]]:
    spots = []
    for w in widgets:
        p = w.mapToGlobal(QPoint(0, 0))
        spots.append((p.x(), p.y()))
    return spots


def test_form_problem_lines_move_no_field_and_no_button(qtbot, journal_path, open_desk):
    with agent(journal_path, "asker") as a:
        run = a.runs.start("shop", "form", agent="asker")
        qid = a.questions.ask(run.id, "form", "Details?", response_schema=SCHEMA).id
    window = open_desk(journal_path)
    window.resize(1400, 900)  # the demo's screen: the form has the room it asks for
    detail = Desk(qtbot, window).open_question(qid)
    view = detail.view
    fields = {
        w.accessibleName(): w
        for w in view.findChildren(QWidget)
        if isinstance(w, QLineEdit | QPlainTextEdit) and w.accessibleName()
    }
    name, email, count = fields["Name"], fields["Email"], fields["Count"]
    watched = [detail.submit_button, name, email, count, fields["Notes"]]
    before = where(watched)
    steps = [
        (name, "ab"),  # too short: a problem under Name, "1 problem to fix"
        (name, "c"),  # fixed: both lines go
        (email, "nope"),  # a problem under Email
        (count, "0"),  # and under Count: "N problems to fix"
    ]
    for field, typed in steps:
        qtbot.keyClicks(field, typed)
        assert where(watched) == before, f"moved after typing {typed!r}"
    assert "to fix" in view.form.summary.text()
    for field in (email, count):
        field.clear()
        assert where(watched) == before
    assert view.form.summary.text() == ""


def test_rule_preview_and_problem_lines_move_no_button(qtbot, journal_path, open_desk):
    with agent(journal_path, "coder") as a:
        run = a.runs.start("shop", "rules", agent="coder")
        for n in range(6):  # past requests: "*" matches many (a longer preview)
            past = request(a, run.id, f"tool.{n}", {"path": f"p{n}"}, "old")
            with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
                bob.approvals.decide(past, True, expected_version=1, reason="ok")
        approval_id = request(a, run.id, "tool.0", {"path": "new"}, "write it")
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{approval_id}")
    settled(qtbot, window)
    radio = detail.scopes.button(1)  # "Always in this run": the rule editor opens
    qtbot.mouseClick(radio, LEFT, pos=QPoint(8, radio.height() // 2))
    panel = detail.rule_panel
    qtbot.waitUntil(lambda: panel.isVisible() and panel.preview is not None, timeout=WAIT_MS)
    watched = [
        detail.approve_button,
        detail.deny_button,
        detail.edit_button,
        detail.reason,
        radio,
        panel.resource,
        panel.condition,
        panel.scope,
        panel.apply,
    ]
    before = where(watched)
    panel.resource.selectAll()
    qtbot.keyClicks(panel.resource, "*")  # a preview of another length, "Previewing…" first
    qtbot.waitUntil(lambda: panel.summary.text().startswith("Previewing"), timeout=WAIT_MS)
    assert where(watched) == before
    qtbot.waitUntil(lambda: not panel.summary.text().startswith("Previewing"), timeout=WAIT_MS)
    assert where(watched) == before
    qtbot.keyClicks(panel.condition, "args.bytes <=")  # not a condition: a problem line
    qtbot.waitUntil(lambda: bool(panel.problem.text()), timeout=WAIT_MS)
    assert where(watched) == before


def test_a_banner_coming_and_going_moves_nothing(qtbot, journal_path: Path, open_desk, monkeypatch):
    monkeypatch.setattr(MessageBar, "success_close_ms", 300, raising=False)
    ids = []
    with agent(journal_path, "coder") as a:
        run = a.runs.start("shop", "banners", agent="coder")
        for n in range(3):
            ids.append(request(a, run.id, "fs.write", {"path": f"f{n}"}, "same reason"))
    window = open_desk(journal_path)
    inbox = window.inbox
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{ids[-1]}")
    settled(qtbot, window)
    watched = [inbox.table.viewport(), inbox.detail, detail.approve_button, detail.reason]
    before = where(watched)
    qtbot.mouseClick(detail.approve_button, LEFT)
    bars = [b for b in inbox.findChildren(MessageBar)]
    qtbot.waitUntil(lambda: any("Approved" in b.text() for b in bars), timeout=WAIT_MS)
    assert where(watched) == before, "the banner pushed the list and the detail down"
    qtbot.waitUntil(lambda: not any("Approved" in b.text() for b in bars), timeout=WAIT_MS)
    assert where(watched) == before, "the banner's closing pulled them up"


def test_the_arrivals_banner_above_every_page_moves_nothing(qtbot, journal_path, open_desk):
    with agent(journal_path, "coder") as a:
        run = a.runs.start("shop", "banners", agent="coder")
        first = request(a, run.id, "fs.write", {"path": "f"}, "write it")
    window = open_desk(journal_path)
    window.resize(1400, 900)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{first}")
    watched = [window.inbox.filters.search, window.inbox.table.viewport(), detail.approve_button]
    before = where(watched)
    # what the notifier shows when a request arrives (gui/shell/notify.py), on its bar
    window.banner.show_message("New request waiting — coder: fs.write g", action="Show")
    assert where(watched) == before, "the arrivals banner pushed the page down"
    window.banner.clear()
    assert where(watched) == before, "its closing pulled the page up"
