"""Issue 37: a bulk approve or deny is held like one decision (``bulk_decide(hold=)``), and
the batch is undone in one call (``bulk_undo``) while it is held, each item reporting its
own outcome: one the agent already used stands, and says so. An agent's raw SQL cannot
consume an item of the held batch early (0015u)."""

from __future__ import annotations

import sqlite3
import time

import pytest

from proctor.core import Actor, digest_of, errors

from .helpers import raw

ACTIONS = [{"tool": "shell", "args": {"command": f"make step-{n}"}} for n in range(3)]


@pytest.fixture
def people(open_journal):
    return (
        open_journal(Actor.agent("agent-1"), clock=time.time),
        open_journal(Actor.operator("alice"), clock=time.time),
    )


def filed(agent) -> list[tuple[str, int]]:
    run = agent.runs.start("proj", "steps")
    return [
        (a.id, a.version)
        for a in (agent.approvals.request(run.id, x, reason="step") for x in ACTIONS)
    ]


def test_a_bulk_decision_is_held_and_undone_as_a_batch(people, journal_path):
    agent, alice = people
    items = filed(agent)
    results = alice.approvals.bulk_decide(items, True, reason="batch", hold=30)
    assert all(r.ok and r.hold_until is not None for r in results)
    for (aid, _v), r, action in zip(items, results, ACTIONS, strict=True):
        a = agent.approvals.wait(aid, timeout=0)
        assert a.status == "pending"  # held: the agent does not see it yet
        assert r.version == alice.approvals.get(aid).version
        with pytest.raises(errors.Held):
            agent.approvals.consume_and_reserve(aid, digest_of(action), f"fx-{aid}")
    with raw(journal_path) as conn, pytest.raises(Exception) as err:  # noqa: PT011
        conn.execute(
            "UPDATE approvals SET consumed_at = ?, consumed_effect_key = 'fx' WHERE id = ?",
            (results[0].hold_until + 60, items[0][0]),
        )
    assert "hold" in str(err.value) or isinstance(err.value, sqlite3.IntegrityError)
    undone = alice.approvals.bulk_undo([(r.id, r.version) for r in results])
    assert [r.ok for r in undone] == [True, True, True]
    assert {alice.approvals.get(aid).status.value for aid, _v in items} == {"pending"}


def test_undoing_a_batch_reports_what_the_agent_already_used(people):
    agent, alice = people
    items = filed(agent)
    results = alice.approvals.bulk_decide(items, True, hold=0.3)
    while time.time() <= max(r.hold_until for r in results) + 0.05:
        time.sleep(0.02)
    agent.approvals.consume_and_reserve(items[0][0], digest_of(ACTIONS[0]), "fx-used")
    undone = alice.approvals.bulk_undo([(r.id, r.version) for r in results])
    assert [r.ok for r in undone] == [False, False, False]
    assert "already used" in (undone[0].error or "")
    assert "hold" in (undone[1].error or "")
    assert all(r.error_type == "NotUndoable" for r in undone)


def test_a_bulk_decision_without_a_hold_is_not_held(people):
    agent, alice = people
    items = filed(agent)
    results = alice.approvals.bulk_decide(items, False, reason="no")
    assert [r.hold_until for r in results] == [None, None, None]
    assert agent.approvals.wait(items[0][0], timeout=0).status == "denied"
