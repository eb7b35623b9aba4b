"""Issue 32 item 14: nothing moves under the pointer. A form's "N problems to fix" line and
each field's problem line, the rule editor's preview and problem lines, and the banners
above a page's list and detail take their room whether shown or not: the decision buttons
and the form's fields stay where they were (``mapToGlobal``) while those come and go."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPlainTextEdit, QWidget

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


def labels_saying(root: QWidget, words: str) -> list[QLabel]:
    words = words.casefold()
    return [w for w in root.findChildren(QLabel) if words in w.text().casefold() and w.isVisible()]


def laid_out() -> None:
    """Every pending layout done now (the splitter's and the labels' resizes are posted)."""
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
    QApplication.sendPostedEvents()


def fill_the_line(qtbot, window, label: QLabel) -> None:
    """Narrow the inbox's detail until ``label``'s text just fits on its line."""
    split = window.inbox.splitter
    for _ in range(8):
        laid_out()
        spare = label.width() - label.fontMetrics().horizontalAdvance(label.text())
        if 4 <= spare <= 30:
            return
        left, right = split.sizes()
        split.setSizes([left + spare - 15, right - spare + 15])
    raise AssertionError(f"could not fit {label.text()!r} in {label.width()} px")


def test_seen_by_coming_moves_nothing_below_it(qtbot, journal_path, open_desk, monkeypatch):
    """The facts line gains "seen by operator:alice at HH:MM" a second after the question
    is shown (it is marked presented): the prompt, the form and the buttons stay put."""
    from proctor.gui.decide import question

    monkeypatch.setattr(question, "PRESENT_AFTER_MS", 2500)  # time to lay the form out first
    with agent(journal_path, "asker") as a:
        run = a.runs.start("shop", "A form whose title fills the line", agent="asker")
        qid = a.questions.ask(run.id, "form", "Details?", response_schema=SCHEMA).id
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(qid)
    fields = [
        w
        for w in detail.view.findChildren(QWidget)
        if isinstance(w, QLineEdit | QPlainTextEdit) and w.accessibleName()
    ]
    watched = [detail.submit_button, detail.prompt, detail.request, *fields]
    window.resize(1400, 900)
    fill_the_line(qtbot, window, detail.facts)  # what comes next must wrap, if it can
    qtbot.waitUntil(lambda: not detail.request.is_preparing(), timeout=WAIT_MS)
    laid_out()  # the request's tree filled in and laid out
    assert not labels_saying(detail, "seen by")
    before = where(watched)
    qtbot.waitUntil(lambda: bool(labels_saying(detail, "seen by operator:alice")), timeout=WAIT_MS)
    assert where(watched) == before, "the 'seen by' line pushed the form down"


def test_a_credential_problem_moves_nothing(qtbot, journal_path, open_desk, monkeypatch):
    from proctor.gui.forms.credentials import CredentialView

    monkeypatch.setattr(CredentialView, "keyring_known", (False, "no keyring in this test"))
    with agent(journal_path, "ops") as a:
        run = a.runs.start("infra", "Keys", agent="ops")
        qid = a.questions.ask(run.id, "credential_binding", "Stripe key?").id
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(qid)
    view = detail.view
    assert isinstance(view, CredentialView)
    watched = [detail.submit_button, detail.request, view.refs, view.name, view.secret]
    if view.note is not None:
        watched.append(view.note)
    before = where(watched)
    qtbot.mouseClick(view.refs.lineEdit(), LEFT)
    qtbot.keyClicks(view.refs.lineEdit(), "not a reference")
    qtbot.waitUntil(lambda: bool(view.problem.text()) and view.problem.isVisible(), timeout=WAIT_MS)
    assert where(watched) == before, "the problem line pushed what is below it"
    view.refs.lineEdit().clear()
    qtbot.keyClicks(view.refs.lineEdit(), "vault://team/stripe")
    qtbot.waitUntil(lambda: not view.problem.isVisible(), timeout=WAIT_MS)
    assert where(watched) == before, "the problem line's going pulled them up"


def test_the_held_arrivals_bar_moves_no_row(qtbot, journal_path, open_desk):
    from PySide6.QtTest import QTest

    with agent(journal_path, "coder") as a:
        run = a.runs.start("shop", "arrivals", agent="coder")
        first = request(a, run.id, "fs.write", {"path": "f"}, "write it")
    window = open_desk(journal_path)
    inbox = window.inbox
    Desk(qtbot, window).open_inbox_item(f"approval:{first}")
    watched = [inbox.table, inbox.table.viewport(), inbox.detail]
    before = where(watched)
    QTest.mouseMove(inbox.table.viewport(), QPoint(40, 10))  # the operator works the list
    qtbot.waitUntil(inbox.pointer_on_list, timeout=WAIT_MS)
    with agent(journal_path, "late") as late:
        run = late.runs.start("shop", "late", agent="late")
        request(late, run.id, "fs.write", {"path": "g"}, "write it too")
    qtbot.waitUntil(lambda: "1 new request held" in inbox.new_bar.text(), timeout=WAIT_MS)
    assert where(watched) == before, "the 'N new requests' bar pushed the list down"
    qtbot.mouseClick(inbox.new_bar.button, LEFT)
    qtbot.waitUntil(lambda: not inbox.new_bar.text(), timeout=WAIT_MS)
    assert where(watched) == before, "its going pulled the list up"
