"""The action being approved is never cut off: its command / SQL / URL / body is shown
whole, monospaced and wrapped, in the approval's detail (issue 16, item 2)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from ..conftest import WAIT_MS
from ..data import agent, request
from ..driver import Desk

KUBECTL = (
    "kubectl rollout restart deployment/ingest-worker-eu-west-1-primary-consumer-group "
    "-n billing-production --context=prod-eu-west-1-admin --selector=tier=backend,"
    "team=payments"
)
DELETE = (
    "DELETE FROM sessions WHERE expires_at < now() - interval '90 days' AND user_id IN "
    "(SELECT id FROM users WHERE deleted_at IS NOT NULL AND region = 'eu-west-1');"
)


def open_approval(qtbot, window, approval_id: str):
    """The approval's detail, with its action's texts made ready (a large action's are
    made on the presentation pool)."""
    return Desk(qtbot, window).open_inbox_item(f"approval:{approval_id}", presented=True)


def requested(path, tool: str, args: dict, safety: str = "destructive") -> str:
    with agent(path, "ops-bot") as a:
        run = a.runs.start("infra", "Clean up", agent="ops-bot")
        return request(a, run.id, tool, args, "needed", safety_class=safety)


def fully_shown(qtbot, field, text: str) -> None:
    """The field holds ``text`` whole, with no elision mark, and shows all of it at once."""
    box = field.box
    assert box.text() == text
    assert "…" not in box.text()
    assert box.isVisible()
    qtbot.waitUntil(lambda: box.verticalScrollBar().maximum() == 0, timeout=WAIT_MS)
    assert box.horizontalScrollBar().maximum() == 0  # wrapped, not scrolled sideways


def test_long_command_and_sql_are_shown_whole(qtbot, journal_path, open_desk):
    shell = requested(journal_path, "shell.exec", {"command": KUBECTL, "cwd": "/srv/infra"})
    sql = requested(journal_path, "db.migrate", {"database": "billing-prod", "sql": DELETE})
    window = open_desk(journal_path)
    window.resize(1200, 800)
    detail = open_approval(qtbot, window, shell)
    fully_shown(qtbot, detail.action_text.field("command"), KUBECTL)
    detail = open_approval(qtbot, window, sql)
    fully_shown(qtbot, detail.action_text.field("sql"), DELETE)
    assert detail.action_text.field("command") is None  # the previous item's text is gone


def test_very_long_value_scrolls_with_size_note_and_copies_whole(qtbot, journal_path, open_desk):
    body = "".join(f"line {n}: DELETE FROM t{n} WHERE id = {n};\n" for n in range(3000))
    approval_id = requested(journal_path, "db.migrate", {"sql": body})
    window = open_desk(journal_path)
    detail = open_approval(qtbot, window, approval_id)
    field = detail.action_text.field("sql")
    assert field.box.text() == body  # loaded whole, not cut
    assert f"{len(body):,} characters" in field.note.text()
    assert "3,001 lines" in field.note.text()
    assert field.box.height() < 400  # bounded: it scrolls
    qtbot.waitUntil(lambda: field.box.verticalScrollBar().maximum() > 0, timeout=WAIT_MS)
    field.copy.click()
    assert QGuiApplication.clipboard().text() == body


def test_action_text_shows_controls_visibly(qtbot, journal_path, open_desk):
    command = "rm -rf /srv/\u202etxt.sgol/ \x1b[2K"
    approval_id = requested(journal_path, "shell.exec", {"command": command})
    window = open_desk(journal_path)
    detail = open_approval(qtbot, window, approval_id)
    shown = detail.action_text.field("command").box.text()
    assert shown == "rm -rf /srv/\\u202etxt.sgol/ \\x1b[2K"


def test_url_path_and_message_body_are_shown(qtbot, journal_path, open_desk):
    approval_id = requested(
        journal_path,
        "email.send",
        {
            "to": ["kenji@example.jp"],
            "subject": "Your refund",
            "body": "Hi Kenji,\n\nYour refund of 1,200 EUR is on its way.\n\nBest",
        },
        safety="external_side_effect",
    )
    window = open_desk(journal_path)
    detail = open_approval(qtbot, window, approval_id)
    names = [f.name for f in detail.action_text.fields]
    assert names[:3] == ["to", "subject", "body"]
    fully_shown(
        qtbot,
        detail.action_text.field("body"),
        "Hi Kenji,\n\nYour refund of 1,200 EUR is on its way.\n\nBest",
    )


def test_a_multi_mb_action_text_holds_a_bounded_head_and_shows_all_on_demand(qtbot):
    """A 3 MB single-line value (hostile) is not laid out whole in the box (that froze the
    desk for minutes and held gigabytes; one unbroken 200,000-character line, seconds): the
    box holds at most BOX_CHARS characters of it in display lines of at most LINE_CHARS, the
    note says how many more there are, Copy gives the whole text and Show all pages through
    all of it."""
    from proctor.gui.widgets.action_text import BOX_CHARS, ActionText
    from proctor.gui.widgets.bounded_text import (
        CHUNK,
        LINE_CHARS,
        PAGE,
        TextViewer,
        longest_line,
    )

    from ..conftest import wait_presented

    blob = "A" * 3_000_000
    view = ActionText()
    qtbot.addWidget(view)
    view.set_action({"tool": "deploy", "args": {"body": blob}})
    wait_presented(qtbot)
    field = view.field("body")
    shown = field.box.toPlainText()
    assert len(shown.replace("\n", "")) <= BOX_CHARS and shown.replace("\n", "") in blob
    assert longest_line(shown) <= LINE_CHARS
    assert "3,000,000 characters" in field.note.text()
    assert f"first {BOX_CHARS:,}" in field.note.text()
    assert f"{3_000_000 - BOX_CHARS:,} more characters" in field.show_all.text()
    assert not field.show_all.isHidden()
    field.copy.click()
    assert QGuiApplication.clipboard().text() == blob
    field.show_all.click()
    viewer = field.findChild(TextViewer)
    assert viewer is not None
    pages = [viewer.box.toPlainText()]
    while viewer.next.isEnabled():
        viewer.next.click()
        pages.append(viewer.box.toPlainText())
    assert len(pages) == -(-len(blob) // PAGE)  # every page, each bounded
    assert all(longest_line(p) <= CHUNK for p in pages)
    assert "".join(p.replace("\n", "") for p in pages) == blob  # the whole text, paged
