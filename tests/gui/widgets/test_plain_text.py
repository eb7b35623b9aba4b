"""Agent text is data: HTML in arguments and reasons shows as the literal characters."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from proctor.gui.widgets import paged_model

from ..data import HOSTILE_ARGS, HOSTILE_REASON


def show_hostile(qtbot, window, ids):
    model = window.inbox.model
    key = f"approval:{ids['hostile']}"
    qtbot.waitUntil(lambda: model.row_of(key) >= 0)
    window.inbox.set_current_row(model.row_of(key))
    detail = window.inbox.detail
    qtbot.waitUntil(
        lambda: detail.current().entity is not None and detail.current().entity.id == ids["hostile"]
    )
    return detail.current()


def test_html_in_reason_and_arguments_is_literal(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    detail = show_hostile(qtbot, window, ids)
    assert detail.agent_reason.text() == HOSTILE_REASON
    assert detail.agent_reason.shown_text() == HOSTILE_REASON
    assert detail.agent_reason.label.textFormat() == Qt.TextFormat.PlainText
    tree_values = set()
    model = detail.args.model
    for row in range(model.rowCount()):
        parent = model.index(row, 0)
        for child in range(model.rowCount(parent)):
            tree_values.add(model.index(child, 1, parent).data())
    assert set(HOSTILE_ARGS.values()) <= tree_values
    row = window.inbox.model.row_of(f"approval:{ids['hostile']}")
    summary = window.inbox.model.index(row, 1).data()
    assert "<b>bold</b>" in summary and "<img src=" in summary


def test_every_label_in_the_window_is_plain_text(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    show_hostile(qtbot, window, ids)
    for page in ("runs", "memory", "effects", "audit"):
        window.go(page)
    window.show_shortcuts()
    rich = [
        label
        for label in window.findChildren(QLabel)
        if label.textFormat() != Qt.TextFormat.PlainText and label.text()
    ]
    assert [label.text() for label in rich] == []


def test_cells_never_carry_rich_text_roles(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    model = window.inbox.model
    row = model.row_of(f"approval:{ids['hostile']}")
    for col in range(model.columnCount()):
        index = model.index(row, col)
        text = index.data(Qt.ItemDataRole.DisplayRole)
        assert text is None or isinstance(text, str)
    assert model.index(row, 0).data(paged_model.ITEM_ROLE).id == ids["hostile"]
