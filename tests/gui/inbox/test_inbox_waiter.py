"""Issue 37, "is anyone waiting?": the inbox row and the detail say whether the requesting
agent waits for the request now, while a real agent process waits on one approval and
nobody on the other; the "Agent waiting" checkbox hides what nobody waits for; once the
agent's last look is old, the row and the detail say how long no agent has looked."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.inbox.model import COL_WAITER

from ..conftest import WAIT_MS
from .test_inbox_origin import show

AGENT = textwrap.dedent(
    """
    import sys
    from proctor.core import Actor, Journal
    from proctor.core.storage import waiter

    waiter.STAMP_S = 0.2
    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        j.approvals.wait(sys.argv[2], timeout=120)
    """
)


def file_two(path) -> tuple[str, str]:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "two requests")
        waited = agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship it")
        left = agent.approvals.request(run.id, {"tool": "refund"}, reason="nobody waits")
    return waited.id, left.id


def cell(window, approval_id: str) -> str:
    model = window.inbox.model
    row = model.row_of(f"approval:{approval_id}")
    return "" if row < 0 else model.data(model.index(row, COL_WAITER))


def test_the_desk_says_whether_an_agent_waits(qtbot, journal_path, open_desk):
    waited, left = file_two(journal_path)
    agent = subprocess.Popen([sys.executable, "-c", AGENT, str(journal_path), waited])
    try:
        with sqlite3.connect(journal_path) as conn:
            stamped = lambda: conn.execute(  # noqa: E731
                "SELECT waiter_seen_at FROM approvals WHERE id = ?", (waited,)
            ).fetchone()[0]
            qtbot.waitUntil(lambda: stamped() is not None, timeout=WAIT_MS)
        window = open_desk(journal_path)
        detail = show(qtbot, window, "approval", waited)
        assert cell(window, waited) == "now" and cell(window, left) == "nobody waited"
        assert detail.waiter.text() == "agent waiting now" and detail.waiter.isVisibleTo(detail)
        assert show(qtbot, window, "approval", left).waiter.text() == "nobody waited"
        filters = window.inbox.filters
        qtbot.mouseClick(filters.waited, Qt.MouseButton.LeftButton)
        assert filters.waited.isChecked()
        qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=WAIT_MS)
        assert cell(window, waited) == "now" and cell(window, left) == ""
    finally:
        agent.kill()
        agent.wait()
    with sqlite3.connect(journal_path) as conn:  # the agent's last look, 12 minutes ago
        conn.execute("UPDATE approvals SET waiter_seen_at = ?", (time.time() - 12 * 60 - 5,))
    qtbot.mouseClick(filters.waited, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell(window, left) == "12m ago", timeout=WAIT_MS)
    detail = show(qtbot, window, "approval", waited)
    qtbot.waitUntil(lambda: detail.waiter.text() == "no agent has looked for 12m", timeout=WAIT_MS)
    qtbot.mouseClick(filters.waited, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 0, timeout=WAIT_MS)


def test_a_new_stamp_updates_the_line_without_reloading_the_detail(
    qtbot, journal_path, open_desk, monkeypatch
):
    """A waiting agent stamps every few seconds; the detail the operator reads (and may be
    typing an answer in) is not reloaded for it: only its waiter line changes."""
    waited, _left = file_two(journal_path)
    window = open_desk(journal_path)
    detail = show(qtbot, window, "approval", waited)
    reloads: list[int] = []
    monkeypatch.setattr(detail, "reload", lambda: reloads.append(1))
    with sqlite3.connect(journal_path) as conn:  # the agent's stamp (core/storage/waiter.py)
        conn.execute("UPDATE approvals SET waiter_seen_at = ? WHERE id = ?", (time.time(), waited))
    window.inbox.model.refresh()
    qtbot.waitUntil(lambda: detail.waiter.text() == "agent waiting now", timeout=WAIT_MS)
    assert detail.item.waiter_seen_at is not None and reloads == []


def test_the_desk_and_the_cli_say_the_same_words(capsys):
    """One definition (core/kernel/waiting.py): the desk's cell and line and the CLI's cell
    and ``show`` line say the same words for the same last look, whatever its age."""
    from proctor import ops_render
    from proctor.core.models import InboxItem, InboxKind
    from proctor.gui.decide.items import waiter_cell, waiter_text

    now = time.time()
    for seen in (None, now - 1, now - 3 * 60 - 5, now - 12 * 60 - 5, now - 5 * 3600):
        item = InboxItem.model_construct(kind=InboxKind.APPROVAL, id="apr_1", waiter_seen_at=seen)
        ops_render.waiter_line(item, now)
        line = capsys.readouterr().out.removeprefix("waiter").strip()
        assert waiter_text(item, now, slack=0) == line
        assert waiter_cell(item, now, slack=0) == ops_render.waiter_cell(item, now)
    assert waiter_text(item, now) != waiter_cell(item, now)  # a line and a cell
    item = item.model_copy(update={"waiter_seen_at": None})
    assert waiter_text(item, now) == waiter_cell(item, now) == "nobody waited"  # one phrase


def test_the_inbox_sorts_by_waiter(qtbot, journal_path, open_desk):
    """Issue 37: a click on the Waiter column (or "Agent waiting first" in the sort menu)
    lists the requests an agent waits for now first, each group newest first; Age goes
    back to the age sort."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    waited, left = file_two(journal_path)  # waited is the older
    with sqlite3.connect(journal_path) as conn:
        conn.execute("UPDATE approvals SET waiter_seen_at = ? WHERE id = ?", (time.time(), waited))
    window = open_desk(journal_path)
    model, header = window.inbox.model, window.inbox.table.horizontalHeader()
    order = lambda: [model.item(r).id for r in range(model.rowCount())]  # noqa: E731
    qtbot.waitUntil(lambda: order() == [left, waited], timeout=WAIT_MS)  # newest first

    def click(column: int) -> None:
        x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
        QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))

    click(COL_WAITER)
    qtbot.waitUntil(lambda: order() == [waited, left], timeout=WAIT_MS)
    assert window.inbox.filters.sort.currentText() == "Agent waiting first"
    assert window.inbox.filters.value().sort == "waiter"
    from proctor.gui.inbox.model import COL_AGE

    click(COL_AGE)
    qtbot.waitUntil(lambda: order() == [left, waited], timeout=WAIT_MS)
    assert window.inbox.filters.value().sort == "age"
