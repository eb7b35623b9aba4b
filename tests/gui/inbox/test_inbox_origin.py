"""The desk shows where each request came from (runtime, host process, tool) on every item:
in the detail, and compactly in the row and its tooltip — as the agent's word, escaped."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.inbox.model import COL_SUMMARY
from proctor.gui.widgets.delegates import SECOND_LINE_ROLE

from ..conftest import WAIT_MS

HOSTILE = {
    "runtime": "mcp",
    "process": "refund_agent\x1b]0;owned\x07\u202eexe.txt",
    "pid": 4242,
    "host": "build-7",
    "tool": "request_approval",
    "client": "refund-bot 1.0",
}


def file_items(path) -> dict[str, str]:
    with Journal.open(path, actor=Actor.agent("refund-bot")) as agent:
        run = agent.runs.start("shop", "refunds")
        a = agent.approvals.request(
            run.id,
            {"tool": "refund", "args": {"amount": 1}},
            reason="charged twice",
            origin=HOSTILE,
        )
        q = agent.questions.ask(
            run.id,
            "question",
            "Which account?",
            origin={"runtime": "langgraph", "tool": "interrupt"},
        )
        entry = agent.memory.add("project", "shop", "region", "eu-west")
        m = agent.memory.record_conflict(
            entry.id,
            "us-east",
            incoming_source="sync",
            run_id=run.id,
            origin={"runtime": "pydantic-ai"},
        )
    return {"approval": a.id, "question": q.id, "conflict": m.id}


def show(qtbot, window, kind: str, item_id: str):
    inbox = window.inbox
    key = f"{kind}:{item_id}"
    qtbot.waitUntil(lambda: inbox.model.row_of(key) >= 0, timeout=WAIT_MS)
    inbox.set_current_row(inbox.model.row_of(key))
    qtbot.waitUntil(
        lambda: (
            inbox.detail.current() is not None
            and inbox.detail.current().item is not None
            and inbox.detail.current().item.id == item_id
        ),
        timeout=WAIT_MS,
    )
    return inbox.detail.current()


def test_every_item_says_where_it_came_from(qtbot, journal_path, open_desk):
    ids = file_items(journal_path)
    window = open_desk(journal_path)
    detail = show(qtbot, window, "approval", ids["approval"])
    text = detail.origin.text()
    assert text.startswith("From mcp · refund_agent")
    assert "(pid 4242 on build-7) · tool request_approval · client refund-bot 1.0" in text
    assert "as the agent reports it" in text
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b]0;owned\\x07\\u202eexe.txt" in text  # shown as escapes, never obeyed
    assert (
        detail.origin.isVisibleTo(detail) and detail.origin.textFormat() == Qt.TextFormat.PlainText
    )

    model = window.inbox.model
    index = model.index(model.row_of(f"approval:{ids['approval']}"), COL_SUMMARY)
    line = model.data(index, SECOND_LINE_ROLE)
    tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert "via mcp/refund_agent\\x1b" in line and "\x1b" not in line
    assert "from mcp · refund_agent" in tip and "\x1b" not in tip

    for kind, runtime in (("question", "langgraph"), ("conflict", "pydantic-ai")):
        detail = show(qtbot, window, kind, ids[kind])
        assert detail.origin.text().startswith(f"From {runtime}")


def test_an_item_without_an_origin_says_so(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.operator("bob")) as operator:
        entry = operator.memory.add("project", "shop", "region", "eu-west")
        m = operator.memory.record_conflict(entry.id, "us-east", incoming_source="import")
    window = open_desk(journal_path)
    detail = show(qtbot, window, "conflict", m.id)
    assert detail.origin.text() == "From: not reported"
