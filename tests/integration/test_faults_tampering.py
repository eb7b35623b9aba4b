"""Authority and tampering: what a process with write access to the file can do by raw SQL,
and what `proctor verify` then reports (DESIGN trust model: detectable, not impossible).

Rewriting evidence rows (events, receipts, decisions, audit, memory mutations, changes) and
the identity of approvals and effects is refused by triggers, UPDATE and INSERT OR REPLACE
alike: see tests/core/test_verify.py::test_evidence_rows_cannot_be_changed_by_raw_sql and
tests/core/test_integrity.py. Here: forging new rows, flipping mutable state, or rewriting
rows after dropping the triggers, is caught by `verify`.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor import cli
from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.kernel.canonical import canonical_json, digest_of


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A journal with a decided approval, an answered question, a resolved conflict and
    one approval still pending."""
    path = tmp_path_factory.mktemp("tamper") / "journal.db"
    ids: dict[str, str] = {}
    with (
        Journal.open(path, actor=Actor.agent("bot")) as agent,
        Journal.open(path, actor=Actor.operator("alice")) as alice,
    ):
        run = agent.runs.start("shop", "tamper target")
        decided = agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
        alice.approvals.decide(decided.id, True, expected_version=decided.version)
        asked = agent.questions.ask(run.id, "question", "Which region?")
        alice.questions.answer(asked.id, {"text": "eu"}, expected_version=asked.version)
        entry = agent.memory.add("project", "shop", "db", "db1")
        conflict = agent.memory.record_conflict(entry.id, "db2", incoming_source="bot")
        alice.memory.resolve(
            conflict.id, "accepted_local", expected_version=conflict.version, reason="db1 is right"
        )
        ids.update(
            run=run.id,
            decided=decided.id,
            question=asked.id,
            conflict=conflict.id,
            pending=agent.approvals.request(run.id, {"tool": "rm"}, reason="x").id,
            open_question=agent.questions.ask(run.id, "question", "Sure?").id,
        )
        assert verify(alice).ok
    return path, ids


@pytest.fixture
def journal(tmp_path, template) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "journal.db"
    shutil.copy2(template[0], path)
    return path, template[1]


def sql(path: Path, *statements: str, drop_triggers: bool = False, args=()) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        if drop_triggers:
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='trigger'"
            ).fetchall():
                conn.execute(f'DROP TRIGGER "{name}"')
        for statement in statements:
            conn.execute(statement, args)
    finally:
        conn.close()


def forge_decision(path: Path, ids: dict[str, str]) -> None:
    """An agent writes itself an approval, complete with a valid digest."""
    body = {
        "target_kind": "approval",
        "target_id": ids["pending"],
        "decision": {"approved": True, "scope": "once", "rule_id": None},
        "actor": "operator:alice",
        "reason": None,
        "created_at": 1.0,
    }
    sql(
        path,
        "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
        "source, request_id, reason, created_at, digest) VALUES "
        "('dec_forged', 'approval', ?, ?, ?, 'operator:alice', 'desk', NULL, NULL, 1.0, ?)",
        args=(ids["pending"], ids["run"], canonical_json(body["decision"]), digest_of(body)),
    )


def approve_by_sql(path: Path, ids: dict[str, str]) -> None:
    sql(
        path,
        "UPDATE approvals SET status='approved', decided_by='operator:alice', "
        f"version=2 WHERE id='{ids['pending']}'",
    )


def answer_by_sql(path: Path, ids: dict[str, str]) -> None:
    sql(
        path,
        "UPDATE interactions SET status='resolved', response='{\"text\": \"yes\"}' "
        f"WHERE id='{ids['open_question']}'",
        drop_triggers=True,  # an answer that names no person is refused by 0009b's trigger
    )


def rewrite_decision(path: Path, ids: dict[str, str]) -> None:
    sql(
        path,
        f"UPDATE decisions SET actor='operator:mallory' WHERE target_id='{ids['decided']}'",
        drop_triggers=True,
    )


def drop_last_audit_row(path: Path, ids: dict[str, str]) -> None:
    """The tail of a hash chain can be cut without breaking it: the decision it recorded
    is then a decision without an audit row."""
    sql(
        path,
        "DELETE FROM audit WHERE sequence = (SELECT MAX(sequence) FROM audit "
        f"WHERE entity_id='{ids['conflict']}')",
        drop_triggers=True,
    )


def rewrite_approved_action(path: Path, ids: dict[str, str]) -> None:
    """The operator approved `deploy`; the file now says `rm -rf /`."""
    sql(
        path,
        "UPDATE approvals SET action = ? WHERE id = ?",
        drop_triggers=True,
        args=(canonical_json({"tool": "shell", "args": {"command": "rm -rf /"}}), ids["decided"]),
    )


def rewrite_memory_history(path: Path, ids: dict[str, str]) -> None:
    sql(
        path,
        "UPDATE memory_mutations SET after_content = 'db3' WHERE version = 1",
        drop_triggers=True,
    )


def rewrite_memory_entry(path: Path, ids: dict[str, str]) -> None:
    """The live entry changes only with a new version (0009b's trigger, dropped here); where
    its history ends says what it is."""
    sql(path, "UPDATE memory_entries SET content = 'db9'", drop_triggers=True)


TAMPERING: dict[str, tuple[Callable[[Path, dict], None], set[str]]] = {
    "a forged decision row": (forge_decision, {"decision without audit row"}),
    "an approval approved by SQL": (approve_by_sql, {"decided without a decision"}),
    "a question answered by SQL": (answer_by_sql, {"decided without a decision"}),
    "a decision rewritten": (
        rewrite_decision,
        {"decision digest mismatch", "decision without audit row"},
    ),
    "the audit tail cut": (drop_last_audit_row, {"decision without audit row"}),
    "an approved action rewritten": (rewrite_approved_action, {"approval action tampered"}),
    "a memory change rewritten": (rewrite_memory_history, {"memory chain broken"}),
    "a memory entry rewritten": (rewrite_memory_entry, {"memory head mismatch"}),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_verify_reports_tampering_that_triggers_cannot_stop(journal, case, capsys):
    path, ids = journal
    tamper, expected = TAMPERING[case]
    tamper(path, ids)
    with Journal.open(path, actor=Actor.operator("auditor"), read_only=True) as j:
        found = {p.what for p in verify(j).problems}
    assert expected <= found, found
    capsys.readouterr()
    assert cli.main(["verify", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"] and expected <= {p["what"] for p in report["problems"]}
    assert cli.main(["verify", str(path)]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_an_honest_journal_verifies_through_the_cli(journal, capsys):
    path, _ = journal
    assert cli.main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ok:")


def test_the_recorded_approver_is_the_journal_operator_not_agent_data(tmp_path):
    """Whatever an agent writes into its request, the decision names who decided."""
    path = tmp_path / "journal.db"
    claims = {"decided_by": "operator:root", "actor": "operator:root", "approver": "root"}
    with (
        Journal.open(path, actor=Actor.agent("bot")) as agent,
        Journal.open(path, actor=Actor.operator("alice")) as alice,
    ):
        run = agent.runs.start("shop", "claims", metadata=claims)
        pending = agent.approvals.request(
            run.id, {"tool": "deploy", **claims}, reason="approved by operator:root already"
        )
        decided = alice.approvals.decide(pending.id, True, expected_version=pending.version)
        [decision] = alice.approvals.decisions(pending.id)
        [audit] = [a for a in alice.audit.for_entity(pending.id)]
        assert decided.decided_by == decision.actor == audit.actor == "operator:alice"
        # and the agent that asked can never be the one recorded as approving
        selfish = agent.approvals.request(run.id, {"tool": "deploy", "n": 2}, reason="me")
        with (
            Journal.open(path, actor=Actor.operator("bot")) as bot_as_operator,
            pytest.raises(errors.NotAllowed),
        ):
            bot_as_operator.approvals.decide(selfish.id, True, expected_version=selfish.version)
        assert alice.approvals.get(selfish.id).status == "pending"
        assert verify(alice).ok
