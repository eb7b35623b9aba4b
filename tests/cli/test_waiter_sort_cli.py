"""Issue 37: `proctor inbox --sort waiter` lists the requests an agent waits for now first
(tests/core/test_inbox_waiter_sort.py: the sort itself, on the same five requests)."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal


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


def test_the_cli_sorts_by_waiter(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_OPERATOR", "tester")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    path = tmp_path / "j.db"
    ids = filed(path)
    result = cli("inbox", "--journal", path, "--sort", "waiter", "--json")
    assert result.rc == 0, result.err
    listed = [i["id"] for i in json.loads(result.out)["items"]]
    assert listed == [ids[n] for n in "dbeca"]
    table = cli("inbox", "--journal", path, "--sort", "waiter", "--oldest-first").out
    cells = [line.split()[0:2] for line in table.splitlines()[1:6]]
    assert [c[1] for c in cells] == [ids[n] for n in "bdace"]
    refused = cli("inbox", "--journal", path, "--sort", "nobody")
    assert refused.rc != 0 and "waiter" in refused.err
