"""Issue 37: a person's decision can be taken back for a few seconds. A decision made with a
hold (``decide(hold=5)``) is not consumed before the hold passes (the service says ``Held``;
raw SQL that consumes it early is refused by a trigger on both stores), an agent's ``wait``
goes on while it is held, and ``undo`` within the hold puts the approval back to pending as
a decision of its own (decision row, audit row, run event, signed when the operator signs).
After the hold, after the consume, or without a hold, undo is refused with ``NotUndoable``;
raw SQL cannot undo a consumed or hold-less decision, nor leave a decision half cleared."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from proctor.core import Actor, digest_of, errors
from proctor.core.decisions.keys import OperatorKey, trust_file

from .helpers import T0, FakeClock, delta, raw, row_counts, snapshot

ACTION = {"tool": "shell", "args": {"command": "make deploy"}}

# Tests whose undo succeeds: the store's trigger compares an undo with the store's own clock
# (0015u), so their clock starts at the wall clock's now. The others start long past (T0):
# a consume after ``clock.advance`` past the hold is past it by the store's clock too.
UNDOES = {
    "test_undo_within_the_hold_puts_the_request_back_and_is_recorded",
    "test_a_denial_is_held_too_and_undone",
    "test_a_trusting_agent_reads_the_decision_made_after_an_undo",
    "test_verify_names_a_held_denial_cleared_by_raw_sql",
    "test_verify_names_an_undo_recorded_after_the_hold",
    "test_an_honest_undo_verifies",
    "test_raw_sql_cannot_consume_within_the_hold_by_the_stores_clock",
}


@pytest.fixture
def clock(request) -> FakeClock:
    return FakeClock(time.time() if request.node.originalname in UNDOES else T0)


def held(agent, operator, run, approve=True, hold=5.0):
    a = agent.approvals.request(run.id, ACTION, reason="deploy")
    return operator.approvals.decide(
        a.id, approve, expected_version=a.version, reason=None if approve else "no", hold=hold
    )


def test_a_held_approval_is_not_consumed_until_its_hold_passes(agent, operator, run, clock):
    a = held(agent, operator, run)
    assert a.status == "approved" and a.hold_until == clock.t + 5
    with pytest.raises(errors.Held):
        agent.approvals.consume_and_reserve(a.id, digest_of(ACTION), "fx-1")
    assert agent.approvals.get(a.id).consumed_at is None
    seen = agent.approvals.wait(a.id, timeout=0)  # held: the agent sees it pending
    assert (seen.status, seen.decided_by) == ("pending", None)
    clock.advance(5)
    effect = agent.approvals.consume_and_reserve(a.id, digest_of(ACTION), "fx-1")
    assert effect.key == "fx-1" and agent.approvals.get(a.id).consumed_at == clock.t


def test_a_hold_never_eats_the_agents_time_to_use_an_approval_near_its_expiry(
    agent, operator, run, clock
):
    """Approved 2 s before its request expires, with the desk's 5 s hold: once the hold
    ends the agent still has those 2 s (its deadline moves by the hold), not a lapse."""
    a = agent.approvals.request(run.id, ACTION, reason="deploy", expires_in=60)
    clock.advance(58)
    a = operator.approvals.decide(a.id, True, expected_version=a.version, hold=5)
    clock.advance(5.5)  # the hold is over; without it the request expired 3.5 s ago
    effect = agent.approvals.consume_and_reserve(a.id, digest_of(ACTION), "fx-near")
    assert effect.key == "fx-near" and agent.approvals.get(a.id).status == "approved"
    b = agent.approvals.request(run.id, ACTION, reason="deploy", expires_in=60)
    clock.advance(58)
    b = operator.approvals.decide(b.id, True, expected_version=b.version, hold=5)
    clock.advance(7.01)  # past the moved deadline: it lapses as before
    with pytest.raises(errors.ApprovalLapsed):
        agent.approvals.consume_and_reserve(b.id, digest_of(ACTION), "fx-late")


def test_undo_within_the_hold_puts_the_request_back_and_is_recorded(
    agent, operator, run, clock, journal_path
):
    a = held(agent, operator, run)
    assert agent.runs.get(run.id).status == "running"
    before = row_counts(journal_path)
    clock.advance(4.9)
    back = operator.approvals.undo(a.id, expected_version=a.version, reason="misclick")
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert back.status == "pending" and back.version == a.version + 1
    assert (back.decided_by, back.decided_at, back.hold_until) == (None, None, None)
    assert agent.runs.get(run.id).status == "waiting_for_user"
    decisions = operator.approvals.decisions(a.id)
    assert [d.decision.get("undone", False) for d in decisions] == [False, True]
    assert decisions[1].decision == {"undone": True, "was": "approved", "by": "operator:alice"}
    assert [e.type for e in agent.runs.events(run.id)][-2:] == [
        "approval.approved",
        "approval.undone",
    ]
    with pytest.raises(errors.NotConsumable):
        agent.approvals.consume_and_reserve(a.id, digest_of(ACTION), "fx-1")
    # decided again, without a hold this time: the agent may act at once
    again = operator.approvals.decide(a.id, False, expected_version=back.version, reason="no")
    assert again.status == "denied" and again.hold_until is None
    assert agent.approvals.wait(a.id, timeout=0).status == "denied"


def test_a_denial_is_held_too_and_undone(agent, operator, run, clock):
    d = held(agent, operator, run, approve=False)
    assert d.held(clock.t)
    back = operator.approvals.undo(d.id, expected_version=d.version)
    assert back.status == "pending"


def test_undo_after_the_hold_after_the_consume_or_without_a_hold_is_refused(
    agent, operator, run, clock, journal_path
):
    late = held(agent, operator, run)
    clock.advance(5)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotUndoable, match="hold"):
        operator.approvals.undo(late.id, expected_version=late.version)
    agent.approvals.consume_and_reserve(late.id, digest_of(ACTION), "fx-late")
    with pytest.raises(errors.NotUndoable, match="used"):
        operator.approvals.undo(late.id, expected_version=late.version + 1)
    assert snapshot(journal_path) != before  # (the consume)
    a = agent.approvals.request(run.id, ACTION, reason="again")
    plain = operator.approvals.decide(a.id, True, expected_version=a.version)
    mid = snapshot(journal_path)
    with pytest.raises(errors.NotUndoable, match="without a hold"):
        operator.approvals.undo(plain.id, expected_version=plain.version)
    with pytest.raises(errors.NotAllowed):
        agent.approvals.undo(plain.id, expected_version=plain.version)
    assert snapshot(journal_path) == mid


def test_a_standing_rule_decision_has_no_hold(agent, operator, run):
    a = agent.approvals.request(run.id, ACTION, reason="deploy")
    made = operator.approvals.decide(a.id, True, expected_version=a.version, scope="run", hold=5)
    assert made.hold_until is None
    with pytest.raises(errors.ValidationError):
        held(agent, operator, run, hold=-1)


def refused(journal_path, sql: str, params: tuple = ()) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


def test_raw_sql_cannot_consume_before_the_hold(agent, operator, run, clock, journal_path):
    a = held(agent, operator, run)
    refused(
        journal_path,
        "UPDATE approvals SET consumed_at = ?, consumed_effect_key = 'fx' WHERE id = ?",
        (clock.t + 1, a.id),
    )
    with raw(journal_path) as conn:  # at or after the hold it is the agent's own first write
        conn.execute(
            "UPDATE approvals SET consumed_at = ?, consumed_effect_key = 'fx' WHERE id = ?",
            (clock.t + 5, a.id),
        )


CLEAR = (
    "status = 'pending', decided_at = NULL, decided_by = NULL, decision_reason = NULL, "
    "decision_scope = NULL, rule_id = NULL, hold_until = NULL"
)


def test_raw_sql_cannot_consume_within_the_hold_by_the_stores_clock(
    agent, operator, run, clock, journal_path
):
    """Issue 37: the agent's own UPDATE that consumes a held approval while the hold lasts,
    with a ``consumed_at`` of its choosing past the hold, is refused (0015u: the store's own
    clock, not the writer's); an undo by hand after the hold by the store's clock too."""
    a = held(agent, operator, run, hold=30)
    refused(
        journal_path,
        "UPDATE approvals SET consumed_at = ?, consumed_effect_key = 'fx' WHERE id = ?",
        (a.hold_until + 60, a.id),
    )
    assert operator.approvals.undo(a.id, expected_version=a.version).status == "pending"
    late = held(agent, operator, run, hold=0.3)
    while time.time() <= late.hold_until + 0.05:
        time.sleep(0.02)
    refused(journal_path, f"UPDATE approvals SET {FORGED_UNDO} WHERE id = ?", (late.id,))


def test_raw_sql_cannot_undo_after_the_hold_by_the_stores_clock(
    agent, operator, run, clock, journal_path
):
    a = held(agent, operator, run, approve=False)  # hold_until is long past for the store
    refused(journal_path, f"UPDATE approvals SET {FORGED_UNDO} WHERE id = ?", (a.id,))


@pytest.mark.parametrize(
    "assignments",
    [
        "status = 'pending'",  # the decision left in place
        "status = 'pending', hold_until = NULL",
        "hold_until = NULL",  # the hold taken away after the decision
        "hold_until = hold_until - 10",
    ],
)
def test_raw_sql_cannot_undo_halfway_or_move_the_hold(
    agent, operator, run, journal_path, assignments
):
    a = held(agent, operator, run)
    refused(journal_path, f"UPDATE approvals SET {assignments} WHERE id = ?", (a.id,))


def test_raw_sql_cannot_undo_a_consumed_or_hold_less_decision(
    agent, operator, run, clock, journal_path
):
    a = held(agent, operator, run)
    clock.advance(5)
    agent.approvals.consume_and_reserve(a.id, digest_of(ACTION), "fx-1")
    refused(journal_path, f"UPDATE approvals SET {CLEAR} WHERE id = ?", (a.id,))
    b = agent.approvals.request(run.id, ACTION, reason="again")
    operator.approvals.decide(b.id, True, expected_version=b.version)
    refused(journal_path, f"UPDATE approvals SET {CLEAR} WHERE id = ?", (b.id,))


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate("alice")


def test_a_trusting_agent_reads_the_decision_made_after_an_undo(open_journal, tmp_path, key, clock):
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    agent = open_journal(Actor.agent("agent-1"), trust=path)
    signer = open_journal(Actor.operator("alice"), signer=key)
    run = agent.runs.start("proj", "signed run")
    a = held(agent, signer, run)
    clock.advance(1)
    back = signer.approvals.undo(a.id, expected_version=a.version)
    clock.advance(1)
    denied = signer.approvals.decide(a.id, False, expected_version=back.version, reason="no")
    assert agent.approvals.wait(a.id, timeout=0).status == "denied"
    assert denied.decided_by == "operator:alice"
    assert problems_of(signer, trust=path) == []  # the undone decision and the undo still sign


# ---------------------------------------------------------------- a decision cleared by hand

FORGED_UNDO = f"{CLEAR}, approved_action = NULL, approved_digest = NULL, version = version + 1"


def problems_of(journal, **kwargs) -> list[tuple[str, str]]:
    from proctor.core.audit.verify import verify

    return [(p.what, p.where) for p in verify(journal, **kwargs).problems]


def test_raw_sql_cannot_undo_without_a_version_of_its_own(agent, operator, run, journal_path):
    a = held(agent, operator, run, approve=False)
    cleared = FORGED_UNDO.removesuffix(", version = version + 1")
    refused(journal_path, f"UPDATE approvals SET {cleared} WHERE id = ?", (a.id,))


def test_verify_names_a_held_denial_cleared_by_raw_sql(agent, operator, run, clock, journal_path):
    a = held(agent, operator, run, approve=False, hold=30)
    clock.advance(3600)  # the writer says "long after the hold"; the store's clock is within it
    with raw(journal_path) as conn:
        conn.execute(f"UPDATE approvals SET {FORGED_UNDO} WHERE id = ?", (a.id,))
    assert agent.approvals.get(a.id).status == "pending"
    assert problems_of(operator) == [("decision cleared without an undo", f"approval {a.id}")]


def test_verify_names_an_undo_recorded_after_the_hold(agent, operator, run, clock, journal_path):
    """The forger writes the undo's decision row too (with its digest), dated after the
    hold: verify names the undo as late, and the audit log that does not record it."""
    a = held(agent, operator, run, hold=30)
    clock.advance(31)  # by the writer's clock; the store's is still within the hold
    undo = {"undone": True, "was": "approved", "by": "operator:alice"}
    body = {
        "target_kind": "approval",
        "target_id": a.id,
        "decision": undo,
        "actor": "operator:alice",
        "reason": None,
        "created_at": clock.t,
    }
    with raw(journal_path) as conn:
        conn.execute(f"UPDATE approvals SET {FORGED_UNDO} WHERE id = ?", (a.id,))
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
            "source, reason, created_at, digest) VALUES (?, 'approval', ?, ?, ?, "
            "'operator:alice', 'desk', NULL, ?, ?)",
            ("dec_forged", a.id, run.id, json.dumps(undo), clock.t, digest_of(body)),
        )
    problems = problems_of(operator)
    assert ("undone after its hold", f"approval {a.id}") in problems
    assert ("decision cleared without an undo", f"approval {a.id}") not in problems


def test_an_honest_undo_verifies(agent, operator, run, clock):
    a = held(agent, operator, run, approve=False)
    clock.advance(1)
    operator.approvals.undo(a.id, expected_version=a.version, reason="misclick")
    b = held(agent, operator, run)
    clock.advance(1)
    back = operator.approvals.undo(b.id, expected_version=b.version)
    operator.approvals.decide(b.id, False, expected_version=back.version, reason="no")
    assert problems_of(operator) == []
