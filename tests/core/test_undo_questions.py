"""Issue 37: "a decision can be taken back until the agent acts on it", for questions. An
answer (or a dismissal) given with a hold is, to the asking agent, not there yet: every
agent-side read sees the question still open until the hold passes, and the first read after
it takes the answer (``taken_at``). ``undo`` within the hold opens the question again as a
decision of its own (decision row, audit row, run event); after the hold, after the take or
without a hold it is refused, by the service and, for raw SQL, by the store's triggers
(0014u: the store's own clock, not the writer's). On both stores."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from proctor.core import Actor, errors
from proctor.core.models import QuestionStatus

from .helpers import delta, raw, row_counts, snapshot

PROMPT = "Which warehouse ships the order?"


@pytest.fixture
def live(open_journal):
    """An agent and an operator on the wall clock: the store's triggers compare a hold with
    the store's own clock, so an undo in time must be in time by it too."""
    return (
        open_journal(Actor.agent("agent-1"), clock=time.time),
        open_journal(Actor.operator("alice"), clock=time.time),
    )


def asked(agent, key: str | None = None):
    run = agent.runs.start("proj", "asks")
    return run, agent.questions.ask(run.id, "question", PROMPT, request_key=key)


def decide(operator, q, how: str, hold: float):
    if how == "answer":
        return operator.questions.answer(
            q.id, {"text": "north"}, expected_version=q.version, hold=hold
        )
    return operator.questions.dismiss(q.id, "on the phone", expected_version=q.version, hold=hold)


HOWS = ("answer", "dismiss")


def wait_past(when: float) -> None:
    """Until the wall clock (and so the store's) has passed ``when``."""
    while time.time() <= when + 0.05:
        time.sleep(0.02)


@pytest.mark.parametrize("how", HOWS)
def test_the_agent_does_not_see_a_held_decision_until_its_hold_passes(agent, operator, clock, how):
    run, q = asked(agent, key="which-warehouse")
    done = decide(operator, q, how, 5)
    assert done.status in ("resolved", "dismissed") and done.hold_until == clock.t + 5
    for seen in (
        agent.questions.get(q.id),
        agent.questions.wait(q.id, timeout=0),
        agent.questions.filed_under("which-warehouse"),
        *[x for x in agent.questions.for_run(run.id) if x.id == q.id],
    ):
        assert seen is not None
        assert (seen.status, seen.response, seen.resolved_by) == ("presented", None, None)
        assert seen.dismissal is None
    assert operator.questions.get(q.id).status == done.status  # the operator sees it
    assert operator.questions.get(q.id).taken_at is None
    clock.advance(5)
    got = agent.questions.wait(q.id, timeout=0)
    assert got.status == done.status and got.response == done.response
    assert operator.questions.get(q.id).taken_at == clock.t  # taken, once
    clock.advance(1)
    agent.questions.get(q.id)
    assert operator.questions.get(q.id).taken_at == clock.t - 1


@pytest.mark.parametrize("how", HOWS)
def test_undo_within_the_hold_opens_the_question_again_and_is_recorded(live, journal_path, how):
    agent, operator = live
    run, q = asked(agent)
    done = decide(operator, q, how, 30)
    assert agent.runs.get(run.id).status == "running"
    before = row_counts(journal_path)
    back = operator.questions.undo(q.id, expected_version=done.version, reason="misclick")
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert back.status == "presented" and back.version == done.version + 1
    assert (back.resolved_by, back.resolved_at, back.response, back.hold_until) == (None,) * 4
    assert agent.runs.get(run.id).status == "waiting_for_user"
    decisions = operator.approvals.decisions(q.id)
    assert decisions[1].decision == {"undone": True, "was": done.status, "by": "operator:alice"}
    assert decisions[1].reason == "misclick"
    assert agent.runs.events(run.id)[-1].type == "interaction.undone"
    assert operator.audit.for_entity(q.id)[-1].action == "interaction.undone"
    again = operator.questions.answer(q.id, {"text": "south"}, expected_version=back.version)
    assert agent.questions.get(q.id).response == {"text": "south"} == again.response


def test_undo_after_the_hold_after_the_take_or_without_a_hold_is_refused(
    agent, operator, clock, live
):
    _run, q = asked(agent)
    done = decide(operator, q, "answer", 5)
    clock.advance(5)
    with pytest.raises(errors.NotUndoable, match="ended"):
        operator.questions.undo(q.id, expected_version=done.version)
    agent.questions.get(q.id)  # taken
    with pytest.raises(errors.NotUndoable, match="already used the answer"):
        operator.questions.undo(q.id, expected_version=done.version)
    _run, q2 = asked(agent)
    plain = decide(operator, q2, "dismiss", 0)
    with pytest.raises(errors.NotUndoable, match="without a hold"):
        operator.questions.undo(q2.id, expected_version=plain.version)
    with pytest.raises(errors.NotUndoable, match="no answer"):
        operator.questions.undo(asked(agent)[1].id, expected_version=1)
    with pytest.raises(errors.ValidationError):
        decide(operator, asked(agent)[1], "answer", 61)
    assert [d.decision.get("undone") for d in operator.approvals.decisions(q.id)] == [None]


def refused(journal_path, sql: str, params: tuple = ()) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


CLEAR = (
    "status = 'presented', resolved_at = NULL, resolved_by = NULL, response = NULL, "
    "hold_until = NULL"
)


@pytest.mark.parametrize("how", HOWS)
def test_raw_sql_cannot_clear_a_decision_after_its_hold_even_before_the_take(
    live, journal_path, how
):
    agent, operator = live
    _run, q = asked(agent)
    done = decide(operator, q, how, 0.3)
    wait_past(done.hold_until)
    assert operator.questions.get(q.id).taken_at is None  # nobody took it: only the clock
    refused(journal_path, f"UPDATE interactions SET {CLEAR} WHERE id = ?", (q.id,))


def test_raw_sql_cannot_clear_a_taken_or_hold_less_answer(agent, operator, clock, journal_path):
    _run, q = asked(agent)
    decide(operator, q, "answer", 5)
    clock.advance(5)
    agent.questions.get(q.id)  # taken by the agent's read
    refused(journal_path, f"UPDATE interactions SET {CLEAR} WHERE id = ?", (q.id,))
    refused(journal_path, "UPDATE interactions SET taken_at = NULL WHERE id = ?", (q.id,))
    _run, q2 = asked(agent)
    decide(operator, q2, "answer", 0)
    refused(journal_path, f"UPDATE interactions SET {CLEAR} WHERE id = ?", (q2.id,))


@pytest.mark.parametrize(
    "assignments",
    [
        "status = 'presented'",  # the answer left in place
        "status = 'presented', hold_until = NULL",
        "hold_until = NULL",  # the hold taken away after the answer
        "hold_until = hold_until - 10",  # moved back: the agent would read it sooner
        "hold_until = hold_until + 10",  # moved forward: an undo later than it was given
        "taken_at = hold_until - 1",  # taken before the hold ends
        "status = 'requested', resolved_at = NULL, resolved_by = NULL, response = NULL, "
        "hold_until = NULL",  # undone to a state the undo does not go to
    ],
)
def test_raw_sql_cannot_undo_halfway_move_the_hold_or_take_early(live, journal_path, assignments):
    agent, operator = live
    _run, q = asked(agent)
    decide(operator, q, "answer", 30)
    refused(journal_path, f"UPDATE interactions SET {assignments} WHERE id = ?", (q.id,))


WAITER = textwrap.dedent(
    """
    import json, sys, time
    from proctor.core import Actor, Journal

    with Journal.open(sys.argv[1], actor=Actor.agent("asker")) as j:
        run = j.runs.start("shop", "asker run", agent="asker")
        q = j.questions.ask(run.id, "question", "Which warehouse ships the order?")
        print(f"ASKED {q.id}", flush=True)
        got = j.questions.wait(q.id, timeout=120)
        now = time.time()
        told = got.dismissal if got.dismissal is not None else json.dumps(got.response)
        print(f"GOT {got.status.value} {now} {told}", flush=True)
    """
)


def start_waiter(journal_path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WAITER, str(journal_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line[0] == "ASKED", line
    return proc, line[1]


def looked_after(operator, qid: str, at: float) -> None:
    """Until the waiting agent process has stamped a look after ``at`` (it saw the row)."""
    deadline = time.monotonic() + 30
    while (operator.questions.get(qid).waiter_seen_at or 0) <= at:
        assert time.monotonic() < deadline, "the agent did not look after the answer"
        time.sleep(0.05)


def test_a_waiting_agent_process_sees_only_the_answer_given_after_the_undo(live, journal_path):
    _agent, operator = live
    proc, qid = start_waiter(journal_path)
    try:
        q = operator.questions.get(qid)
        done = operator.questions.answer(
            qid, {"text": "north"}, expected_version=q.version, hold=60
        )
        looked_after(operator, qid, done.resolved_at)  # it looked at the held answer
        assert proc.poll() is None  # and goes on waiting
        back = operator.questions.undo(qid, expected_version=done.version, reason="misclick")
        operator.questions.answer(qid, {"text": "south"}, expected_version=back.version)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    status, _at, told = out.split()[1], out.split()[2], out.split(" ", 3)[3].strip()
    assert (status, told) == ("resolved", '{"text": "south"}')


def test_a_waiting_agent_process_sees_a_held_answer_once_its_hold_passes(live, journal_path):
    _agent, operator = live
    proc, qid = start_waiter(journal_path)
    try:
        q = operator.questions.get(qid)
        done = operator.questions.answer(qid, {"text": "north"}, expected_version=q.version, hold=1)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    _got, status, at, told = out.strip().split(" ", 3)
    assert (status, told) == ("resolved", '{"text": "north"}')
    assert done.hold_until is not None and float(at) >= done.hold_until
    taken = operator.questions.get(qid).taken_at
    assert taken is not None and taken >= done.hold_until
    with pytest.raises(errors.NotUndoable):
        operator.questions.undo(qid, expected_version=done.version)
    assert operator.questions.get(qid).status == QuestionStatus.RESOLVED


def test_verify_passes_a_question_answered_undone_and_answered_again(live, journal_path):
    from proctor.core.audit.verify import verify

    agent, operator = live
    _run, q = asked(agent)
    done = decide(operator, q, "answer", 30)
    back = operator.questions.undo(q.id, expected_version=done.version)
    operator.questions.answer(q.id, {"text": "south"}, expected_version=back.version)
    report = verify(operator)
    assert report.ok, report.problems


def test_a_trusting_agent_reads_the_answer_given_after_an_undo(open_journal, tmp_path):
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("alice")
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    agent = open_journal(Actor.agent("agent-1"), trust=path, clock=time.time)
    signer = open_journal(Actor.operator("alice"), signer=key, clock=time.time)
    _run, q = asked(agent)
    done = decide(signer, q, "answer", 30)
    assert agent.questions.get(q.id).status == "presented"  # held, and checked: no error
    back = signer.questions.undo(q.id, expected_version=done.version)
    signer.questions.answer(q.id, {"text": "south"}, expected_version=back.version)
    got = agent.questions.wait(q.id, timeout=0)
    assert (got.status, got.response) == ("resolved", {"text": "south"})


def test_verify_names_an_answer_cleared_by_hand_within_its_hold(live, journal_path):
    """Within the hold the store lets an UPDATE take the answer back (it is the undo's own
    move); one made by hand has no undo decision row, and verify names it. A real undo,
    leaving the question open, passes."""
    from proctor.core.audit.verify import verify

    agent, operator = live
    _run, q = asked(agent)
    done = decide(operator, q, "answer", 30)
    with raw(journal_path) as conn:
        conn.execute(
            f"UPDATE interactions SET {CLEAR}, version = version + 1 WHERE id = ?", (q.id,)
        )
    [problem] = [p for p in verify(operator).problems if p.what == "answer cleared without an undo"]
    assert problem.where == f"question {q.id}"
    _run, q2 = asked(agent)
    done = decide(operator, q2, "dismiss", 30)
    operator.questions.undo(q2.id, expected_version=done.version)
    assert not [p for p in verify(operator).problems if q2.id in p.where]


@pytest.mark.parametrize("how", HOWS)
def test_raw_sql_cannot_take_within_the_hold_by_the_stores_clock(live, journal_path, how):
    """The agent's own UPDATE that takes a held answer while the hold lasts, with a
    ``taken_at`` of its choosing past the hold, is refused (0015u: the store's own clock)."""
    agent, operator = live
    _run, q = asked(agent)
    done = decide(operator, q, how, 30)
    refused(
        journal_path,
        "UPDATE interactions SET taken_at = ? WHERE id = ?",
        (done.hold_until + 60, q.id),
    )
    assert operator.questions.undo(q.id, expected_version=done.version).status == "presented"
