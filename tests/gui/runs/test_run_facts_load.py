"""The run detail's facts tab loads the run's whole detail in one read transaction (the
core's ``runs.facts``): a write that lands while it loads shows in none of it or all of it."""

from __future__ import annotations

from typing import Any

from proctor.core import Actor, Journal
from proctor.core.models import ApprovalStatus
from proctor.gui.runs.facts import load_facts

ACTION = {"tool": "fs.write", "name": "write", "args": {"path": "/tmp/x"}}


class WriteAfterFirstRead:
    """After its first SELECT, ``write`` commits on another connection."""

    def __init__(self, conn: Any, write: Any) -> None:
        self._conn, self._write = conn, write

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        result = self._conn.execute(*args, **kwargs)
        if self._write is None:
            return result
        rows = result.all()
        write, self._write = self._write, None
        write()
        return Rows(rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class Rows(list):
    def all(self) -> list:
        return list(self)

    def first(self) -> Any:
        return self[0] if self else None


def test_the_facts_tab_loads_one_snapshot_in_one_read(tmp_path, monkeypatch):
    path = tmp_path / "j.db"
    with (
        Journal.open(path, actor=Actor.agent("bot")) as agent,
        Journal.open(path, actor=Actor.operator("olga")) as operator,
    ):
        run = agent.runs.start("p", "t")
        approval = agent.approvals.request(run.id, ACTION, reason="needs it")
        for key in ("k1", "k2", "k3"):  # one read whatever the number of effects
            agent.effects.reserve(key, tool="fs.write", run_id=run.id, action={"k": key})
        reads: list = []
        plain = operator.read

        def read(fn: Any) -> Any:
            reads.append(fn)
            if len(reads) == 1:
                return plain(
                    lambda conn: fn(
                        WriteAfterFirstRead(
                            conn, lambda: agent.approvals.withdraw(approval.id, "changed my mind")
                        )
                    )
                )
            return plain(fn)

        monkeypatch.setattr(operator, "read", read)
        facts = load_facts(operator, run.id)
        assert len(reads) == 1
        assert facts.run.open_items == 1
        assert [a.status for a in facts.approvals] == [ApprovalStatus.PENDING]
        assert [i.id for i in facts.open_items] == [approval.id]
        assert sorted(facts.receipts) == ["k1", "k2", "k3"]
