"""Runs, attempts, events and tool calls (DESIGN §2 invariants 1, 2, 8, 9)."""

from __future__ import annotations

import threading

import pytest

from proctor.core import Actor, RunStatus, ToolCallStatus, errors
from proctor.core.audit.verify import verify
from proctor.core.journal import Tx

from .helpers import (
    ACTION,
    Boom,
    assert_no_open_transaction,
    boom,
    delta,
    events_of,
    row_counts,
    snapshot,
)

# ---------------------------------------------------------------- start and events


def test_start_opens_running_run_with_first_event(agent, journal_path):
    run = agent.runs.start("proj", "Fix the build", space="team", deadline=5.0)
    assert run.status == RunStatus.RUNNING
    assert (run.project, run.space, run.agent) == ("proj", "team", "agent-1")
    assert run.current_attempt == 1 and agent.runs.attempts(run.id)[0].status == "running"
    assert events_of(journal_path, run.id) == [(1, "run.started")]
    assert run.version == run.last_sequence == 1


def test_start_is_idempotent_by_run_id(agent, journal_path):
    first = agent.runs.start("proj", "title", run_id="run-fixed")
    before = snapshot(journal_path)
    again = agent.runs.start("proj", "title", run_id="run-fixed")
    assert again == first
    assert snapshot(journal_path) == before


def test_start_with_same_run_id_other_content_conflicts(agent, journal_path):
    agent.runs.start("proj", "title", run_id="run-fixed")
    before = snapshot(journal_path)
    with pytest.raises(errors.IdempotencyConflict):
        agent.runs.start("proj", "another title", run_id="run-fixed")
    assert snapshot(journal_path) == before


def test_start_under_missing_parent_is_not_found(agent, journal_path):
    before = row_counts(journal_path)
    with pytest.raises(errors.NotFound):
        agent.runs.start("proj", "child", parent_run_id="run-nope")
    assert row_counts(journal_path) == before


def test_append_event_builds_gapless_digest_chain(agent, run):
    events = [agent.runs.append_event(run.id, "step", {"i": i}) for i in range(5)]
    assert [e.sequence for e in events] == [2, 3, 4, 5, 6]
    first = agent.runs.events(run.id)[0]
    assert first.prev_digest == "0" * 64
    for prev, cur in zip([first, *events], events, strict=False):
        assert cur.prev_digest == prev.digest
    assert verify(agent).ok


def test_append_event_is_idempotent_by_event_id(agent, run, journal_path):
    first = agent.runs.append_event(run.id, "step", {"i": 1}, event_id="evt-1")
    before = snapshot(journal_path)
    again = agent.runs.append_event(run.id, "step", {"i": 1}, event_id="evt-1")
    assert again == first
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("change", ["payload", "type", "run"])
def test_append_event_same_id_other_content_conflicts(agent, run, start_run, journal_path, change):
    other_run = start_run()
    agent.runs.append_event(run.id, "step", {"i": 1}, event_id="evt-1")
    args = {
        "payload": (run.id, "step", {"i": 2}),
        "type": (run.id, "other", {"i": 1}),
        "run": (other_run.id, "step", {"i": 1}),
    }[change]
    before = snapshot(journal_path)
    with pytest.raises(errors.IdempotencyConflict):
        agent.runs.append_event(*args, event_id="evt-1")
    assert snapshot(journal_path) == before


def test_batch_fails_whole_when_a_later_item_conflicts(agent, run, journal_path):
    """Invariant 1: two events are inserted, the third raises: nothing stays."""
    agent.runs.append_event(run.id, "step", {"i": 0}, event_id="evt-taken")
    before = snapshot(journal_path)
    with pytest.raises(errors.IdempotencyConflict):
        agent.runs.append_events(run.id, [("a", 1), ("b", 2), ("c", 3, "evt-taken")])
    assert snapshot(journal_path) == before
    assert_no_open_transaction(agent)
    assert [e.type for e in agent.runs.append_events(run.id, [("a", 1), ("b", 2)])] == ["a", "b"]
    assert verify(agent).ok


def test_injected_fault_mid_write_leaves_nothing_and_next_write_works(
    agent, operator, run, journal_path, monkeypatch, open_journal
):
    """The fault hits after the run row and an event were written (inside request_cancel)."""
    current = agent.runs.get(run.id)
    before = snapshot(journal_path)
    monkeypatch.setattr(Tx, "audit", boom)
    with pytest.raises(Boom):
        operator.runs.request_cancel(run.id, "stop", expected_version=current.version)
    monkeypatch.undo()
    assert snapshot(journal_path) == before
    assert_no_open_transaction(operator)
    other = open_journal(Actor.operator("bob"), busy_timeout=0.2)
    assert other.runs.request_cancel(
        run.id, "stop", expected_version=current.version
    ).cancel_requested
    operator.runs.append_event(run.id, "after", {})  # the failed journal writes again too


@pytest.mark.parametrize("payload", [float("nan"), float("inf"), {"x": object()}])
def test_events_refuse_non_json_payloads(agent, run, journal_path, payload):
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError):
        agent.runs.append_event(run.id, "step", payload)
    assert row_counts(journal_path) == before


@pytest.mark.parametrize("type_", ["", "x" * 101, None])
def test_events_need_a_short_type(agent, run, type_):
    with pytest.raises(errors.ValidationError) as info:
        agent.runs.append_event(run.id, type_, {})
    assert info.value.field == "type"


def test_event_reads_are_keyset_paged(agent, run):
    for i in range(10):
        agent.runs.append_event(run.id, "odd" if i % 2 else "even", {"i": i})
    page1 = agent.runs.events(run.id, limit=4)
    page2 = agent.runs.events(run.id, after=page1[-1].sequence, limit=4)
    assert [e.sequence for e in page1 + page2] == list(range(1, 9))
    newest = agent.runs.events(run.id, descending=True, limit=3)
    assert [e.sequence for e in newest] == [11, 10, 9]
    older = agent.runs.events(run.id, descending=True, after=9, limit=2)
    assert [e.sequence for e in older] == [8, 7]
    assert {e.type for e in agent.runs.events(run.id, types=["odd"])} == {"odd"}


def test_sequences_stay_gapless_under_threads_and_connections(agent, open_journal, start_run):
    """Two journals (separate pools) x 3 threads each append to two runs concurrently."""
    runs = [start_run(), start_run()]
    second = open_journal(Actor.agent("agent-2"))
    failures: list[BaseException] = []

    def worker(journal, n):
        try:
            for i in range(15):
                journal.runs.append_event(runs[i % 2].id, "tick", {"w": n, "i": i})
        except BaseException as err:  # noqa: BLE001 - pragma: no cover - reported below
            failures.append(err)

    threads = [
        threading.Thread(target=worker, args=(j, n)) for n, j in enumerate([agent, second] * 3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    total = 0
    for r in runs:
        seqs = [e.sequence for e in agent.runs.events(r.id, limit=1000)]
        assert seqs == list(range(1, len(seqs) + 1))
        assert agent.runs.get(r.id).last_sequence == len(seqs)
        total += len(seqs) - 1
    assert total == 6 * 15
    assert verify(agent).ok


# ---------------------------------------------------------------- tool calls


def test_tool_call_checkpoint_and_outcome_unknown(agent, run, journal_path):
    call = agent.runs.record_tool_call(
        run.id,
        "http.post",
        {"url": "https://x"},
        safety_class="external_side_effect",
        idempotency_key="pay-1",
    )
    assert call.status == ToolCallStatus.RUNNING and call.idempotency_key == "pay-1"
    done = agent.runs.finish_tool_call(call.id, "outcome_unknown", error="timeout")
    assert done.status == ToolCallStatus.OUTCOME_UNKNOWN and done.error == "timeout"
    assert [t for _, t in events_of(journal_path, run.id)][-2:] == ["tool.called", "tool.finished"]
    before = snapshot(journal_path)
    with pytest.raises(errors.InvalidTransition):
        agent.runs.finish_tool_call(call.id, "succeeded")
    assert snapshot(journal_path) == before


def test_tool_call_is_idempotent_by_id(agent, run, journal_path):
    first = agent.runs.record_tool_call(run.id, "fs.read", {"p": 1}, tool_call_id="tc-1")
    before = snapshot(journal_path)
    assert agent.runs.record_tool_call(run.id, "fs.read", {"p": 1}, tool_call_id="tc-1") == first
    assert snapshot(journal_path) == before
    with pytest.raises(errors.IdempotencyConflict):
        agent.runs.record_tool_call(run.id, "fs.read", {"p": 2}, tool_call_id="tc-1")
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- status only with events


def _status_steps(agent, operator, run_id):
    """Every status transition the API offers, in order."""
    yield "approval opens", lambda: agent.approvals.request(run_id, ACTION, reason="r")
    yield (
        "approval decided",
        lambda: operator.approvals.decide(
            agent.approvals.for_run(run_id)[-1].id,
            True,
            expected_version=agent.approvals.for_run(run_id)[-1].version,
        ),
    )
    yield "question opens", lambda: agent.questions.ask(run_id, "question", "why?")
    yield (
        "question withdrawn",
        lambda: agent.questions.withdraw(agent.questions.for_run(run_id)[-1].id, "never mind"),
    )
    yield "interrupted", lambda: agent.runs.interrupt(run_id, "crash")
    yield "new attempt", lambda: agent.runs.start_attempt(run_id, "retry")
    yield "waits", lambda: agent.runs.wait_for_user(run_id)
    yield "resumes", lambda: agent.runs.resume(run_id)
    yield "completes", lambda: agent.runs.complete(run_id, {"ok": True})


def test_run_status_changes_only_together_with_an_event(agent, operator, run, journal_path):
    seen = [agent.runs.get(run.id).status]
    for label, step in _status_steps(agent, operator, run.id):
        before = agent.runs.get(run.id)
        n_before = len(events_of(journal_path, run.id))
        step()
        after = agent.runs.get(run.id)
        new_events = events_of(journal_path, run.id)[n_before:]
        if after.status != before.status:
            assert new_events, f"{label}: status moved without an event"
            seen.append(after.status)
        assert after.version == after.last_sequence, label
    assert seen == [
        "running",
        "waiting_for_user",
        "running",
        "waiting_for_user",
        "running",
        "interrupted",
        "running",
        "waiting_for_user",
        "running",
        "completed",
    ]
    assert all(e.run_version == e.sequence for e in agent.runs.events(run.id, limit=1000))
    assert verify(agent).ok


@pytest.mark.parametrize("end", ["complete", "fail", "cancel"])
def test_terminal_run_refuses_everything_new(agent, operator, run, journal_path, end):
    getattr(agent.runs, end)(run.id, *([] if end == "complete" else ["why"]))
    ended = agent.runs.get(run.id)
    assert ended.status.terminal and ended.finished_at is not None
    before = snapshot(journal_path)
    attempts = [
        lambda: agent.runs.append_event(run.id, "late", {}),
        lambda: agent.runs.append_events(run.id, [("late", 1)]),
        lambda: agent.approvals.request(run.id, ACTION, reason="late"),
        lambda: agent.questions.ask(run.id, "question", "late?"),
        lambda: agent.runs.record_tool_call(run.id, "t", {}),
        lambda: agent.runs.wait_for_user(run.id),
        lambda: agent.runs.resume(run.id),
        lambda: agent.runs.start_attempt(run.id),
        lambda: agent.runs.complete(run.id),
        lambda: agent.runs.fail(run.id, "again"),
        lambda: agent.effects.reserve("late-effect", tool="t", run_id=run.id),
        lambda: operator.runs.request_cancel(run.id, "stop", expected_version=ended.version),
    ]
    for attempt in attempts:
        with pytest.raises(errors.RunTerminal):
            attempt()
    assert snapshot(journal_path) == before


def test_memory_linked_to_a_terminal_run_never_changes_the_run(agent, run):
    agent.runs.complete(run.id)
    ended = agent.runs.get(run.id)
    entry = agent.memory.add("project", "proj", "late fact", "text", run_id=run.id)
    agent.memory.record_conflict(entry.id, "other text", incoming_source="sync", run_id=run.id)
    assert agent.runs.get(run.id) == ended


@pytest.mark.parametrize("end", ["complete", "fail", "cancel"])
def test_ending_a_run_withdraws_its_open_items(agent, operator, run, end):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    question = agent.questions.ask(run.id, "question", "why?")
    getattr(agent.runs, end)(run.id, *([] if end == "complete" else ["why"]))
    approval, question = agent.approvals.get(approval.id), agent.questions.get(question.id)
    assert approval.status == "cancelled" and question.status == "cancelled"
    assert approval.decision_reason == f"run {agent.runs.get(run.id).status.value}"
    assert [a.action for a in agent.audit.for_entity(approval.id)] == ["approval.withdrawn"]
    assert [a.action for a in agent.audit.for_entity(question.id)] == ["interaction.withdrawn"]
    with pytest.raises(errors.AlreadyDecided):
        operator.approvals.decide(approval.id, True, expected_version=approval.version)
    with pytest.raises(errors.AlreadyDecided):
        operator.questions.answer(question.id, {"text": "x"}, expected_version=question.version)
    assert agent.runs.get(run.id).open_items == 0


def test_new_attempt_closes_the_previous_one(agent, run):
    agent.runs.interrupt(run.id, "host lost")
    attempt = agent.runs.start_attempt(run.id, "resume")
    assert attempt.number == 2 and agent.runs.get(run.id).status == "running"
    first, second = agent.runs.attempts(run.id)
    assert first.status == "interrupted" and first.finished_at is not None
    assert second.status == "running"
    agent.runs.fail(run.id, "boom")
    assert [a.status for a in agent.runs.attempts(run.id)] == ["interrupted", "failed"]
    assert agent.runs.get(run.id).error == "boom"


def test_agent_finishes_an_attempt_and_the_next_one_keeps_its_status(agent, run, journal_path):
    before = row_counts(journal_path)
    first = agent.runs.finish_attempt(run.id, "failed", "rate limited by the provider")
    assert (first.number, first.status, first.error) == (
        1,
        "failed",
        "rate limited by the provider",
    )
    assert first.finished_at is not None
    changed = delta(before, row_counts(journal_path))
    assert set(changed) == {"events", "changes"} and changed["events"] == 1
    last = agent.runs.events(run.id, descending=True, limit=1)[0]
    assert (last.type, last.payload) == (
        "attempt.finished",
        {"attempt": 1, "status": "failed", "error": "rate limited by the provider"},
    )
    assert agent.runs.get(run.id).status == "running"  # the run itself goes on
    second = agent.runs.start_attempt(run.id, "retry after the rate limit")
    assert second.number == 2
    first_again, _ = agent.runs.attempts(run.id)
    assert first_again == first  # not overwritten as "interrupted"
    agent.runs.finish_attempt(run.id, "completed")
    agent.runs.complete(run.id)  # the finished attempt stays completed
    assert [(a.status, a.error) for a in agent.runs.attempts(run.id)] == [
        ("failed", "rate limited by the provider"),
        ("completed", None),
    ]


def test_finish_attempt_replays_and_refusals_write_nothing(agent, run, journal_path):
    agent.runs.finish_attempt(run.id, "interrupted", "host lost")
    before = snapshot(journal_path)
    assert agent.runs.finish_attempt(run.id, "interrupted", "host lost").status == "interrupted"
    with pytest.raises(errors.InvalidTransition):
        agent.runs.finish_attempt(run.id, "completed")
    for status in ("running", "waiting_for_user", "cancelled"):
        with pytest.raises(errors.ValidationError):
            agent.runs.finish_attempt(run.id, status)
    assert snapshot(journal_path) == before
    agent.runs.fail(run.id, "gave up")
    with pytest.raises(errors.RunTerminal):
        agent.runs.finish_attempt(run.id, "failed", "too late")
    assert_no_open_transaction(agent)


def test_a_cancelled_runs_open_attempt_fails_with_the_cancel_reason(agent, run):
    agent.runs.cancel(run.id, "operator asked")
    [attempt] = agent.runs.attempts(run.id)
    assert (attempt.status, attempt.error) == ("failed", "cancelled: operator asked")
    assert agent.runs.get(run.id).error is None  # the run was cancelled, not failed


# ---------------------------------------------------------------- operator cancel


def test_request_cancel_writes_event_and_audit_in_one_go(agent, operator, run, journal_path):
    current = agent.runs.get(run.id)
    before = row_counts(journal_path)
    done = operator.runs.request_cancel(
        run.id, "wrong repo", expected_version=current.version, request_id="rq-1"
    )
    assert done.cancel_requested and done.cancel_reason == "wrong repo"
    # changes: the decision's, the audit row's and the run's (its row changed; that row also
    # stands for the event: no 'event' row beside it, store issue 24)
    assert delta(before, row_counts(journal_path)) == {
        "events": 1,
        "audit": 1,
        "decisions": 1,
        "changes": 3,
    }
    replay = row_counts(journal_path)
    operator.runs.request_cancel(
        run.id, "wrong repo", expected_version=current.version, request_id="rq-1"
    )
    assert row_counts(journal_path) == replay
    with pytest.raises(errors.IdempotencyConflict):
        operator.runs.request_cancel(
            run.id, "other", expected_version=done.version, request_id="rq-1"
        )
    assert agent.runs.cancel(run.id, "operator asked").status == "cancelled"


def test_a_second_cancel_request_is_refused_and_writes_nothing(agent, operator, run, journal_path):
    first = operator.runs.request_cancel(
        run.id, "wrong repo", expected_version=agent.runs.get(run.id).version
    )
    before = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided) as refused:
        operator.runs.request_cancel(run.id, "another reason", expected_version=first.version)
    assert "already requested" in refused.value.message
    assert "wrong repo" in refused.value.message
    assert snapshot(journal_path) == before
    assert operator.runs.get(run.id).cancel_reason == "wrong repo"


def test_request_cancel_checks_version_reason_and_actor(agent, operator, run, journal_path):
    current = agent.runs.get(run.id)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.runs.request_cancel(run.id, "stop", expected_version=current.version - 1)
    with pytest.raises(errors.ValidationError):
        operator.runs.request_cancel(run.id, "  ", expected_version=current.version)
    with pytest.raises(errors.NotAllowed):
        agent.runs.request_cancel(run.id, "stop", expected_version=current.version)
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- run list


def test_run_list_filters_and_keyset_pages(agent, open_journal, clock):
    other = open_journal(Actor.agent("agent-2"))
    made = []
    for i in range(7):
        clock.advance(1)
        journal = agent if i % 2 else other
        made.append(journal.runs.start("alpha" if i < 4 else "beta", f"task {i} 100%"))
    agent.runs.complete(made[0].id)
    agent.approvals.request(made[1].id, ACTION, reason="r")

    ids, cursor = [], None
    while True:
        page = agent.runs.list(limit=3, cursor=cursor)
        ids += [r.id for r in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert ids == [r.id for r in reversed(made)]
    oldest = agent.runs.list(newest_first=False, limit=2)
    assert [r.id for r in oldest.items] == [made[0].id, made[1].id]
    assert {r.project for r in agent.runs.list(project="beta").items} == {"beta"}
    assert {r.agent for r in agent.runs.list(agent="agent-2").items} == {"agent-2"}
    assert [r.id for r in agent.runs.list(status=["completed"]).items] == [made[0].id]
    assert [r.id for r in agent.runs.list(text="task 3").items] == [made[3].id]
    assert len(agent.runs.list(text="100%").items) == 7
    assert agent.runs.list(text="1_0").items == []  # LIKE wildcards are escaped
    assert [r.id for r in agent.runs.list(has_open_items=True).items] == [made[1].id]
    assert agent.runs.count() == 7 and agent.runs.count(status=["completed"]) == 1
    assert agent.runs.projects() == ["alpha", "beta"]
    assert agent.runs.agents() == ["agent-1", "agent-2"]
    with pytest.raises(errors.ValidationError):
        agent.runs.list(cursor="not a cursor")


# ---------------------------------------------------------------- cancel source


def test_request_cancel_records_where_it_was_asked(agent, operator, run, start_run):
    """A decision row beside the audit entry says who asked and from where; verify holds."""
    from proctor.core.audit import timeline as tl

    other = start_run()
    operator.runs.request_cancel(
        run.id, "wrong repo", source="cli", expected_version=operator.runs.get(run.id).version
    )
    operator.runs.request_cancel(
        other.id, "superseded", expected_version=operator.runs.get(other.id).version
    )
    cancels = {
        e.entity_id: e for e in tl.list_audit(operator).items if e.action == "run.cancel_requested"
    }
    assert cancels[run.id].source == "cli" and cancels[other.id].source == "desk"
    decision = [d for d in tl.run_decisions(operator, run.id) if d.target_kind == "run"]
    assert len(decision) == 1 and decision[0].actor == "operator:alice"
    assert decision[0].reason == "wrong repo" and decision[0].decision == {"cancel_requested": True}
    assert [e.entity_id for e in tl.list_audit(operator, source="cli").items] == [run.id]
    assert verify(operator).ok
