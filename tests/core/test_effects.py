"""Effects (ctrlrun model): one lease winner, committed never again, failed retried,
lapsed leases turn ambiguous, only a person resolves ambiguity (DESIGN §2 invariants 6, 7).
The 8-process reservation race lives in tests/integration/test_core_processes.py."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from proctor.core import Actor, errors
from proctor.core.journal import Tx

from .helpers import (
    Boom,
    assert_no_open_transaction,
    boom,
    delta,
    raw,
    row_counts,
    snapshot,
)


def reserve(journal, key="eff-1", owner="w1", **kw):
    kw.setdefault("tool", "payments.charge")
    return journal.effects.reserve(key, owner=owner, **kw)


def ambiguous(journal, key="eff-1", reason="timeout talking to the bank"):
    reserve(journal, key)
    journal.effects.begin(key, owner="w1")
    return journal.effects.mark_ambiguous(key, reason, owner="w1")


def test_reserve_takes_a_lease(agent, run, clock, journal_path):
    effect = reserve(agent, run_id=run.id, action={"amount": 5}, lease_seconds=20)
    assert (effect.status, effect.attempt, effect.lease_owner) == ("reserved", 1, "w1")
    assert effect.lease_expires_at == clock() + 20 and effect.action == {"amount": 5}
    assert agent.runs.events(run.id, descending=True, limit=1)[0].type == "effect.reserved"


def test_live_lease_refuses_other_callers(agent, journal_path):
    reserve(agent, lease_seconds=30)
    before = snapshot(journal_path)
    for owner in ("w1", "w2"):
        with pytest.raises(errors.EffectBusy):
            reserve(agent, owner=owner)
    assert snapshot(journal_path) == before


def test_no_api_releases_someone_elses_live_lease(agent, journal_path):
    reserve(agent)
    before = snapshot(journal_path)
    calls = [
        lambda: agent.effects.begin("eff-1", owner="w2"),
        lambda: agent.effects.renew("eff-1", owner="w2"),
        lambda: agent.effects.fail("eff-1", "x", owner="w2"),
        lambda: agent.effects.mark_ambiguous("eff-1", "x", owner="w2"),
    ]
    for call in calls:
        with pytest.raises(errors.EffectBusy):
            call()
    with pytest.raises(errors.InvalidTransition):  # not executing yet
        agent.effects.commit("eff-1", owner="w1")
    assert snapshot(journal_path) == before


def test_committed_is_never_reserved_again(agent, journal_path):
    reserve(agent)
    agent.effects.begin("eff-1", owner="w1")
    done = agent.effects.commit(
        "eff-1", {"charge": "ch_1"}, owner="w1", external_id="ch_1", evidence={"http": 200}
    )
    assert done.status == "committed" and done.result == {"charge": "ch_1"}
    [receipt] = agent.effects.receipts("eff-1")
    assert (receipt.kind, receipt.status, receipt.external_id) == ("commit", "committed", "ch_1")
    before = snapshot(journal_path)
    for owner in ("w1", "w2"):
        with pytest.raises(errors.EffectCommitted):
            reserve(agent, owner=owner)
    assert snapshot(journal_path) == before


def test_failed_may_be_retried_as_next_attempt(agent):
    reserve(agent)
    agent.effects.begin("eff-1", owner="w1")
    failed = agent.effects.fail("eff-1", "HTTP 503", owner="w1")
    assert failed.status == "failed" and failed.error == "HTTP 503"
    retry = reserve(agent, owner="w2")
    assert (retry.status, retry.attempt, retry.lease_owner) == ("reserved", 2, "w2")
    agent.effects.fail("eff-1", "HTTP 503 again", owner="w2")
    assert reserve(agent, owner="w3").attempt == 3


def test_lapsed_lease_becomes_ambiguous_and_that_write_survives(agent, run, clock, journal_path):
    reserve(agent, run_id=run.id, lease_seconds=5)
    agent.effects.begin("eff-1", owner="w1")
    clock.advance(6)
    before = row_counts(journal_path)
    with pytest.raises(errors.EffectAmbiguous):
        reserve(agent, owner="w2")
    effect = agent.effects.get("eff-1")
    assert effect.status == "ambiguous" and "lease expired" in effect.ambiguous_reason
    assert effect.lease_expires_at is None
    changed = delta(before, row_counts(journal_path))
    assert (changed["audit"], changed["events"]) == (1, 1)
    [entry] = agent.audit.for_entity("eff-1")
    assert (entry.action, entry.actor) == ("effect.ambiguous", "system:recovery")
    assert_no_open_transaction(agent)
    before = snapshot(journal_path)
    with pytest.raises(errors.EffectAmbiguous):  # stays for a person; nothing more written
        reserve(agent, owner="w3")
    assert snapshot(journal_path) == before


def test_owner_finishing_after_its_lease_lapsed_gets_ambiguous(agent, clock):
    reserve(agent, lease_seconds=5)
    agent.effects.begin("eff-1", owner="w1")
    clock.advance(5)
    with pytest.raises(errors.EffectAmbiguous):
        agent.effects.commit("eff-1", {"ok": True}, owner="w1")
    assert agent.effects.get("eff-1").status == "ambiguous"
    assert agent.effects.receipts("eff-1") == []


def test_renew_keeps_the_lease_alive(agent, clock):
    reserve(agent, lease_seconds=10)
    clock.advance(8)
    agent.effects.renew("eff-1", owner="w1", lease_seconds=10)
    clock.advance(8)
    with pytest.raises(errors.EffectBusy):
        reserve(agent, owner="w2")


def test_sweep_turns_every_lapsed_lease_ambiguous(agent, clock):
    for key in ("a", "b", "c"):
        reserve(agent, key, lease_seconds=5)
    reserve(agent, "d", lease_seconds=50)
    clock.advance(6)
    assert agent.effects.sweep_expired() == 3
    assert agent.effects.count("ambiguous") == 3 and agent.effects.count("reserved") == 1
    assert {e.key for e in agent.effects.list(status=["ambiguous"]).items} == {"a", "b", "c"}


def test_lease_must_be_positive(agent, journal_path):
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError):
        reserve(agent, lease_seconds=0)
    assert row_counts(journal_path) == before


def test_threads_racing_on_one_key_give_one_winner(agent, open_journal):
    journals = [agent, open_journal(Actor.agent("agent-2"))]
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def racer(n):
        barrier.wait()
        try:
            reserve(journals[n % 2], "race", owner=f"t{n}")
            outcomes.append("won")
        except errors.EffectBusy:
            outcomes.append("busy")

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["busy"] * 7 + ["won"]


# ---------------------------------------------------------------- resolution by a person


@pytest.mark.parametrize("outcome", ["committed", "failed"])
def test_resolve_writes_receipt_decision_audit_event_together(
    agent, operator, run, journal_path, outcome
):
    reserve(agent, run_id=run.id)
    agent.effects.begin("eff-1", owner="w1")
    effect = agent.effects.mark_ambiguous("eff-1", "bank timed out", owner="w1")
    before = row_counts(journal_path)
    done = operator.effects.resolve(
        "eff-1",
        outcome,
        reason="checked the bank statement",
        expected_version=effect.version,
        external_id="ch_9",
        evidence={"statement": "line 4"},
    )
    assert done.status == outcome and done.resolved_by == "operator:alice"
    assert done.resolution_reason == "checked the bank statement"
    assert done.ambiguous_reason == "bank timed out" and done.error == effect.error
    changed = delta(before, row_counts(journal_path))
    assert set(changed) == {"receipts", "decisions", "audit", "events", "changes"}
    assert (changed["receipts"], changed["decisions"], changed["audit"], changed["events"]) == (
        1,
        1,
        1,
        1,
    )
    [receipt] = operator.effects.receipts("eff-1")
    assert (receipt.kind, receipt.status, receipt.external_id) == ("resolution", outcome, "ch_9")
    assert receipt.evidence["prior_error"] == effect.error
    assert receipt.evidence["ambiguous_reason"] == "bank timed out"
    assert receipt.evidence["evidence"] == {"statement": "line 4"}
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert last.type == "effect.resolved" and last.payload["outcome"] == outcome


def test_resolved_committed_is_final_and_failed_retryable(agent, operator):
    for key, outcome in (("a", "committed"), ("b", "failed")):
        effect = ambiguous(agent, key)
        operator.effects.resolve(key, outcome, reason="checked", expected_version=effect.version)
    with pytest.raises(errors.EffectCommitted):
        reserve(agent, "a", owner="w9")
    assert reserve(agent, "b", owner="w9").attempt == 2


@pytest.mark.parametrize("state", ["reserved", "executing", "committed", "failed"])
def test_only_ambiguous_effects_are_resolved_by_hand(agent, operator, journal_path, state):
    reserve(agent)
    if state != "reserved":
        agent.effects.begin("eff-1", owner="w1")
    if state == "committed":
        agent.effects.commit("eff-1", owner="w1")
    elif state == "failed":
        agent.effects.fail("eff-1", "x", owner="w1")
    current = agent.effects.get("eff-1")
    assert current.status == state
    before = snapshot(journal_path)
    with pytest.raises((errors.AlreadyDecided, errors.InvalidTransition)):
        operator.effects.resolve("eff-1", "committed", reason="r", expected_version=current.version)
    assert snapshot(journal_path) == before


@pytest.mark.parametrize(
    ("outcome", "reason", "field"),
    [
        ("reserved", "r", "outcome"),
        ("ambiguous", "r", "outcome"),
        ("executing", "r", "outcome"),
        ("committed", "", "reason"),
        ("failed", "   ", "reason"),
    ],
)
def test_resolve_needs_final_outcome_and_reason(
    agent, operator, journal_path, outcome, reason, field
):
    effect = ambiguous(agent)
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        operator.effects.resolve("eff-1", outcome, reason=reason, expected_version=effect.version)
    assert info.value.field == field
    assert snapshot(journal_path) == before


def test_resolve_stale_replay_conflict_and_actor(agent, operator, journal_path):
    effect = ambiguous(agent)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.effects.resolve("eff-1", "failed", reason="r", expected_version=effect.version - 1)
    with pytest.raises(errors.NotAllowed):
        agent.effects.resolve("eff-1", "failed", reason="r", expected_version=effect.version)
    assert snapshot(journal_path) == before
    first = operator.effects.resolve(
        "eff-1", "failed", reason="r", expected_version=effect.version, request_id="rq-1"
    )
    before = snapshot(journal_path)
    assert (
        operator.effects.resolve(
            "eff-1", "failed", reason="r", expected_version=effect.version, request_id="rq-1"
        )
        == first
    )
    with pytest.raises(errors.IdempotencyConflict):
        operator.effects.resolve(
            "eff-1", "committed", reason="r", expected_version=effect.version, request_id="rq-1"
        )
    with pytest.raises(errors.AlreadyDecided):
        operator.effects.resolve("eff-1", "committed", reason="r", expected_version=first.version)
    assert snapshot(journal_path) == before


def test_resolution_is_one_transaction(agent, operator, run, journal_path, monkeypatch):
    reserve(agent, run_id=run.id)
    effect = agent.effects.mark_ambiguous("eff-1", "lost", owner="w1")
    before = snapshot(journal_path)
    monkeypatch.setattr(Tx, "append_event", boom)  # the run event is written last
    with pytest.raises(Boom):
        operator.effects.resolve("eff-1", "committed", reason="r", expected_version=effect.version)
    monkeypatch.undo()
    assert snapshot(journal_path) == before
    assert_no_open_transaction(operator)


def test_effect_of_ended_run_resolves_without_touching_the_run(agent, operator, run):
    reserve(agent, run_id=run.id)
    effect = agent.effects.mark_ambiguous("eff-1", "lost", owner="w1")
    agent.runs.complete(run.id)
    ended = agent.runs.get(run.id)
    assert ended.open_items == 1  # the ambiguous effect still waits for a person
    operator.effects.resolve(
        "eff-1", "failed", reason="never sent", expected_version=effect.version
    )
    after = agent.runs.get(run.id)
    assert after.open_items == 0
    assert after.model_dump(exclude={"open_items"}) == ended.model_dump(exclude={"open_items"})
    assert [a.action for a in operator.audit.for_entity("eff-1")][-1] == "effect.resolved_failed"


def test_effect_list_pages_by_creation(agent, clock):
    for i in range(5):
        clock.advance(1)
        reserve(agent, f"k{i}")
    first = agent.effects.list(limit=2)
    second = agent.effects.list(limit=2, cursor=first.next_cursor)
    rest = agent.effects.list(limit=2, cursor=second.next_cursor)
    keys = [e.key for e in first.items + second.items + rest.items]
    assert keys == ["k4", "k3", "k2", "k1", "k0"] and rest.next_cursor is None


# ------------------------------------------------------------ receipts so far, partial result


def test_holder_records_receipts_while_executing(agent, operator, run, journal_path, clock):
    reserve(agent, run_id=run.id)
    agent.effects.begin("eff-1", owner="w1")
    before = row_counts(journal_path)
    receipt = agent.effects.record_receipt(
        "eff-1", external_id="req_42", evidence={"provider": "bank", "status": 202}, owner="w1"
    )
    changed = delta(before, row_counts(journal_path))
    assert set(changed) == {"receipts", "events", "changes"}
    assert (changed["receipts"], changed["events"]) == (1, 1)
    with raw(journal_path) as conn:  # the desk hears of it through the change feed
        assert conn.execute(
            "SELECT run_id FROM changes WHERE entity_kind = 'receipt' AND entity_id = ?",
            (receipt.id,),
        ).fetchall() == [(run.id,)]
    assert (receipt.kind, receipt.status, receipt.external_id) == (
        "progress",
        "executing",
        "req_42",
    )
    assert receipt.evidence == {"provider": "bank", "status": 202}
    assert receipt.actor == agent.actor.label
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert last.type == "effect.receipt"
    assert last.payload == {
        "effect_key": "eff-1",
        "attempt": 1,
        "receipt_id": receipt.id,
        "external_id": "req_42",
    }
    effect = agent.effects.mark_ambiguous(
        "eff-1", "bank timed out", owner="w1", partial_result={"accepted": True}
    )
    context = operator.effects.context("eff-1")
    assert [r.id for r in context.receipts] == [receipt.id]
    assert context.effect.result == {"accepted": True}
    clock.advance(1)  # receipts list by time
    done = operator.effects.resolve(
        "eff-1", "committed", reason="the bank shows req_42", expected_version=effect.version
    )
    assert done.result == {"accepted": True}  # kept; the resolution receipt keeps it too
    kinds = [(r.kind, r.external_id) for r in operator.effects.receipts("eff-1")]
    assert kinds == [("progress", "req_42"), ("resolution", None)]
    assert operator.effects.receipts("eff-1")[1].evidence["partial_result"] == {"accepted": True}


def test_receipts_are_immutable(agent, journal_path):
    reserve(agent)
    agent.effects.begin("eff-1", owner="w1")
    agent.effects.record_receipt("eff-1", external_id="req_1", owner="w1")
    with raw(journal_path) as conn, pytest.raises(sqlite3.DatabaseError):
        conn.execute("UPDATE receipts SET external_id = 'forged'")


def test_partial_result_in_the_ambiguous_event(agent, run):
    reserve(agent, run_id=run.id)
    agent.effects.begin("eff-1", owner="w1")
    agent.effects.mark_ambiguous(
        "eff-1", "stream cut", owner="w1", partial_result={"rows_written": 120}
    )
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert last.type == "effect.ambiguous"
    assert last.payload["partial_result"] == {"rows_written": 120}
    assert agent.effects.get("eff-1").result == {"rows_written": 120}


def test_without_partial_result_the_result_stays_empty(agent, run):
    reserve(agent, run_id=run.id)
    agent.effects.begin("eff-1", owner="w1")
    effect = agent.effects.mark_ambiguous("eff-1", "lost", owner="w1")
    assert effect.result is None
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert last.type == "effect.ambiguous" and "partial_result" not in last.payload


@pytest.mark.parametrize("case", ["reserved", "other owner", "committed", "missing", "empty"])
def test_receipt_refusals_write_nothing(agent, journal_path, case):
    reserve(agent, "eff-r")
    if case != "reserved":
        agent.effects.begin("eff-r", owner="w1")
    if case == "committed":
        agent.effects.commit("eff-r", {"ok": True}, owner="w1")
    expected = {
        "reserved": errors.InvalidTransition,
        "other owner": errors.EffectBusy,
        "committed": errors.InvalidTransition,
        "missing": errors.NotFound,
        "empty": errors.ValidationError,
    }[case]
    key = "nope" if case == "missing" else "eff-r"
    owner = "w2" if case == "other owner" else "w1"
    kw = {} if case == "empty" else {"external_id": "req_1"}
    before = snapshot(journal_path)
    with pytest.raises(expected):
        agent.effects.record_receipt(key, owner=owner, **kw)
    assert snapshot(journal_path) == before
    assert_no_open_transaction(agent)


def test_receipt_after_the_lease_lapsed_is_kept_and_the_effect_turns_ambiguous(agent, run, clock):
    reserve(agent, run_id=run.id, lease_seconds=5)
    agent.effects.begin("eff-1", owner="w1")
    clock.advance(6)
    with pytest.raises(errors.EffectAmbiguous):
        agent.effects.record_receipt("eff-1", external_id="req_late", owner="w1")
    assert agent.effects.get("eff-1").status == "ambiguous"
    assert [r.external_id for r in agent.effects.receipts("eff-1")] == ["req_late"]
    types = [e.type for e in agent.runs.events(run.id, descending=True, limit=2)]
    assert types == ["effect.ambiguous", "effect.receipt"]


def test_receipt_of_an_ended_run_writes_no_event(agent, run, journal_path):
    reserve(agent, run_id=run.id)
    agent.effects.begin("eff-1", owner="w1")
    agent.runs.complete(run.id)
    before = row_counts(journal_path)
    agent.effects.record_receipt("eff-1", evidence={"note": "sent"}, owner="w1")
    assert delta(before, row_counts(journal_path)) == {"receipts": 1, "changes": 1}
