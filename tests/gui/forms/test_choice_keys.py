"""Issue 32 (say-do): a choice question says "keys 1–9 pick". The number keys
choose an option wherever the focus is in the window while the question is shown (the
inbox list just clicked, a button of the form), and never while the focus is in a field
that takes typing (the note, the search box): there the digit is typed (item 5); and not
while single-key shortcuts are switched off."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from ..conftest import WAIT_MS
from ..data import agent
from ..driver import Desk

LEFT = Qt.MouseButton.LeftButton
OPTIONS = [
    {"value": "blue", "label": "Blue"},
    {"value": "green", "label": "Green"},
    {"value": "red", "label": "Red"},
]
SCHEMA = {
    "type": "object",
    "required": ["choice"],
    "properties": {
        "choice": {"enum": ["blue", "green", "red"]},
        "note": {"type": "string"},
    },
}


def ask(path: Path) -> str:
    with agent(path, "painter") as a:
        run = a.runs.start("shop", "Colours", agent="painter")
        return a.questions.ask(
            run.id, "choice", "Which colour?", options=OPTIONS, response_schema=SCHEMA
        ).id


def press(qtbot, key: Qt.Key) -> None:
    """A real key press, to whatever has the focus."""
    target = QApplication.focusWidget()
    assert target is not None
    QTest.keyClick(target, key)


def test_number_keys_pick_an_option_from_the_inbox_list(qtbot, journal_path, open_desk):
    qid = ask(journal_path)
    window = open_desk(journal_path)
    desk = Desk(qtbot, window)
    inbox = window.inbox
    desk.click_row(inbox.table, desk.inbox_row(f"question:{qid}"))  # the operator's click
    detail = desk.open_question(qid)
    view = detail.view
    inbox.table.setFocus()
    qtbot.waitUntil(inbox.table.hasFocus, timeout=WAIT_MS)
    press(qtbot, Qt.Key.Key_1)
    qtbot.waitUntil(lambda: view.chosen() == [0], timeout=WAIT_MS)
    assert view.value()["choice"] == "blue"
    press(qtbot, Qt.Key.Key_3)  # from the form's button, which has the focus now
    qtbot.waitUntil(lambda: view.chosen() == [2], timeout=WAIT_MS)
    assert inbox.current_item().id == qid  # the list did not move (no keyboard search)
    window.registry.set_single_keys(False)  # Preferences: single-key shortcuts off
    press(qtbot, Qt.Key.Key_2)  # delivered at once (keyClick): nothing is left to wait for
    assert view.chosen() == [2]


def test_number_keys_are_typed_in_a_field(qtbot, journal_path, open_desk):
    qid = ask(journal_path)
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(qid)
    view = detail.view
    assert view.note is not None
    qtbot.mouseClick(view.note, LEFT, pos=QPoint(10, view.note.height() // 2))
    qtbot.waitUntil(view.note.hasFocus, timeout=WAIT_MS)
    press(qtbot, Qt.Key.Key_1)
    assert view.note.text() == "1" and view.chosen() == []
    search = window.inbox.filters.search
    qtbot.mouseClick(search, LEFT, pos=QPoint(10, search.height() // 2))
    qtbot.waitUntil(search.hasFocus, timeout=WAIT_MS)
    press(qtbot, Qt.Key.Key_2)
    assert search.text() == "2" and view.chosen() == []
