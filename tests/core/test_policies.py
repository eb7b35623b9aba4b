"""Approval policies (issue 35) on both stores: groups in the journal, a two-person quorum,
a sequence (ops, then finance), a deny by a required approver, and the store's refusals of
what a same-user process tries by hand (raw SQL on the file; psycopg as the journal's owner
on a server): a partly approved request marked approved, a quorum of one person, a step by
the requester, a step out of sequence. What verify names when the triggers are gone."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core import Actor, errors
from proctor.core.audit.verify import verify
from proctor.core.policies.models import PolicyDraft, PolicyStage

from .helpers import raw, snapshot

PAY = {"tool": "pay", "args": {"account": "acme", "amount": 9000}}


@pytest.fixture
def people(open_journal):
    """Operators alice (ops), bob (ops), carol (finance) and dave (in no group)."""
    names = ("alice", "bob", "carol", "dave")
    journals = {n: open_journal(Actor.operator(n)) for n in names}
    admin = journals["alice"]
    admin.policies.add_member("ops", "alice", reason="on call")
    admin.policies.add_member("ops", "bob")
    admin.policies.add_member("finance", "carol")
    return journals


def two_of_ops(journal):
    return journal.policies.add(
        PolicyDraft(
            name="two of ops", action_pattern="pay", stages=[PolicyStage(groups=["ops"], need=2)]
        )
    )


def ops_then_finance(journal):
    return journal.policies.add(
        PolicyDraft(
            name="ops then finance",
            action_pattern="pay",
            mode="sequence",
            stages=[PolicyStage(groups=["ops"], need=1), PolicyStage(groups=["finance"], need=1)],
        )
    )


def approve(journal, approval_id, reason=None):
    current = journal.approvals.get(approval_id)
    return journal.approvals.decide(
        approval_id, True, expected_version=current.version, reason=reason
    )


def test_groups_are_kept_in_the_journal_as_decisions(people):
    alice = people["alice"]
    assert alice.policies.groups() == {"finance": ["carol"], "ops": ["alice", "bob"]}
    alice.policies.remove_member("ops", "bob", reason="left the team")
    assert alice.policies.groups()["ops"] == ["alice"]
    with pytest.raises(errors.InvalidTransition):
        alice.policies.remove_member("ops", "bob")
    kinds = [d.target_kind for d in alice.approvals.decisions("ops")]
    assert kinds == ["group", "group", "group"]


def test_two_of_ops_waits_for_the_second_person(people, agent, run):
    policy = two_of_ops(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 7")
    first = approve(people["alice"], asked.id, reason="looks right")
    assert first.status == "pending"
    progress = people["bob"].policies.progress(asked.id)
    assert progress.policy.id == policy.id
    assert progress.summary() == "1 of 2 approvals; waiting for ops"
    assert [(s.operator, s.reason) for s in progress.steps] == [("alice", "looks right")]
    # the agent sees only the final decision
    assert agent.approvals.get(asked.id).status == "pending"
    with pytest.raises(errors.NotConsumable):
        agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "pay-7")
    # the same person cannot approve twice; one outside the group cannot approve
    with pytest.raises(errors.AlreadyDecided):
        approve(people["alice"], asked.id)
    with pytest.raises(errors.NotAllowed):
        approve(people["dave"], asked.id)
    done = approve(people["bob"], asked.id)
    assert done.status == "approved" and done.decided_by == "operator:bob"
    agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "pay-7")
    assert verify(people["alice"]).ok


def test_a_sequence_goes_in_order_and_a_deny_denies(people, agent, run):
    ops_then_finance(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 8")
    with pytest.raises(errors.NotAllowed):
        approve(people["carol"], asked.id)  # finance before ops
    approve(people["bob"], asked.id)
    half = people["bob"].policies.progress(asked.id)
    assert half.summary() == "1 of 2 approvals; waiting for finance"
    assert half.still_needed() == "1 of finance"
    done = approve(people["carol"], asked.id)
    assert done.status == "approved"

    again = agent.approvals.request(run.id, PAY, reason="invoice 9")
    current = people["carol"].approvals.get(again.id)
    denied = people["carol"].approvals.decide(
        again.id, False, expected_version=current.version, reason="no budget"
    )
    assert denied.status == "denied"
    assert verify(people["alice"]).ok


def test_an_allow_rule_does_not_decide_a_request_under_a_policy(people, agent, run):
    from proctor.core.models import RuleDraft

    two_of_ops(people["alice"])
    people["dave"].approvals.make_rule(
        RuleDraft(
            effect="allow",
            action_pattern="pay",
            resource_pattern="*",
            scope="project",
            project="proj",
        )
    )
    asked = agent.approvals.request(run.id, PAY, reason="invoice 10")
    assert asked.status == "pending"
    with pytest.raises(errors.NotAllowed):
        people["dave"].approvals.approve_edited(
            asked.id,
            {"tool": "pay", "args": {"account": "acme", "amount": 1}},
            expected_version=asked.version,
        )


def test_the_requester_is_never_an_approver(people, open_journal, run, agent):
    two_of_ops(people["alice"])
    people["alice"].policies.add_member("ops", "agent-1")
    asked = agent.approvals.request(run.id, PAY, reason="invoice 11")
    as_operator = open_journal(Actor.operator("agent-1"))
    with pytest.raises(errors.NotAllowed):
        approve(as_operator, asked.id)


# ---------------------------------------------------------------- by hand


def refused(journal_path, sql: str, params: tuple = (), match: str | None = None) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError, match=match):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


def step_sql(
    journal_path, approval_id, operator, *, stage=0, group="ops", approve=1, decision=None
):
    with raw(journal_path) as conn:
        row = conn.execute(
            "SELECT policy_id FROM policy_bindings WHERE approval_id = ?", (approval_id,)
        ).fetchone()
        if decision is None:
            decision = conn.execute(
                "SELECT id FROM decisions WHERE target_kind = 'approval_step' AND target_id = ?",
                (approval_id,),
            ).fetchone()[0]
    return (
        "INSERT INTO approval_steps (id, approval_id, policy_id, stage, group_name, operator, "
        "approve, reason, decision_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 1.0)",
        (f"stp_{operator}_{stage}", approval_id, row[0], stage, group, operator, approve, decision),
    )


@pytest.fixture
def half(people, agent, run):
    """Two of ops; alice approved, bob has not."""
    two_of_ops(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 12")
    approve(people["alice"], asked.id)
    return asked


def test_a_partly_approved_request_cannot_be_marked_approved(half, journal_path, agent):
    refused(
        journal_path,
        "UPDATE approvals SET status = 'approved', decided_by = 'operator:alice', "
        "decided_at = 2.0, version = version + 1 WHERE id = ?",
        (half.id,),
        match="only when its policy is satisfied",
    )
    assert agent.approvals.get(half.id).status == "pending"


def test_a_quorum_cannot_be_met_by_one_person_twice(half, journal_path):
    sql, params = step_sql(journal_path, half.id, "alice")
    refused(journal_path, sql, params, match="one step on a request|that key exists|UNIQUE|unique")


def test_a_step_by_the_requester_or_an_outsider_is_refused(half, journal_path, people):
    people["alice"].policies.add_member("ops", "agent-1")
    for who in ("agent-1", "dave"):
        sql, params = step_sql(journal_path, half.id, who)
        refused(journal_path, sql, params)


def test_a_step_out_of_sequence_is_refused(people, agent, run, journal_path):
    ops_then_finance(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 13")
    with pytest.raises(errors.NotAllowed):
        approve(people["carol"], asked.id)
    # a decision row for the step, so only the order is wrong
    people["alice"].approvals.decide  # noqa: B018 (the service refuses it; now by hand)
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, source, "
            "reason, created_at, digest) VALUES ('dec_forged', 'approval_step', ?, ?, '{}', "
            "'operator:carol', 'cli', NULL, 1.0, 'x')",
            (asked.id, run.id),
        )
    sql, params = step_sql(
        journal_path, asked.id, "carol", stage=1, group="finance", decision="dec_forged"
    )
    refused(journal_path, sql, params, match="after every earlier stage is complete")


@pytest.mark.sqlite_only
def test_verify_names_a_quorum_forced_past_dropped_triggers(half, journal_path, people):
    with raw(journal_path) as conn:
        conn.execute("DROP TRIGGER trg_approvals_policy")
        conn.execute(
            "UPDATE approvals SET status = 'approved', decided_by = 'operator:alice', "
            "decided_at = 2.0, version = version + 1 WHERE id = ?",
            (half.id,),
        )
    report = verify(people["bob"])
    whats = {p.what for p in report.problems}
    assert "trigger missing" in whats
    assert "approved short of its policy" in whats


# ---------------------------------------------------------------- signed


def test_every_step_and_group_change_is_signed_and_a_trusting_agent_acts(
    open_journal, tmp_path, run
):
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    keys = {n: OperatorKey.generate(n) for n in ("alice", "bob")}
    trust = tmp_path / "trusted.json"
    trust.write_text(
        json.dumps(trust_file([{"name": n, "public_key": k.public_key} for n, k in keys.items()]))
    )
    alice, bob = (open_journal(Actor.operator(n), signer=keys[n]) for n in ("alice", "bob"))
    alice.policies.add_member("ops", "alice")
    alice.policies.add_member("ops", "bob")
    two_of_ops(alice)
    trusting = open_journal(Actor.agent("agent-1"), trust=trust)
    asked = trusting.approvals.request(run.id, PAY, reason="invoice 14")
    approve(alice, asked.id, reason="fine")
    assert trusting.approvals.wait(asked.id, timeout=0).status == "pending"
    approve(bob, asked.id)
    assert trusting.approvals.wait(asked.id, timeout=0).status == "approved"
    trusting.approvals.consume_and_reserve(asked.id, asked.action_digest, "pay-14")
    report = verify(alice, trust=trust)
    assert report.ok, report.problems
    assert report.signatures["unsigned"] == 0 and report.signatures["invalid"] == 0


def test_a_trusting_agent_refuses_a_quorum_met_through_a_forged_membership(
    open_journal, tmp_path, run, journal_path
):
    """dave holds a trusted key but is not in ops; a same-user process puts him in ops by
    hand (a group change no one signed). His approval through the API is genuinely his, and
    completes the quorum as the service sees it: the trusting agent still refuses to act."""
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    keys = {n: OperatorKey.generate(n) for n in ("alice", "dave")}
    trust = tmp_path / "trusted.json"
    trust.write_text(
        json.dumps(trust_file([{"name": n, "public_key": k.public_key} for n, k in keys.items()]))
    )
    alice, dave = (open_journal(Actor.operator(n), signer=keys[n]) for n in ("alice", "dave"))
    alice.policies.add_member("ops", "alice")
    two_of_ops(alice)
    trusting = open_journal(Actor.agent("agent-1"), trust=trust)
    asked = trusting.approvals.request(run.id, PAY, reason="invoice 15")
    approve(alice, asked.id)
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO group_changes (id, group_name, operator, seq, change, decision_id, "
            "actor, created_at) VALUES ('grp_forged', 'ops', 'dave', 1, 'add', 'dec_forged', "
            "'operator:alice', 1.0)"
        )
    assert approve(dave, asked.id).status == "approved"
    with pytest.raises(errors.DecisionUnverified, match="put dave in ops"):
        trusting.approvals.wait(asked.id, timeout=0)
    with pytest.raises(errors.DecisionUnverified):
        trusting.approvals.consume_and_reserve(asked.id, asked.action_digest, "pay-15")
    assert "group change without its decision" in {p.what for p in verify(alice).problems}


# ---------------------------------------------------------------- delegation


def test_a_delegate_takes_the_away_members_part_for_the_period(people, agent, run, clock):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    two_of_ops(alice)
    handed = bob.policies.delegate("carol", until=clock() + 86400, reason="away until Monday")
    assert [d.delegate for d in alice.policies.delegations()] == ["carol"] and handed.id
    asked = agent.approvals.request(run.id, PAY, reason="invoice 16")
    approve(alice, asked.id)
    done = approve(carol, asked.id, reason="for bob")
    assert done.status == "approved"
    steps = alice.policies.progress(asked.id).steps
    assert [(s.operator, s.for_operator) for s in steps] == [("alice", None), ("carol", "bob")]
    assert verify(alice).ok
    # bob's part was taken: he cannot add a step of his own to another request's count twice
    again = agent.approvals.request(run.id, PAY, reason="invoice 17")
    approve(carol, again.id)
    with pytest.raises(errors.AlreadyDecided, match="your delegate"):
        approve(bob, again.id)
    # after the period carol has no part
    later = agent.approvals.request(run.id, PAY, reason="invoice 18")
    clock.advance(86400 + 1)
    with pytest.raises(errors.NotAllowed):
        approve(carol, later.id)


def test_a_step_for_another_without_their_delegation_is_refused(half, journal_path):
    sql, params = step_sql(journal_path, half.id, "dave")
    sql = sql.replace("operator, approve", "operator, for_operator, approve").replace(
        "?, ?, NULL", "?, ?, ?, NULL"
    )
    params = (*params[:6], "bob", *params[6:])
    refused(journal_path, sql, params, match="only by their delegate")


# ---------------------------------------------------------------- escalation


def escalating(journal):
    return journal.policies.add(
        PolicyDraft(
            name="two of ops, then managers",
            action_pattern="pay",
            stages=[PolicyStage(groups=["ops"], need=2)],
            escalate_after=3600,
            escalate_to="managers",
        )
    )


def test_after_an_hour_undecided_the_request_is_routed_to_managers(people, agent, run, clock):
    alice, carol = people["alice"], people["carol"]
    alice.policies.add_member("managers", "carol")
    policy = escalating(alice)
    assert policy.needs() == "2 of ops; after 1h also managers"
    asked = agent.approvals.request(run.id, PAY, reason="invoice 19")
    approve(alice, asked.id)
    with pytest.raises(errors.NotAllowed):
        approve(carol, asked.id)  # finance's carol is a manager, but not yet
    assert alice.policies.progress(asked.id).waiting_for == ["ops"]
    clock.advance(3600)
    assert alice.policies.progress(asked.id).summary() == (
        "1 of 2 approvals; waiting for ops or managers"
    )
    done = approve(carol, asked.id)
    assert done.status == "approved"
    assert [s.group for s in alice.policies.progress(asked.id).steps] == ["ops", "managers"]
    assert verify(alice).ok


def test_a_step_for_the_escalation_group_before_its_time_is_refused(
    people, agent, run, journal_path
):
    people["alice"].policies.add_member("managers", "carol")
    escalating(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 20")
    approve(people["alice"], asked.id)
    sql, params = step_sql(journal_path, asked.id, "carol", group="managers")
    with raw(journal_path) as conn:
        filed = conn.execute(
            "SELECT created_at FROM approvals WHERE id = ?", (asked.id,)
        ).fetchone()
    sql = sql.replace("NULL, ?, 1.0)", "NULL, ?, ?)")
    refused(journal_path, sql, (*params, filed[0] + 60), match="group of its stage")


def test_a_desks_undo_window_does_not_hold_a_step(people, agent, run):
    """The desk passes its Undo window as ``hold``: under a policy a step is final (there is
    no decision to undo until the last one, and that one is not held either)."""
    two_of_ops(people["alice"])
    asked = agent.approvals.request(run.id, PAY, reason="invoice 21")
    for who in ("alice", "bob"):
        current = people[who].approvals.get(asked.id)
        done = people[who].approvals.decide(
            asked.id, True, expected_version=current.version, hold=5
        )
    assert done.status == "approved" and done.hold_until is None
    with pytest.raises(errors.ValidationError):
        people["alice"].approvals.decide(
            agent.approvals.request(run.id, PAY, reason="invoice 22").id,
            True,
            expected_version=1,
            scope="run",
        )
