"""Saved views on the Inbox: the operator sets filters, saves them under a name from the
Views menu, applies the view again later (after a restart too: they are kept in the
desk's preferences) and deletes it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLineEdit, QMenu

from proctor.core.models import InboxKind
from proctor.gui.infra.settings import DeskSettings

from ..conftest import WAIT_MS
from ..driver import Desk

LEFT = Qt.MouseButton.LeftButton
POPUP = pytest.mark.qt_log_ignore(
    "does not support (grabbing|raise|propagateSizeHints)"
)  # offscreen


def choose(qtbot, button, *texts: str) -> None:
    """Click ``button`` and then, in the menu it pops up (and its submenus), the entries
    ``texts``, each with a real click."""
    shown: list[QMenu] = []

    def step() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu) or (shown and menu is shown[-1]):
            QTimer.singleShot(20, step)
            return
        shown.append(menu)
        text = texts[len(shown) - 1]
        action = next(a for a in menu.actions() if a.text() == text)
        if len(shown) < len(texts):
            QTimer.singleShot(20, step)
        qtbot.mouseClick(menu, LEFT, pos=menu.actionGeometry(action).center())

    QTimer.singleShot(0, step)
    qtbot.mouseClick(button, LEFT)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=WAIT_MS)


def save_view(qtbot, views, name: str) -> None:
    choose(qtbot, views, "Save view…")
    qtbot.waitUntil(lambda: views.dialog is not None and views.dialog.isVisible(), timeout=WAIT_MS)
    dialog = views.dialog
    qtbot.keyClicks(dialog.findChild(QLineEdit), name)
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, LEFT)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


def entries(views) -> list[str]:
    views.menu_.aboutToShow.emit()
    return [a.text() for a in views.menu_.actions() if a.text() and not a.menu()]


@POPUP
def test_a_saved_view_brings_its_filters_back_after_a_restart_until_deleted(
    qtbot, populated, open_desk, settings, tmp_path
):
    path, ids = populated
    window = open_desk(path)
    inbox, desk = window.inbox, Desk(qtbot, window)
    desk.inbox_row(f"approval:{ids['payment']}")
    filters = inbox.filters
    qtbot.keyClicks(filters.search, "invoice")
    filters.kind.setCurrentIndex(filters.kind.findData(InboxKind.APPROVAL.value))
    filters.sort.setCurrentIndex(filters.sort.findData(False))  # oldest first
    filters.flush()
    wanted = filters.value()
    save_view(qtbot, inbox.views, "Invoices, oldest first")
    assert entries(inbox.views) == ["Save view…", "Invoices, oldest first"]

    filters.show_only(newest_first=True)  # back to everything
    assert filters.value() != wanted
    choose(qtbot, inbox.views, "Invoices, oldest first")
    assert filters.value() == wanted
    assert inbox.model.filter == wanted
    assert filters.search.text() == "invoice"
    qtbot.waitUntil(lambda: inbox.model.row_of(f"approval:{ids['payment']}") >= 0, timeout=WAIT_MS)
    assert inbox.model.row_of(f"question:{ids['question']}") < 0

    # a restart: the views are read back from the preferences file
    again = DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))
    assert list(again.views("inbox")) == ["Invoices, oldest first"]
    window.close()
    second = open_desk(path)
    assert "Invoices, oldest first" in entries(second.inbox.views)
    choose(qtbot, second.inbox.views, "Invoices, oldest first")
    assert second.inbox.filters.value() == wanted

    choose(qtbot, second.inbox.views, "Delete view", "Invoices, oldest first")
    assert entries(second.inbox.views) == ["Save view…"]
    again = DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))
    assert again.views("inbox") == {}


def test_views_read_from_a_damaged_or_hostile_preferences_file_do_no_harm(
    qtbot, populated, open_desk, settings
):
    path, _ids = populated
    settings.q.setValue("views/inbox", "{not json")
    assert settings.views("inbox") == {}
    settings.q.setValue(
        "views/inbox",
        '{"x\\u202ey": {"kind": "nonsense", "agent": 7, "snoozed": "yes", "text": "a\\nb"},'
        ' "list": [1]}',
    )
    window = open_desk(path)
    views = window.inbox.views
    assert entries(views) == ["Save view…", "x\\u202ey"]  # shown escaped
    views.apply_view("x\u202ey")
    f = window.inbox.filters.value()
    assert f.kinds == frozenset() and f.agent is None and f.snoozed is False
    with pytest.raises(ValueError, match="needs a name"):
        settings.save_view("inbox", "   ", {})
