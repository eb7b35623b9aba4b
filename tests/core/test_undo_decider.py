"""Issue 37: only the person who decided takes a held decision back. Another operator's
``undo`` is refused (``NotUndoable`` naming who decided), on both stores, for approvals and
questions; on a team server another operator login's raw UPDATE that undoes it is refused by
the login check; on a journal file (every writer the same user) ``verify`` names an undo
written by another operator."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import team_fixtures

from proctor.core import Actor, digest_of, errors

from .helpers import raw, snapshot

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

ACTION = {"tool": "shell", "args": {"command": "make deploy"}}
CLEAR = (
    "status = 'pending', decided_at = NULL, decided_by = NULL, decision_reason = NULL, "
    "decision_scope = NULL, rule_id = NULL, hold_until = NULL, approved_action = NULL, "
    "approved_digest = NULL, version = version + 1"
)


@pytest.fixture
def people(open_journal):
    """An agent and two operators on the wall clock (the store compares an undo with its
    own clock)."""
    return (
        open_journal(Actor.agent("agent-1"), clock=time.time),
        open_journal(Actor.operator("alice"), clock=time.time),
        open_journal(Actor.operator("bob"), clock=time.time),
    )


def test_another_operator_cannot_undo_an_approval(people, journal_path):
    agent, alice, bob = people
    run = agent.runs.start("proj", "deploys")
    a = agent.approvals.request(run.id, ACTION, reason="deploy")
    done = alice.approvals.decide(a.id, True, expected_version=a.version, hold=30)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotUndoable, match="by operator:alice; only operator:alice") as err:
        bob.approvals.undo(a.id, expected_version=done.version)
    assert err.value.details["decided_by"] == "operator:alice"
    assert snapshot(journal_path) == before
    assert alice.approvals.undo(a.id, expected_version=done.version).status == "pending"


def test_another_operator_cannot_undo_an_answer(people, journal_path):
    agent, alice, bob = people
    run = agent.runs.start("proj", "asks")
    q = agent.questions.ask(run.id, "question", "Which warehouse?")
    done = alice.questions.answer(q.id, {"text": "north"}, expected_version=q.version, hold=30)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotUndoable, match="only operator:alice may undo"):
        bob.questions.undo(q.id, expected_version=done.version)
    assert snapshot(journal_path) == before
    assert alice.questions.undo(q.id, expected_version=done.version).status == "presented"


@pytest.mark.sqlite_only
def test_verify_names_an_undo_written_by_another_operator(people, journal_path):
    """bob clears alice's held approval within its hold by raw SQL and writes the undo's
    decision row as his (with its digest): the store's triggers cannot tell operators apart
    on a file; verify names it."""
    from proctor.core.audit.verify import verify

    agent, alice, _bob = people
    run = agent.runs.start("proj", "deploys")
    a = agent.approvals.request(run.id, ACTION, reason="deploy")
    alice.approvals.decide(a.id, True, expected_version=a.version, hold=30)
    undo = {"undone": True, "was": "approved", "by": "operator:alice"}
    now = time.time()
    body = {
        "target_kind": "approval",
        "target_id": a.id,
        "decision": undo,
        "actor": "operator:bob",
        "reason": None,
        "created_at": now,
    }
    with raw(journal_path) as conn:
        conn.execute(f"UPDATE approvals SET {CLEAR} WHERE id = ?", (a.id,))
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
            "source, reason, created_at, digest) VALUES (?, 'approval', ?, ?, ?, "
            "'operator:bob', 'desk', NULL, ?, ?)",
            ("dec_bob", a.id, run.id, json.dumps(undo), now, digest_of(body)),
        )
    problems = [(p.what, p.where) for p in verify(alice).problems]
    assert ("undone by another operator", f"approval {a.id}") in problems


def test_an_honest_undo_is_not_named(people):
    from proctor.core.audit.verify import verify

    agent, alice, _bob = people
    run = agent.runs.start("proj", "deploys")
    a = agent.approvals.request(run.id, ACTION, reason="deploy")
    done = alice.approvals.decide(a.id, False, expected_version=a.version, reason="no", hold=30)
    alice.approvals.undo(a.id, expected_version=done.version)
    assert [p.what for p in verify(alice).problems] == []


# ---------------------------------------------------------------- a team server's logins


def refused(conn: Any, sql: str, params: Any = None) -> str:
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        conn.execute(sql, params)
    return str(err.value)


def test_another_operator_login_cannot_undo_by_raw_sql(team):
    with (
        team.journal("agent_a", Actor.agent("builder"), clock=time.time) as agent,
        team.journal("op_dana", Actor.operator("op_dana"), clock=time.time) as dana,
        team.journal("op_eli", Actor.operator("op_eli"), clock=time.time) as eli,
    ):
        run = agent.runs.start("proj", "team run")
        a = agent.approvals.request(run.id, ACTION, reason="deploy")
        done = dana.approvals.decide(a.id, True, expected_version=a.version, hold=30)
        with pytest.raises(errors.NotUndoable, match="only operator:op_dana"):
            eli.approvals.undo(a.id, expected_version=done.version)
        q = agent.questions.ask(run.id, "question", "Which warehouse?")
        answered = dana.questions.answer(
            q.id, {"text": "north"}, expected_version=q.version, hold=30
        )
        with team.raw("op_eli") as conn:
            message = refused(conn, f"UPDATE approvals SET {CLEAR} WHERE id = %s", (a.id,))
            assert "only the operator who made a decision undoes it (operator:op_dana)" in message
            refused(
                conn,
                "UPDATE interactions SET status = 'presented', resolved_at = NULL, "
                "resolved_by = NULL, response = NULL, hold_until = NULL, "
                "version = version + 1 WHERE id = %s",
                (q.id,),
            )
        with team.raw("op_dana") as conn:  # the decider's own login may
            conn.execute(f"UPDATE approvals SET {CLEAR} WHERE id = %s", (a.id,))
        assert dana.questions.undo(q.id, expected_version=answered.version).status == "presented"
