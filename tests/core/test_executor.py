"""The lean write executor: one kept connection per thread, the run head read once per
transaction (and never stale), and an event's digest body made around its payload's text."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, update

from proctor.core.audit.verify import verify
from proctor.core.kernel.canonical import canonical_json
from proctor.core.models import RunStatus
from proctor.core.storage import schema as s
from proctor.core.storage.sql import update_where
from proctor.core.storage.tx import event_digest_body, event_digest_text

from .helpers import assert_no_open_transaction, raw


def selects_of_runs(journal, fn):  # a Journal and a callable
    seen: list[str] = []

    def record(conn, cursor, statement, *_args):  # SQLAlchemy signature
        if statement.lstrip().upper().startswith("SELECT") and "FROM runs" in statement:
            seen.append(statement)

    event.listen(journal._writer, "before_cursor_execute", record)
    try:
        result = journal.write(fn)
    finally:
        event.remove(journal._writer, "before_cursor_execute", record)
    return result, len(seen)


@pytest.mark.sqlite_only
def test_the_run_head_is_read_once_per_transaction(agent, run):
    def three_events(tx):
        for n in range(3):
            tx.run_event(run.id, "tick", {"n": n})
        return tx.run_row(run.id)

    head, reads = selects_of_runs(agent, three_events)
    assert reads == 1
    assert head.last_sequence == run.last_sequence + 3 == agent.runs.get(run.id).last_sequence
    assert head.last_digest == agent.runs.events(run.id, limit=100)[-1].digest
    assert verify(agent).ok


@pytest.mark.sqlite_only
@pytest.mark.parametrize("how", ["core", "driver_sql", "executor"])
def test_any_other_write_to_runs_drops_the_kept_head(agent, run, how):
    def op(tx):
        before = tx.run_row(run.id)
        if how == "core":
            tx.conn.execute(update(s.runs).where(s.runs.c.id == run.id).values(error="x"))
        elif how == "driver_sql":
            tx.conn.exec_driver_sql("UPDATE runs SET error = 'x' WHERE id = ?", (run.id,))
        else:
            update_where(tx.conn, s.runs, {"error": "x"}, id=run.id)
        after = tx.run_row(run.id)
        tx.append_event(after, "tick", None)
        return before.error, after.error

    assert agent.write(op) == (None, "x")
    assert agent.runs.get(run.id).error == "x"


def test_a_head_kept_by_a_rolled_back_transaction_is_not_reused(agent, run):
    def failing(tx):
        tx.run_event(run.id, "tick", None)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        agent.write(failing)
    event_ = agent.runs.append_event(run.id, "after", None)
    assert event_.sequence == run.last_sequence + 1
    assert verify(agent).ok


@pytest.mark.parametrize("created_at", [1.5, 1_700_000_000.123456, 3, 0.1 + 0.2, -0.0, 1e300])
@pytest.mark.parametrize(
    "payload", [None, 5, "x\n\u2028", {"b": [1, 2.5], "a": 'ü"\\'}, [{"1": True}]]
)
def test_the_digest_body_text_is_the_canonical_json_of_the_body(created_at, payload):
    row = {"run_id": 'run_"é', "sequence": 7, "type": "t\\y\u0000", "created_at": created_at}
    assert event_digest_text(row, payload, canonical_json(payload)) == canonical_json(
        event_digest_body(row, payload)
    )


def test_each_thread_keeps_its_connection_and_a_nested_call_borrows_one(agent, run):
    driver = agent.read(lambda c: c.connection.driver_connection)
    assert agent.read(lambda c: c.connection.driver_connection) is driver
    nested = agent.read(lambda c: agent.read(lambda c2: c2.connection.driver_connection))
    assert nested is not driver
    written = agent.read(lambda c: agent.runs.append_event(run.id, "inside a read", None))
    assert written.sequence == run.last_sequence + 1
    other: list = []
    worker = threading.Thread(
        target=lambda: other.append(agent.read(lambda c: c.connection.driver_connection))
    )
    worker.start()
    worker.join()
    assert other[0] is not driver
    assert_no_open_transaction(agent)


def test_a_connection_of_an_ended_thread_is_closed(agent, run):
    def write_in_a_thread() -> threading.Thread:
        worker = threading.Thread(target=lambda: agent.runs.append_event(run.id, "t", None))
        worker.start()
        worker.join()
        return worker

    first = write_in_a_thread()
    kept = agent._writes._own[first]
    second = write_in_a_thread()  # the next thread to open one closes the ended thread's
    assert first not in agent._writes._own and second in agent._writes._own
    assert kept.conn.closed


@pytest.mark.sqlite_only
def test_close_leaves_no_connection_open_and_the_file_writable(agent, run, journal_path):
    agent.runs.append_event(run.id, "t", None)
    agent.read(lambda c: 1)
    agent.close()
    for engine in (agent._writer, agent._reader):
        assert engine.pool.checkedout() == 0
    with raw(journal_path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")


def test_an_append_writes_one_change_row_and_the_feed_still_names_its_run(
    agent, operator, run, journal_path
):
    mark = operator.changes.latest()
    with raw(journal_path) as conn:
        before = conn.execute("SELECT COUNT(*) FROM changes").fetchone()[0]
    event_ = agent.runs.append_event(run.id, "tool.output", {"n": 1})
    batch = agent.runs.append_events(run.id, [("a", 1), ("b", 2)])
    with raw(journal_path) as conn:
        rows = conn.execute(
            "SELECT entity_kind, entity_id, run_id FROM changes ORDER BY seq"
        ).fetchall()[before:]
    # one row per transaction, no 'run' row each; a batch's row names its last event
    assert rows == [("event", e.id, run.id) for e in (event_, batch[-1])]
    feed = operator.changes.since(mark)
    assert "run" in feed.kinds() and feed.ids("run") == {run.id} == feed.run_ids()


def test_a_transaction_writes_one_event_row_per_run_and_none_beside_its_run_row(agent, operator):
    one, two = agent.runs.start("proj", "one"), agent.runs.start("proj", "two")

    def op(tx):
        tx.run_event(one.id, "a", None)
        tx.run_event(two.id, "b", None)
        tx.run_event(one.id, "c", None)
        tx.run_event(two.id, "d", None, status=RunStatus.COMPLETED)  # writes a 'run' row

    mark = operator.changes.latest()
    agent.write(op)
    feed = operator.changes.since(mark)
    last = agent.runs.events(one.id)[-1]
    assert [(c.entity_kind, c.entity_id, c.run_id) for c in feed.changes] == [
        ("event", last.id, one.id),
        ("run", two.id, two.id),
    ]
    assert feed.ids("run") == {one.id, two.id} == feed.run_ids()


def test_a_new_run_and_a_status_move_still_write_a_run_row(agent, operator, run):
    mark = operator.changes.latest()
    fresh = agent.runs.start("proj", "another")
    agent.approvals.request(run.id, {"tool": "t"}, reason="r")  # the run waits: status moves
    kinds = [(c.entity_kind, c.entity_id) for c in operator.changes.since(mark).changes]
    assert ("run", fresh.id) in kinds and ("run", run.id) in kinds


def test_a_run_changed_beside_an_append_still_writes_its_run_row(agent, run):
    def op(tx):
        tx.conn.execute(update(s.runs).where(s.runs.c.id == run.id).values(error="x"))
        tx.run_event(run.id, "tick", None)

    mark = agent.changes.latest()
    agent.write(op)
    kinds = [(c.entity_kind, c.entity_id) for c in agent.changes.since(mark).changes]
    assert kinds.count(("run", run.id)) == 1


def test_threads_writing_while_the_journal_reconnects_lose_nothing(agent, run):
    failures: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(25):
                agent.runs.append_event(run.id, "tick", {"thread": n, "i": i})
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)

    workers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for w in workers:
        w.start()
    for _ in range(20):
        agent.reconnect()
    for w in workers:
        w.join()
    assert failures == []
    events = agent.runs.events(run.id, limit=1000)
    assert len(events) == run.last_sequence + 100
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert verify(agent).ok
    assert_no_open_transaction(agent)
