"""Issue 32 item 5: a single-key shortcut (A approve, D deny, S snooze, X, J, K, C, F…) never
fires while the focus is in a field that takes typing — a line, a text box, a combo box
(editable or not, and its open list), a spin box, an editable table cell. Each field kind
is clicked right after the item became current (the detail just changed), then a, d and s
are typed: the item stays pending and unsnoozed."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS
from ..data import agent, request
from ..driver import Desk

POPUP_NOISE = pytest.mark.qt_log_ignore("does not support (grabbing|raise)")  # offscreen popups
LEFT = Qt.MouseButton.LeftButton
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "notes": {"type": "string", "title": "Notes", "format": "textarea", "maxLength": 5000},
        "tier": {"enum": ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"], "title": "Tier"},
        "count": {"type": "integer", "title": "Count"},
    },
}
OPEN = {(s, False) for s in ("pending", "requested", "presented")}
KINDS = (
    "line",
    "text",
    "combo",
    "combo-popup",
    "number",
    "credential",
    "credential-popup",
    "reason",
    "cell",
)


def status(path: Path, key: str) -> tuple[str, bool]:
    kind, item_id = key.split(":", 1)
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        entity = j.approvals.get(item_id) if kind == "approval" else j.questions.get(item_id)
        snoozed = getattr(entity, "snoozed_until", None) is not None
        return entity.status.value, snoozed


@pytest.fixture
def journal(journal_path: Path) -> tuple[Path, dict[str, str]]:
    ids: dict[str, str] = {}
    with agent(journal_path, "coder") as a:
        run = a.runs.start("webshop", "Typing test", agent="coder")
        ids["approval"] = "approval:" + request(
            a,
            run.id,
            "fs.write",
            {"path": "src/a.py"},
            "Write it.",
            safety_class="idempotent_write",
        )
        ids["form"] = (
            "question:" + a.questions.ask(run.id, "form", "Fill this in", response_schema=SCHEMA).id
        )
        ids["credential"] = (
            "question:"
            + a.questions.ask(
                run.id,
                "credential_binding",
                "Stripe key?",
                request={"service": "stripe", "suggested": ["vault://a", "vault://s"]},
            ).id
        )
    return journal_path, ids


def field_of(detail, kind: str) -> QWidget:
    """The widget of ``kind`` on the shown detail (found by its accessible name)."""
    view = getattr(detail, "view", None)
    if kind.startswith("credential"):
        return view.refs
    if kind == "reason":  # the approval's reason box
        boxes = [w for w in detail.findChildren(QPlainTextEdit) if not w.isReadOnly()]
        return next(w for w in boxes if w.isVisible())
    names = {"line": "Name", "text": "Notes", "combo": "Tier", "number": "Count"}
    name = names[kind.removesuffix("-popup")]
    return next(
        w
        for w in view.findChildren(QWidget)
        if w.accessibleName() == name and isinstance(w, (QLineEdit, QPlainTextEdit, QComboBox))
    )


def click_into(qtbot, widget: QWidget) -> None:
    widget.window().activateWindow()
    qtbot.mouseClick(widget, LEFT, pos=QPoint(widget.width() // 2, widget.height() // 2))
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=WAIT_MS)


def item_for(kind: str) -> str:
    if kind in ("reason",):
        return "approval"
    return "credential" if kind.startswith("credential") else "form"


@POPUP_NOISE
@pytest.mark.parametrize("kind", KINDS)
def test_single_keys_never_fire_while_typing(qtbot, open_desk, journal, kind) -> None:
    path, ids = journal
    window = open_desk(path)
    desk = Desk(qtbot, window)
    key = ids[item_for(kind)]
    if kind == "cell":
        detail = desk.open_inbox_item(ids["form"])
        # an editable cell the desk builds: any table in a page whose cells take typing
        table = QTableWidget(2, 2, detail)
        table.setItem(0, 0, QTableWidgetItem("x"))
        table.setEditTriggers(QAbstractItemView.EditTrigger.AnyKeyPressed)
        table.show()
        table.setCurrentCell(0, 0)
        table.setFocus()
        qtbot.waitUntil(table.hasFocus, timeout=WAIT_MS)
        field: QWidget = table
    else:
        detail = desk.open_inbox_item(key)
        if item_for(kind) != "approval":
            qtbot.waitUntil(lambda: getattr(detail, "view", None) is not None, timeout=WAIT_MS)
        field = field_of(detail, kind)
        assert field is not None, kind
        click_into(qtbot, field)
        opened = isinstance(field, QComboBox) and field.view().isVisible()
        if opened and not kind.endswith("-popup"):  # the click opened its list: close it
            assert isinstance(field, QComboBox)
            QTest.keyClick(field.view(), Qt.Key.Key_Escape)
            qtbot.waitUntil(lambda: not field.view().isVisible(), timeout=WAIT_MS)
        if kind.endswith("-popup"):
            view_refs = field
            assert isinstance(view_refs, QComboBox)
            view_refs.showPopup()
            qtbot.waitUntil(lambda: view_refs.view().isVisible(), timeout=WAIT_MS)
    fired: list[str] = []
    window.registry.triggered.connect(fired.append)
    target = QApplication.focusWidget() or field
    for letter in "ads":
        QTest.keyClick(target, letter)
    assert fired == [], (kind, type(target).__name__)
    runner = window.services.runner
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT_MS)
    assert status(path, key) in OPEN, kind
