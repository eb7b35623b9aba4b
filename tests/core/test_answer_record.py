"""Issue 37: what an answer's decision row records. The hold is signed with the answer (as an
approval's is): a raw-SQL change of ``hold_until`` on an answered question is named by
``verify`` and refused for a trusting agent. And no answer reads as an undo: a response that
is literally ``{"undone": true, ...}`` stays an answer for every reader (the trusting
agent's check, ``verify``, the order of decision rows), in new journals and old ones."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from proctor.core import Actor, errors
from proctor.core.decisions.answers import said
from proctor.core.decisions.checks import undone
from proctor.core.decisions.keys import OperatorKey, trust_file

from .helpers import raw

UNDO_LIKE = {"undone": True, "was": "resolved", "by": "operator:alice"}
SCHEMA = {"type": "object"}  # any object: the response may say anything


@pytest.fixture
def signed(open_journal, tmp_path):
    """A trusting agent and the operator whose key it trusts, on the wall clock."""
    key = OperatorKey.generate("alice")
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    agent = open_journal(Actor.agent("agent-1"), trust=path, clock=time.time)
    alice = open_journal(Actor.operator("alice"), signer=key, clock=time.time)
    return agent, alice


def asked(agent, schema=None):
    run = agent.runs.start("proj", "asks")
    return agent.questions.ask(run.id, "question", "Which warehouse?", response_schema=schema)


def problems(journal) -> list[tuple[str, str]]:
    from proctor.core.audit.verify import verify

    return [(p.what, p.detail) for p in verify(journal).problems]


@pytest.mark.parametrize("how", ["answer", "dismiss"])
def test_the_hold_is_in_the_signed_decision(signed, how):
    agent, alice = signed
    q = asked(agent)
    if how == "answer":
        done = alice.questions.answer(q.id, {"text": "n"}, expected_version=q.version, hold=30)
    else:
        done = alice.questions.dismiss(q.id, "phone", expected_version=q.version, hold=30)
    [d] = alice.approvals.decisions(q.id)
    assert d.decision["hold_until"] == done.hold_until is not None
    assert agent.questions.get(q.id).status == "presented"  # held, and checked: no error
    assert problems(alice) == []


def rewrite_hold(journal_path, qid: str, hold_until: float) -> None:
    """A same-user process moves the hold of an answered question: it drops the trigger
    that refuses it, updates, and puts the same trigger back (the triggers check passes)."""
    with raw(journal_path) as conn:
        [sql] = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'trg_interactions_decision'"
        ).fetchone()
        conn.execute("DROP TRIGGER trg_interactions_decision")
        conn.execute("UPDATE interactions SET hold_until = ? WHERE id = ?", (hold_until, qid))
        conn.execute(sql)


@pytest.mark.sqlite_only
def test_a_hold_moved_by_raw_sql_is_named_and_refused_for_a_trusting_agent(signed, journal_path):
    agent, alice = signed
    q = asked(agent)
    done = alice.questions.answer(q.id, {"text": "n"}, expected_version=q.version, hold=30)
    rewrite_hold(journal_path, q.id, done.hold_until - 60)  # ended: the agent may act now
    assert ("answer rewritten", "its hold (hold_until) is not the one its decision records") in (
        problems(alice)
    )
    with pytest.raises(errors.DecisionUnverified, match="hold_until"):
        agent.questions.get(q.id)


def test_raw_sql_cannot_move_the_hold_of_an_answer(signed, journal_path):
    """The store refuses the move itself (0014u) on both stores."""
    agent, alice = signed
    q = asked(agent)
    done = alice.questions.answer(q.id, {"text": "n"}, expected_version=q.version, hold=30)
    with raw(journal_path) as conn, pytest.raises(Exception) as err:  # noqa: PT011
        conn.execute(
            "UPDATE interactions SET hold_until = ? WHERE id = ?", (done.hold_until - 60, q.id)
        )
    assert "hold_until" in str(err.value) or isinstance(err.value, sqlite3.IntegrityError)


def test_an_answer_that_says_undone_is_an_answer(signed):
    """The response is literally an undo's payload: the trusting agent reads it as the
    answer, verify finds nothing, and a later real undo and answer read in turn."""
    agent, alice = signed
    q = asked(agent, SCHEMA)
    done = alice.questions.answer(q.id, UNDO_LIKE, expected_version=q.version)
    [d] = alice.approvals.decisions(q.id)
    assert not undone(json.dumps(d.decision))
    got = agent.questions.get(q.id)
    assert (got.status, got.response) == ("resolved", UNDO_LIKE)
    assert problems(alice) == []
    q2 = asked(agent, SCHEMA)
    held = alice.questions.answer(q2.id, UNDO_LIKE, expected_version=q2.version, hold=30)
    back = alice.questions.undo(q2.id, expected_version=held.version)
    alice.questions.answer(q2.id, {"undone": True}, expected_version=back.version)
    got = agent.questions.get(q2.id)
    assert (got.status, got.response) == ("resolved", {"undone": True})
    assert problems(alice) == []
    assert done.response == UNDO_LIKE


def test_an_older_journals_answer_reads_as_its_response():
    """Before issue 37 an answer's decision was the response itself (no hold signed); an
    answer that merely says "undone" is not an undo; the undo's exact payload is."""
    assert said({"text": "n"}, {"text": "n"}) == ({"text": "n"}, None)
    assert said({"answer": "x", "hold_until": None}, "x") == ("x", None)
    old = {"answer": "x", "hold_until": None}  # an old answer shaped like the new record
    assert said(old, old) == (old, None)
    assert not undone(json.dumps({"undone": True}))
    assert not undone(json.dumps({"undone": True, "was": "nothing", "by": "x"}))
    assert undone(json.dumps({"undone": True, "was": "approved", "by": "operator:a"}))
