"""A run's whole detail (``runs.facts``) is read in one read transaction: one snapshot, so
a write landing while it is read shows in none of it or all of it, never in half."""

from __future__ import annotations

from typing import Any

from proctor.core.models import ApprovalStatus

ACTION = {"tool": "fs.write", "name": "write", "args": {"path": "/tmp/x"}}


class WriteAfterFirstRead:
    """A connection that, after its first SELECT, lets ``write`` commit on another
    connection: what is read next sees the write unless it is in the same snapshot."""

    def __init__(self, conn: Any, write: Any) -> None:
        self._conn, self._write = conn, write

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        result = self._conn.execute(*args, **kwargs)
        if self._write is not None:
            rows = result.all()  # the SELECT has run: the snapshot is taken
            write, self._write = self._write, None
            write()
            return FetchedResult(rows)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class FetchedResult:
    def __init__(self, rows: list) -> None:
        self._rows = rows

    def all(self) -> list:
        return self._rows

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Any:
        return iter(self._rows)


def interleave(journal: Any, monkeypatch: Any, write: Any) -> list:
    """Count ``journal``'s read transactions; the first one lets ``write`` commit after its
    first statement."""
    reads: list = []
    plain = journal.read

    def read(fn: Any) -> Any:
        reads.append(fn)
        if len(reads) == 1:
            return plain(lambda conn: fn(WriteAfterFirstRead(conn, write)))
        return plain(fn)

    monkeypatch.setattr(journal, "read", read)
    return reads


def setup_run(agent: Any, run: Any) -> tuple[Any, Any]:
    approval = agent.approvals.request(run.id, ACTION, reason="needs it")
    agent.effects.reserve("k1", tool="fs.write", run_id=run.id, action={"x": 1}, owner="a")
    agent.effects.begin("k1", owner="a")
    agent.effects.record_receipt("k1", external_id="x-1", owner="a")
    return approval, agent.effects.get("k1")


def test_run_facts_reads_everything_in_one_snapshot(agent, operator, run, monkeypatch):
    approval, _ = setup_run(agent, run)
    reads = interleave(
        operator, monkeypatch, lambda: agent.approvals.withdraw(approval.id, "changed my mind")
    )
    facts = operator.runs.facts(run.id)
    assert len(reads) == 1
    # the withdrawal committed after the first statement: the whole detail predates it
    assert facts.run.open_items == 1
    assert [a.status for a in facts.approvals] == [ApprovalStatus.PENDING]
    assert [i.id for i in facts.open_items] == [approval.id]
    assert [e.key for e in facts.effects] == ["k1"]
    assert set(facts.receipts) == {"k1"} and len(facts.receipts["k1"]) == 1
    # and it is what the piecewise reads give once the write is in
    after = operator.runs.facts(run.id)
    assert [a.status for a in after.approvals] == [ApprovalStatus.CANCELLED]
    assert after.open_items == [] and after.run.open_items == 0
    assert after.attempts == operator.runs.attempts(run.id)
    assert after.approvals == operator.approvals.for_run(run.id)
    assert after.receipts["k1"] == operator.effects.receipts("k1")


def test_run_facts_of_a_missing_run_is_not_found(operator):
    import pytest

    from proctor.core import errors

    with pytest.raises(errors.NotFound):
        operator.runs.facts("run_missing")
