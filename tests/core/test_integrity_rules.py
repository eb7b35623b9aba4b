"""Issue 15, the service rules: a person's decision gates exactly one action, once, in time;
only a person (never the requester) decides; memory keeps a person's trust. The run rules
(interrupts, the resume gate, cancels) are in test_integrity_runs, replays in
test_integrity_replays."""

from __future__ import annotations

import pytest

from proctor.core import Actor, errors
from proctor.core.approvals.service import CONSUME_WINDOW

from .conftest import AGENT
from .helpers import ACTION, delta, events_of, executing, row_counts, snapshot


def approved(agent, operator, run, action=ACTION, **kw):
    approval = agent.approvals.request(run.id, action, reason="needed", **kw)
    return operator.approvals.decide(approval.id, True, expected_version=approval.version)


def consume(agent, approval, key="fx-1", owner="w1"):
    return agent.approvals.consume_and_reserve(
        approval.id, approval.action_digest, key, owner=owner
    )


# ---------------------------------------------------------------- consuming after expiry


def test_an_approval_is_not_consumed_after_its_expiry_and_the_lapse_is_kept(
    agent, operator, run, clock, journal_path
):
    approval = approved(agent, operator, run, expires_in=60)
    clock.advance(60)
    before = row_counts(journal_path)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, approval)
    lapsed = agent.approvals.get(approval.id)
    assert (lapsed.status, lapsed.consumed_at, lapsed.version) == (
        "expired",
        None,
        approval.version + 1,
    )
    assert lapsed.decided_by == f"operator:{operator.actor.name}"  # who approved stays
    changed = delta(before, row_counts(journal_path))
    assert changed.get("effects", 0) == 0 and changed.get("decisions", 0) == 0
    assert changed["audit"] == 1 and changed["events"] == 1
    assert events_of(journal_path, run.id)[-1][1] == "approval.expired"
    assert agent.audit.list(limit=1).items[0].action == "approval.expired"
    again = snapshot(journal_path)
    with pytest.raises(errors.NotConsumable):
        consume(agent, approval)
    assert snapshot(journal_path) == again


def test_an_approval_is_consumed_until_its_expiry(agent, operator, run, clock):
    approval = approved(agent, operator, run, expires_in=60)
    clock.advance(59.9)
    assert consume(agent, approval).status == "reserved"


def test_without_an_expiry_an_approval_is_used_within_the_window_of_its_decision(
    agent, operator, run, clock
):
    soon = approved(agent, operator, run, {"tool": "a"})
    late = approved(agent, operator, run, {"tool": "b"})
    clock.advance(CONSUME_WINDOW - 1)
    assert consume(agent, soon, "fx-soon").status == "reserved"
    clock.advance(1)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, late, "fx-late")
    assert agent.approvals.get(late.id).status == "expired"


def test_a_late_approval_of_an_advisory_expiry_gets_the_window_from_its_decision(
    agent, operator, run, clock
):
    request = agent.approvals.request(
        run.id, ACTION, reason="r", expires_in=10, on_expiry="keep_pending"
    )
    clock.advance(20)  # overdue, still decidable: the person approves knowing it
    approval = operator.approvals.decide(request.id, True, expected_version=1)
    clock.advance(CONSUME_WINDOW)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, approval)


def test_a_digest_mismatch_on_a_lapsed_approval_writes_nothing(
    agent, operator, run, clock, journal_path
):
    approval = approved(agent, operator, run, expires_in=5)
    clock.advance(10)
    before = snapshot(journal_path)
    with pytest.raises(errors.DigestMismatch):
        agent.approvals.consume_and_reserve(approval.id, "0" * 64, "fx-1", owner="w1")
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- ended runs


def failed_effect_then_ended_run(agent, operator, run, end):
    first = approved(agent, operator, run, {"tool": "pay", "n": 1})
    consume(agent, first, "fx-pay")
    agent.effects.begin("fx-pay", owner="w1")
    agent.effects.fail("fx-pay", "HTTP 500", owner="w1")
    second = approved(agent, operator, run, {"tool": "pay", "n": 2})
    end(agent, run.id)
    return second


ENDINGS = {
    "completed": lambda j, rid: j.runs.complete(rid),
    "failed": lambda j, rid: j.runs.fail(rid, "gave up"),
    "cancelled": lambda j, rid: j.runs.cancel(rid, "stop"),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_failed_key_is_not_retried_on_an_ended_run(agent, operator, run, journal_path, ending):
    second = failed_effect_then_ended_run(agent, operator, run, ENDINGS[ending])
    before = snapshot(journal_path)
    with pytest.raises(errors.RunTerminal):
        consume(agent, second, "fx-pay")
    with pytest.raises(errors.RunTerminal):
        agent.effects.reserve("fx-pay", tool="pay", run_id=run.id, owner="w1")
    with pytest.raises(errors.RunTerminal):  # the effect's own run decides, not the caller
        agent.effects.reserve("fx-pay", tool="pay", owner="w1")
    assert snapshot(journal_path) == before
    assert agent.approvals.get(second.id).consumed_at is None


def test_a_new_key_is_refused_on_an_ended_run_too(agent, operator, run, journal_path):
    second = failed_effect_then_ended_run(agent, operator, run, ENDINGS["completed"])
    before = snapshot(journal_path)
    with pytest.raises(errors.RunTerminal):
        consume(agent, second, "fx-new")
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- late commits


TOUCHES = {
    "nobody": lambda agent, operator: None,
    "sweep": lambda agent, operator: agent.effects.sweep_expired(),
    "another reserve": lambda agent, operator: _reserve_raises(agent),
    "a person resolved it": lambda agent, operator: (
        agent.effects.sweep_expired(),
        operator.effects.resolve(
            "fx-1", "failed", reason="checked", expected_version=agent.effects.get("fx-1").version
        ),
    ),
}


def _reserve_raises(agent):
    with pytest.raises(errors.EffectAmbiguous):
        agent.effects.reserve("fx-1", tool="pay", owner="w2")


@pytest.mark.parametrize("touched_by", sorted(TOUCHES))
@pytest.mark.parametrize("late", ["commit", "fail", "renew"])
def test_a_late_call_after_the_lease_lapsed_is_always_ambiguous(
    agent, operator, clock, journal_path, touched_by, late
):
    executing(agent)
    clock.advance(6)
    TOUCHES[touched_by](agent, operator)
    call = {
        "commit": lambda: agent.effects.commit("fx-1", {"ok": True}, owner="w1"),
        "fail": lambda: agent.effects.fail("fx-1", "late", owner="w1"),
        "renew": lambda: agent.effects.renew("fx-1", owner="w1"),
    }[late]
    with pytest.raises(errors.EffectAmbiguous):
        call()
    before = snapshot(journal_path)
    with pytest.raises(errors.EffectAmbiguous):  # and again: still the same answer
        call()
    assert snapshot(journal_path) == before
    assert agent.effects.get("fx-1").status != "committed"


# ---------------------------------------------------------------- the requester rule


def test_the_runs_agent_cannot_resolve_its_ambiguous_effect(
    open_journal, agent, run, clock, journal_path
):
    executing(agent, run_id=run.id)
    agent.effects.mark_ambiguous("fx-1", "timeout", owner="w1")
    same = open_journal(Actor.operator(AGENT))
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        same.effects.resolve(
            "fx-1", "committed", reason="it did", expected_version=agent.effects.get("fx-1").version
        )
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("who", ["reserver", "lease holder"])
def test_the_agent_that_executed_an_effect_cannot_resolve_it(open_journal, journal_path, who):
    worker = open_journal(Actor.agent("worker-3"))
    owner = None if who == "reserver" else "holder-9@4242"
    worker.effects.reserve("fx-1", tool="pay", owner=owner)  # no run: nobody else asked
    owner = owner or worker.effects.default_owner()
    worker.effects.mark_ambiguous("fx-1", "timeout", owner=owner)
    name = "worker-3" if who == "reserver" else "holder-9"
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(name)).effects.resolve(
            "fx-1", "failed", reason="no", expected_version=2
        )
    assert snapshot(journal_path) == before
    other = open_journal(Actor.operator("carol"))
    assert (
        other.effects.resolve("fx-1", "failed", reason="no", expected_version=2).status == "failed"
    )


def test_the_agent_that_recorded_a_memory_conflict_cannot_resolve_it(open_journal, journal_path):
    syncer = open_journal(Actor.agent("syncer"))
    entry = syncer.memory.add("project", "proj", "db", "db1")
    item = syncer.memory.record_conflict(entry.id, "db2", incoming_source="sync")  # no run
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator("syncer")).memory.resolve(
            item.id, "accepted_incoming", expected_version=1, reason="newer"
        )
    assert snapshot(journal_path) == before


def test_the_runs_agent_cannot_resolve_its_runs_memory_conflict(
    open_journal, agent, run, journal_path
):
    other = open_journal(Actor.agent("helper"))
    entry = other.memory.add("project", "proj", "db", "db1")
    item = other.memory.record_conflict(entry.id, "db2", incoming_source="sync", run_id=run.id)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(AGENT)).memory.resolve_seen(
            item.id, "dismissed", expected_version=1, entry_version=1, reason="stale"
        )
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- memory trust


@pytest.mark.parametrize("trust", ["user_confirmed", "operator_edited"])
def test_an_agent_cannot_add_memory_with_a_persons_trust(agent, operator, journal_path, trust):
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.memory.add("project", "proj", "db", "db1", trust=trust)
    assert snapshot(journal_path) == before
    assert operator.memory.add("project", "proj", "db", "db1", trust=trust).trust == trust


def test_an_agent_cannot_confirm_memory(agent, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.memory.confirm(entry.id, expected_version=1)
    assert snapshot(journal_path) == before


def test_an_operator_named_as_the_writing_agent_cannot_confirm(open_journal, agent, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(AGENT)).memory.confirm(entry.id, expected_version=1)
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("change", ["replace", "remove"])
def test_an_agent_cannot_change_a_confirmed_entry(agent, operator, journal_path, change):
    entry = agent.memory.add("project", "proj", "db", "db1")
    confirmed = operator.memory.confirm(entry.id, expected_version=1)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):  # noqa: PT012 - the block is the one operation under test
        if change == "replace":
            agent.memory.replace(entry.id, "db2", expected_version=confirmed.version)
        else:
            agent.memory.remove(entry.id, expected_version=confirmed.version)
    assert snapshot(journal_path) == before
    item = agent.memory.record_conflict(entry.id, "db2", incoming_source="agent")
    assert item.status == "pending"  # the way an agent proposes a change to it
    kept = operator.memory.replace(entry.id, "db3", expected_version=confirmed.version)
    assert kept.content == "db3"  # an operator still edits it


# ---------------------------------------------------------------- one pending conflict


def test_one_pending_conflict_per_entry(agent, operator, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    first = agent.memory.record_conflict(entry.id, "db2", incoming_source="sync")
    before = snapshot(journal_path)
    with pytest.raises(errors.ConflictPending) as info:
        agent.memory.record_conflict(entry.id, "db3", incoming_source="sync")
    assert info.value.details["reconciliation_id"] == first.id
    assert snapshot(journal_path) == before
    operator.memory.resolve(first.id, "dismissed", expected_version=1, reason="stale")
    assert agent.memory.record_conflict(entry.id, "db3", incoming_source="sync").status == "pending"


def test_the_schema_refuses_a_second_pending_conflict(agent, journal_path):
    import sqlite3

    from .helpers import raw

    entry = agent.memory.add("project", "proj", "db", "db1")
    item = agent.memory.record_conflict(entry.id, "db2", incoming_source="sync")
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memory_reconciliations (id, entry_id, local_content, local_version,"
            " incoming_content, incoming_source, status, version, created_at) "
            "SELECT 'rec_x', entry_id, local_content, local_version, 'db9', 'raw', "
            "'pending', 1, created_at FROM memory_reconciliations WHERE id = ?",
            (item.id,),
        )


@pytest.mark.sqlite_only
def test_migration_keeps_the_newest_of_several_pending_conflicts(journal_path, agent, downgrade):
    from proctor.core import Journal

    from .helpers import raw

    entry = agent.memory.add("project", "proj", "db", "db1")
    agent.close()
    downgrade(journal_path, "0004")
    with raw(journal_path) as conn:
        for n, at in enumerate((10.0, 30.0, 20.0)):
            conn.execute(
                "INSERT INTO memory_reconciliations (id, entry_id, local_content, "
                "local_version, incoming_content, incoming_source, status, version, "
                "created_at) VALUES (?, ?, 'db1', 1, ?, 'sync', 'pending', 1, ?)",
                (f"rec_{n}", entry.id, f"db{n}", at),
            )
    with Journal.open(journal_path, actor=Actor.operator("alice")) as j:
        [pending] = j.memory.conflicts("pending")
        assert pending.id == "rec_1"  # the newest
        closed = j.memory.conflicts("dismissed")
        assert {c.id for c in closed} == {"rec_0", "rec_2"}
        assert all(c.resolved_by == "system:migration-0005b" for c in closed)
