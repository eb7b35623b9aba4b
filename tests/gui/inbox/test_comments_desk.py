"""The item's comment thread in the desk, with real widgets: the operator types a comment
and posts it with Ctrl+Enter (it shows, read back through the change feed); another
operator's comment, written through a second journal handle, appears by itself; a hostile
comment (3 MB, bidi overrides, terminal codes) is shown bounded and escaped, never as
markup; a refused post keeps what was typed."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.comments import rows

from ..conftest import WAIT_MS
from ..driver import Desk


def thread_texts(panel) -> list[str]:
    return [view.comment.text for view in panel.views()]


def test_type_post_see_it_and_another_operators_comment_arrives(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    panel = detail.comments
    assert not panel.isVisible()  # closed until opened: the item's form keeps its room
    qtbot.mouseClick(panel.toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.empty.isVisible(), timeout=WAIT_MS)
    assert panel.toggle.text() == "Comments (0)"
    assert not panel.post_button.isEnabled()  # nothing typed: nothing to post

    qtbot.keyClicks(panel.box, "who is acme?")
    assert panel.post_button.isEnabled()
    qtbot.keyClick(panel.box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: thread_texts(panel) == ["who is acme?"], timeout=WAIT_MS)
    assert panel.box.toPlainText() == ""
    [view] = panel.views()
    assert view.head.text().startswith("operator:alice · ")
    assert not panel.empty.isVisible()
    with Journal.open(path, actor=Actor.operator("bob"), read_only=True) as j:
        assert j.approvals.get(ids["approval"]).status.value == "pending"  # Ctrl+Enter posted

    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.comments.add(ids["approval"], "our cloud vendor; the amount matches the PO")
    qtbot.waitUntil(
        lambda: (
            thread_texts(panel) == ["who is acme?", "our cloud vendor; the amount matches the PO"]
        ),
        timeout=WAIT_MS,
    )
    assert panel.views()[1].head.text().startswith("operator:bob · ")
    assert panel.toggle.text() == "Comments (2)"
    with Journal.open(path, actor=Actor.operator("bob"), read_only=True) as j:
        assert j.approvals.get(ids["approval"]).status.value == "pending"


def test_a_hostile_comment_is_shown_bounded_and_escaped(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    panel = detail.comments
    panel.open_thread()
    hostile = "<b>bold</b> \u202eevil\u202c \x1b[31m" + "A" * 3_000_000
    with Journal.open(path, actor=Actor.operator("mallory")) as mallory:
        # a same-user writer past the service's bound (the store's triggers keep no size)
        mallory.write(lambda tx: rows.add_in(tx, ids["approval"], hostile, None, None, "api"))
    qtbot.waitUntil(lambda: len(panel.views()) == 1, timeout=WAIT_MS)
    [view] = panel.views()
    shown = view.body.shown_text()
    assert len(shown) < 5_000  # the preview, not 3 MB laid out
    assert view.body.more.isVisible()  # "Show all (…)" opens the paged viewer
    assert "\u202e" not in shown and "\x1b" not in shown  # made visible, never applied
    assert "<b>bold</b>" in shown  # markup is text
    assert view.body.label.textFormat() == Qt.TextFormat.PlainText


def test_a_refused_post_keeps_the_text(qtbot, populated, open_desk, monkeypatch):
    path, ids = populated
    window = open_desk(path)
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    panel = detail.comments
    panel.open_thread()
    qtbot.keyClicks(panel.box, "x" * 10)
    panel.box.insertPlainText("y" * 20_000)  # over the limit: the core refuses it
    panel.post()
    qtbot.waitUntil(lambda: panel.message.isVisible(), timeout=WAIT_MS)
    assert "too long" in panel.message.text()
    assert panel.box.toPlainText() == "x" * 10 + "y" * 20_000
    assert panel.views() == []
