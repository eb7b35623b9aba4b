"""Issue 15, replays keep their word: a replay of any request with any one field changed
conflicts and writes nothing."""

from __future__ import annotations

import pytest

from proctor.core import errors

from .helpers import ACTION, snapshot

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
