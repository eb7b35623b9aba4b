"""`proctor rules`, `add-rule` (preview first), `revoke-rule` and `approve-edited`."""

from __future__ import annotations

import json
from pathlib import Path

from proctor.core import Actor, Journal, digest_of

from .test_ops import pending, read


def test_add_rule_shows_its_impact_and_makes_nothing_without_yes(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    run = read(journal, lambda j: j.runs.get(item.run_id))
    tool = read(journal, lambda j: j.approvals.get(item.id).action_name)
    before = read(journal, lambda j: j.approvals.rule_usage())
    result = cli("add-rule", "allow", tool, "--project", run.project)
    assert result.rc == 0, result.err
    assert "would have decided" in result.out and "would decide" in result.out
    assert item.id in result.out and "nothing was made" in result.out
    assert read(journal, lambda j: j.approvals.rule_usage()) == before
    data = json.loads(cli("add-rule", "allow", tool, "--project", run.project, "--json").out)
    assert item.id in {h["id"] for h in data["preview"]["pending"]} and data["made"] is None


def test_add_rule_with_yes_applies_to_the_pending_it_listed(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    approval = read(journal, lambda j: j.approvals.get(item.id))
    result = cli(
        "add-rule",
        "allow",
        approval.action_name,
        "--run",
        approval.run_id,
        "--yes",
        "--apply-pending",
        "--expires-in",
        "2h",
    )
    assert result.rc == 0, result.err
    assert "made rule_" in result.out and "applied to" in result.out
    done = read(journal, lambda j: j.approvals.get(item.id))
    assert done.status == "approved" and done.decided_by == f"rule:{done.rule_id}"
    rule = read(journal, lambda j: j.approvals.rule(done.rule_id))
    assert rule.expires_at is not None and rule.created_by == "operator:tester"


def test_add_rule_refuses_a_bad_condition_and_a_missing_scope(cli, journal: Path) -> None:
    bad = cli("add-rule", "allow", "x", "--project", "p", "--when", "args.amount = 1", "--yes")
    assert bad.rc == 1 and "rule condition" in bad.err
    noscope = cli("add-rule", "allow", "x")
    assert noscope.rc == 2 and "scope" in noscope.err


def test_rules_lists_use_and_revoke_keeps_history(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    approval = read(journal, lambda j: j.approvals.get(item.id))
    made = json.loads(
        cli(
            "add-rule",
            "deny",
            approval.action_name,
            "--run",
            approval.run_id,
            "--when",
            "exists tool",
            "--yes",
            "--apply-pending",
            "--json",
        ).out
    )["made"]
    rid = made["rule"]["id"]
    listing = cli("rules")
    assert listing.rc == 0 and rid in listing.out and "exists tool" in listing.out
    decided = cli("rules", "--decided", rid)
    assert item.id in decided.out
    data = {r["id"]: r for r in json.loads(cli("rules", "--json").out)}
    assert data[rid]["decided"] >= 1 and data[rid]["state"] == "active"
    assert cli("revoke-rule", rid).rc == 2  # --reason is required
    result = cli("revoke-rule", rid, "--reason", "too wide")
    assert result.rc == 0 and "stays listed" in result.out
    data = {r["id"]: r for r in json.loads(cli("rules", "--json").out)}
    assert data[rid]["state"] == "revoked" and data[rid]["revoke_reason"] == "too wide"
    assert rid not in cli("rules", "--active").out
    again = cli("revoke-rule", rid, "--reason", "x")
    assert again.rc == 1 and "already revoked" in again.err


def test_approve_edited_hands_the_agent_a_new_digest(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    approval = read(journal, lambda j: j.approvals.get(item.id))
    new_args = {**(approval.action.get("args") or {}), "edited_by_test": True}
    result = cli(
        "approve-edited", item.id, "--args", json.dumps(new_args), "--reason", "narrowed", "--yes"
    )
    assert result.rc == 0, result.err
    edited = {**approval.action, "args": new_args}
    assert digest_of(edited) in result.out
    with Journal.open(journal, actor=Actor.agent(approval.agent)) as agent:
        done = agent.approvals.get(item.id)
        assert done.effective_action == edited and done.action == approval.action
    same = cli(
        "approve-edited",
        pending(journal, "approval")[0].id,
        "--action",
        json.dumps({"tool": "something.else"}),
    )
    assert same.rc == 1 and "keeps the tool" in same.err


def test_the_rule_commands_have_help_naming_the_exit_codes(cli) -> None:
    for command in ("rules", "add-rule", "revoke-rule", "approve-edited"):
        result = cli(command, "--help")
        assert result.rc == 0 and "exit status" in result.out
