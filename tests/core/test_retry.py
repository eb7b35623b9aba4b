"""Issue 37: an operator asks a failed run to try again. ``request_retry`` records the attempt
to start (a decision row, an audit row, a ``run.retry_requested`` event); the agent sees
``Run.retry_pending`` and ``retry`` starts that attempt, moving the run from ``failed`` back
to ``running`` in one UPDATE. ``failed`` is otherwise final: raw SQL cannot move a failed
run without a request, nor twice on one request, nor to an attempt other than the one asked
(both stores), and the request's reason changes only with a new request."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core import errors

from .helpers import delta, raw, row_counts, snapshot


def failed(agent, run, error="rate limited"):
    agent.runs.fail(run.id, error)
    return agent.runs.get(run.id)


def test_a_retry_is_asked_seen_and_started_as_the_next_attempt(agent, operator, run, journal_path):
    f = failed(agent, run)
    assert not f.retry_pending
    before = row_counts(journal_path)
    asked = operator.runs.request_retry(run.id, "the API is back", expected_version=f.version)
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert asked.status == "failed" and asked.retry_pending
    assert (asked.retry_requested, asked.retry_reason) == (2, "the API is back")
    [d] = operator.approvals.decisions(run.id)
    assert d.decision == {"retry_requested": 2} and d.reason == "the API is back"
    attempt = agent.runs.retry(run.id)
    assert (attempt.number, attempt.status) == (2, "running")
    now = agent.runs.get(run.id)
    assert (now.status, now.current_attempt, now.finished_at) == ("running", 2, None)
    assert not now.retry_pending and now.error == "rate limited"
    assert [e.type for e in agent.runs.events(run.id)][-2:] == [
        "run.retry_requested",
        "run.retried",
    ]
    with pytest.raises(errors.InvalidTransition):
        agent.runs.retry(run.id)  # once per request
    agent.runs.fail(run.id, "still down")  # a second failure: the attempt keeps its own words
    assert agent.runs.attempts(run.id)[1].error == "still down"
    again = operator.runs.request_retry(
        run.id, "try once more", expected_version=agent.runs.get(run.id).version
    )
    assert again.retry_requested == 3
    agent.runs.retry(run.id)
    agent.runs.complete(run.id, {"ok": True})
    assert agent.runs.get(run.id).status == "completed"


def test_only_a_failed_run_is_retried_once_per_request_by_an_operator(
    agent, operator, run, journal_path
):
    before = snapshot(journal_path)
    with pytest.raises(errors.InvalidTransition):
        operator.runs.request_retry(run.id, "why", expected_version=run.version)
    f = failed(agent, run)
    with pytest.raises(errors.NotAllowed):
        agent.runs.request_retry(run.id, "myself", expected_version=f.version)
    with pytest.raises(errors.ValidationError):
        operator.runs.request_retry(run.id, "  ", expected_version=f.version)
    with pytest.raises(errors.StaleVersion):
        operator.runs.request_retry(run.id, "why", expected_version=f.version - 1)
    with pytest.raises(errors.InvalidTransition):
        agent.runs.retry(run.id)  # nobody asked
    asked = operator.runs.request_retry(run.id, "why", expected_version=f.version)
    with pytest.raises(errors.AlreadyDecided):
        operator.runs.request_retry(run.id, "again", expected_version=asked.version)
    assert snapshot(journal_path) != before


def refused(journal_path, sql: str, params: tuple = ()) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


MOVE = (
    "UPDATE runs SET status = 'running', current_attempt = ?, last_sequence = last_sequence + 1"
    " WHERE id = ?"
)


def test_raw_sql_cannot_move_a_failed_run_without_a_request(agent, run, journal_path):
    failed(agent, run)
    refused(journal_path, MOVE, (2, run.id))
    refused(
        journal_path, MOVE.replace("current_attempt = ?", "current_attempt = ? + 0"), (1, run.id)
    )


def test_raw_sql_moves_a_failed_run_only_to_the_attempt_asked_and_once(
    agent, operator, run, journal_path
):
    f = failed(agent, run)
    operator.runs.request_retry(run.id, "why", expected_version=f.version)
    refused(journal_path, MOVE, (3, run.id))  # not the attempt asked
    refused(journal_path, "UPDATE runs SET retry_reason = 'rewritten' WHERE id = ?", (run.id,))
    refused(journal_path, "UPDATE runs SET retry_requested = 1 WHERE id = ?", (run.id,))
    agent.runs.retry(run.id)
    agent.runs.fail(run.id, "again")
    refused(journal_path, MOVE, (2, run.id))  # the request was used


def test_a_retry_passes_the_resume_gate_when_asked_and_when_started(agent, operator, run, clock):
    """A retry is a new attempt: while the failed run has an effect of unknown outcome (a
    payment that may have gone through), neither the operator's request nor the agent's
    start goes ahead (``ResumeBlocked`` naming it); resolved, the retry goes on."""
    agent.effects.reserve("charge-1", tool="pay", run_id=run.id, action={"amount": 5})
    agent.effects.mark_ambiguous("charge-1", "timeout")
    agent.effects.reserve("mail-1", tool="email", run_id=run.id, lease_seconds=60, owner="w")
    agent.effects.begin("mail-1", owner="w")  # still running when the run fails
    f = failed(agent, run)
    with pytest.raises(errors.ResumeBlocked) as refused_now:
        operator.runs.request_retry(run.id, "again", expected_version=f.version)
    assert refused_now.value.blockers == [("effect", "charge-1")]
    assert not agent.runs.get(run.id).retry_pending  # nothing was written
    effect = operator.effects.get("charge-1")
    operator.effects.resolve(
        "charge-1", "failed", reason="not on the statement", expected_version=effect.version
    )
    f = agent.runs.get(run.id)
    operator.runs.request_retry(run.id, "again", expected_version=f.version)
    clock.advance(120)  # asked with nothing in the way; then mail-1's lease lapses
    agent.effects.sweep_expired()
    assert agent.effects.get("mail-1").status == "ambiguous"
    with pytest.raises(errors.ResumeBlocked):
        agent.runs.retry(run.id)
    assert agent.runs.get(run.id).status == "failed"


def test_the_retried_event_belongs_to_the_attempt_it_opens(agent, operator, run):
    """``run.retried`` carries attempt 2, as ``attempt.started`` of a new attempt does: a
    rebuild from the events (JSONL import) takes the run's attempt from its last event."""
    f = failed(agent, run)
    operator.runs.request_retry(run.id, "again", expected_version=f.version)
    agent.runs.retry(run.id)
    last = agent.runs.events(run.id)[-1]
    assert (last.type, last.attempt) == ("run.retried", 2)
    assert agent.runs.get(run.id).current_attempt == 2


# ---------------------------------------------------------------- a retry asked by hand

FORGE = (
    "UPDATE runs SET retry_requested = current_attempt + 1, "
    "retry_reason = 'operator alice: go again' WHERE id = ?"
)


def problems_of(journal, **kwargs) -> list[tuple[str, str]]:
    from proctor.core.audit.verify import verify

    return [(p.what, p.where) for p in verify(journal, **kwargs).problems]


def test_a_retry_asked_by_raw_sql_is_refused_by_the_agent_and_named_by_verify(
    agent, operator, run, journal_path
):
    failed(agent, run)
    with raw(journal_path) as conn:  # the store lets it through: no trigger knows who asked
        conn.execute(FORGE, (run.id,))
    assert agent.runs.get(run.id).retry_pending
    before = snapshot(journal_path)
    with pytest.raises(errors.DecisionUnverified, match="no operator's decision row"):
        agent.runs.retry(run.id)
    assert snapshot(journal_path) == before and agent.runs.get(run.id).status == "failed"
    assert problems_of(operator) == [("retry without a decision", f"run {run.id}")]


def test_verify_names_a_retry_started_without_a_decision_though_a_later_one_has_one(
    agent, operator, run, journal_path, monkeypatch
):
    """An agent that does not check (one built before the check) started the forged retry;
    the honest request after it does not hide it: the run.retried event stays."""
    failed(agent, run)
    with raw(journal_path) as conn:
        conn.execute(FORGE, (run.id,))
    import proctor.core.runs.service as runs_service

    with monkeypatch.context() as m:
        m.setattr(runs_service, "check_retry", lambda *a: None)
        agent.runs.retry(run.id)
    f = failed(agent, run, "down again")
    operator.runs.request_retry(run.id, "now really", expected_version=f.version)
    agent.runs.retry(run.id)
    assert problems_of(operator) == [("retry without a decision", f"run {run.id}")]


@pytest.fixture
def signed(open_journal, tmp_path):
    import json

    from proctor.core import Actor
    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("alice")
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    agent = open_journal(Actor.agent("agent-1"), trust=path)
    return agent, open_journal(Actor.operator("alice"), signer=key), path


def test_a_trusting_agent_retries_only_as_a_trusted_operator_asked(signed, journal_path):
    agent, alice, trust = signed
    run = agent.runs.start("proj", "signed run")
    f = failed(agent, run)
    with raw(journal_path) as conn:
        conn.execute(FORGE, (run.id,))
    with pytest.raises(errors.DecisionUnverified):
        agent.runs.retry(run.id)
    assert ("retry without a decision", f"run {run.id}") in problems_of(alice, trust=trust)
    other = agent.runs.start("proj", "honest run")
    g = failed(agent, other)
    alice.runs.request_retry(other.id, "the API is back", expected_version=g.version)
    assert agent.runs.retry(other.id).number == 2  # signed by alice, whom the agent trusts
    assert agent.runs.get(run.id).status == f.status == "failed"
    assert [p for p in problems_of(alice, trust=trust) if other.id in p[1]] == []


def test_an_honest_retry_verifies(agent, operator, run):
    f = failed(agent, run)
    operator.runs.request_retry(run.id, "the API is back", expected_version=f.version)
    agent.runs.retry(run.id)
    g = failed(agent, run, "still down")
    operator.runs.request_retry(run.id, "once more", expected_version=g.version)
    assert problems_of(operator) == []
