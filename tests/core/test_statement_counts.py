"""What the hot write paths send to SQLite, counted: statements are deterministic (time is
not), so a change that adds a read or splits a write shows here. And what a write returns,
now built from the rows it wrote instead of read back, is exactly what a read returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import event

from proctor.core import Actor, Journal, errors

from .helpers import raw

# The counts are SQLite's: a server journal sends more by design (its write lock is a
# statement, it keeps no run head between statements, it reads which runs a write touched).
SQLITE_COUNTS = pytest.mark.sqlite_only

# statements per call, BEGIN/COMMIT not counted (tests/bench/unit_costs.py measures the same)
COUNTS = {
    "effects.reserve": 6,  # the lapsed-lease sweep, run head with the effect?, INSERT
    #                        effect, event, run head, changes
    "effects.begin": 5,  # effect with its run head, UPDATE effect, event, run head, changes
    "effects.commit": 6,  # ... and the receipt
    "approvals.request": 7,  # run head with the request key?, INSERT, rules, policies
    #                          (0014p), event, run head, changes
    "approvals.decide": 10,  # approval with its run head (once), its policy? (0014p),
    #                         UPDATE, decision, audit head, audit, open items, event, run
    #                         head, changes
    "approvals.consume_and_reserve": 7,  # approval with its run head, effect?, INSERT
    #                         effect, both events in one INSERT, run head once, UPDATE
    #                         approval, changes
    "runs.append_event": 4,  # run head, event, run head, changes
    "memory.replace": 6,  # entry with its chain head and the run head, UPDATE entry,
    #                       event, run head, mutation, changes
}


@contextmanager
def counting(*journals: Journal) -> Iterator[list[str]]:
    """The statements the journals' write connections send inside the block."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            seen.append(statement)

    engines = [j._writer for j in journals]
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


def sent(journal: Journal, call: Callable[[], Any]) -> tuple[Any, int]:
    with counting(journal) as seen:
        result = call()
    return result, len(seen)


@SQLITE_COUNTS
def test_the_effect_lifecycle_sends_no_more_statements_than_counted(agent, run):
    fx = agent.effects
    action = {"tool": "http.post", "args": {"url": "https://x.test/orders", "n": 1}}
    _, reserve = sent(
        agent,
        lambda: fx.reserve("k1", tool="http.post", run_id=run.id, action=action, lease_seconds=60),
    )
    _, begin = sent(agent, lambda: fx.begin("k1"))
    _, commit = sent(agent, lambda: fx.commit("k1", {"status": 201}, external_id="ord-1"))
    assert (
        reserve <= COUNTS["effects.reserve"]
        and begin <= COUNTS["effects.begin"]
        and commit <= COUNTS["effects.commit"]
    )


@SQLITE_COUNTS
def test_the_approval_cycle_sends_no_more_statements_than_counted(agent, operator, run):
    action = {"tool": "orders.send", "args": {"to": "supplier", "amount": 12}}
    approval, request = sent(
        agent, lambda: agent.approvals.request(run.id, action, reason="send the order")
    )
    _, decide = sent(
        operator,
        lambda: operator.approvals.decide(approval.id, True, expected_version=approval.version),
    )
    _, consume = sent(
        agent,
        lambda: agent.approvals.consume_and_reserve(
            approval.id, approval.action_digest, "order-1", lease_seconds=60
        ),
    )
    assert request <= COUNTS["approvals.request"]
    assert decide <= COUNTS["approvals.decide"]
    assert consume <= COUNTS["approvals.consume_and_reserve"]


@SQLITE_COUNTS
def test_decide_reads_the_approval_and_its_run_once(agent, operator, run):
    approval = agent.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
    with counting(operator) as seen:
        operator.approvals.decide(
            approval.id, False, expected_version=approval.version, reason="no"
        )
    selects = [" ".join(s.split()) for s in seen if s.lstrip().upper().startswith("SELECT")]
    assert sum("FROM approvals" in s and "count(" not in s for s in selects) == 1
    assert sum("runs.last_digest" in s for s in selects) == 1  # the run head, read once


def test_consume_and_reserve_appends_its_events_in_one_statement(agent, operator, run):
    approval = agent.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
    operator.approvals.decide(approval.id, True, expected_version=approval.version)
    with counting(agent) as seen:
        agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "key-1")
    assert sum(s.lstrip().upper().startswith("INSERT INTO EVENTS") for s in seen) == 1
    assert sum(s.lstrip().upper().startswith("UPDATE RUNS") for s in seen) == 1
    types = [e.type for e in agent.runs.events(run.id, limit=100)][-2:]
    assert types == ["effect.reserved", "approval.consumed"]


@SQLITE_COUNTS
def test_an_event_append_and_a_memory_replace_send_no_more_statements_than_counted(agent, run):
    _, append = sent(agent, lambda: agent.runs.append_event(run.id, "tool.output", {"n": 1}))
    entry = agent.memory.add("project", "proj", "fact", "initial", run_id=run.id)
    _, replace = sent(
        agent,
        lambda: agent.memory.replace(
            entry.id, "changed", expected_version=entry.version, reason="r", run_id=run.id
        ),
    )
    assert append <= COUNTS["runs.append_event"]
    assert replace <= COUNTS["memory.replace"]


# ------------------------------------------------------------------ what a write returns
def same(returned: BaseModel, read: BaseModel) -> None:
    """Equal, field by field of the same type, and the same JSON."""
    assert returned == read
    for name in type(read).model_fields:
        assert type(getattr(returned, name)) is type(getattr(read, name)), name
    assert returned.model_dump_json() == read.model_dump_json()


@pytest.mark.parametrize("lease", [60, 60.0, True])
def test_an_effect_a_write_returns_is_the_one_a_read_returns(agent, run, lease):
    fx = agent.effects
    action = {"tool": "t", "args": {"b": (1, 2), "a": 1.0}}  # a tuple comes back a list
    reserved = fx.reserve("k", tool="t", run_id=run.id, action=action, lease_seconds=lease)
    same(reserved, fx.get("k"))
    same(fx.renew("k", lease_seconds=lease), fx.get("k"))
    same(fx.begin("k"), fx.get("k"))
    same(fx.commit("k", {"n": (1,)}, external_id="x"), fx.get("k"))
    fx.reserve("k2", tool="t", run_id=run.id, action=None)
    same(fx.fail("k2", "broke"), fx.get("k2"))
    same(fx.reserve("k2", tool="t", run_id=run.id, action=None), fx.get("k2"))  # a retry


def test_a_value_a_read_gives_back_otherwise_is_read_back(agent, run):
    """SQLite stores a number sent for a text column as its text: the write returns that
    text (read back), as a read does, not the number it sent."""
    fx = agent.effects
    reserved = fx.reserve(
        "k",
        tool=123,
        run_id=run.id,
        action=None,  # type: ignore[arg-type]
        owner=7,
    )  # type: ignore[arg-type]
    same(reserved, fx.get("k"))
    assert reserved.tool == "123" and reserved.lease_owner == "7"
    same(fx.begin("k", owner="7"), fx.get("k"))


def test_an_approval_a_write_returns_is_the_one_a_read_returns(agent, operator, run):
    origin = {"runtime": "mcp", "process": "p", "pid": 5}
    first = agent.approvals.request(
        run.id, {"tool": "x", "args": {"k": [1]}}, reason="r", expires_in=600, origin=origin
    )
    same(first, agent.approvals.get(first.id))
    same(
        operator.approvals.decide(first.id, True, expected_version=first.version),
        agent.approvals.get(first.id),
    )
    second = agent.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
    same(agent.approvals.withdraw(second.id, "not needed"), agent.approvals.get(second.id))
    third = agent.approvals.request(
        run.id, {"tool": "x", "args": {"v": 1}}, reason="r", input_schema={"type": "object"}
    )
    edited = operator.approvals.approve_edited(
        third.id, {"tool": "x", "args": {"v": 2}}, expected_version=third.version
    )
    same(edited, agent.approvals.get(third.id))
    effect = agent.approvals.consume_and_reserve(third.id, edited.approved_digest, "e1")
    same(effect, agent.effects.get("e1"))
    again = agent.approvals.request(
        run.id,
        {"tool": "x", "args": {"k": [1]}},
        reason="r",
        expires_in=600,
        origin=origin,
        request_key="rk",
    )
    same(again, agent.approvals.get(again.id))
    same(
        agent.approvals.request(
            run.id,
            {"tool": "x", "args": {"k": [1]}},
            reason="r",
            expires_in=600,
            origin=origin,
            request_key="rk",
        ),
        agent.approvals.get(again.id),
    )  # the same request again: what was filed


def test_a_memory_entry_a_write_returns_is_the_one_a_read_returns(agent, operator, run):
    entry = agent.memory.add("project", "proj", "fact", "initial", run_id=run.id)
    replaced = agent.memory.replace(
        entry.id,
        "changed",
        expected_version=entry.version,
        title="new title",
        reason="r",
        run_id=run.id,
    )
    same(replaced, agent.memory.get(entry.id))
    pinned = operator.memory.pin(entry.id, expected_version=replaced.version)
    same(pinned, agent.memory.get(entry.id))


def test_an_operator_journal_reads_what_it_wrote_too(journal_path, clock):
    with Journal.open(journal_path, actor=Actor.operator("op"), clock=clock) as op:
        run = op.runs.start("p", "t", agent="a")
        effect = op.effects.reserve("k", tool="t", run_id=run.id, action={"x": 1})
        same(effect, op.effects.get("k"))


@SQLITE_COUNTS
def test_an_effect_step_reads_its_row_and_run_head_in_one_statement(agent, run):
    from proctor.core.audit.verify import verify

    agent.effects.reserve("k", tool="t", run_id=run.id, action=None)
    for step in (lambda: agent.effects.begin("k"), lambda: agent.effects.commit("k", 1)):
        with counting(agent) as seen:
            step()
        selects = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
        assert len(selects) == 1 and "runs.last_digest" in selects[0]
    events = agent.runs.events(run.id, limit=100)
    assert [e.type for e in events][-3:] == [
        "effect.reserved",
        "effect.started",
        "effect.committed",
    ]
    assert verify(agent).ok


@SQLITE_COUNTS
def test_an_effect_without_a_run_reads_no_run(agent):
    agent.effects.reserve("k", tool="t", action=None)
    with counting(agent) as seen:
        begun = agent.effects.begin("k")
    assert begun.run_id is None and begun.status == "executing"
    assert sum(s.lstrip().upper().startswith("SELECT") for s in seen) == 1


def test_a_row_read_beside_a_missing_run_is_still_refused(agent, run):
    with pytest.raises(errors.NotFound):
        agent.effects.reserve("k", tool="t", run_id="run_missing", action=None)
    with pytest.raises(errors.NotFound):
        agent.approvals.request("run_missing", {"tool": "x"}, reason="r")
    entry = agent.memory.add("project", "proj", "fact", "initial")
    with pytest.raises(errors.NotFound):
        agent.memory.replace(entry.id, "x", expected_version=entry.version, run_id="run_no")
    with pytest.raises(errors.NotFound):
        agent.memory.replace("mem_missing", "x", expected_version=1, run_id=run.id)
    assert agent.memory.get(entry.id).version == entry.version
    with pytest.raises(errors.NotFound):
        agent.effects.get("k")


@SQLITE_COUNTS
def test_a_retry_beside_its_run_reads_the_failed_effect(agent, run):
    agent.effects.reserve("k", tool="t", run_id=run.id, action={"a": 1})
    agent.effects.fail("k", "broke")
    with counting(agent) as seen:
        retried = agent.effects.reserve("k", tool="t", run_id=run.id, action={"a": 1})
    assert retried.attempt == 2 and retried.status == "reserved"
    # the failed effect with its run head, and the lapsed-lease sweep (one indexed SELECT)
    assert sum(s.lstrip().upper().startswith("SELECT") for s in seen) == 2


# ------------------------------------------------------------------ compiled once
@contextmanager
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The Core constructs (select(), insert(), ...) executed through SQLAlchemy meanwhile:
    each one is coerced, keyed and looked up in the compiled cache per call (~0.3 ms a
    statement on a loaded machine), where a ``sql.Prepared`` statement is one driver call."""
    from sqlalchemy.engine.base import Connection

    seen: list[str] = []
    real = Connection._execute_clauseelement

    def note(self: Any, elem: Any, *args: Any, **kw: Any) -> Any:
        seen.append(str(elem))
        return real(self, elem, *args, **kw)

    monkeypatch.setattr(Connection, "_execute_clauseelement", note)
    yield seen


@SQLITE_COUNTS
def test_the_hot_write_paths_execute_only_prepared_statements(agent, operator, run, monkeypatch):
    fx = agent.effects
    action = {"tool": "http.post", "args": {"n": 1}}
    entry = agent.memory.add("project", "proj", "fact", "initial", run_id=run.id)

    def units(n: int) -> None:
        nonlocal entry
        fx.reserve(f"k{n}", tool="http.post", run_id=run.id, action=action, lease_seconds=60)
        fx.begin(f"k{n}")
        fx.commit(f"k{n}", {"status": 201}, external_id=f"ord-{n}")
        approval = agent.approvals.request(run.id, action, reason="send")
        operator.approvals.decide(approval.id, True, expected_version=approval.version)
        agent.approvals.consume_and_reserve(approval.id, approval.action_digest, f"a{n}")
        agent.runs.append_event(run.id, "tool.output", {"n": n})
        agent.runs.append_events(run.id, [("tool.output", {"n": n}), ("tool.output", {})])
        entry = agent.memory.replace(entry.id, f"v{n}", expected_version=entry.version)

    units(0)  # warm: the first unit compiles what it sends
    with built(monkeypatch) as seen:
        units(1)
    assert seen == []


def test_a_change_links_its_mutation_to_the_head_read_beside_the_entry(
    journal_path, agent, operator, run
):
    """The chain head comes with the entry's read (with and without a run, its head kept or
    not): each mutation still follows the one before it, and the journal verifies."""
    from proctor.core.audit.verify import verify

    entry = agent.memory.add("project", "proj", "fact", "v0")
    other = agent.memory.add("project", "proj", "other", "w0", run_id=run.id)
    for n in range(3):
        entry = agent.memory.replace(
            entry.id, f"v{n + 1}", expected_version=entry.version, run_id=run.id if n else None
        )
        other = agent.memory.replace(other.id, f"w{n + 1}", expected_version=other.version)
    agent.runs.append_event(run.id, "tool.output", {})  # the run head moved meanwhile
    entry = agent.memory.replace(entry.id, "v4", expected_version=entry.version, run_id=run.id)
    entry = operator.memory.pin(entry.id, expected_version=entry.version)
    with raw(journal_path) as conn:
        for found in (entry, other):
            chain = conn.execute(
                "SELECT version, prev_digest, digest FROM memory_mutations "
                f"WHERE entry_id = '{found.id}' ORDER BY version"
            ).fetchall()
            assert [m[0] for m in chain] == list(range(1, found.version + 1))
            assert [m[1] for m in chain] == ["0" * 64] + [m[2] for m in chain[:-1]]
    assert verify(agent).ok
