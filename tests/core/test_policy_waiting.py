"""The desk's side of approval policies, in the core, on both stores: "waiting for me" and
"waiting for my groups" (a delegate included, a person who stepped not), a row's "1 of 2",
why an operator cannot approve, and "assign to me" — a signed decision with its audit row
and an ``assignments`` row in one transaction, which a same-user process cannot forge by
hand (the store refuses a row without its decision; verify names one put past a dropped
trigger)."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core import Actor, errors
from proctor.core.audit.verify import verify
from proctor.core.models import InboxFilter
from proctor.core.policies.models import PolicyDraft, PolicyStage

from .helpers import raw, snapshot

PAY = {"tool": "pay", "args": {"account": "acme", "amount": 9000}}
DAY = 86400.0


@pytest.fixture
def people(open_journal):
    """Operators alice and bob (ops), carol (finance), dave (in no group)."""
    journals = {n: open_journal(Actor.operator(n)) for n in ("alice", "bob", "carol", "dave")}
    admin = journals["alice"]
    admin.policies.add_member("ops", "alice")
    admin.policies.add_member("ops", "bob")
    admin.policies.add_member("finance", "carol")
    admin.policies.add(
        PolicyDraft(
            name="ops then finance",
            action_pattern="pay",
            mode="sequence",
            stages=[PolicyStage(groups=["ops"], need=2), PolicyStage(groups=["finance"], need=1)],
        )
    )
    return journals


def approve(journal, approval_id, reason=None):
    current = journal.approvals.get(approval_id)
    return journal.approvals.decide(
        approval_id, True, expected_version=current.version, reason=reason
    )


def ids(journal, **view) -> set[str]:
    return {i.id for i in journal.inbox.list(InboxFilter(**view)).items}


def test_waiting_for_me_follows_the_stage_and_each_persons_step(people, agent, run):
    asked = agent.approvals.request(run.id, PAY, reason="invoice 1")
    plain = agent.approvals.request(run.id, {"tool": "read", "args": {}}, reason="no policy")
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    assert ids(alice, waiting_for="alice") == {asked.id}
    assert ids(carol, waiting_for="carol") == set()  # finance's stage is not yet
    assert ids(carol, for_groups_of="carol") == set()
    row = next(i for i in alice.inbox.list().items if i.id == asked.id)
    assert row.progress == "0 of 3"
    assert next(i for i in alice.inbox.list().items if i.id == plain.id).progress is None
    approve(alice, asked.id, reason="invoice checked")
    assert ids(alice, waiting_for="alice") == set()  # she stepped
    assert ids(alice, for_groups_of="alice") == {asked.id}  # ops still has to
    assert ids(bob, waiting_for="bob") == {asked.id}
    assert "already approved" in (alice.policies.why_not(asked.id) or "")
    assert "waits for ops" in (carol.policies.why_not(asked.id) or "")
    assert bob.policies.why_not(asked.id) is None
    assert bob.policies.why_not(plain.id) is None  # no policy: first writer wins
    [row] = bob.inbox.pick(None, [asked.id])
    assert row.progress == "1 of 3"
    approve(bob, asked.id)
    assert ids(bob, waiting_for="bob") == set()
    assert ids(carol, waiting_for="carol") == {asked.id}
    assert ids(carol, waiting_for="carol", kinds=frozenset({"question"})) == set()
    assert carol.inbox.count(InboxFilter(waiting_for="carol")) == 1
    approve(carol, asked.id)
    assert ids(carol, for_groups_of="carol") == set()  # decided: not in the inbox
    assert agent.approvals.wait(asked.id, timeout=0).status == "approved"


def test_a_delegate_waits_for_the_part_handed_to_them(people, agent, run, clock):
    alice, dave = people["alice"], people["dave"]
    asked = agent.approvals.request(run.id, PAY, reason="invoice 2")
    assert ids(dave, waiting_for="dave") == set()
    alice.policies.delegate("dave", until=clock() + DAY, reason="away")
    assert ids(dave, waiting_for="dave") == {asked.id}
    assert ids(dave, for_groups_of="dave") == set()  # not a member himself
    approve(alice, asked.id)  # alice took her own part after all
    assert ids(dave, waiting_for="dave") == set()
    assert "not in it" in (dave.policies.why_not(asked.id) or "")


def test_assign_to_me_is_a_decision_and_filters_the_inbox(people, agent, run):
    asked = agent.approvals.request(run.id, PAY, reason="invoice 3")
    other = agent.approvals.request(run.id, PAY, reason="invoice 4")
    alice, bob = people["alice"], people["bob"]
    assert alice.assignments.of(asked.id) is None
    assert alice.assignments.assign_to_me("approval", asked.id, reason="mine") == "alice"
    assert bob.assignments.of(asked.id) == "alice"
    assert ids(bob, assigned_to="alice") == {asked.id}
    assert ids(bob, assigned_to="bob") == set()
    [row] = bob.inbox.pick(None, [asked.id])
    assert row.assignee == "alice"
    bob.assignments.assign_to_me("approval", asked.id)
    assert ids(alice, assigned_to="alice") == set()  # the newest assignment counts
    assert ids(bob, assigned_to="bob", waiting_for="bob") == {asked.id}
    assert other.id not in ids(bob, assigned_to="bob")
    [decision] = [d for d in alice.approvals.decisions(asked.id) if d.actor == "operator:alice"]
    assert decision.target_kind == "assignment"
    assert decision.decision == {"item_kind": "approval", "item_id": asked.id, "assignee": "alice"}
    assert verify(alice).ok
    with pytest.raises(errors.NotFound):
        alice.assignments.assign_to_me("approval", "apr_nope")
    with pytest.raises(errors.NotAllowed):
        agent.assignments.assign_to_me("approval", asked.id)


def _insert_assignment(conn, item_id: str, assignee: str, decision_id: str) -> None:
    conn.execute(
        "INSERT INTO assignments (id, item_kind, item_id, seq, assignee, decision_id, "
        "created_at) VALUES ('asg_forged', 'approval', ?, 2, ?, ?, 1.0)",
        (item_id, assignee, decision_id),
    )


def test_an_assignment_by_hand_is_refused_and_rows_never_change(people, agent, run, journal_path):
    asked = agent.approvals.request(run.id, PAY, reason="invoice 5")
    people["alice"].assignments.assign_to_me("approval", asked.id)
    with raw(journal_path) as conn:
        alices = conn.execute("SELECT decision_id FROM assignments").fetchone()[0]
    before = snapshot(journal_path)
    for sql, params in (
        # bob "assigned" with alice's decision: the decision is not by the assignee
        (
            "INSERT INTO assignments (id, item_kind, item_id, seq, assignee, decision_id, "
            "created_at) VALUES ('asg_forged', 'approval', ?, 2, 'bob', ?, 1.0)",
            (asked.id, alices),
        ),
        (
            "INSERT INTO assignments (id, item_kind, item_id, seq, assignee, decision_id, "
            "created_at) VALUES ('asg_forged', 'approval', ?, 2, 'bob', 'dec_none', 1.0)",
            (asked.id,),
        ),
        ("UPDATE assignments SET assignee = 'bob'", ()),
        ("DELETE FROM assignments", ()),
    ):
        with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
            conn.execute(sql, params)
    assert snapshot(journal_path) == before
    assert people["bob"].assignments.of(asked.id) == "alice"


@pytest.mark.sqlite_only
def test_verify_names_an_assignment_forged_past_a_dropped_trigger(people, agent, run, journal_path):
    asked = agent.approvals.request(run.id, PAY, reason="invoice 6")
    people["alice"].assignments.assign_to_me("approval", asked.id)
    with raw(journal_path) as conn:
        alices = conn.execute("SELECT decision_id FROM assignments").fetchone()[0]
        conn.execute("DROP TRIGGER trg_assignments_decided")
        _insert_assignment(conn, asked.id, "bob", alices)
    assert people["carol"].assignments.of(asked.id) == "bob"  # the forged row reads as last
    report = verify(people["carol"])
    whats = {p.what: p for p in report.problems}
    assert "trigger missing" in whats
    assert "assignment without its decision" in whats
    assert "asg_forged" in whats["assignment without its decision"].where
