"""proctor:// links in the desk: followed in the window (the run, or the waiting item even
when the inbox's filters hide it), sent by `proctor open URL` to the desk that has the
journal open, and copied from an item or a run."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtWidgets import QApplication

from proctor.core.kernel.links import link_url
from proctor.gui.inbox.model import item_key
from proctor.gui.shell.app import DeskApp

from .conftest import WAIT_MS
from .test_single_instance import quiet_env, run_child

NO_RAISE = pytest.mark.qt_log_ignore("This plugin does not support raise")


def shown_key(window) -> str | None:
    item = window.inbox.detail.current_item()
    return item_key(item) if item is not None else None


@NO_RAISE
def test_an_item_link_shows_the_item_even_behind_the_inbox_filters(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    window.inbox.filters.search.setText("nothing matches this")
    window.inbox.filters.flush()
    window.go("runs")
    window.follow_link(link_url("item", ids["effect"]))
    qtbot.waitUntil(lambda: shown_key(window) == f"effect:{ids['effect']}", timeout=WAIT_MS)
    assert window.current_page_id() == "inbox"
    window.follow_link(link_url("item", ids["question"]))
    qtbot.waitUntil(lambda: shown_key(window) == f"question:{ids['question']}", timeout=WAIT_MS)


@NO_RAISE
def test_a_run_link_opens_the_run(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    window.follow_link(link_url("run", ids["run2"]))
    assert window.current_page_id() == "runs"
    qtbot.waitUntil(lambda: window.runs.detail.run is not None, timeout=WAIT_MS)
    assert window.runs.detail.run.id == ids["run2"]


@NO_RAISE
def test_a_link_to_nothing_waiting_or_a_bad_link_says_so(qtbot, populated, open_desk):
    path, _ids = populated
    window = open_desk(path)
    window.follow_link("proctor://item/apr_nope")
    qtbot.waitUntil(lambda: "Nothing waits" in window.notice.text(), timeout=WAIT_MS)
    window.follow_link("proctor://item/a;b")
    assert "Could not follow the link" in window.notice.text()


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_proctor_open_of_a_link_shows_it_in_the_desk_that_has_the_journal(
    qtbot, populated, tmp_path, settings
):
    path, ids = populated
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="alice")
        window = desk.window
        window.go("runs")
        url = link_url("item", ids["payment"])
        with qtbot.waitSignal(desk.instances.link_requested, timeout=WAIT_MS):
            done = run_child(
                qtbot,
                [sys.executable, "-m", "proctor", "open", url, "--journal", str(path)],
                quiet_env(tmp_path),
            )
        assert done.returncode == 0, done.stderr
        assert "with the link" in done.stderr
        qtbot.waitUntil(lambda: shown_key(window) == f"approval:{ids['payment']}", timeout=WAIT_MS)
        assert desk.window is window
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_a_desk_opened_for_a_link_shows_it_once_its_window_is_up(qtbot, populated, settings):
    path, ids = populated
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        desk.follow_link(link_url("run", ids["run"]))
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="alice")
        window = desk.window
        qtbot.waitUntil(lambda: window.runs.detail.run is not None, timeout=WAIT_MS)
        assert window.current_page_id() == "runs"
        assert window.runs.detail.run.id == ids["run"]
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


POPUP = pytest.mark.qt_log_ignore("does not support (grabbing|raise)")  # offscreen popups


def context_menu_at(qtbot, view, row: int):
    """A right click on ``row`` of ``view``: the row becomes current, the menu pops up."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QMenu

    index = view.model().index(row, 0)
    view.scrollTo(index)
    at = view.visualRect(index).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=at)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, view.viewport().mapToGlobal(at))
    QApplication.sendEvent(view.viewport(), event)
    qtbot.waitUntil(lambda: view.findChild(QMenu) is not None, timeout=WAIT_MS)
    return view.findChild(QMenu)


def click_entry(qtbot, menu, text: str) -> None:
    from PySide6.QtCore import Qt

    action = next(a for a in menu.actions() if a.text() == text)
    assert action.isEnabled()
    qtbot.waitUntil(menu.isVisible, timeout=WAIT_MS)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())


@POPUP
def test_copy_link_on_an_inbox_row_gives_a_link_that_opens_it(qtbot, populated, open_desk):
    from PySide6.QtGui import QGuiApplication

    from .driver import Desk

    path, ids = populated
    window = open_desk(path)
    desk = Desk(qtbot, window)
    row = desk.inbox_row(f"effect:{ids['effect']}")
    menu = context_menu_at(qtbot, window.inbox.table, row)
    click_entry(qtbot, menu, "Copy link")
    copied = QGuiApplication.clipboard().text()
    assert copied == "proctor://item/email%3Awelcome%3A42"
    window.go("runs")
    window.follow_link(copied)
    qtbot.waitUntil(lambda: shown_key(window) == f"effect:{ids['effect']}", timeout=WAIT_MS)


@POPUP
def test_copy_link_on_a_run_row_and_on_the_run_shown(qtbot, populated, open_desk):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    from .driver import Desk

    path, ids = populated
    window = open_desk(path)
    window.go("runs")
    desk = Desk(qtbot, window)
    row = desk.wait_row(window.runs.model, ids["run2"])
    menu = context_menu_at(qtbot, window.runs.table, row)
    click_entry(qtbot, menu, "Copy link")
    assert QGuiApplication.clipboard().text() == f"proctor://run/{ids['run2']}"
    window.show_run(ids["run"])
    qtbot.waitUntil(lambda: window.runs.detail.run is not None, timeout=WAIT_MS)
    window.registry.refresh()
    window.activateWindow()  # the menu had it
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
    qtbot.keyClick(
        window.runs.detail.events_pane.table,
        Qt.Key.Key_L,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert QGuiApplication.clipboard().text() == f"proctor://run/{ids['run']}"


def test_no_link_is_offered_for_an_id_that_would_not_show_as_itself(qtbot, populated, open_desk):
    from proctor.core import Actor, Journal

    from .driver import Desk

    path, ids = populated
    key = "email:12\u202e345"
    with Journal.open(path, actor=Actor.agent("bot")) as j:
        j.effects.reserve(key, tool="send_email", run_id=ids["run"], action={})
        j.effects.begin(key)
        j.effects.mark_ambiguous(key, "timed out")
    window = open_desk(path)
    desk = Desk(qtbot, window)
    desk.select_inbox_item(f"effect:{key}")
    window.registry.refresh()
    assert not window.registry.action("inbox.copy_link").isEnabled()
    assert window.registry.action("inbox.copy_id").isEnabled()
