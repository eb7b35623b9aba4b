"""Issue 37: an operator dismisses a question without answering (Agent Inbox's "ignore").
The dismissal is a decision like an answer (one decision row, one audit row, one run event,
signed when the operator signs) and the asking agent sees the question ``dismissed``, with
the operator's reason, never as an answer. Raw SQL cannot move a dismissed question back to
open, nor an answered one to dismissed (both stores), and a dismissal forged by hand is
refused by a trusting agent."""

from __future__ import annotations

import json
import sqlite3

import pytest

from proctor.core import Actor, errors
from proctor.core.decisions.keys import OperatorKey, trust_file

from .helpers import delta, raw, row_counts, snapshot


def dismiss(operator, item, reason="not needed any more", **kw):
    return operator.questions.dismiss(item.id, reason, expected_version=item.version, **kw)


def test_a_dismissal_is_one_decision_and_the_agent_sees_it_dismissed(
    agent, operator, run, journal_path
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    assert agent.runs.get(run.id).status == "waiting_for_user"
    before = row_counts(journal_path)
    done = dismiss(operator, item, "the task was dropped")
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert done.status == "dismissed" and done.resolved_by == "operator:alice"
    [decision] = operator.approvals.decisions(item.id)
    assert decision.decision == {
        "dismissed": True,
        "reason": "the task was dropped",
        "hold_until": None,  # signed with it (issue 37)
    }
    assert decision.reason == "the task was dropped"
    assert [a.action for a in operator.audit.for_entity(item.id)] == ["interaction.dismissed"]
    assert agent.runs.get(run.id).status == "running"
    seen = agent.questions.wait(item.id, timeout=0)
    assert seen.status == "dismissed" and seen.dismiss_reason == "the task was dropped"
    assert agent.questions.get(item.id).dismiss_reason == "the task was dropped"


def test_a_dismissed_question_takes_no_answer_and_an_answered_one_no_dismissal(
    agent, operator, run, journal_path
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    gone = dismiss(operator, item)
    before = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided):
        operator.questions.answer(item.id, {"text": "x"}, expected_version=gone.version)
    with pytest.raises(errors.AlreadyDecided):
        dismiss(operator, gone)
    answered = agent.questions.ask(run.id, "question", "which host?")
    operator.questions.answer(answered.id, {"text": "h1"}, expected_version=answered.version)
    mid = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided):
        dismiss(operator, operator.questions.get(answered.id))
    assert snapshot(journal_path) == mid
    assert before != mid


def test_a_dismissal_needs_a_reason_a_fresh_version_and_not_the_asker(
    agent, operator, open_journal, run, journal_path
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError):
        dismiss(operator, item, "  ")
    with pytest.raises(errors.NotAllowed):
        dismiss(agent, item)
    with pytest.raises(errors.NotAllowed):
        dismiss(open_journal(Actor.operator("agent-1")), item)
    with pytest.raises(errors.StaleVersion):
        operator.questions.dismiss(item.id, "why", expected_version=item.version + 1)
    assert snapshot(journal_path) == before


def test_a_withdrawn_or_expired_question_is_not_dismissed(agent, operator, run, clock):
    withdrawn = agent.questions.ask(run.id, "question", "which DB?")
    agent.questions.withdraw(withdrawn.id, "found it")
    with pytest.raises(errors.Withdrawn):
        dismiss(operator, withdrawn)
    late = agent.questions.ask(run.id, "question", "quick?", expires_in=30)
    clock.advance(31)
    with pytest.raises(errors.Expired):
        dismiss(operator, late)
    assert operator.questions.get(late.id).status == "expired"


def refused(journal_path, sql: str, params: tuple = ()) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


@pytest.mark.parametrize(
    "assignments",
    [
        "status = 'requested'",
        "status = 'presented'",
        "status = 'resolved', response = '{\"text\": \"prod\"}'",
        "status = 'requested', response = NULL, resolved_by = NULL, resolved_at = NULL",
    ],
)
def test_a_dismissed_question_cannot_be_reopened_or_answered_by_hand(
    agent, operator, run, journal_path, assignments
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    dismiss(operator, item, "dropped")
    refused(journal_path, f"UPDATE interactions SET {assignments} WHERE id = ?", (item.id,))
    assert agent.questions.get(item.id).dismiss_reason == "dropped"


def test_an_answered_question_cannot_be_dismissed_by_hand(agent, operator, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    operator.questions.answer(item.id, {"text": "staging"}, expected_version=item.version)
    refused(journal_path, "UPDATE interactions SET status = 'dismissed' WHERE id = ?", (item.id,))
    assert agent.questions.get(item.id).response == {"text": "staging"}


def test_a_dismissal_by_hand_names_its_decider(agent, run, journal_path):
    """The agent's own login cannot make a dismissal without a decider: it is a person's move."""
    item = agent.questions.ask(run.id, "question", "which DB?")
    refused(journal_path, "UPDATE interactions SET status = 'dismissed' WHERE id = ?", (item.id,))


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate("alice")


@pytest.fixture
def trusting(open_journal, tmp_path, key):
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    return open_journal(Actor.agent("agent-1"), trust=path)


def test_a_signed_dismissal_is_read_and_a_forged_one_refused(
    open_journal, trusting, key, journal_path
):
    run = trusting.runs.start("proj", "signed run")
    signer = open_journal(Actor.operator("alice"), signer=key)
    honest = trusting.questions.ask(run.id, "question", "Which branch?")
    dismiss(signer, honest, "not this sprint")
    assert trusting.questions.get(honest.id).dismiss_reason == "not this sprint"
    forged = trusting.questions.ask(run.id, "question", "Deploy to prod?")
    with raw(journal_path) as conn:
        conn.execute(
            "UPDATE interactions SET status='dismissed', response=?, resolved_by='operator:alice',"
            " resolved_at=1, version=2 WHERE id=?",
            ('{"dismissed":true,"reason":"x"}', forged.id),
        )
    with pytest.raises(errors.DecisionUnverified):
        trusting.questions.get(forged.id)


def test_a_dismissal_without_a_decision_is_named_by_verify(agent, operator, run, journal_path):
    """A same-user process writes the dismissed state by hand, naming an operator, with no
    decision row: the triggers let the move through (it names its decider), verify names it."""
    from proctor.core.audit.verify import verify

    item = agent.questions.ask(run.id, "question", "which DB?")
    assert verify(operator).ok
    with raw(journal_path) as conn:
        conn.execute(
            "UPDATE interactions SET status='dismissed', response=?, resolved_by='operator:alice',"
            " resolved_at=1, version=2 WHERE id=?",
            ('{"dismissed":true,"reason":"x"}', item.id),
        )
    report = verify(operator)
    assert any(
        p.what == "decided without a decision" and item.id in p.where for p in report.problems
    )
