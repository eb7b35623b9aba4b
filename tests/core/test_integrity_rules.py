"""Issue 15, the service rules: a person's decision gates exactly one action, once, in time;
only a person (never the requester) decides; replays and state machines keep their word."""

from __future__ import annotations

import pytest

from proctor.core import Actor, errors
from proctor.core.approvals.service import CONSUME_WINDOW

from .conftest import AGENT
from .helpers import ACTION, delta, events_of, row_counts, snapshot


def approved(agent, operator, run, action=ACTION, **kw):
    approval = agent.approvals.request(run.id, action, reason="needed", **kw)
    return operator.approvals.decide(approval.id, True, expected_version=approval.version)


def consume(agent, approval, key="fx-1", owner="w1"):
    return agent.approvals.consume_and_reserve(
        approval.id, approval.action_digest, key, owner=owner
    )


# ---------------------------------------------------------------- consuming after expiry


def test_an_approval_is_not_consumed_after_its_expiry_and_the_lapse_is_kept(
    agent, operator, run, clock, journal_path
):
    approval = approved(agent, operator, run, expires_in=60)
    clock.advance(60)
    before = row_counts(journal_path)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, approval)
    lapsed = agent.approvals.get(approval.id)
    assert (lapsed.status, lapsed.consumed_at, lapsed.version) == (
        "expired",
        None,
        approval.version + 1,
    )
    assert lapsed.decided_by == f"operator:{operator.actor.name}"  # who approved stays
    changed = delta(before, row_counts(journal_path))
    assert changed.get("effects", 0) == 0 and changed.get("decisions", 0) == 0
    assert changed["audit"] == 1 and changed["events"] == 1
    assert events_of(journal_path, run.id)[-1][1] == "approval.expired"
    assert agent.audit.list(limit=1).items[0].action == "approval.expired"
    again = snapshot(journal_path)
    with pytest.raises(errors.NotConsumable):
        consume(agent, approval)
    assert snapshot(journal_path) == again


def test_an_approval_is_consumed_until_its_expiry(agent, operator, run, clock):
    approval = approved(agent, operator, run, expires_in=60)
    clock.advance(59.9)
    assert consume(agent, approval).status == "reserved"


def test_without_an_expiry_an_approval_is_used_within_the_window_of_its_decision(
    agent, operator, run, clock
):
    soon = approved(agent, operator, run, {"tool": "a"})
    late = approved(agent, operator, run, {"tool": "b"})
    clock.advance(CONSUME_WINDOW - 1)
    assert consume(agent, soon, "fx-soon").status == "reserved"
    clock.advance(1)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, late, "fx-late")
    assert agent.approvals.get(late.id).status == "expired"


def test_a_late_approval_of_an_advisory_expiry_gets_the_window_from_its_decision(
    agent, operator, run, clock
):
    request = agent.approvals.request(
        run.id, ACTION, reason="r", expires_in=10, on_expiry="keep_pending"
    )
    clock.advance(20)  # overdue, still decidable: the person approves knowing it
    approval = operator.approvals.decide(request.id, True, expected_version=1)
    clock.advance(CONSUME_WINDOW)
    with pytest.raises(errors.ApprovalLapsed):
        consume(agent, approval)


def test_a_digest_mismatch_on_a_lapsed_approval_writes_nothing(
    agent, operator, run, clock, journal_path
):
    approval = approved(agent, operator, run, expires_in=5)
    clock.advance(10)
    before = snapshot(journal_path)
    with pytest.raises(errors.DigestMismatch):
        agent.approvals.consume_and_reserve(approval.id, "0" * 64, "fx-1", owner="w1")
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- ended runs


def failed_effect_then_ended_run(agent, operator, run, end):
    first = approved(agent, operator, run, {"tool": "pay", "n": 1})
    consume(agent, first, "fx-pay")
    agent.effects.begin("fx-pay", owner="w1")
    agent.effects.fail("fx-pay", "HTTP 500", owner="w1")
    second = approved(agent, operator, run, {"tool": "pay", "n": 2})
    end(agent, run.id)
    return second


ENDINGS = {
    "completed": lambda j, rid: j.runs.complete(rid),
    "failed": lambda j, rid: j.runs.fail(rid, "gave up"),
    "cancelled": lambda j, rid: j.runs.cancel(rid, "stop"),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_failed_key_is_not_retried_on_an_ended_run(agent, operator, run, journal_path, ending):
    second = failed_effect_then_ended_run(agent, operator, run, ENDINGS[ending])
    before = snapshot(journal_path)
    with pytest.raises(errors.RunTerminal):
        consume(agent, second, "fx-pay")
    with pytest.raises(errors.RunTerminal):
        agent.effects.reserve("fx-pay", tool="pay", run_id=run.id, owner="w1")
    with pytest.raises(errors.RunTerminal):  # the effect's own run decides, not the caller
        agent.effects.reserve("fx-pay", tool="pay", owner="w1")
    assert snapshot(journal_path) == before
    assert agent.approvals.get(second.id).consumed_at is None


def test_a_new_key_is_refused_on_an_ended_run_too(agent, operator, run, journal_path):
    second = failed_effect_then_ended_run(agent, operator, run, ENDINGS["completed"])
    before = snapshot(journal_path)
    with pytest.raises(errors.RunTerminal):
        consume(agent, second, "fx-new")
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- late commits


def executing(agent, key="fx-1", lease=5.0, owner="w1", run_id=None):
    agent.effects.reserve(key, tool="pay", owner=owner, lease_seconds=lease, run_id=run_id)
    return agent.effects.begin(key, owner=owner)


TOUCHES = {
    "nobody": lambda agent, operator: None,
    "sweep": lambda agent, operator: agent.effects.sweep_expired(),
    "another reserve": lambda agent, operator: _reserve_raises(agent),
    "a person resolved it": lambda agent, operator: (
        agent.effects.sweep_expired(),
        operator.effects.resolve(
            "fx-1", "failed", reason="checked", expected_version=agent.effects.get("fx-1").version
        ),
    ),
}


def _reserve_raises(agent):
    with pytest.raises(errors.EffectAmbiguous):
        agent.effects.reserve("fx-1", tool="pay", owner="w2")


@pytest.mark.parametrize("touched_by", sorted(TOUCHES))
@pytest.mark.parametrize("late", ["commit", "fail", "renew"])
def test_a_late_call_after_the_lease_lapsed_is_always_ambiguous(
    agent, operator, clock, journal_path, touched_by, late
):
    executing(agent)
    clock.advance(6)
    TOUCHES[touched_by](agent, operator)
    call = {
        "commit": lambda: agent.effects.commit("fx-1", {"ok": True}, owner="w1"),
        "fail": lambda: agent.effects.fail("fx-1", "late", owner="w1"),
        "renew": lambda: agent.effects.renew("fx-1", owner="w1"),
    }[late]
    with pytest.raises(errors.EffectAmbiguous):
        call()
    before = snapshot(journal_path)
    with pytest.raises(errors.EffectAmbiguous):  # and again: still the same answer
        call()
    assert snapshot(journal_path) == before
    assert agent.effects.get("fx-1").status != "committed"


# ---------------------------------------------------------------- the requester rule


def test_the_runs_agent_cannot_resolve_its_ambiguous_effect(
    open_journal, agent, run, clock, journal_path
):
    executing(agent, run_id=run.id)
    agent.effects.mark_ambiguous("fx-1", "timeout", owner="w1")
    same = open_journal(Actor.operator(AGENT))
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        same.effects.resolve(
            "fx-1", "committed", reason="it did", expected_version=agent.effects.get("fx-1").version
        )
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("who", ["reserver", "lease holder"])
def test_the_agent_that_executed_an_effect_cannot_resolve_it(open_journal, journal_path, who):
    worker = open_journal(Actor.agent("worker-3"))
    owner = None if who == "reserver" else "holder-9@4242"
    worker.effects.reserve("fx-1", tool="pay", owner=owner)  # no run: nobody else asked
    owner = owner or worker.effects.default_owner()
    worker.effects.mark_ambiguous("fx-1", "timeout", owner=owner)
    name = "worker-3" if who == "reserver" else "holder-9"
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(name)).effects.resolve(
            "fx-1", "failed", reason="no", expected_version=2
        )
    assert snapshot(journal_path) == before
    other = open_journal(Actor.operator("carol"))
    assert (
        other.effects.resolve("fx-1", "failed", reason="no", expected_version=2).status == "failed"
    )


def test_the_agent_that_recorded_a_memory_conflict_cannot_resolve_it(open_journal, journal_path):
    syncer = open_journal(Actor.agent("syncer"))
    entry = syncer.memory.add("project", "proj", "db", "db1")
    item = syncer.memory.record_conflict(entry.id, "db2", incoming_source="sync")  # no run
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator("syncer")).memory.resolve(
            item.id, "accepted_incoming", expected_version=1, reason="newer"
        )
    assert snapshot(journal_path) == before


def test_the_runs_agent_cannot_resolve_its_runs_memory_conflict(
    open_journal, agent, run, journal_path
):
    other = open_journal(Actor.agent("helper"))
    entry = other.memory.add("project", "proj", "db", "db1")
    item = other.memory.record_conflict(entry.id, "db2", incoming_source="sync", run_id=run.id)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(AGENT)).memory.resolve_seen(
            item.id, "dismissed", expected_version=1, entry_version=1, reason="stale"
        )
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- memory trust


@pytest.mark.parametrize("trust", ["user_confirmed", "operator_edited"])
def test_an_agent_cannot_add_memory_with_a_persons_trust(agent, operator, journal_path, trust):
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.memory.add("project", "proj", "db", "db1", trust=trust)
    assert snapshot(journal_path) == before
    assert operator.memory.add("project", "proj", "db", "db1", trust=trust).trust == trust


def test_an_agent_cannot_confirm_memory(agent, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.memory.confirm(entry.id, expected_version=1)
    assert snapshot(journal_path) == before


def test_an_operator_named_as_the_writing_agent_cannot_confirm(open_journal, agent, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        open_journal(Actor.operator(AGENT)).memory.confirm(entry.id, expected_version=1)
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("change", ["replace", "remove"])
def test_an_agent_cannot_change_a_confirmed_entry(agent, operator, journal_path, change):
    entry = agent.memory.add("project", "proj", "db", "db1")
    confirmed = operator.memory.confirm(entry.id, expected_version=1)
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):  # noqa: PT012 - the block is the one operation under test
        if change == "replace":
            agent.memory.replace(entry.id, "db2", expected_version=confirmed.version)
        else:
            agent.memory.remove(entry.id, expected_version=confirmed.version)
    assert snapshot(journal_path) == before
    item = agent.memory.record_conflict(entry.id, "db2", incoming_source="agent")
    assert item.status == "pending"  # the way an agent proposes a change to it
    kept = operator.memory.replace(entry.id, "db3", expected_version=confirmed.version)
    assert kept.content == "db3"  # an operator still edits it


# ---------------------------------------------------------------- one pending conflict


def test_one_pending_conflict_per_entry(agent, operator, journal_path):
    entry = agent.memory.add("project", "proj", "db", "db1")
    first = agent.memory.record_conflict(entry.id, "db2", incoming_source="sync")
    before = snapshot(journal_path)
    with pytest.raises(errors.ConflictPending) as info:
        agent.memory.record_conflict(entry.id, "db3", incoming_source="sync")
    assert info.value.details["reconciliation_id"] == first.id
    assert snapshot(journal_path) == before
    operator.memory.resolve(first.id, "dismissed", expected_version=1, reason="stale")
    assert agent.memory.record_conflict(entry.id, "db3", incoming_source="sync").status == "pending"


def test_the_schema_refuses_a_second_pending_conflict(agent, journal_path):
    import sqlite3

    from .helpers import raw

    entry = agent.memory.add("project", "proj", "db", "db1")
    item = agent.memory.record_conflict(entry.id, "db2", incoming_source="sync")
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memory_reconciliations (id, entry_id, local_content, local_version,"
            " incoming_content, incoming_source, status, version, created_at) "
            "SELECT 'rec_x', entry_id, local_content, local_version, 'db9', 'raw', "
            "'pending', 1, created_at FROM memory_reconciliations WHERE id = ?",
            (item.id,),
        )


@pytest.mark.sqlite_only
def test_migration_keeps_the_newest_of_several_pending_conflicts(journal_path, agent, downgrade):
    from proctor.core import Journal

    from .helpers import raw

    entry = agent.memory.add("project", "proj", "db", "db1")
    agent.close()
    downgrade(journal_path, "0004")
    with raw(journal_path) as conn:
        for n, at in enumerate((10.0, 30.0, 20.0)):
            conn.execute(
                "INSERT INTO memory_reconciliations (id, entry_id, local_content, "
                "local_version, incoming_content, incoming_source, status, version, "
                "created_at) VALUES (?, ?, 'db1', 1, ?, 'sync', 'pending', 1, ?)",
                (f"rec_{n}", entry.id, f"db{n}", at),
            )
    with Journal.open(journal_path, actor=Actor.operator("alice")) as j:
        [pending] = j.memory.conflicts("pending")
        assert pending.id == "rec_1"  # the newest
        closed = j.memory.conflicts("dismissed")
        assert {c.id for c in closed} == {"rec_0", "rec_2"}
        assert all(c.resolved_by == "system:migration-0005b" for c in closed)


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


# ---------------------------------------------------------------- every field in the digest


def _other_run(agent, operator, run):
    return {"run": run.id, "other": agent.runs.start("proj", "other run").id}


def _entry(agent, operator, run):
    ctx = _other_run(agent, operator, run)
    ctx["entry"] = agent.memory.add("project", "proj", "db", "db1").id
    ctx["entry2"] = agent.memory.add("project", "proj", "db2", "db2").id
    return ctx


def _approval(agent, operator, run):
    ctx = _other_run(agent, operator, run)
    ctx["a"] = agent.approvals.request(run.id, ACTION, reason="r").id
    ctx["a2"] = agent.approvals.request(run.id, {"tool": "other"}, reason="r").id
    return ctx


def _question(agent, operator, run):
    return {
        "q": agent.questions.ask(run.id, "question", "why?").id,
        "q2": agent.questions.ask(run.id, "question", "how?").id,
    }


def _ambiguous(agent, operator, run):
    for key in ("fx-1", "fx-2"):
        agent.effects.reserve(key, tool="pay", owner="w1", run_id=run.id)
        agent.effects.mark_ambiguous(key, "lost", owner="w1")
    return {}


def _conflict(agent, operator, run):
    ctx = _entry(agent, operator, run)
    ctx["c"] = agent.memory.record_conflict(ctx["entry"], "db9", incoming_source="sync").id
    ctx["c2"] = agent.memory.record_conflict(ctx["entry2"], "db8", incoming_source="sync").id
    return ctx


def _unknown_call(agent, operator, run):
    ids = [agent.runs.record_tool_call(run.id, "pay", {"n": n}).id for n in (1, 2)]
    operator.runs.request_cancel(run.id, "stop", expected_version=agent.runs.get(run.id).version)
    agent.runs.cancel(run.id, "asked")
    return {"t": ids[0], "t2": ids[1]}


def _rule(agent, operator, run):
    return {"rule": operator.approvals.add_rule("allow", "never", run_id=run.id).id}


# name: (setup, call(agent, operator, ctx, **fields), base fields, {field: other value})
REQUESTS = {
    "approval request": (
        _other_run,
        lambda a, o, c, run_id, **kw: a.approvals.request(c[run_id], request_key="k", **kw),
        dict(
            run_id="run",
            action=ACTION,
            reason="r",
            safety_class="unsafe_write",
            requested_scope="once",
            expires_in=None,
            expires_at=None,
            on_expiry="deny",
        ),
        dict(
            run_id="other",
            action={"tool": "shell", "args": {"command": "ls"}},
            reason="r2",
            safety_class="destructive",
            requested_scope="run",
            expires_in=60,
            expires_at=1e10,
            on_expiry="keep_pending",
        ),
    ),
    "question": (
        _other_run,
        lambda a, o, c, run_id, **kw: a.questions.ask(c[run_id], request_key="q", **kw),
        dict(
            run_id="run",
            kind="question",
            prompt="why?",
            request=None,
            response_schema=None,
            options=None,
            expires_in=None,
        ),
        dict(
            run_id="other",
            kind="confirmation",
            prompt="how?",
            request={"x": 1},
            response_schema={"type": "object"},
            options=["a"],
            expires_in=60,
        ),
    ),
    "memory add": (
        _other_run,
        lambda a, o, c, run_id, **kw: a.memory.add(run_id=c.get(run_id), idempotency_key="m", **kw),
        dict(
            run_id=None,
            scope="project",
            scope_key="proj",
            title="t",
            content="c",
            kind="fact",
            priority=0,
            trust="agent_observed",
            sensitivity="normal",
            reason=None,
            entry_id=None,
        ),
        dict(
            run_id="run",
            scope="user",
            scope_key="k2",
            title="t2",
            content="c2",
            kind="decision",
            priority=5,
            trust="model_inferred",
            sensitivity="secret",
            reason="why",
            entry_id="mem_other",
        ),
    ),
    "memory replace": (
        _entry,
        lambda a, o, c, entry, run_id, **kw: a.memory.replace(
            c[entry], run_id=c.get(run_id), idempotency_key="m", **kw
        ),
        dict(entry="entry", run_id=None, content="c2", expected_version=1, title=None, reason=None),
        dict(
            entry="entry2", run_id="run", content="c3", expected_version=2, title="t2", reason="why"
        ),
    ),
    "memory pin": (
        _entry,
        lambda a, o, c, entry, **kw: a.memory.pin(c[entry], idempotency_key="m", **kw),
        dict(entry="entry", pinned=True, expected_version=1, reason=None),
        dict(entry="entry2", pinned=False, expected_version=2, reason="why"),
    ),
    "run start": (
        _other_run,
        lambda a, o, c, parent_run_id, **kw: a.runs.start(
            run_id="run_fixed", parent_run_id=c.get(parent_run_id), **kw
        ),
        dict(
            project="p",
            title="t",
            space="default",
            agent=None,
            parent_run_id=None,
            deadline=None,
            metadata=None,
        ),
        dict(
            project="p2",
            title="t2",
            space="s2",
            agent="someone",
            parent_run_id="run",
            deadline=1e10,
            metadata={"model": "x"},
        ),
    ),
    "tool call": (
        _other_run,
        lambda a, o, c, run_id, **kw: a.runs.record_tool_call(
            c[run_id], tool_call_id="tc_fixed", **kw
        ),
        dict(
            run_id="run",
            tool="http.get",
            request={"u": 1},
            safety_class="safe_read",
            idempotency_key=None,
        ),
        dict(
            run_id="other",
            tool="http.post",
            request={"u": 2},
            safety_class="external_side_effect",
            idempotency_key="pay-1",
        ),
    ),
    "event": (
        _other_run,
        lambda a, o, c, run_id, **kw: a.runs.append_event(c[run_id], event_id="evt_fixed", **kw),
        dict(run_id="run", type_="step", payload={"i": 1}),
        dict(run_id="other", type_="step2", payload={"i": 2}),
    ),
    "approval decision": (
        _approval,
        lambda a, o, c, aid, **kw: o.approvals.decide(c[aid], request_id="d", **kw),
        dict(aid="a", approve=True, expected_version=1, reason="ok", scope="once", source="desk"),
        dict(aid="a2", approve=False, expected_version=2, reason="no", scope="run", source="cli"),
    ),
    "answer": (
        _question,
        lambda a, o, c, qid, **kw: o.questions.answer(c[qid], request_id="d", **kw),
        dict(qid="q", response={"text": "x"}, expected_version=1, reason=None, source="desk"),
        dict(qid="q2", response={"text": "y"}, expected_version=2, reason="r", source="cli"),
    ),
    "effect resolution": (
        _ambiguous,
        lambda a, o, c, **kw: o.effects.resolve(request_id="d", **kw),
        dict(
            key="fx-1",
            outcome="failed",
            reason="r",
            expected_version=2,
            external_id=None,
            evidence=None,
            source="desk",
        ),
        dict(
            key="fx-2",
            outcome="committed",
            reason="r2",
            expected_version=3,
            external_id="ext",
            evidence={"e": 1},
            source="cli",
        ),
    ),
    "memory resolution": (
        _conflict,
        lambda a, o, c, item, **kw: o.memory.resolve(c[item], request_id="d", **kw),
        dict(
            item="c",
            choice="dismissed",
            expected_version=1,
            merged_content=None,
            reason="stale",
            source="desk",
        ),
        dict(
            item="c2",
            choice="accepted_local",
            expected_version=2,
            merged_content="m",
            reason="r",
            source="cli",
        ),
    ),
    "cancel request": (
        _other_run,
        lambda a, o, c, run_id, **kw: o.runs.request_cancel(c[run_id], request_id="d", **kw),
        dict(run_id="run", reason="stop", expected_version=1, source="desk"),
        dict(run_id="other", reason="halt", expected_version=2, source="cli"),
    ),
    "tool call resolution": (
        _unknown_call,
        lambda a, o, c, tid, **kw: o.runs.resolve_tool_call(c[tid], request_id="d", **kw),
        dict(tid="t", status="failed", reason="r", expected_version=2, source="desk"),
        dict(tid="t2", status="succeeded", reason="r2", expected_version=3, source="cli"),
    ),
    "snooze": (
        _approval,
        lambda a, o, c, aid, **kw: o.inbox.snooze("approval", c[aid], request_id="d", **kw),
        dict(aid="a", until=2e9, expected_version=1),
        dict(aid="a2", until=3e9, expected_version=2),
    ),
    "rule revoke": (
        _rule,
        lambda a, o, c, rule, **kw: o.approvals.revoke_rule(c[rule], request_id="d", **kw),
        dict(rule="rule", expected_version=1),
        dict(expected_version=2),
    ),
}

CASES = [(name, field) for name, (_s, _c, _b, changes) in REQUESTS.items() for field in changes]


def _fix_versions(name, base, ctx, agent):
    """Version fields the first call must pass as the journal has them."""
    if name == "cancel request":
        base["expected_version"] = agent.runs.get(ctx["run"]).version
    return base


@pytest.mark.parametrize(("name", "field"), CASES, ids=[f"{n}:{f}" for n, f in CASES])
def test_a_replay_with_any_one_field_changed_conflicts_and_writes_nothing(
    agent, operator, run, journal_path, name, field
):
    setup, call, base, changes = REQUESTS[name]
    ctx = setup(agent, operator, run)
    base = _fix_versions(name, dict(base), ctx, agent)
    call(agent, operator, ctx, **base)
    call(agent, operator, ctx, **base)  # the same request again: a plain replay
    before = snapshot(journal_path)
    with pytest.raises(errors.IdempotencyConflict):
        call(agent, operator, ctx, **{**base, field: changes[field]})
    assert snapshot(journal_path) == before
