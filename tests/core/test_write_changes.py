"""A write returns its changes: the change set a transaction committed comes back from its
commit (``Store.write_changes``, and ``on_commit`` for every write, a service's too), exactly
the change-feed rows it wrote, none of another thread's, none for a write that changed
nothing. Each test runs on both backends."""

from __future__ import annotations

import threading

import pytest

from proctor.core import Actor, errors
from proctor.core.models import Approval, ChangeKind, ChangeSet

ACTION = {"tool": "orders.send", "args": {"to": "supplier", "amount": 12}}


@pytest.fixture
def reader(open_journal):
    """A journal of its own on the same store: its reads are another connection's."""
    return open_journal(Actor.operator("bob"))


def stored(reader, since: int, until: int | None = None) -> list[dict]:
    """The change rows after ``since`` (up to ``until``) as the other connection reads them."""
    return [
        c.model_dump()
        for c in reader.changes.since(since).changes
        if until is None or c.seq <= until
    ]


def dumped(changes: ChangeSet) -> list[dict]:
    return [c.model_dump() for c in changes.changes]


def test_a_write_returns_exactly_the_change_rows_its_transaction_committed(agent, run, reader):
    before = reader.changes.latest()

    def write(tx) -> str:
        tx.changed(ChangeKind.RUN, run.id, run.id)
        tx.run_event(run.id, "note", {"n": 1})
        return tx.audit("note.added", "run", run.id, run_id=run.id)

    audit_id, changes = agent.write_changes(write)
    assert dumped(changes) == stored(reader, before)
    assert audit_id in changes.ids(ChangeKind.AUDIT)
    assert (changes.since, changes.until) == (before, reader.changes.latest())


def test_a_service_call_keeps_its_result_and_hands_its_change_set_to_on_commit(
    agent, operator, run, reader
):
    seen: list[ChangeSet] = []
    agent.on_commit = seen.append
    operator.on_commit = seen.append
    before = reader.changes.latest()
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    middle = reader.changes.latest()
    decided = operator.approvals.decide(approval.id, True, expected_version=approval.version)
    assert isinstance(approval, Approval) and isinstance(decided, Approval)
    assert decided.status == "approved"
    assert [dumped(cs) for cs in seen] == [stored(reader, before, middle), stored(reader, middle)]
    assert approval.id in seen[0].ids(ChangeKind.APPROVAL)
    assert approval.id in seen[1].ids(ChangeKind.APPROVAL)


def test_another_threads_write_between_commit_and_return_stays_out_of_this_calls_set(
    agent, run, start_run, reader
):
    """The first write's commit hands over its set, then waits while a second thread's
    write commits: what the first write returns is still its own rows alone."""
    other_run = start_run()
    committed, other_done = threading.Event(), threading.Event()
    first = threading.get_ident()

    def hold(changes: ChangeSet) -> None:  # on the first write's thread: wait for the other
        if threading.get_ident() == first:
            committed.set()
            assert other_done.wait(10)

    agent.on_commit = hold
    before = reader.changes.latest()
    theirs: list[ChangeSet] = []

    def other() -> None:
        assert committed.wait(10)
        theirs.append(
            agent.write_changes(lambda tx: tx.run_event(other_run.id, "note", {"who": "other"}))[1]
        )
        other_done.set()

    elsewhere = threading.Thread(target=other)
    elsewhere.start()
    _, mine = agent.write_changes(lambda tx: tx.run_event(run.id, "note", {"who": "me"}))
    elsewhere.join(10)
    assert mine.run_ids() == {run.id} and theirs[0].run_ids() == {other_run.id}
    assert dumped(mine) + dumped(theirs[0]) == stored(reader, before)


def test_writes_on_many_threads_at_once_each_get_their_own_rows(agent, start_run, reader):
    runs = [start_run() for _ in range(4)]
    before = reader.changes.latest()
    got: dict[str, list[ChangeSet]] = {r.id: [] for r in runs}
    heard: list[tuple[int, ChangeSet]] = []
    agent.on_commit = lambda cs: heard.append((threading.get_ident(), cs))
    start = threading.Barrier(len(runs))

    def writes(run_id: str) -> None:
        start.wait(10)
        for i in range(10):
            got[run_id].append(
                agent.write_changes(lambda tx, i=i: tx.run_event(run_id, "note", {"i": i}))[1]
            )

    threads = [threading.Thread(target=writes, args=(r.id,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for run_id, sets in got.items():
        assert len(sets) == 10 and all(cs.run_ids() == {run_id} for cs in sets)
    every = sorted(
        (c for sets in got.values() for cs in sets for c in dumped(cs)), key=lambda c: c["seq"]
    )
    assert every == stored(reader, before)
    assert sorted((c for _, cs in heard for c in dumped(cs)), key=lambda c: c["seq"]) == every


def test_a_failed_write_reports_no_changes(agent, operator, run, reader):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    seen: list[ChangeSet] = []
    agent.on_commit = operator.on_commit = seen.append
    before = reader.changes.latest()
    with pytest.raises(errors.StaleVersion):  # refused inside its transaction
        operator.approvals.decide(approval.id, True, expected_version=approval.version + 5)

    def fails(tx) -> None:
        tx.changed(ChangeKind.RUN, run.id, run.id)
        tx.run_event(run.id, "note", {})
        raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        agent.write_changes(fails)
    assert seen == [] and reader.changes.latest() == before
    _, changes = agent.write_changes(lambda tx: None)  # nothing written: an empty set
    assert changes == ChangeSet(since=0, until=0, changes=[]) and seen == []


def test_a_write_that_raises_after_its_commit_hands_over_the_rows_it_committed(agent, run, reader):
    seen: list[ChangeSet] = []
    agent.on_commit = seen.append
    before = reader.changes.latest()

    def write(tx) -> None:
        tx.changed(ChangeKind.RUN, run.id, run.id)
        tx.raise_after_commit(errors.ValidationError("said after the commit"))

    with pytest.raises(errors.ValidationError):
        agent.write_changes(write)
    assert [dumped(cs) for cs in seen] == [stored(reader, before)]
    assert len(seen[0].changes) == 1


def test_a_replayed_request_reports_no_new_changes(agent, operator, run, reader):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    seen: list[ChangeSet] = []
    operator.on_commit = seen.append
    decide = lambda: operator.approvals.decide(  # noqa: E731 - the same request twice
        approval.id, False, expected_version=approval.version, reason="no", request_id="req-1"
    )
    first = decide()
    assert len(seen) == 1 and approval.id in seen[0].ids(ChangeKind.APPROVAL)
    after = reader.changes.latest()
    again = decide()
    assert again == first and again.status == "denied"
    assert len(seen) == 1 and reader.changes.latest() == after


def test_a_large_write_is_numbered_in_order_across_statements(agent, run, reader):
    """More change rows than one numbered INSERT holds (sql.NUMBERED_ROWS) keep their order."""
    from proctor.core.storage.sql import NUMBERED_ROWS

    before = reader.changes.latest()

    def write(tx) -> None:
        for i in range(NUMBERED_ROWS + 7):
            tx.changed(ChangeKind.AUDIT, f"aud_{i:04d}", run.id)

    _, changes = agent.write_changes(write)
    assert [c.entity_id for c in changes.changes] == [
        f"aud_{i:04d}" for i in range(NUMBERED_ROWS + 7)
    ]
    assert dumped(changes) == stored(reader, before)


def test_handing_over_the_change_set_reads_nothing_back(agent, run):
    """With a listener the write sends the statements it sends without one, and none reads
    the change feed: the rows come back from their INSERT."""
    from .test_statement_counts import counting

    def append(i: int):
        return lambda: agent.runs.append_event(run.id, "note", {"i": i})

    with counting(agent) as alone:
        append(0)()
    agent.on_commit = lambda changes: None
    with counting(agent) as heard:
        append(1)()
    with counting(agent) as returned:
        agent.write_changes(lambda tx: tx.run_event(run.id, "note", {"i": 2}))
    assert len(heard) == len(alone) and len(returned) == len(alone)
    assert not [sql for sql in heard + returned if "FROM changes" in sql]
