"""`proctor inbox` reads what each approval would do in a constant number of statements,
not one per approval (the last stop's N+1): the statements sent for 1 and for 50 pending
approvals are counted with SQLAlchemy's cursor event, and every row still says its tool and
resource."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from proctor.core import Actor, Journal


def journal_with(path: Path, n: int) -> Path:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "many")
        for i in range(n):
            action = {"tool": "fs.write", "args": {"path": f"src/f{i}.py"}}
            agent.approvals.request(run.id, action, reason=f"write {i}")
    return path


def statements_of(cli, path: Path) -> tuple[int, str]:
    seen: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        result = cli("inbox", "--journal", path, "--limit", "100")
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert result.rc == 0, result.err
    return len(seen), result.out


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_OPERATOR", "tester")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)


def test_the_inbox_reads_no_more_for_fifty_approvals_than_for_one(cli, tmp_path: Path) -> None:
    one = journal_with(tmp_path / "one.db", 1)
    fifty = journal_with(tmp_path / "fifty.db", 50)
    statements_of(cli, one)  # the first open of a process reads more (schema, caches)
    few, out_one = statements_of(cli, one)
    many, out_fifty = statements_of(cli, fifty)
    assert "fs.write src/f0.py — fs.write: write 0" in out_one
    assert all(f"fs.write src/f{i}.py — fs.write: write {i}" in out_fifty for i in range(50))
    assert "50 shown" in out_fifty
    assert many == few, f"{few} statements for 1 approval, {many} for 50"
