"""Issue 15, the run rules: an interrupted run asks nothing new until a new attempt, the
resume gate names every blocker, a cancel leaves calls of unknown outcome to a person."""

from __future__ import annotations

import pytest

from proctor.core import Actor, errors

from .conftest import AGENT
from .helpers import ACTION, events_of, executing, snapshot

# ---------------------------------------------------------------- interrupted runs


def test_an_interrupted_run_asks_nothing_new_until_a_new_attempt(agent, run, journal_path):
    agent.runs.interrupt(run.id, "SIGTERM")
    before = snapshot(journal_path)
    with pytest.raises(errors.RunInterrupted):
        agent.approvals.request(run.id, ACTION, reason="r")
    with pytest.raises(errors.RunInterrupted):
        agent.questions.ask(run.id, "question", "why?")
    assert snapshot(journal_path) == before
    agent.runs.start_attempt(run.id, "restarted")
    assert agent.approvals.request(run.id, ACTION, reason="r").status == "pending"
    assert agent.questions.ask(run.id, "question", "why?").status == "requested"


def test_a_request_filed_before_the_interrupt_replays(agent, run):
    first = agent.approvals.request(run.id, ACTION, reason="r", request_key="k1")
    agent.runs.interrupt(run.id, "SIGTERM")
    assert agent.approvals.request(run.id, ACTION, reason="r", request_key="k1").id == first.id


# ---------------------------------------------------------------- the resume gate


def blocked_by(agent, run_id):
    with pytest.raises(errors.ResumeBlocked) as info:
        agent.runs.start_attempt(run_id, "resume")
    return info.value


@pytest.mark.parametrize("blocker", ["approval", "question", "effect", "cancel"])
def test_a_new_attempt_is_refused_while_something_blocks_it(
    agent, operator, run, journal_path, blocker
):
    if blocker == "approval":
        ident = agent.approvals.request(run.id, ACTION, reason="r").id
    elif blocker == "question":
        ident = agent.questions.ask(run.id, "question", "why?").id
    elif blocker == "effect":
        executing(agent, run_id=run.id)
        ident = agent.effects.mark_ambiguous("fx-1", "lost", owner="w1").key
    else:
        operator.runs.request_cancel(
            run.id, "stop", expected_version=agent.runs.get(run.id).version
        )
        ident = run.id
    agent.runs.interrupt(run.id, "crash")
    before = snapshot(journal_path)
    err = blocked_by(agent, run.id)
    assert err.blockers == [(blocker, ident)] and ident in str(err)
    assert agent.runs.resume_blockers(run.id) == [(blocker, ident)]
    assert snapshot(journal_path) == before


def test_the_gate_lists_every_blocker_and_opens_when_they_are_settled(agent, operator, run):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    question = agent.questions.ask(run.id, "question", "why?")
    executing(agent, run_id=run.id)
    agent.effects.mark_ambiguous("fx-1", "lost", owner="w1")
    err = blocked_by(agent, run.id)
    assert err.blockers == [
        ("approval", approval.id),
        ("question", question.id),
        ("effect", "fx-1"),
    ]
    operator.approvals.decide(approval.id, False, expected_version=1, reason="no")
    operator.questions.answer(question.id, {"text": "because"}, expected_version=1)
    operator.effects.resolve(
        "fx-1", "failed", reason="checked", expected_version=agent.effects.get("fx-1").version
    )
    assert agent.runs.start_attempt(run.id, "resume").number == 2


def test_asking_for_an_approval_kind_is_a_typed_error(agent, run, journal_path):
    before = snapshot(journal_path)
    for kind in ("approval", "not-a-kind"):
        with pytest.raises(errors.ValidationError) as info:
            agent.questions.ask(run.id, kind, "may I?")
        assert info.value.field == "kind"
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- cancel and tool calls


def cancelled_with_a_running_call(agent, operator, run):
    call = agent.runs.record_tool_call(
        run.id, "payments.charge", {"amount": 5}, safety_class="financial"
    )
    operator.runs.request_cancel(run.id, "stop", expected_version=agent.runs.get(run.id).version)
    agent.runs.cancel(run.id, "asked to")
    return call


def test_completing_a_cancel_leaves_running_calls_of_unknown_outcome(
    agent, operator, run, journal_path
):
    call = cancelled_with_a_running_call(agent, operator, run)
    got = agent.runs.tool_call(call.id)
    assert (got.status, got.version) == ("outcome_unknown", call.version + 1)
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert last.type == "run.cancelled" and last.payload["outcome_unknown"] == [call.id]
    assert [c.id for c in operator.runs.unknown_outcomes()] == [call.id]
    assert "tool_call.outcome_unknown" in [a.action for a in agent.audit.list(limit=5).items]


def test_a_late_finish_of_an_unknown_call_is_refused_with_nothing_written(
    agent, operator, run, journal_path
):
    call = cancelled_with_a_running_call(agent, operator, run)
    before = snapshot(journal_path)
    for status in ("succeeded", "failed", "running"):
        with pytest.raises(errors.InvalidTransition, match="a person resolves it"):
            agent.runs.finish_tool_call(call.id, status)
    assert snapshot(journal_path) == before


def test_resolving_an_unknown_outcome_adds_no_event_to_the_ended_run(
    agent, operator, run, journal_path
):
    call = cancelled_with_a_running_call(agent, operator, run)
    events = events_of(journal_path, run.id)
    operator.runs.resolve_tool_call(
        call.id, "succeeded", reason="the bank shows it", expected_version=call.version + 1
    )
    assert events_of(journal_path, run.id) == events  # an ended run never changes
    assert agent.audit.list(limit=1).items[0].action == "tool_call.outcome_settled"
    assert operator.runs.unknown_outcomes() == []


def test_a_person_resolves_an_unknown_outcome_and_the_runs_agent_cannot(
    open_journal, agent, operator, run, journal_path
):
    call = cancelled_with_a_running_call(agent, operator, run)
    version = agent.runs.tool_call(call.id).version
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(AGENT)).runs.resolve_tool_call(
            call.id, "failed", reason="bank says no", expected_version=version
        )
    with pytest.raises(errors.NotAllowed):
        agent.runs.resolve_tool_call(call.id, "failed", reason="x", expected_version=version)
    assert snapshot(journal_path) == before
    done = operator.runs.resolve_tool_call(
        call.id, "failed", reason="bank says no", expected_version=version
    )
    assert done.status == "failed"
    assert [d.actor for d in operator.approvals.decisions(call.id)] == ["operator:alice"]
    with pytest.raises(errors.AlreadyDecided):
        operator.runs.resolve_tool_call(
            call.id, "succeeded", reason="x", expected_version=done.version
        )
