"""An escalation's deadline and a delegation ended early (issue 35, 0018e), on both stores:
a policy that denies at its deadline denies a request still undecided then (a decision with
the policy as decider; the agent sees denied), one that waits lets it wait; the store
refuses a step or an approval past a deny deadline, and a policy's denial that is not its
own; a delegator ends a delegation (a decision, audited) and the delegate's later step is not
theirs; verify names what a same-user process forces past dropped triggers."""

from __future__ import annotations

import pytest

from proctor.core import Actor, errors
from proctor.core.audit.verify import verify
from proctor.core.policies.models import PolicyDraft, PolicyStage

from .helpers import raw
from .test_policies import PAY, approve, refused, step_sql, two_of_ops

HOUR = 3600.0


@pytest.fixture
def people(open_journal):
    """Operators alice (ops), bob (ops), carol (finance) and dave (in no group)."""
    journals = {n: open_journal(Actor.operator(n)) for n in ("alice", "bob", "carol", "dave")}
    journals["alice"].policies.add_member("ops", "alice", reason="on call")
    journals["alice"].policies.add_member("ops", "bob")
    journals["alice"].policies.add_member("finance", "carol")
    return journals


def denying(journal, at_deadline="deny", deadline=8 * HOUR):
    return journal.policies.add(
        PolicyDraft(
            name="two of ops, then managers, denied at 8h",
            action_pattern="pay",
            stages=[PolicyStage(groups=["ops"], need=2)],
            escalate_after=2 * HOUR,
            escalate_to="managers",
            at_deadline=at_deadline,
            deadline=deadline if at_deadline == "deny" else None,
        )
    )


def test_a_deadline_needs_an_escalation_and_comes_after_it(people):
    alice = people["alice"]
    base = dict(name="p", action_pattern="pay", stages=[PolicyStage(groups=["ops"], need=1)])
    for bad in (
        dict(at_deadline="deny", deadline=HOUR),  # no escalation
        dict(escalate_after=2 * HOUR, escalate_to="managers", at_deadline="deny"),  # no deadline
        dict(escalate_after=2 * HOUR, escalate_to="managers", at_deadline="deny", deadline=HOUR),
        dict(escalate_after=2 * HOUR, escalate_to="managers", deadline=8 * HOUR),  # wait
    ):
        with pytest.raises(errors.ValidationError):
            alice.policies.add(PolicyDraft(**base, **bad))


def test_at_the_deadline_the_policy_denies_and_the_agent_sees_denied(people, agent, run, clock):
    alice = people["alice"]
    alice.policies.add_member("managers", "carol")
    policy = denying(alice)
    assert policy.needs() == "2 of ops; after 2h also managers; denied after 8h"
    asked = agent.approvals.request(run.id, PAY, reason="invoice 30")
    approve(alice, asked.id)
    assert alice.policies.progress(asked.id).waiting_for == ["ops"]
    clock.advance(2 * HOUR)
    assert alice.policies.progress(asked.id).waiting_for == ["ops", "managers"]
    clock.advance(6 * HOUR)
    # a late step is refused with a reason, before anyone sweeps
    with pytest.raises(errors.NotAllowed, match="deadline"):
        approve(people["carol"], asked.id)
    seen = agent.approvals.wait(asked.id, timeout=0)  # the agent's wait applies the deadline
    assert seen.status == "denied" and seen.decided_by == f"policy:{policy.id}"
    [decision] = [d for d in alice.approvals.decisions(asked.id) if d.target_kind == "approval"]
    assert decision.actor == f"policy:{policy.id}" and decision.source == "deadline"
    progress = alice.policies.progress(asked.id)
    assert progress.denied and progress.waiting_for == []
    assert progress.summary() == "denied at its policy's deadline"
    with pytest.raises(errors.NotConsumable):
        agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "pay-30")
    assert verify(alice).ok, verify(alice).problems


def test_the_desks_sweep_denies_too_and_wait_keeps_waiting(people, agent, run, clock):
    alice = people["alice"]
    denying(alice)
    first = agent.approvals.request(run.id, PAY, reason="invoice 31")
    clock.advance(8 * HOUR)
    assert alice.approvals.expire_due() == 1
    assert alice.approvals.get(first.id).status == "denied"
    # a policy that waits: past any deadline the request still waits, until its own expiry
    alice.policies.revoke(alice.policies.list()[0].id, "replaced")
    denying(alice, at_deadline="wait")
    second = agent.approvals.request(run.id, PAY, reason="invoice 32", expires_in=30 * HOUR)
    clock.advance(20 * HOUR)
    assert alice.approvals.expire_due() == 0
    assert agent.approvals.wait(second.id, timeout=0).status == "pending"
    clock.advance(10 * HOUR)
    assert agent.approvals.wait(second.id, timeout=0).status == "expired"


def test_a_trusting_agent_accepts_the_policys_denial(open_journal, people, run, clock, tmp_path):
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("alice")
    trust = tmp_path / "trusted.json"
    trust.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    denying(people["alice"])
    trusting = open_journal(Actor.agent("agent-1"), trust=trust)
    asked = trusting.approvals.request(run.id, PAY, reason="invoice 33")
    clock.advance(8 * HOUR)
    assert trusting.approvals.wait(asked.id, timeout=0).status == "denied"


# ---------------------------------------------------------------- by hand


def test_a_step_or_an_approval_past_a_deny_deadline_is_refused(
    people, agent, run, clock, journal_path
):
    alice = people["alice"]
    denying(alice)
    asked = agent.approvals.request(run.id, PAY, reason="invoice 34")
    approve(alice, asked.id)
    with raw(journal_path) as conn:
        filed = conn.execute(
            "SELECT created_at FROM approvals WHERE id = ?", (asked.id,)
        ).fetchone()[0]
    sql, params = step_sql(journal_path, asked.id, "bob")
    late = filed + 8 * HOUR + 1
    refused(
        journal_path,
        sql.replace("NULL, ?, 1.0)", "NULL, ?, ?)"),
        (*params, late),
        match="deadline",
    )
    # the same step one field changed (its time within the deadline) goes in: then the
    # approval's move, dated past the deadline, is refused
    with raw(journal_path) as conn:
        conn.execute(sql.replace("NULL, ?, 1.0)", "NULL, ?, ?)"), (*params, filed + 60))
    refused(
        journal_path,
        "UPDATE approvals SET status = 'approved', decided_by = 'operator:bob', "
        "decided_at = ?, version = version + 1 WHERE id = ?",
        (late, asked.id),
        match="deadline",
    )


def test_a_policys_denial_is_only_its_own_at_its_deadline(people, agent, run, journal_path):
    policy = denying(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 35")
    with raw(journal_path) as conn:
        filed = conn.execute(
            "SELECT created_at FROM approvals WHERE id = ?", (asked.id,)
        ).fetchone()[0]
    update = (
        "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, "
        "version = version + 1 WHERE id = ?"
    )
    early = filed + HOUR
    refused(journal_path, update, ("denied", f"policy:{policy.id}", early, asked.id))
    refused(journal_path, update, ("approved", f"policy:{policy.id}", filed + 9 * HOUR, asked.id))
    refused(journal_path, update, ("denied", "policy:pol_other", filed + 9 * HOUR, asked.id))


@pytest.mark.sqlite_only
def test_verify_names_an_approval_forced_past_the_deadline(people, agent, run, clock, journal_path):
    alice = people["alice"]
    denying(alice)
    asked = agent.approvals.request(run.id, PAY, reason="invoice 36")
    approve(alice, asked.id)
    clock.advance(8 * HOUR + 1)
    with raw(journal_path) as conn:
        conn.execute("DROP TRIGGER trg_approval_steps_deadline")
        conn.execute("DROP TRIGGER trg_approvals_deadline")
        filed = conn.execute(
            "SELECT created_at FROM approvals WHERE id = ?", (asked.id,)
        ).fetchone()[0]
    sql, params = step_sql(journal_path, asked.id, "bob")
    late = filed + 8 * HOUR + 1
    with raw(journal_path) as conn:
        conn.execute(sql.replace("NULL, ?, 1.0)", "NULL, ?, ?)"), (*params, late))
        conn.execute(
            "UPDATE approvals SET status = 'approved', decided_by = 'operator:bob', "
            "decided_at = ?, version = version + 1 WHERE id = ?",
            (late, asked.id),
        )
    whats = {p.what for p in verify(alice).problems}
    assert {"trigger missing", "step after its policy's deadline"} <= whats
    assert "approved after its policy's deadline" in whats


# ---------------------------------------------------------------- ending a delegation


def test_a_delegator_ends_a_delegation_and_the_delegates_steps_stop_counting(
    people, agent, run, clock
):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    two_of_ops(alice)
    handed = bob.policies.delegate("carol", until=clock() + 86400, reason="away")
    with pytest.raises(errors.NotAllowed, match="only they end it"):
        carol.policies.end_delegation(handed.id, reason="not mine to end")
    with pytest.raises(errors.ValidationError):
        bob.policies.end_delegation(handed.id, reason=" ")
    clock.advance(60)
    ended = bob.policies.end_delegation(handed.id, reason="back early")
    assert ended.ended_at == clock() and not ended.running(clock())
    assert bob.policies.delegations() == []
    with pytest.raises(errors.InvalidTransition):
        bob.policies.end_delegation(handed.id, reason="again")
    kinds = [(d.target_kind, d.actor) for d in bob.approvals.decisions(handed.id)]
    assert kinds == [("delegation", "operator:bob")]
    asked = agent.approvals.request(run.id, PAY, reason="invoice 37")
    approve(alice, asked.id)
    with pytest.raises(errors.NotAllowed):
        approve(carol, asked.id)  # carol is in no group of her own, and bob's part is back
    assert approve(bob, asked.id).status == "approved"
    assert verify(alice).ok, verify(alice).problems


def test_a_step_under_an_ended_delegation_is_refused_by_hand(
    people, agent, run, clock, journal_path
):
    alice, bob = people["alice"], people["bob"]
    two_of_ops(alice)
    handed = bob.policies.delegate("carol", until=clock() + 86400, reason="away")
    asked = agent.approvals.request(run.id, PAY, reason="invoice 38")
    approve(alice, asked.id)
    clock.advance(60)
    bob.policies.end_delegation(handed.id, reason="back early")
    sql, params = step_sql(journal_path, asked.id, "carol")
    sql = sql.replace("operator, approve", "operator, for_operator, approve").replace(
        "?, ?, NULL, ?, 1.0)", "?, ?, ?, NULL, ?, ?)"
    )
    after_end = (*params[:6], "bob", *params[6:], clock() + 1)
    refused(journal_path, sql, after_end, match="only by their delegate")
    # an end by someone else than the delegator, or without its decision, is refused too
    refused(
        journal_path,
        "INSERT INTO delegation_ends (delegation_id, reason, decision_id, ended_by, ended_at) "
        "VALUES (?, 'x', 'dec_none', 'operator:carol', 1.0)",
        (handed.id,),
    )


@pytest.mark.sqlite_only
def test_verify_names_a_step_under_an_ended_delegation(people, agent, run, clock, journal_path):
    alice, bob = people["alice"], people["bob"]
    two_of_ops(alice)
    handed = bob.policies.delegate("carol", until=clock() + 86400, reason="away")
    asked = agent.approvals.request(run.id, PAY, reason="invoice 39")
    clock.advance(60)
    bob.policies.end_delegation(handed.id, reason="back early")
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, source, "
            "reason, created_at, digest) VALUES ('dec_forged', 'approval_step', ?, ?, ?, "
            "'operator:carol', 'cli', NULL, ?, 'x')",
            (asked.id, run.id, "{}", clock() + 1),
        )
        conn.execute("DROP TRIGGER trg_approval_steps_delegated")
    sql, params = step_sql(journal_path, asked.id, "carol", decision="dec_forged")
    sql = sql.replace("operator, approve", "operator, for_operator, approve").replace(
        "?, ?, NULL, ?, 1.0)", "?, ?, ?, NULL, ?, ?)"
    )
    with raw(journal_path) as conn:
        conn.execute(sql, (*params[:6], "bob", *params[6:], clock() + 1))
    whats = {p.what for p in verify(alice).problems}
    assert "step under an ended delegation" in whats


def test_an_end_is_signed_by_the_delegator(open_journal, run, clock, tmp_path):
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("bob")
    trust = tmp_path / "trusted.json"
    trust.write_text(json.dumps(trust_file([{"name": "bob", "public_key": key.public_key}])))
    bob = open_journal(Actor.operator("bob"), signer=key)
    handed = bob.policies.delegate("carol", until=clock() + 86400, reason="away")
    bob.policies.end_delegation(handed.id, reason="back early")
    report = verify(bob, trust=trust)
    assert report.ok, report.problems
    assert report.signatures["signed"] == 2 and report.signatures["invalid"] == 0


def test_0018e_installs_what_the_head_builds():
    """0018e's frozen triggers are the ones core/storage/deadline_sql.py and policy_sql.py
    build now (a later change to them needs a revision of its own)."""
    from importlib import import_module

    from proctor.core.storage import deadline_sql, policy_sql

    frozen = import_module("proctor.core.storage.migrations.versions.0018e_escalation_deadline")
    replaced = frozen.REPLACED
    assert {
        **deadline_sql.sqlite_sql(),
        **{n: policy_sql.sqlite_sql()[n] for n in replaced},
    } == frozen.SQLITE
    assert {
        **deadline_sql.server_sql(),
        **{n: policy_sql.server_sql()[n] for n in replaced},
    } == frozen.SERVER
