"""Issue 16: focus after a decision and in the search box, "presented" only once an item
has been on screen a while, arrivals never move the rows under the pointer. Real journal
files, real window, keys and clicks through qtbot."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS
from ..data import agent, request


def read(path: Path, fn):
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        return fn(j)


def q_status(path: Path, qid: str) -> str:
    return read(path, lambda j: j.questions.get(qid).status.value)


@pytest.fixture
def desk_journal(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """One run: approvals older, then three questions (newest first in the inbox:
    q3, q2, q1, then the approvals)."""
    path = tmp_path / "journal.db"
    ids: dict[str, str] = {}
    with agent(path, "coder") as a:
        run = a.runs.start("webshop", "Tidy the cart", agent="coder")
        ids["run"] = run.id
        ids["a1"] = request(
            a,
            run.id,
            "fs.write",
            {"path": "src/alpha.py"},
            "Alpha.",
            safety_class="idempotent_write",
        )
        ids["a2"] = request(
            a,
            run.id,
            "fs.write",
            {"path": "src/bravo.py"},
            "Bravo.",
            safety_class="idempotent_write",
        )
        for n in (1, 2, 3):
            ids[f"q{n}"] = a.questions.ask(run.id, "question", f"Question number {n}?").id
    return path, ids


def wait_key(qtbot, window, key: str) -> None:
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)


def loaded(qtbot, window, item_id: str):
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.id == item_id
            and pane.current_item().id == item_id
        ),
        timeout=WAIT_MS,
    )
    return pane.current()


def type_key(qtbot, window, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key to whatever has the focus now (as a person types: no focus is forced)."""
    qtbot.waitUntil(window.isActiveWindow)
    target = QApplication.focusWidget() or window
    qtbot.keyClick(target, key, modifier)


def idle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)


# ---------------------------------------------------------------- focus (item 6)
def test_after_ctrl_enter_answer_the_next_j_moves_in_the_list(qtbot, desk_journal, open_desk):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"question:{ids['q1']}")
    inbox.set_current_row(inbox.model.row_of(f"question:{ids['q1']}"))
    detail = loaded(qtbot, window, ids["q1"])
    qtbot.waitUntil(lambda: detail.view is not None, timeout=WAIT_MS)
    detail.view.edit.setFocus()
    qtbot.keyClicks(detail.view.edit, "use the new one")
    type_key(qtbot, window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: q_status(path, ids["q1"]) == "resolved", timeout=WAIT_MS)
    loaded(qtbot, window, ids["a2"])  # advanced to the next item
    qtbot.waitUntil(inbox.table.hasFocus, timeout=WAIT_MS)
    type_key(qtbot, window, Qt.Key.Key_J)
    qtbot.waitUntil(
        lambda: inbox.current_item() is not None and inbox.current_item().id == ids["a1"],
        timeout=WAIT_MS,
    )
    assert inbox.filters.search.text() == ""
    assert inbox.model.filter.text is None


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Down])
def test_enter_or_down_in_search_goes_to_the_first_result(qtbot, desk_journal, open_desk, key):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"approval:{ids['a2']}")
    type_key(qtbot, window, Qt.Key.Key_Slash)
    qtbot.waitUntil(inbox.filters.search.hasFocus, timeout=WAIT_MS)
    qtbot.keyClicks(inbox.filters.search, "Bravo")
    type_key(qtbot, window, key)
    qtbot.waitUntil(
        lambda: (
            inbox.table.hasFocus()
            and inbox.current_item() is not None
            and inbox.current_item().id == ids["a2"]
            and inbox.model.rowCount() == 1
        ),
        timeout=WAIT_MS,
    )
    type_key(qtbot, window, Qt.Key.Key_K)  # a command again, never typed into the search
    assert inbox.filters.search.text() == "Bravo"


def test_escape_in_search_clears_it_and_returns_to_the_list(qtbot, desk_journal, open_desk):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"approval:{ids['a2']}")
    rows = inbox.model.rowCount()
    type_key(qtbot, window, Qt.Key.Key_Slash)
    qtbot.waitUntil(inbox.filters.search.hasFocus, timeout=WAIT_MS)
    qtbot.keyClicks(inbox.filters.search, "Alpha")
    qtbot.waitUntil(lambda: inbox.model.rowCount() == 1, timeout=WAIT_MS)
    type_key(qtbot, window, Qt.Key.Key_Escape)
    qtbot.waitUntil(
        lambda: inbox.table.hasFocus() and inbox.model.rowCount() == rows, timeout=WAIT_MS
    )
    assert inbox.filters.search.text() == ""


# ---------------------------------------------------------------- presented (item 10)
def presented_ids(path: Path, run_id: str) -> list[str]:
    events = read(path, lambda j: j.runs.events(run_id, types=["interaction.presented"]))
    return [e.payload.get("interaction_id") for e in events]


def test_questions_crossed_with_j_are_not_presented(qtbot, desk_journal, open_desk):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"question:{ids['q3']}")
    inbox.set_current_row(inbox.model.row_of(f"question:{ids['q3']}"))
    loaded(qtbot, window, ids["q3"])
    inbox.table.setFocus()
    type_key(qtbot, window, Qt.Key.Key_J)
    loaded(qtbot, window, ids["q2"])  # q2 is shown whole for a moment, then passed over
    type_key(qtbot, window, Qt.Key.Key_J)
    loaded(qtbot, window, ids["q1"])  # the operator stays on q1
    qtbot.waitUntil(lambda: q_status(path, ids["q1"]) == "presented", timeout=WAIT_MS)
    idle(qtbot, window)
    assert q_status(path, ids["q2"]) == "requested"
    assert q_status(path, ids["q3"]) == "requested"
    assert presented_ids(path, ids["run"]) == [ids["q1"]]


def test_the_top_search_hit_is_not_presented_at_once(qtbot, desk_journal, open_desk):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"question:{ids['q2']}")
    inbox.set_current_row(inbox.model.row_of(f"approval:{ids['a1']}"))
    loaded(qtbot, window, ids["a1"])
    type_key(qtbot, window, Qt.Key.Key_Slash)
    qtbot.keyClicks(inbox.filters.search, "number 2")
    type_key(qtbot, window, Qt.Key.Key_Return)
    loaded(qtbot, window, ids["q2"])  # the top hit is shown
    type_key(qtbot, window, Qt.Key.Key_Slash)  # and left at once: back to the search,
    type_key(qtbot, window, Qt.Key.Key_Escape)  # which Esc clears
    qtbot.waitUntil(lambda: inbox.model.rowCount() == 5, timeout=WAIT_MS)
    inbox.set_current_row(inbox.model.row_of(f"approval:{ids['a1']}"))
    loaded(qtbot, window, ids["a1"])
    idle(qtbot, window)
    assert q_status(path, ids["q2"]) == "requested"


# ---------------------------------------------------------------- arrivals (item 5)
def pointer_over_list(window) -> None:
    viewport = window.inbox.table.viewport()
    QTest.mouseMove(viewport, QPoint(40, 10))


def test_arrivals_wait_behind_a_bar_while_the_pointer_is_over_the_list(
    qtbot, desk_journal, open_desk
):
    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"approval:{ids['a1']}")
    inbox.set_current_row(inbox.model.row_of(f"approval:{ids['a2']}"))
    loaded(qtbot, window, ids["a2"])
    rows = [inbox.model.item(r).id for r in range(inbox.model.rowCount())]
    pointer_over_list(window)
    qtbot.waitUntil(inbox.pointer_on_list, timeout=WAIT_MS)
    with agent(path, "late") as late:
        run = late.runs.start("webshop", "Late arrival", agent="late")
        new_id = request(late, run.id, "fs.write", {"path": "src/new.py"}, "New.")
    bar = inbox.new_bar
    qtbot.waitUntil(lambda: bar.isVisible() and "1 new" in bar.text(), timeout=WAIT_MS)
    assert [inbox.model.item(r).id for r in range(inbox.model.rowCount())] == rows
    assert inbox.current_item().id == ids["a2"]  # the selection did not move
    qtbot.mouseClick(bar.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: inbox.model.row_of(f"approval:{new_id}") >= 0, timeout=WAIT_MS)
    assert not bar.isVisible()
    assert inbox.current_item().id == ids["a2"]


def test_arrivals_wait_while_the_operator_is_pressing_keys(
    qtbot, desk_journal, open_desk, monkeypatch
):
    from proctor.gui.decide import settle

    path, ids = desk_journal
    window = open_desk(path)
    inbox = window.inbox
    wait_key(qtbot, window, f"approval:{ids['a1']}")
    QTest.mouseMove(window.inbox.filters.search)  # the pointer is elsewhere
    clock = [10_000.0]
    monkeypatch.setattr(settle, "now", lambda: clock[0])
    inbox.set_current_row(inbox.model.row_of(f"question:{ids['q2']}"))
    inbox.table.setFocus()
    type_key(qtbot, window, Qt.Key.Key_J)  # the operator is moving through the list
    loaded(qtbot, window, ids["q1"])
    count = inbox.model.rowCount()
    with agent(path, "late") as late:
        run = late.runs.start("webshop", "Late arrival", agent="late")
        new_id = request(late, run.id, "fs.write", {"path": "src/new.py"}, "New.")
    qtbot.waitUntil(lambda: inbox.new_bar.isVisible(), timeout=WAIT_MS)
    assert inbox.model.rowCount() == count and inbox.current_item().id == ids["q1"]
    type_key(qtbot, window, Qt.Key.Key_N)  # a key shows them
    qtbot.waitUntil(lambda: inbox.model.row_of(f"approval:{new_id}") >= 0, timeout=WAIT_MS)
    assert inbox.current_item().id == ids["q1"]
