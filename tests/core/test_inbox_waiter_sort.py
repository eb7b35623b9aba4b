"""Issue 37: the inbox sorted by waiter puts the requests an agent waits for now first, each
group by age as asked, through keyset pages of any size (tests/cli/test_waiter_sort_cli.py:
`proctor inbox --sort waiter`)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from proctor.core import Actor, InboxFilter, Journal


def filed(path: Path) -> dict[str, str]:
    """Five requests, oldest first: two an agent waits for now (b, d), one it left long ago
    (c), two nobody waited for (a, e; e a question)."""
    ids = {}
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "sorted")
        for name in "abcd":
            ids[name] = agent.approvals.request(run.id, {"tool": name}, reason=name).id
            time.sleep(0.01)  # distinct ages
        ids["e"] = agent.questions.ask(run.id, "question", "e?").id
    now = time.time()
    with sqlite3.connect(path) as conn:
        for name, seen in (("b", now), ("d", now), ("c", now - 3600)):
            conn.execute("UPDATE approvals SET waiter_seen_at = ? WHERE id = ?", (seen, ids[name]))
    return ids


def every_page(j: Journal, f: InboxFilter, limit: int) -> list[str]:
    out, cursor = [], None
    while True:
        page = j.inbox.list(f, cursor=cursor, limit=limit)
        out += [i.id for i in page.items]
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


@pytest.mark.parametrize("limit", [1, 2, 50])
def test_the_waited_for_come_first_each_group_by_age(tmp_path: Path, limit: int) -> None:
    ids = filed(tmp_path / "j.db")
    order = lambda names: [ids[n] for n in names]  # noqa: E731
    with Journal.open(tmp_path / "j.db", actor=Actor.operator("alice")) as j:
        newest = InboxFilter(sort="waiter")
        oldest = InboxFilter(sort="waiter", newest_first=False)
        assert every_page(j, newest, limit) == order("dbeca")
        assert every_page(j, oldest, limit) == order("bdace")
        assert every_page(j, InboxFilter(), limit) == order("edcba")  # by age alone
