"""Rules you can see before they exist, preview, apply, count and revoke; conditional
rules; the documented order between rules (deny first, then the narrower)."""

from __future__ import annotations

import pytest

from proctor.core import errors
from proctor.core.approvals.rules import DEFAULT_RULE_TTL
from proctor.core.models import RuleDraft

from .helpers import ACTION, delta, drop_immutability_triggers, raw, row_counts, snapshot


def refund(amount, **more):
    return {"tool": "payments.refund", "args": {"amount": amount, "account": "acct-7", **more}}


def fs_write(path):
    return {"tool": "fs.write", "args": {"path": path, "text": "x"}}


# ---------------------------------------------------------------- conditional rules


def test_a_conditional_allow_rule_decides_only_what_its_condition_admits(operator, agent, run):
    rule = operator.approvals.add_rule(
        "allow", "payments.refund", run_id=run.id, predicate="args.amount <= 100"
    )
    small = agent.approvals.request(run.id, refund(80), reason="r")
    big = agent.approvals.request(run.id, refund(500), reason="r")
    text = agent.approvals.request(run.id, refund("80"), reason="r")  # type-strict
    assert (small.status, small.rule_id, small.decided_by) == (
        "approved",
        rule.id,
        f"rule:{rule.id}",
    )
    assert big.status == "pending" and text.status == "pending"
    [decision] = agent.approvals.decisions(small.id)
    assert decision.source == "rule" and decision.actor == f"rule:{rule.id}"
    assert [a.action for a in agent.audit.for_entity(small.id)] == ["approval.auto_approved"]


def test_a_deny_rule_with_a_regex_beats_a_wider_allow(operator, agent, run):
    operator.approvals.add_rule("allow", "shell", run_id=run.id)
    deny = operator.approvals.add_rule(
        "deny", "shell", run_id=run.id, predicate=r'args.command regex "rm\s+-rf"'
    )
    assert agent.approvals.request(run.id, ACTION, reason="r").rule_id == deny.id
    ls = agent.approvals.request(run.id, {"tool": "shell", "args": {"command": "ls"}}, reason="r")
    assert ls.status == "approved"


def test_a_bad_condition_is_refused_when_the_rule_is_made(operator, run, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        operator.approvals.add_rule("allow", "x", run_id=run.id, predicate="args.a = 1")
    assert info.value.field == "predicate"
    draft = RuleDraft(action_pattern="x", run_id=run.id, predicate="__import__('os')")
    with pytest.raises(errors.ValidationError):
        operator.approvals.make_rule(draft)
    assert snapshot(journal_path) == before


def test_narrower_rules_are_recorded_before_wider_ones(operator, agent, run):
    wide = operator.approvals.add_rule(
        "allow", "*", scope="space", project=run.project, space=run.space
    )
    in_run = operator.approvals.add_rule("allow", "fs.*", run_id=run.id)
    exact = operator.approvals.add_rule(
        "allow", "fs.write", resource_pattern="/tmp/*", run_id=run.id
    )
    cond = operator.approvals.add_rule(
        "allow", "fs.write", resource_pattern="/tmp/*", run_id=run.id, predicate='args.text == "x"'
    )
    assert agent.approvals.request(run.id, fs_write("/tmp/a"), reason="r").rule_id == cond.id
    assert agent.approvals.request(run.id, fs_write("/home/a"), reason="r").rule_id == in_run.id
    other = agent.approvals.request(run.id, {"tool": "mail.send"}, reason="r")
    assert other.rule_id == wide.id and exact.id != cond.id


def test_an_altered_condition_fails_safe(operator, agent, run, journal_path):
    """Raw SQL puts a condition this code cannot parse on the rules: the allow rule stops
    allowing, the deny rule keeps denying."""
    allow = operator.approvals.add_rule(
        "allow", "payments.refund", run_id=run.id, predicate="args.amount <= 100"
    )
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)  # a rule's condition is identity (0009b's trigger)
        conn.execute(
            "UPDATE approval_rules SET predicate = 'args.amount <= 100 or 1' WHERE id = ?",
            (allow.id,),
        )
    assert agent.approvals.request(run.id, refund(5), reason="r").status == "pending"
    deny = operator.approvals.add_rule("deny", "shell", run_id=run.id, predicate="exists args")
    with raw(journal_path) as conn:
        conn.execute("UPDATE approval_rules SET predicate = '@@' WHERE id = ?", (deny.id,))
    assert agent.approvals.request(run.id, ACTION, reason="r").rule_id == deny.id


# ---------------------------------------------------------------- rules from decisions


def test_always_in_this_space_is_narrow_and_expires_by_default(
    operator, agent, run, start_run, clock
):
    """The old one-click rule allowed every fs.write in the space, for ever."""
    pending = agent.approvals.request(run.id, fs_write("/srv/app/a.txt"), reason="r")
    decided = operator.approvals.decide(pending.id, True, expected_version=1, scope="space")
    rule = operator.approvals.rule(decided.rule_id)
    assert rule.resource_pattern == "/srv/app/a.txt"
    assert rule.expires_at == clock() + DEFAULT_RULE_TTL
    same_space = start_run()
    assert (
        agent.approvals.request(same_space.id, fs_write("/srv/app/a.txt"), reason="r").status
        == "approved"
    )
    assert (
        agent.approvals.request(same_space.id, fs_write("/etc/passwd"), reason="r").status
        == "pending"
    )
    clock.advance(DEFAULT_RULE_TTL + 1)
    assert (
        agent.approvals.request(same_space.id, fs_write("/srv/app/a.txt"), reason="r").status
        == "pending"
    )


def test_a_resource_with_glob_characters_is_matched_literally(operator, agent, run):
    pending = agent.approvals.request(run.id, fs_write("/data/[x]*.csv"), reason="r")
    draft = operator.approvals.rule_draft(pending.id, "run")
    assert draft.resource_pattern == "/data/[[]x][*].csv"
    operator.approvals.decide_with_rule(pending.id, draft, expected_version=1)
    assert (
        agent.approvals.request(run.id, fs_write("/data/[x]*.csv"), reason="r").status == "approved"
    )
    assert (
        agent.approvals.request(run.id, fs_write("/data/x-all.csv"), reason="r").status == "pending"
    )


def test_the_draft_is_the_rule_that_will_exist(operator, agent, run, clock):
    pending = agent.approvals.request(run.id, fs_write("/srv/a"), reason="r")
    draft = operator.approvals.rule_draft(pending.id, "project")
    assert (
        draft.effect,
        draft.action_pattern,
        draft.resource_pattern,
        draft.scope,
        draft.project,
        draft.space,
        draft.run_id,
    ) == ("allow", "fs.write", "/srv/a", "project", run.project, None, None)
    assert draft.expires_at == clock() + DEFAULT_RULE_TTL
    edited = draft.model_copy(update={"resource_pattern": "/srv/*", "expires_at": clock() + 600})
    made = operator.approvals.decide_with_rule(
        pending.id, edited, expected_version=1, reason="routine"
    )
    rule = made.rule
    assert (
        rule.resource_pattern,
        rule.expires_at,
        rule.source_approval_id,
        rule.scope_label,
        rule.created_by,
    ) == ("/srv/*", clock() + 600, pending.id, "project", "operator:alice")
    assert made.approval.status == "approved" and made.approval.rule_id == rule.id
    assert [d.source for d in operator.approvals.decisions(pending.id)] == ["desk"]
    actions = [a.action for a in operator.audit.for_entity(rule.id)]
    assert actions == ["rule.created"]


def test_a_rule_from_a_decision_must_cover_that_request(
    operator, agent, run, start_run, journal_path
):
    pending = agent.approvals.request(run.id, fs_write("/srv/a"), reason="r")
    other = start_run()
    draft = operator.approvals.rule_draft(pending.id, "run").model_copy(update={"run_id": other.id})
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError):
        operator.approvals.decide_with_rule(pending.id, draft, expected_version=1)
    with pytest.raises(errors.ValidationError):  # never forever by accident: in the past
        operator.approvals.decide_with_rule(
            pending.id,
            draft.model_copy(update={"run_id": run.id, "expires_at": 1.0}),
            expected_version=1,
        )
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- impact preview


@pytest.fixture
def history(operator, agent, open_journal, run, start_run):
    """Past and pending fs.write requests from two agents in one space, one elsewhere."""
    from proctor.core import Actor

    other_agent = open_journal(Actor.agent("agent-2"))
    run2 = other_agent.runs.start("proj", "run b")
    elsewhere = start_run(space="elsewhere")
    ids = {}
    for n, (journal, r) in enumerate([(agent, run), (agent, run), (other_agent, run2)]):
        a = journal.approvals.request(r.id, fs_write(f"/srv/old{n}"), reason="r")
        operator.approvals.decide(a.id, True, expected_version=1)
    ids["denied"] = agent.approvals.request(run.id, fs_write("/etc/x"), reason="r").id
    operator.approvals.decide(ids["denied"], False, expected_version=1, reason="no")
    ids["elsewhere"] = agent.approvals.request(elsewhere.id, fs_write("/srv/other"), reason="r").id
    ids["p1"] = other_agent.approvals.request(run2.id, fs_write("/srv/new"), reason="r").id
    ids["p2"] = agent.approvals.request(run.id, fs_write("/srv/new2"), reason="r").id
    ids["current"] = agent.approvals.request(run.id, fs_write("/srv/now"), reason="r").id
    ids["run2"] = run2.id
    return ids


def test_preview_counts_the_past_and_lists_the_pending_it_would_decide(operator, history):
    draft = operator.approvals.rule_draft(history["current"], "space").model_copy(
        update={"resource_pattern": "/srv/*"}
    )
    preview = operator.approvals.preview_rule(draft, exclude=history["current"])
    assert preview.past_total == 3 and not preview.truncated
    assert sorted(preview.by_agent_tool) == [("agent-1", "fs.write", 2), ("agent-2", "fs.write", 1)]
    assert {h.id for h in preview.pending} == {history["p1"], history["p2"]}
    narrow = operator.approvals.preview_rule(
        draft.model_copy(update={"predicate": 'args.path glob "/srv/new*"'}),
        exclude=history["current"],
    )
    assert narrow.past_total == 0 and len(narrow.pending) == 2
    wide = operator.approvals.preview_rule(
        draft.model_copy(update={"resource_pattern": "*"}), exclude=history["current"]
    )
    assert wide.past_total == 4  # the denied /etc/x too; the other space never


def test_applying_to_pending_happens_in_the_same_transaction(
    operator, agent, history, journal_path
):
    draft = operator.approvals.rule_draft(history["current"], "space").model_copy(
        update={"resource_pattern": "/srv/*"}
    )
    preview = operator.approvals.preview_rule(draft, exclude=history["current"])
    before = row_counts(journal_path)
    made = operator.approvals.decide_with_rule(
        history["current"],
        draft,
        expected_version=1,
        apply_to=[(h.id, h.version) for h in preview.pending],
        request_id="req-1",
    )
    assert sorted(made.applied) == sorted([history["p1"], history["p2"]])
    for aid in made.applied:
        a = operator.approvals.get(aid)
        assert (a.status, a.rule_id, a.decided_by) == (
            "approved",
            made.rule.id,
            f"rule:{made.rule.id}",
        )
        [audit] = operator.audit.for_entity(aid)[-1:]
        assert audit.action == "approval.auto_approved"
        assert audit.after["applied_by"] == "operator:alice"
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["approval_rules"], changed["events"]) == (3, 1, 3)
    assert changed["audit"] == 4  # the decision, the rule, two applications
    # a replay of the same request changes nothing and returns the same rule
    again = row_counts(journal_path)
    replay = operator.approvals.decide_with_rule(
        history["current"],
        draft,
        expected_version=1,
        apply_to=[(h.id, h.version) for h in preview.pending],
        request_id="req-1",
    )
    assert replay.rule.id == made.rule.id and row_counts(journal_path) == again
    with pytest.raises(errors.IdempotencyConflict):
        operator.approvals.decide_with_rule(
            history["current"], draft, expected_version=1, request_id="req-1"
        )
    usage = {u.rule.id: u for u in operator.approvals.rule_usage()}
    assert usage[made.rule.id].decided == 2
    assert {a.id for a in operator.approvals.decided_by_rule(made.rule.id)} == set(made.applied)


@pytest.mark.parametrize("spoil", ["stale", "decided", "outside"])
def test_a_spoiled_apply_list_refuses_the_whole_transaction(
    operator, agent, history, journal_path, spoil
):
    draft = operator.approvals.rule_draft(history["current"], "space").model_copy(
        update={"resource_pattern": "/srv/*"}
    )
    preview = operator.approvals.preview_rule(draft, exclude=history["current"])
    pairs = [(h.id, h.version) for h in preview.pending]
    if spoil == "stale":
        pairs[0] = (pairs[0][0], pairs[0][1] + 1)
    elif spoil == "decided":
        operator.approvals.decide(pairs[0][0], False, expected_version=pairs[0][1], reason="no")
    else:
        pairs.append((history["elsewhere"], 1))  # pending, but in another space
    before = snapshot(journal_path)
    with pytest.raises((errors.StaleVersion, errors.AlreadyDecided)):
        operator.approvals.decide_with_rule(
            history["current"], draft, expected_version=1, apply_to=pairs
        )
    assert snapshot(journal_path) == before
    assert operator.approvals.get(history["current"]).status == "pending"


def test_a_rule_is_never_applied_to_a_request_the_operator_made(
    open_journal, agent, run, journal_path
):
    from proctor.core import Actor

    operator = open_journal(Actor.operator("agent-1"))  # same name as the run's agent
    pending = agent.approvals.request(run.id, fs_write("/srv/a"), reason="r")
    draft = RuleDraft(
        action_pattern="fs.write", resource_pattern="/srv/*", scope="project", project=run.project
    )
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        operator.approvals.make_rule(draft, apply_to=[(pending.id, pending.version)])
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- list, expire, revoke


def test_rules_are_listed_with_use_and_revoked_with_a_reason(
    operator, agent, run, clock, journal_path
):
    keep = operator.approvals.add_rule("deny", "shell", run_id=run.id)
    short = operator.approvals.add_rule("allow", "http.*", run_id=run.id, expires_at=clock() + 5)
    agent.approvals.request(run.id, ACTION, reason="r")
    agent.approvals.request(run.id, ACTION, reason="r")
    before = row_counts(journal_path)
    revoked = operator.approvals.revoke_rule(keep.id, expected_version=1, reason="too broad")
    assert delta(before, row_counts(journal_path)) == {"audit": 1, "changes": 2}
    assert (revoked.revoke_reason, revoked.revoked_by) == ("too broad", "operator:alice")
    [entry] = [a for a in operator.audit.for_entity(keep.id) if a.action == "rule.revoked"]
    assert entry.reason == "too broad"
    clock.advance(6)
    usage = {u.rule.id: u for u in operator.approvals.rule_usage()}
    assert (usage[keep.id].state, usage[keep.id].decided) == ("revoked", 2)
    assert (usage[short.id].state, usage[short.id].decided) == ("expired", 0)
    assert agent.approvals.request(run.id, ACTION, reason="r").status == "pending"
