"""`proctor policies`, `add-policy` (preview first), `revoke-policy`, `groups`, `group`,
and a two-person approval completed by two operators with `proctor approve`, `proctor show`
printing who approved and who is still needed at each step."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from proctor.core import Actor, Journal

from .conftest import OPERATOR
from .test_ops import read

PAY = {"tool": "payments.send", "args": {"account": "acme", "amount": 9000}}


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A journal with no policy or group yet (the demo's has an ``ops`` group and a policy
    of its own), named by PROCTOR_JOURNAL as the demo copy is."""
    path = tmp_path / "journal.db"
    Journal.open(path).close()
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", OPERATOR)
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    return path


def ask(journal: Path, action: dict = PAY) -> str:
    with Journal.open(journal, actor=Actor.agent("payer")) as agent:
        run = agent.runs.start("billing", "pay invoices")
        return agent.approvals.request(run.id, action, reason="invoice 7").id


def test_two_operators_complete_a_two_person_approval(cli, journal: Path) -> None:
    for who in ("alice", "bob"):
        assert cli("group", "add", "ops", who, "--as", "alice").rc == 0
    assert json.loads(cli("groups", "--json").out) == {"ops": ["alice", "bob"]}
    made = cli("add-policy", "payments: two people", "payments.*", "--stage", "ops:2", "--yes")
    assert made.rc == 0, made.err
    assert "made pol_" in made.out
    approval = ask(journal)

    first = cli("approve", approval, "--as", "alice", "--reason", "invoice checked", "--yes")
    assert first.rc == 0, first.err
    assert "1 of 2 approvals; waiting for ops" in first.out
    assert read(journal, lambda j: j.approvals.get(approval).status.value) == "pending"
    shown = cli("show", approval).out
    assert "by alice for ops: invoice checked" in shown
    assert "progress    1 of 2 approvals; waiting for ops" in shown
    assert "needed      1 more of ops (not alice again)" in shown

    again = cli("approve", approval, "--as", "alice", "--yes")
    assert again.rc == 1 and "you already approved" in again.err
    outsider = cli("approve", approval, "--as", "mallory", "--yes")
    assert outsider.rc == 1 and "mallory is not in ops" in outsider.err

    second = cli("approve", approval, "--as", "bob", "--yes")
    assert second.rc == 0, second.err
    assert second.out.startswith("approved ")
    done = read(journal, lambda j: j.approvals.get(approval))
    assert done.status.value == "approved" and done.decided_by == "operator:bob"
    shown = json.loads(cli("show", approval, "--json").out)
    assert [s["operator"] for s in shown["policy"]["steps"]] == ["alice", "bob"]
    assert shown["policy"]["satisfied"] is True
    assert cli("verify").rc == 0


def test_add_policy_previews_and_makes_nothing_without_yes(cli, journal: Path) -> None:
    earlier = ask(journal)
    shown = cli(
        "add-policy", "payments", "payments.send", "--stage", "ops:1", "--stage", "finance:1"
    )
    assert shown.rc == 0, shown.err
    assert "needs: 1 of ops, then 1 of finance" in shown.out
    assert earlier in shown.out and "nothing was made" in shown.out
    assert "note: ops has 0 member(s)" in shown.out
    assert read(journal, lambda j: j.policies.list()) == []
    data = json.loads(cli("add-policy", "p", "payments.send", "--stage", "ops:1", "--json").out)
    assert earlier in {h["id"] for h in data["preview"]["pending"]} and data["made"] is None


def test_policies_lists_and_revoke_keeps_history(cli, journal: Path) -> None:
    made = json.loads(
        cli("add-policy", "p", "payments.*", "--stage", "ops,sre:2", "--yes", "--json").out
    )["made"]
    listed = cli("policies").out
    assert made["id"] in listed and "2 of ops or sre" in listed
    no_reason = cli("revoke-policy", made["id"], "--reason", " ")
    assert no_reason.rc == 2
    gone = cli("revoke-policy", made["id"], "--reason", "moved to the desk")
    assert gone.rc == 0, gone.err
    assert cli("policies").out.startswith("no policies")
    every = json.loads(cli("policies", "--all", "--json").out)
    assert every[0]["revoke_reason"] == "moved to the desk" and every[0]["active"] is False
    # a request filed after the revocation is not governed
    approval = ask(journal)
    plain = cli("approve", approval, "--yes")
    assert plain.rc == 0 and plain.out.startswith("approved ")


def test_add_policy_with_an_escalation(cli, journal: Path) -> None:
    made = cli(
        "add-policy",
        "p",
        "payments.*",
        "--stage",
        "ops:2",
        "--escalate-after",
        "4h",
        "--escalate-to",
        "managers",
        "--yes",
        "--json",
    )
    assert made.rc == 0, made.err
    policy = json.loads(made.out)["made"]
    assert policy["escalate_after"] == 4 * 3600 and policy["escalate_to"] == "managers"
    assert "after 4h also managers" in cli("policies").out
    half = cli("add-policy", "p", "x", "--stage", "ops:1", "--escalate-to", "managers")
    assert half.rc == 2 and "both" in half.err


def test_a_bad_stage_is_a_usage_error(cli, journal: Path) -> None:
    bad = cli("add-policy", "p", "x", "--stage", "ops")
    assert bad.rc == 2 and "GROUP[,GROUP...]:N" in bad.err


def test_a_delegate_completes_the_approval_for_an_away_member(cli, journal: Path) -> None:
    for who in ("alice", "bob"):
        assert cli("group", "add", "ops", who, "--as", "alice").rc == 0
    assert cli("add-policy", "two", "payments.*", "--stage", "ops:2", "--yes").rc == 0
    handed = cli("delegate", "carol", "--for", "3d", "--as", "bob", "--reason", "away")
    assert handed.rc == 0, handed.err
    assert "carol takes bob's part" in handed.out
    assert json.loads(cli("delegations", "--json").out)[0]["delegate"] == "carol"
    approval = ask(journal)
    assert cli("approve", approval, "--as", "alice", "--yes").rc == 0
    done = cli("approve", approval, "--as", "carol", "--yes")
    assert done.rc == 0, done.err
    assert "taking bob's part" in cli("show", approval).out
    assert read(journal, lambda j: j.approvals.get(approval).status.value) == "approved"
    bad = cli("delegate", "carol", "--until", "monday")
    assert bad.rc == 2


def test_a_policy_that_denies_at_its_deadline_and_a_delegation_ended(cli, journal: Path) -> None:
    """0018e from a shell: `add-policy --escalate-after 2h --escalate-to finance --at-deadline
    deny --deadline 8h`, and `proctor delegation end ID --reason …` by the delegator."""
    bad = cli("add-policy", "p", "payments.*", "--stage", "ops:1", "--deadline", "8h", "--yes")
    assert bad.rc != 0 and "--at-deadline deny" in bad.err
    made = cli(
        "add-policy", "payments", "payments.*", "--stage", "ops:1",
        "--escalate-after", "2h", "--escalate-to", "finance",
        "--at-deadline", "deny", "--deadline", "8h", "--yes",
    )  # fmt: skip
    assert made.rc == 0, made.err
    assert "after 2h also finance; denied after 8h" in made.out
    listed = json.loads(cli("policies", "--json").out)
    assert listed[0]["at_deadline"] == "deny" and listed[0]["deadline"] == 8 * 3600

    handed = cli("delegate", "carol", "--for", "3d", "--as", "bob", "--reason", "away")
    assert handed.rc == 0, handed.err
    lid = json.loads(cli("delegations", "--json").out)[0]["id"]
    not_hers = cli("delegation", "end", lid, "--as", "carol", "--reason", "mine now")
    assert not_hers.rc != 0 and "only they end it" in not_hers.err
    ended = cli("delegation", "end", lid, "--as", "bob", "--reason", "back early")
    assert ended.rc == 0, ended.err
    assert "carol no longer takes bob's part" in ended.out
    assert json.loads(cli("delegations", "--json").out) == []
    assert json.loads(cli("delegations", "--all", "--json").out)[0]["ended_at"] is not None
    assert cli("verify").rc == 0
