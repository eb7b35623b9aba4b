"""Issue #31, written as the adversary: a process running as the journal's OS user, with
plain ``sqlite3`` on the file, drops the triggers, rewrites rows, steps versions back and
puts the triggers back. A signed decision must not carry over to what it did not decide: a
trusting agent refuses (``DecisionUnverified``, naming why) and ``proctor verify`` names the
row, each as the rule says.

- item 1: an operator's edit erased from the row;
- item 2: a consumption cleared from the row (the chain and the effect row still say it);
- item 3: a rule decision dated back before its signed rule's revocation or expiry;
- item 4: a signed approval moved to another run or attempt;
- item 5: bob's key signing decisions recorded as alice's;
- item 6: an answer rewritten (verify, without a trust file);
- item 7: no-op triggers under the expected names, an approval put in by hand, a signed
  revocation deleted;
- item 8: an agent with no trust on a journal holding signed decisions warns once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from proctor.core import Actor, errors
from proctor.core.audit.verify import verify
from proctor.core.decisions.keys import OperatorKey, trust_file
from proctor.core.kernel.canonical import chain_digest, digest_of
from proctor.core.storage import census
from proctor.core.storage.tx import audit_digest_body

from .conftest import AGENT, OPERATOR
from .helpers import raw

pytestmark = pytest.mark.sqlite_only  # plain sqlite3 on the file is the adversary's tool

ACTION = {"tool": "shell", "args": {"command": "rm -rf /"}}
EDITED = {"tool": "shell", "args": {"command": "rm -rf /tmp/build"}}


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate(OPERATOR)


@pytest.fixture
def bob_key() -> OperatorKey:
    return OperatorKey.generate("bob")


@pytest.fixture
def trust_path(tmp_path, key, bob_key):
    path = tmp_path / "trusted.json"
    ops = [
        {"name": OPERATOR, "public_key": key.public_key},
        {"name": "bob", "public_key": bob_key.public_key},
    ]
    path.write_text(json.dumps(trust_file(ops)))
    return path


@pytest.fixture
def signer(open_journal, key):
    return open_journal(Actor.operator(OPERATOR), signer=key)


@pytest.fixture
def trusting(open_journal, trust_path):
    return open_journal(Actor.agent(AGENT), trust=trust_path)


@pytest.fixture
def run(trusting):
    return trusting.runs.start("proj", "bound run")


@contextlib.contextmanager
def triggers_down(path) -> Iterator[sqlite3.Connection]:
    """Every trigger dropped for the writes in the block, then re-created as it was."""
    with raw(path) as conn:
        saved = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for name, _sql in saved:
            conn.execute(f'DROP TRIGGER "{name}"')
        yield conn
        for _name, sql in saved:
            conn.execute(sql)


def approved(signer, trusting, run, action=ACTION):
    approval = trusting.approvals.request(run.id, action, reason="clean up")
    signer.approvals.decide(approval.id, True, expected_version=approval.version)
    return approval


def _effect_rows(path, key: str) -> list:
    with raw(path) as conn:
        return conn.execute("SELECT key FROM effects WHERE key=?", (key,)).fetchall()


def problems(report, what: str) -> list:
    return [p for p in report.problems if p.what == what]


# ---------------------------------------------------------------- item 1: edit erased


def test_an_erased_edit_is_refused_by_a_trusting_agent(signer, trusting, run, journal_path):
    approval = trusting.approvals.request(run.id, ACTION, reason="clean up")
    signer.approvals.approve_edited(approval.id, EDITED, expected_version=1)
    with triggers_down(journal_path) as conn:
        conn.execute(
            "UPDATE approvals SET approved_action=NULL, approved_digest=NULL WHERE id=?",
            (approval.id,),
        )
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "mismatch" and err.value.details["field"] == "approved_digest"
    assert not _effect_rows(journal_path, "fx-1")


# ---------------------------------------------------------------- item 2: consumed twice


def test_a_cleared_consumption_is_refused_and_named(operator, signer, trusting, run, journal_path):
    approval = approved(signer, trusting, run)
    trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    with triggers_down(journal_path) as conn:
        conn.execute(
            "UPDATE approvals SET consumed_at=NULL, consumed_effect_key=NULL, "
            "version=version-1 WHERE id=?",
            (approval.id,),
        )
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-2")
    assert err.value.why == "already_consumed"
    assert not _effect_rows(journal_path, "fx-2")
    (named,) = problems(verify(operator, trust=None), "approval consumption cleared")
    assert approval.id in named.where


# ---------------------------------------------------------------- item 3: rule's signed state


def _forge_rule_decision(path, approval_id: str, rule_id: str, at: float) -> None:
    """An automatic approval by ``rule_id`` dated ``at``: the approval row, its decision row
    and an audit row appended to the audit chain (digests recomputed: nothing is secret)."""
    with triggers_down(path) as conn:
        scope = conn.execute("SELECT scope FROM approval_rules WHERE id=?", (rule_id,)).fetchone()[
            0
        ]
        run_id = conn.execute("SELECT run_id FROM approvals WHERE id=?", (approval_id,)).fetchone()[
            0
        ]
        who = f"rule:{rule_id}"
        conn.execute(
            "UPDATE approvals SET status='approved', decided_at=?, decided_by=?, rule_id=?, "
            "decision_reason='allow rule', decision_scope=?, version=2 WHERE id=?",
            (at, who, rule_id, scope, approval_id),
        )
        decision = {"approved": True, "scope": scope}
        body = {
            "target_kind": "approval",
            "target_id": approval_id,
            "decision": decision,
            "actor": who,
            "reason": f"matched rule {rule_id}",
            "created_at": at,
        }
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, source, "
            "request_id, reason, created_at, digest) VALUES (?, 'approval', ?, ?, ?, ?, 'rule', "
            "NULL, ?, ?, ?)",
            (
                f"dec_{uuid.uuid4().hex[:24]}",
                approval_id,
                run_id,
                json.dumps(decision),
                who,
                body["reason"],
                at,
                digest_of(body),
            ),
        )
        sequence, prev = conn.execute(
            "SELECT sequence, digest FROM audit ORDER BY sequence DESC LIMIT 1"
        ).fetchone()
        row = {
            "sequence": sequence + 1,
            "id": f"aud_{uuid.uuid4().hex[:24]}",
            "actor": who,
            "action": "approval.auto_approved",
            "entity_kind": "approval",
            "entity_id": approval_id,
            "run_id": run_id,
            "before": json.dumps({"status": "pending"}),
            "after": json.dumps({"status": "approved", "rule_id": rule_id}),
            "reason": None,
            "created_at": at,
        }
        row["prev_digest"] = prev
        row["digest"] = chain_digest(prev, audit_digest_body(row))
        conn.execute(
            f"INSERT INTO audit ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
            tuple(row.values()),
        )


def test_a_rule_decision_dated_before_the_rules_revocation_is_refused(
    signer, trusting, run, journal_path, clock
):
    rule = signer.approvals.add_rule("allow", "shell", run_id=run.id)
    made = clock.t
    clock.advance(60)
    signer.approvals.revoke_rule(rule.id, expected_version=rule.version)
    clock.advance(60)
    approval = trusting.approvals.request(run.id, ACTION, reason="after the revocation")
    assert approval.status == "pending"
    _forge_rule_decision(journal_path, approval.id, rule.id, at=made + 1)
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "rule_mismatch" and "revoked" in err.value.message


def test_a_rule_decision_dated_before_the_rules_expiry_is_refused(
    signer, trusting, run, journal_path, clock
):
    rule = signer.approvals.add_rule("allow", "shell", run_id=run.id, expires_at=clock.t + 30)
    made = clock.t
    clock.advance(120)
    approval = trusting.approvals.request(run.id, ACTION, reason="after the expiry")
    assert approval.status == "pending"
    _forge_rule_decision(journal_path, approval.id, rule.id, at=made + 1)
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "rule_mismatch" and "expired" in err.value.message


def test_an_honest_rule_decision_still_passes(signer, trusting, run):
    signer.approvals.add_rule("allow", "shell", run_id=run.id)
    approval = trusting.approvals.request(run.id, ACTION, reason="matches")
    assert approval.status == "approved"
    effect = trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert effect.status == "reserved"


# ---------------------------------------------------------------- item 4: moved approval


@pytest.mark.parametrize(
    ("column", "field"), [("run_id", "run_id"), ("attempt", "attempt")], ids=["run", "attempt"]
)
def test_a_signed_approval_moved_is_refused_and_named(
    signer, trusting, run, journal_path, column, field, operator
):
    approval = approved(signer, trusting, run)
    other = trusting.runs.start("proj", "another run")
    with triggers_down(journal_path) as conn:
        value = other.id if column == "run_id" else approval.attempt + 1
        conn.execute(f"UPDATE approvals SET {column}=? WHERE id=?", (value, approval.id))
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "mismatch" and err.value.details["field"] == field
    report = verify(operator, trust=None)  # no trust file: the chain alone names it
    named = [p for p in report.problems if approval.id in p.where]
    assert named and named[0].what in (
        "approval without its request event",
        "approval differs from its request event",
    )


# ---------------------------------------------------------------- item 5: whose key


def test_bobs_key_signing_as_alice_is_refused_and_named(
    open_journal, trusting, run, bob_key, trust_path
):
    as_alice = open_journal(Actor.operator(OPERATOR), signer=bob_key)
    approval = approved(as_alice, trusting, run)
    assert trusting.approvals.get(approval.id).decided_by == f"operator:{OPERATOR}"
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "wrong_operator"
    forged = problems(verify(trusting, trust=trust_path), "decision forged")
    assert forged and approval.id in forged[0].where and "bob" in forged[0].detail


# ---------------------------------------------------------------- item 6: answer rewritten


def test_a_rewritten_answer_is_named_by_verify_without_trust(
    operator, signer, trusting, run, journal_path
):
    question = trusting.questions.ask(run.id, "question", "Which region?")
    signer.questions.answer(question.id, {"text": "eu-west"}, expected_version=question.version)
    assert verify(operator, trust=None).ok
    with triggers_down(journal_path) as conn:
        conn.execute(
            "UPDATE interactions SET response=? WHERE id=?",
            (json.dumps({"text": "us-east"}), question.id),
        )
    (named,) = problems(verify(operator, trust=None), "answer rewritten")
    assert question.id in named.where


def test_a_rewritten_dismissal_is_named_by_verify(operator, signer, trusting, run, journal_path):
    """Issue 37: a dismissal is a decision like an answer; its reason rewritten by hand (the
    agent was told another thing) is named, with and without a trust file."""
    question = trusting.questions.ask(run.id, "question", "Which region?")
    signer.questions.dismiss(question.id, "not this quarter", expected_version=question.version)
    assert verify(operator, trust=None).ok and verify(operator, trust=trusting.trust).ok
    with triggers_down(journal_path) as conn:
        conn.execute(
            "UPDATE interactions SET response=? WHERE id=?",
            (json.dumps({"dismissed": True, "reason": "ship it to prod"}), question.id),
        )
    (named,) = problems(verify(operator, trust=None), "answer rewritten")
    assert question.id in named.where
    assert problems(verify(operator, trust=trusting.trust), "decision does not match its item")


# ---------------------------------------------------------------- item 7: verify fooled


def _trigger_names(path) -> list[str]:
    with raw(path) as conn:
        return sorted(
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        )


def test_no_op_triggers_under_every_expected_name_are_named(operator, trusting, run, journal_path):
    names = _trigger_names(journal_path)
    assert len(names) > 20  # every trigger the migrations install
    with raw(journal_path) as conn:
        tables = dict(
            conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'")
        )
        for name in names:
            conn.execute(f'DROP TRIGGER "{name}"')
            conn.execute(
                f'CREATE TRIGGER "{name}" BEFORE UPDATE ON "{tables[name]}" BEGIN SELECT 1; END'
            )
        conn.execute("UPDATE events SET payload='{}' WHERE run_id=?", (run.id,))  # unguarded
    report = verify(operator, trust=None)
    assert sorted(p.where for p in problems(report, "trigger altered")) == names
    assert not problems(report, "trigger missing")


def test_a_trigger_whose_condition_never_holds_is_named(operator, trusting, journal_path):
    with raw(journal_path) as conn:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'trg_approvals_identity'"
        ).fetchone()
        conn.execute("DROP TRIGGER trg_approvals_identity")
        conn.execute(sql.replace(" WHEN ", " WHEN 0 AND (", 1).replace(" BEGIN", ") BEGIN", 1))
    (named,) = problems(verify(operator, trust=None), "trigger altered")
    assert named.where == "trg_approvals_identity"


def test_an_honest_journal_has_no_altered_trigger(operator, signer, trusting, run):
    approved(signer, trusting, run)
    assert verify(operator, trust=None).ok


def test_an_approval_put_in_by_hand_is_named(operator, signer, trusting, run, journal_path):
    real = trusting.approvals.request(run.id, ACTION, reason="real")
    with triggers_down(journal_path) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(approvals)")]
        row = dict(
            zip(
                columns,
                conn.execute("SELECT * FROM approvals WHERE id=?", (real.id,)).fetchone(),
                strict=True,
            )
        )
        row.update(
            id="apr_forged",
            request_key="forged",
            origin=json.dumps({"runtime": "claude-code", "tool": "Bash"}),
        )
        conn.execute(
            f"INSERT INTO approvals ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
            tuple(row.values()),
        )
    named = problems(verify(operator, trust=None), "approval without its request event")
    assert [p.where.split()[1] for p in named] == ["apr_forged"]


def test_an_origin_forged_at_insert_is_named(operator, trusting, run, journal_path):
    """The row is deleted and put back with another origin (the origin trigger only refuses an
    UPDATE): its chained request event recorded the origin's digest."""
    real = trusting.approvals.request(run.id, ACTION, reason="real")
    with triggers_down(journal_path) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(approvals)")]
        row = dict(
            zip(
                columns,
                conn.execute("SELECT * FROM approvals WHERE id=?", (real.id,)).fetchone(),
                strict=True,
            )
        )
        row["origin"] = json.dumps({"runtime": "claude-code", "tool": "Bash", "pid": 1})
        conn.execute("DELETE FROM approvals WHERE id=?", (real.id,))
        conn.execute(
            f"INSERT INTO approvals ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
            tuple(row.values()),
        )
    (named,) = problems(verify(operator, trust=None), "approval differs from its request event")
    assert real.id in named.where and "origin_digest" in named.detail


@pytest.mark.parametrize("undo", [False, True], ids=["signature-deleted", "rule-reset-too"])
def test_a_deleted_signed_revocation_is_named(
    operator, signer, trusting, run, journal_path, clock, undo
):
    rule = signer.approvals.add_rule("allow", "shell", run_id=run.id)
    clock.advance(5)
    signer.approvals.revoke_rule(rule.id, expected_version=rule.version, reason="too wide")
    assert verify(operator, trust=None).ok
    with triggers_down(journal_path) as conn:
        conn.execute("DELETE FROM signatures WHERE record_id=?", (f"{rule.id}/revoked",))
        if undo:
            conn.execute(
                "UPDATE approval_rules SET revoked_at=NULL, revoked_by=NULL, version=1 WHERE id=?",
                (rule.id,),
            )
    report = verify(operator, trust=None)
    named = problems(report, "signed revocation missing") + problems(
        report, "rule revocation undone"
    )
    assert named and all(rule.id in p.where for p in named)


# ---------------------------------------------------------------- item 8: no trust set


def test_an_agent_without_trust_on_a_signed_journal_warns_once(
    open_journal, signer, trusting, run, journal_path, caplog, monkeypatch
):
    approved(signer, trusting, run)
    monkeypatch.delenv("PROCTOR_TRUSTED_OPERATORS", raising=False)
    from proctor.core.decisions import trust as trust_mod

    monkeypatch.setattr(trust_mod, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="proctor.trust"):
        first = open_journal(Actor.agent("naive"))
        second = open_journal(Actor.agent("naive-2"))
    warned = [r for r in caplog.records if r.name == "proctor.trust"]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    assert "proctor keys export -o trusted.json" in warned[0].getMessage()
    assert "PROCTOR_TRUSTED_OPERATORS=trusted.json" in warned[0].getMessage()
    assert first.trust_warning and second.trust_warning  # both know; the log says it once
    assert trusting.trust_warning is None
    assert open_journal(Actor.operator("olga")).trust_warning is None


def test_the_cli_listens_to_the_trust_warnings_logger():
    from proctor.cli import TRUST_LOGGER
    from proctor.core.decisions.trust import LOGGER

    assert TRUST_LOGGER == LOGGER


def test_an_agent_without_trust_on_an_unsigned_journal_is_quiet(open_journal, run, caplog):
    with caplog.at_level(logging.WARNING, logger="proctor.trust"):
        assert open_journal(Actor.agent("naive")).trust_warning is None
    assert not [r for r in caplog.records if r.name == "proctor.trust"]


def _cli(args: list[str], env: dict, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("command", ["hook", "mcp"])
def test_the_hook_and_the_mcp_server_say_it_on_one_stderr_line(
    signer, trusting, run, journal_path, command
):
    approved(signer, trusting, run)
    env = {k: v for k, v in os.environ.items() if k != "PROCTOR_TRUSTED_OPERATORS"}
    env["PROCTOR_JOURNAL"] = str(journal_path)
    if command == "hook":
        event = {
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_use_id": "t1",
        }
        done = _cli(["hook", "claude-code", "--timeout", "0.2"], env, json.dumps(event))
    else:
        done = _cli(["mcp", str(journal_path)], env)
    lines = [line for line in done.stderr.splitlines() if "trusts no key" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("proctor: warning: ")
    assert "proctor keys export -o trusted.json" in lines[0]
    env["PROCTOR_TRUSTED_OPERATORS"] = str(trusting.trust.source)
    quiet = (
        _cli(["hook", "claude-code", "--timeout", "0.2"], env, json.dumps(event))
        if command == "hook"
        else _cli(["mcp", str(journal_path)], env)
    )
    assert "trusts no key" not in quiet.stderr


def test_the_mcp_server_with_trust_on_a_signed_journal_says_no_warning(
    signer, trusting, run, journal_path, trust_path
):
    """``proctor mcp JOURNAL --trust FILE`` trusts FILE from the first open: the path probe
    before the server starts opens the journal with it, so no "trusts no key" line."""
    approved(signer, trusting, run)
    env = {k: v for k, v in os.environ.items() if k != "PROCTOR_TRUSTED_OPERATORS"}
    done = _cli(["mcp", str(journal_path), "--trust", str(trust_path)], env)
    assert done.returncode == 0, done.stderr
    assert "trusts no key" not in done.stderr
    assert "warning" not in done.stderr


def test_the_trust_warning_escapes_the_agents_name(signer, trusting, run, journal_path):
    """The agent's name (under MCP the client's own) is agent data: the warning line shows an
    ESC sequence or a bidi override as a visible escape, never as the character itself."""
    approved(signer, trusting, run)
    env = {k: v for k, v in os.environ.items() if k != "PROCTOR_TRUSTED_OPERATORS"}
    name = "evil\x1b]0;pwned\x07\x1b[2J\u202etxt.exe"
    done = _cli(["mcp", str(journal_path), "--agent", name], env)
    lines = [line for line in done.stderr.splitlines() if "trusts no key" in line]
    assert len(lines) == 1, done.stderr
    for raw_char in ("\x1b", "\x07", "\u202e"):
        assert raw_char not in lines[0]
    assert "evil" in lines[0] and "txt.exe" in lines[0]


# ---------------------------------------------------------------- format 1 signatures


def test_a_format_1_signature_is_kept_for_the_record_but_not_acted_on(
    signer, trusting, run, journal_path, key, trust_path
):
    """Format 1 named the approval, not its run, attempt or request event: verify still counts
    it signed, a trusting agent does not consume on it (docs/signed-decisions.md)."""
    import base64

    from proctor.core.decisions.signing import BINDING, canonical_bytes

    approval = approved(signer, trusting, run)
    with triggers_down(journal_path) as conn:
        record, text = conn.execute(
            "SELECT record_id, payload FROM signatures WHERE record_kind='decision'"
        ).fetchone()
        payload = {k: v for k, v in json.loads(text).items() if k not in BINDING}
        payload["proctor_signed"] = 1
        data = canonical_bytes(payload)
        conn.execute(
            "UPDATE signatures SET payload=?, signature=? WHERE record_id=?",
            (data.decode(), base64.b64encode(key.sign(data)).decode(), record),
        )
    with pytest.raises(errors.DecisionUnverified) as err:
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    assert err.value.why == "old_format"
    assert "ask the agent to file the request again" in err.value.message
    assert "decide it again" not in err.value.message + err.value.hint  # it cannot be
    report = verify(trusting, trust=trust_path)
    assert report.signatures["signed"] == 1 and report.ok, report.problems


# ---------------------------------------------------------------- every column, generated

SIGNED_COLUMNS = [
    column
    for column, entry in census.CENSUS["approvals"].items()
    if entry.kind != "free" and column != "requested_by"  # a server journal's column only
]


def tampered(value: object) -> object:
    """Another value of the same kind: what a same-user process writes instead."""
    if value is None:
        return "tampered"
    if isinstance(value, bool):
        return int(not value)
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.5
    text = str(value)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text + "-tampered"
    return json.dumps({"tampered": parsed}) if isinstance(parsed, (dict, list)) else text + "0"


@pytest.mark.parametrize("column", SIGNED_COLUMNS)
def test_every_column_of_a_signed_edited_approval_changed_by_hand_is_refused_or_named(
    operator, signer, trusting, run, journal_path, column
):
    """Generated from the census: for each column of ``approvals`` that is not free metadata,
    rewritten with every trigger dropped (then put back), the trusting agent refuses to act on
    the approval, or ``proctor verify`` (no trust file: the chain alone) names it."""
    approval = trusting.approvals.request(run.id, ACTION, reason="clean up")
    signer.approvals.approve_edited(
        approval.id, EDITED, expected_version=approval.version, reason="narrower"
    )
    done = trusting.approvals.get(approval.id)
    with triggers_down(journal_path) as conn:
        (value,) = conn.execute(
            f'SELECT "{column}" FROM approvals WHERE id=?', (approval.id,)
        ).fetchone()
        conn.execute(
            f'UPDATE approvals SET "{column}"=? WHERE id=?', (tampered(value), approval.id)
        )
    refused = None
    try:
        trusting.approvals.consume_and_reserve(approval.id, done.effective_digest, "fx-1")
    except errors.ProctorError as err:
        refused = err
    report = verify(operator, trust=None)
    named = [p for p in report.problems if approval.id in p.where or approval.id in p.detail]
    assert refused is not None or named, f"{column}: the agent acted and verify said nothing"


def test_a_free_column_changed_by_hand_is_neither_refused_nor_named(
    operator, signer, trusting, run, journal_path
):
    """The generated test's control: what the census calls free (a snooze) changes nothing
    a decision relies on, so the same harness sees the agent act and verify stay quiet."""
    approval = approved(signer, trusting, run)
    with triggers_down(journal_path) as conn:
        conn.execute("UPDATE approvals SET snoozed_until=? WHERE id=?", (1e12, approval.id))
    trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-1")
    report = verify(operator, trust=None)
    assert not [p for p in report.problems if approval.id in p.where or approval.id in p.detail]
