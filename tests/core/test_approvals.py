"""Approvals: request, decide at most once, expiry kept as evidence, consume once for the
exact digest, rules (DESIGN §2 invariants 2-5, 10, 11)."""

from __future__ import annotations

import pytest

from proctor.core import Actor, digest_of, errors
from proctor.core.journal import Tx

from .helpers import ACTION, Boom, assert_no_open_transaction, delta, row_counts, snapshot

OTHER_ACTION = {"tool": "http.post", "args": {"url": "https://pay.example/charge"}}


@pytest.fixture
def pending(agent, run):
    return agent.approvals.request(run.id, ACTION, reason="clean the build folder")


def approve(operator, approval, **kw):
    return operator.approvals.decide(approval.id, True, expected_version=approval.version, **kw)


# ---------------------------------------------------------------- request


def test_request_binds_the_action_digest_and_waits_for_a_person(agent, run, journal_path):
    before = row_counts(journal_path)
    approval = agent.approvals.request(
        run.id, ACTION, reason="r", safety_class="destructive", expires_in=60
    )
    assert approval.status == "pending" and approval.version == 1
    assert approval.action == ACTION and approval.action_name == "shell"
    assert approval.action_digest == digest_of(
        {"args": {"command": "rm -rf build"}, "tool": "shell"}
    )
    assert approval.expires_at == approval.created_at + 60
    assert agent.runs.get(run.id).status == "waiting_for_user"
    # changes: the approval's and the run's (its status moved; that row also stands for the
    # event: no 'event' row beside it, store issue 24)
    assert delta(before, row_counts(journal_path)) == {"approvals": 1, "events": 1, "changes": 2}


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ({"args": {}}, "action.tool"),
        ({"tool": "  "}, "action.tool"),
        (["tool"], "action"),
        ({"tool": "x", "n": float("nan")}, ""),
    ],
)
def test_request_refuses_bad_actions(agent, run, journal_path, action, field):
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        agent.approvals.request(run.id, action, reason="r")
    assert info.value.field == field
    assert row_counts(journal_path) == before


def test_request_is_idempotent_by_request_key(agent, run, journal_path):
    first = agent.approvals.request(run.id, ACTION, reason="r", request_key="k-1")
    before = snapshot(journal_path)
    assert agent.approvals.request(run.id, ACTION, reason="r", request_key="k-1") == first
    assert snapshot(journal_path) == before


@pytest.mark.parametrize(
    "change", [{"action": OTHER_ACTION}, {"reason": "other"}, {"safety_class": "financial"}]
)
def test_request_key_reused_with_other_content_conflicts(agent, run, journal_path, change):
    agent.approvals.request(run.id, ACTION, reason="r", request_key="k-1")
    before = snapshot(journal_path)
    kwargs = {"action": ACTION, "reason": "r", **change}
    with pytest.raises(errors.IdempotencyConflict):
        agent.approvals.request(run.id, kwargs.pop("action"), request_key="k-1", **kwargs)
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- decide


def test_decide_writes_one_decision_one_audit_one_event(operator, agent, pending, journal_path):
    before = row_counts(journal_path)
    decided = approve(operator, pending, reason="fine")
    assert decided.status == "approved" and decided.version == pending.version + 1
    assert decided.decided_by == "operator:alice" and decided.decision_reason == "fine"
    changed = delta(before, row_counts(journal_path))
    assert {k: changed[k] for k in ("decisions", "audit", "events")} == {
        "decisions": 1,
        "audit": 1,
        "events": 1,
    }
    assert set(changed) == {"decisions", "audit", "events", "changes"}
    [decision] = operator.approvals.decisions(pending.id)
    assert decision.actor == "operator:alice" and decision.decision["approved"] is True
    [entry] = operator.audit.for_entity(pending.id)
    assert entry.action == "approval.approved" and entry.actor == "operator:alice"
    last = agent.runs.events(pending.run_id, descending=True, limit=1)[0]
    assert last.type == "approval.approved" and last.actor == "operator:alice"
    assert {decision.created_at, entry.created_at, last.created_at} == {decided.decided_at}
    assert agent.runs.get(pending.run_id).status == "running"


def test_deny_needs_a_reason(operator, pending, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        operator.approvals.decide(pending.id, False, expected_version=pending.version)
    assert info.value.field == "reason"
    assert snapshot(journal_path) == before
    denied = operator.approvals.decide(
        pending.id, False, expected_version=pending.version, reason="too risky"
    )
    assert denied.status == "denied" and denied.decision_reason == "too risky"


@pytest.mark.parametrize("second", [True, False])
def test_decided_at_most_once(operator, open_journal, pending, journal_path, second):
    decided = approve(operator, pending)
    bob = open_journal(Actor.operator("bob"))
    before = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided) as info:
        bob.approvals.decide(pending.id, second, expected_version=decided.version, reason="no")
    assert "alice" in str(info.value)
    assert snapshot(journal_path) == before
    assert len(bob.approvals.decisions(pending.id)) == 1


def test_decide_replay_by_request_id_returns_stored_result(operator, pending, journal_path):
    first = approve(operator, pending, request_id="rq-1")
    before = snapshot(journal_path)
    again = approve(operator, pending, request_id="rq-1")
    assert again == first
    assert snapshot(journal_path) == before


def test_decide_request_id_with_other_content_conflicts(
    operator, agent, run, pending, journal_path
):
    approve(operator, pending, request_id="rq-1")
    other = agent.approvals.request(run.id, OTHER_ACTION, reason="r")
    before = snapshot(journal_path)
    with pytest.raises(errors.IdempotencyConflict):
        operator.approvals.decide(other.id, True, expected_version=other.version, request_id="rq-1")
    with pytest.raises(errors.IdempotencyConflict):
        operator.approvals.decide(
            pending.id, False, expected_version=pending.version, reason="x", request_id="rq-1"
        )
    assert snapshot(journal_path) == before
    assert operator.approvals.get(other.id).status == "pending"


def test_stale_version_is_refused_and_writes_nothing(operator, pending, journal_path):
    operator.inbox.snooze("approval", pending.id, 10.0**10, expected_version=pending.version)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        approve(operator, pending)  # the user saw version 1; snoozing made it 2
    assert snapshot(journal_path) == before
    fresh = operator.approvals.get(pending.id)
    assert approve(operator, fresh).status == "approved"


def test_fault_after_decision_row_rolls_everything_back(
    operator, pending, journal_path, monkeypatch
):
    before = snapshot(journal_path)

    def audit_then_fail(self, *args, **kwargs):
        raise Boom("disk on fire")

    monkeypatch.setattr(Tx, "audit", audit_then_fail)
    with pytest.raises(Boom):
        approve(operator, pending)
    monkeypatch.undo()
    assert snapshot(journal_path) == before
    assert_no_open_transaction(operator)
    assert approve(operator, pending).status == "approved"


# ---------------------------------------------------------------- who may decide


def test_requesting_agent_cannot_approve_its_own_action(open_journal, pending, journal_path):
    same_name = open_journal(Actor.operator("agent-1"))
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        approve(same_name, pending)
    assert snapshot(journal_path) == before


def test_an_agent_requesting_on_another_agents_run_is_recorded_and_refused(
    open_journal, run, journal_path
):
    helper = open_journal(Actor.agent("helper-7"))
    approval = helper.approvals.request(
        run.id, {"tool": "shell.exec", "args": {}}, reason="cleanup"
    )
    assert approval.agent == "helper-7"  # the real requester, not the run's agent
    for name in ("helper-7", run.agent):
        before = snapshot(journal_path)
        with pytest.raises(errors.NotAllowed):
            open_journal(Actor.operator(name)).approvals.decide(
                approval.id, True, expected_version=approval.version
            )
        assert snapshot(journal_path) == before


def test_agents_cannot_call_operator_methods(agent, open_journal, run, pending, journal_path):
    question = agent.questions.ask(run.id, "question", "why?")
    agent = open_journal(Actor.agent("agent-9"))  # not the requester: only its kind refuses
    before = snapshot(journal_path)
    calls = [
        lambda: approve(agent, pending),
        lambda: agent.approvals.bulk_decide([(pending.id, pending.version)], True),
        lambda: agent.approvals.add_rule("allow", "*", run_id=run.id),
        lambda: agent.questions.answer(
            question.id, {"text": "me"}, expected_version=question.version
        ),
        lambda: agent.runs.request_cancel(run.id, "x", expected_version=1),
        lambda: agent.inbox.snooze("approval", pending.id, None, expected_version=1),
    ]
    for call in calls:
        with pytest.raises(errors.NotAllowed):
            call()
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- expiry


def test_decision_on_expired_approval_raises_and_keeps_expiry(
    operator, agent, run, clock, journal_path
):
    approval = agent.approvals.request(run.id, ACTION, reason="r", expires_in=60)
    clock.advance(61)
    before = row_counts(journal_path)
    with pytest.raises(errors.Expired):
        approve(operator, approval)
    expired = operator.approvals.get(approval.id)
    assert expired.status == "expired" and expired.decided_by == "system:expiry"
    changed = delta(before, row_counts(journal_path))
    assert (changed["audit"], changed["decisions"], changed["events"]) == (1, 1, 1)
    [entry] = operator.audit.for_entity(approval.id)
    assert entry.action == "approval.expired" and entry.actor == "system:expiry"
    assert agent.runs.get(run.id).status == "running"
    # the expiry is evidence: a later decision changes nothing
    before = snapshot(journal_path)
    with pytest.raises(errors.Expired):
        approve(operator, expired)
    with pytest.raises(errors.Expired):
        operator.approvals.decide(
            approval.id, False, expected_version=expired.version, reason="late"
        )
    assert snapshot(journal_path) == before


def test_expire_due_and_wait_apply_the_deny_policy(agent, run, clock):
    soon = agent.approvals.request(run.id, ACTION, reason="r", expires_in=10)
    later = agent.approvals.request(run.id, OTHER_ACTION, reason="r", expires_in=100)
    clock.advance(11)
    assert agent.approvals.expire_due() == 1
    assert agent.approvals.get(soon.id).status == "expired"
    assert agent.approvals.wait(later.id, timeout=0).status == "pending"
    clock.advance(100)
    assert agent.approvals.wait(later.id, timeout=0).status == "expired"
    assert agent.approvals.expire_due() == 0


def test_keep_pending_stays_decidable_after_expiry(operator, agent, run, clock):
    approval = agent.approvals.request(
        run.id, ACTION, reason="r", expires_in=5, on_expiry="keep_pending"
    )
    clock.advance(3600)
    assert agent.approvals.expire_due() == 0
    assert agent.approvals.wait(approval.id, timeout=0).status == "pending"
    assert approve(operator, approval).status == "approved"


# ---------------------------------------------------------------- withdraw


def test_withdraw_and_decide_exclude_each_other(operator, agent, run, pending, journal_path):
    withdrawn = agent.approvals.withdraw(pending.id, "no longer needed")
    assert withdrawn.status == "cancelled"
    assert withdrawn.decision_reason == "no longer needed" and withdrawn.decided_by is None
    assert [e.action for e in agent.audit.for_entity(pending.id)] == ["approval.withdrawn"]
    assert agent.runs.get(run.id).status == "running"
    before = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided):
        approve(operator, withdrawn)
    with pytest.raises(errors.InvalidTransition):
        agent.approvals.withdraw(pending.id, "again")
    assert snapshot(journal_path) == before

    other = agent.approvals.request(run.id, OTHER_ACTION, reason="r")
    approve(operator, other)
    with pytest.raises(errors.InvalidTransition):
        agent.approvals.withdraw(other.id, "too late")


# ---------------------------------------------------------------- consume and reserve


def test_consume_reserves_the_effect_once(operator, agent, pending, journal_path):
    approved = approve(operator, pending)
    effect = agent.approvals.consume_and_reserve(approved.id, approved.action_digest, "eff-1")
    assert effect.status == "reserved" and effect.approval_id == approved.id
    consumed = agent.approvals.get(approved.id)
    assert consumed.consumed_effect_key == "eff-1" and consumed.consumed_at is not None
    before = snapshot(journal_path)
    for key in ("eff-1", "eff-2"):
        with pytest.raises(errors.NotConsumable):
            agent.approvals.consume_and_reserve(approved.id, approved.action_digest, key)
        with pytest.raises(errors.NotConsumable):  # the name for the same call
            agent.approvals.consume_approval_and_reserve(approved.id, approved.action_digest, key)
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("state", ["pending", "denied", "expired", "cancelled"])
def test_only_approved_approvals_are_consumable(
    operator, agent, pending, clock, journal_path, state
):
    if state == "denied":
        operator.approvals.decide(pending.id, False, expected_version=1, reason="no")
    elif state == "expired":
        expiring = agent.approvals.request(pending.run_id, OTHER_ACTION, reason="r", expires_in=1)
        clock.advance(2)
        agent.approvals.expire_due()
        pending = expiring
    elif state == "cancelled":
        agent.approvals.withdraw(pending.id, "x")
    assert agent.approvals.get(pending.id).status == state
    before = snapshot(journal_path)
    with pytest.raises(errors.NotConsumable):
        agent.approvals.consume_and_reserve(pending.id, pending.action_digest, "eff-1")
    assert snapshot(journal_path) == before


def test_consume_needs_the_exact_digest(operator, agent, pending, journal_path):
    approved = approve(operator, pending)
    edited = {**ACTION, "args": {"command": "rm -rf /"}}
    before = snapshot(journal_path)
    with pytest.raises(errors.DigestMismatch):
        agent.approvals.consume_and_reserve(approved.id, digest_of(edited), "eff-1")
    assert snapshot(journal_path) == before
    # key order does not change the canonical digest
    reordered = {"args": {"command": "rm -rf build"}, "tool": "shell"}
    assert agent.approvals.consume_and_reserve(approved.id, digest_of(reordered), "eff-1")


def _commit(journal, key, owner="w"):
    journal.effects.reserve(key, tool="t", owner=owner)
    journal.effects.begin(key, owner=owner)
    return journal.effects.commit(key, {"ok": 1}, owner=owner)


@pytest.mark.parametrize(
    ("blocker", "error"),
    [
        ("committed", errors.EffectCommitted),
        ("leased", errors.EffectBusy),
        ("ambiguous", errors.EffectAmbiguous),
    ],
)
def test_refused_reservation_leaves_approval_unconsumed(
    operator, agent, pending, journal_path, blocker, error
):
    approved = approve(operator, pending)
    if blocker == "committed":
        _commit(agent, "eff-1")
    elif blocker == "leased":
        agent.effects.reserve("eff-1", tool="t", owner="someone-else", lease_seconds=300)
    else:
        agent.effects.reserve("eff-1", tool="t", owner="w")
        agent.effects.mark_ambiguous("eff-1", "timeout", owner="w")
    before = snapshot(journal_path)
    with pytest.raises(error):
        agent.approvals.consume_and_reserve(approved.id, approved.action_digest, "eff-1")
    assert snapshot(journal_path) == before
    assert agent.approvals.get(approved.id).consumed_at is None
    assert agent.approvals.consume_and_reserve(approved.id, approved.action_digest, "eff-2")


def test_lapsed_lease_turns_ambiguous_and_approval_stays_unconsumed(
    operator, agent, pending, clock
):
    approved = approve(operator, pending)
    agent.effects.reserve("eff-1", tool="t", owner="crashed", lease_seconds=5)
    clock.advance(6)
    with pytest.raises(errors.EffectAmbiguous):
        agent.approvals.consume_and_reserve(approved.id, approved.action_digest, "eff-1")
    assert agent.effects.get("eff-1").status == "ambiguous"  # the write survived the refusal
    assert [a.action for a in agent.audit.for_entity("eff-1")] == ["effect.ambiguous"]
    assert agent.approvals.get(approved.id).consumed_at is None


# ---------------------------------------------------------------- rules


def test_allow_rule_decides_at_once_and_is_recorded(operator, agent, run, journal_path):
    rule = operator.approvals.add_rule("allow", "shell", run_id=run.id)
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    assert approval.status == "approved" and approval.rule_id == rule.id
    assert approval.decided_by == f"rule:{rule.id}"
    [decision] = agent.approvals.decisions(approval.id)
    assert decision.source == "rule"
    assert [a.action for a in agent.audit.for_entity(approval.id)] == ["approval.auto_approved"]
    assert agent.runs.get(run.id).status == "running"
    assert agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "e")


def test_deny_beats_allow_and_prompt_asks(operator, agent, run):
    operator.approvals.add_rule("allow", "*", run_id=run.id)
    operator.approvals.add_rule("deny", "shell", resource_pattern="rm *", run_id=run.id)
    operator.approvals.add_rule("prompt", "http.*", run_id=run.id)
    assert agent.approvals.request(run.id, ACTION, reason="r").status == "denied"
    assert agent.approvals.request(run.id, OTHER_ACTION, reason="r").status == "pending"
    fine = {"tool": "fs.read", "args": {"path": "/tmp/x"}}
    assert agent.approvals.request(run.id, fine, reason="r").status == "approved"
    assert agent.approvals.match_rule(ACTION, run.id).effect == "deny"


def test_always_allow_in_run_creates_a_rule_scoped_to_that_run(
    operator, agent, run, start_run, pending, journal_path
):
    before = row_counts(journal_path)
    decided = approve(operator, pending, scope="run")
    changed = delta(before, row_counts(journal_path))
    assert (
        changed["decisions"],
        changed["audit"],
        changed["events"],
        changed["approval_rules"],
    ) == (1, 1, 1, 1)
    rule = operator.approvals.rule(decided.rule_id)
    assert (rule.effect, rule.scope, rule.run_id) == ("allow", "run", run.id)
    assert agent.approvals.request(run.id, ACTION, reason="again").status == "approved"
    other_run = start_run()
    assert agent.approvals.request(other_run.id, ACTION, reason="r").status == "pending"


def test_space_rule_covers_runs_in_the_same_space(operator, agent, start_run, pending):
    decided = approve(operator, pending, scope="space")
    assert operator.approvals.rule(decided.rule_id).scope == "space"
    same_space = start_run()
    other_space = start_run(space="elsewhere")
    assert agent.approvals.request(same_space.id, ACTION, reason="r").status == "approved"
    assert agent.approvals.request(other_space.id, ACTION, reason="r").status == "pending"


def test_revoked_and_expired_rules_stop_matching(operator, agent, run, clock, journal_path):
    rule = operator.approvals.add_rule("allow", "shell", run_id=run.id)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.approvals.revoke_rule(rule.id, expected_version=rule.version + 1)
    assert snapshot(journal_path) == before
    revoked = operator.approvals.revoke_rule(rule.id, expected_version=rule.version)
    assert not revoked.active and operator.approvals.rules() == []
    assert len(operator.approvals.rules(active_only=False)) == 1
    with pytest.raises(errors.InvalidTransition):
        operator.approvals.revoke_rule(rule.id, expected_version=revoked.version)
    assert agent.approvals.request(run.id, ACTION, reason="r").status == "pending"
    operator.approvals.add_rule("allow", "http.post", run_id=run.id, expires_at=clock() + 10)
    assert agent.approvals.match_rule(OTHER_ACTION, run.id) is not None
    clock.advance(11)
    assert agent.approvals.match_rule(OTHER_ACTION, run.id) is None


# ---------------------------------------------------------------- bulk and reads


def test_bulk_decide_gives_a_result_per_item(operator, agent, run, journal_path):
    items = [agent.approvals.request(run.id, {"tool": f"t{i}"}, reason="r") for i in range(4)]
    approve(operator, items[1])
    results = operator.approvals.bulk_decide(
        [
            (items[0].id, 1),
            (items[1].id, 1),
            (items[2].id, 99),
            (items[3].id, 1),
            ("apr_missing", 1),
        ],
        True,
        request_id="bulk-1",
    )
    assert [(r.ok, r.error_type) for r in results] == [
        (True, None),
        (False, "AlreadyDecided"),
        (False, "StaleVersion"),
        (True, None),
        (False, "NotFound"),
    ]
    statuses = [operator.approvals.get(a.id).status for a in items]
    assert statuses == ["approved", "approved", "pending", "approved"]
    before = snapshot(journal_path)
    again = operator.approvals.bulk_decide(
        [(items[0].id, 1), (items[3].id, 1)], True, request_id="bulk-1"
    )
    assert all(r.ok for r in again)
    assert snapshot(journal_path) == before


def test_similar_lists_past_decisions_on_the_same_action(operator, agent, run, clock):
    first = agent.approvals.request(run.id, ACTION, reason="1")
    approve(operator, first)
    clock.advance(1)
    agent.approvals.request(run.id, OTHER_ACTION, reason="2")
    current = agent.approvals.request(run.id, {**ACTION, "args": {"command": "ls"}}, reason="3")
    assert [a.id for a in operator.approvals.similar(current.id)] == [first.id]
    assert next(a.id for a in operator.approvals.for_run(run.id)) == first.id
    with pytest.raises(errors.NotFound):
        operator.approvals.get("apr_missing")
