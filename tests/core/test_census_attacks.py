"""Issue 31, items 1, 2 and 6, as the adversary ran them: a same-user process with a plain
connection (``sqlite3`` on the file; psycopg as the journal's owner on a server), every
trigger in place, tries to erase an operator's edit, to consume one approval twice, and to
rewrite an answered question. Schema 0009b's census triggers refuse each, on both stores,
and the agent's next call sees the decision the operator made."""

from __future__ import annotations

import json
import sqlite3

import pytest

from proctor.core import digest_of, errors

from .helpers import raw, snapshot

REQUESTED = {"tool": "shell", "args": {"command": "rm -rf /"}}
EDITED = {"tool": "shell", "args": {"command": "rm -rf /tmp/build"}}


@pytest.fixture
def edited(agent, operator, run):
    """The agent asks for ``rm -rf /``; the operator edits it to ``rm -rf /tmp/build`` and
    approves."""
    asked = agent.approvals.request(run.id, REQUESTED, reason="clean up")
    operator.approvals.approve_edited(asked.id, EDITED, expected_version=asked.version)
    return asked


def refused(journal_path, sql: str, params: tuple = ()) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


# ---------------------------------------------------------------- 1: the edit is erased


@pytest.mark.parametrize(
    "assignments",
    [
        "approved_action = NULL, approved_digest = NULL",
        "approved_action = NULL",
        "approved_digest = NULL",
        "approved_action = ?, approved_digest = ?",
    ],
)
def test_an_operators_edit_cannot_be_erased(agent, edited, journal_path, assignments):
    params = (json.dumps(REQUESTED), digest_of(REQUESTED)) if "?" in assignments else ()
    refused(journal_path, f"UPDATE approvals SET {assignments} WHERE id = ?", (*params, edited.id))
    with pytest.raises(errors.DigestMismatch):  # the original rm -rf / is not reserved
        agent.approvals.consume_and_reserve(edited.id, edited.action_digest, "fx-rm")
    effect = agent.approvals.consume_and_reserve(edited.id, digest_of(EDITED), "fx-build")
    assert effect.action == EDITED


def test_an_edit_cannot_be_erased_by_moving_the_approval_back_to_pending(edited, journal_path):
    refused(
        journal_path,
        "UPDATE approvals SET status = 'pending', approved_action = NULL, "
        "approved_digest = NULL WHERE id = ?",
        (edited.id,),
    )
    refused(journal_path, "UPDATE approvals SET status = 'pending' WHERE id = ?", (edited.id,))


# ---------------------------------------------------------------- 2: consumed twice


@pytest.mark.parametrize(
    "assignments",
    [
        "consumed_at = NULL, consumed_effect_key = NULL, version = version - 1",
        "consumed_at = NULL, consumed_effect_key = NULL",
        "consumed_at = NULL",
        "consumed_effect_key = NULL",
        "consumed_effect_key = 'fx-other'",
        "version = version - 1",
    ],
)
def test_a_consumed_approval_cannot_be_made_unconsumed(
    agent, operator, run, journal_path, assignments
):
    asked = agent.approvals.request(run.id, {"tool": "pay", "args": {"to": "x"}}, reason="pay")
    operator.approvals.decide(asked.id, True, expected_version=asked.version)
    agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "fx-1")
    refused(journal_path, f"UPDATE approvals SET {assignments} WHERE id = ?", (asked.id,))
    with pytest.raises(errors.ProctorError, match="already consumed"):
        agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "fx-2")


# ---------------------------------------------------------------- 6: an answer is rewritten


@pytest.mark.parametrize(
    "assignments",
    [
        "response = ?",
        "response = NULL",
        "resolved_by = 'operator:mallory'",
        "status = 'requested', response = NULL",
        "status = 'requested'",
    ],
)
def test_an_answered_questions_response_cannot_be_rewritten(
    agent, operator, run, journal_path, assignments
):
    asked = agent.questions.ask(run.id, "choice", "deploy where?", options=["staging", "prod"])
    operator.questions.answer(asked.id, {"choice": "staging"}, expected_version=asked.version)
    params = (json.dumps({"choice": "prod"}),) if "?" in assignments else ()
    refused(
        journal_path, f"UPDATE interactions SET {assignments} WHERE id = ?", (*params, asked.id)
    )
    assert agent.questions.get(asked.id).response == {"choice": "staging"}


# ---------------------------------------------------------------- REPLACE of a decided row


def test_a_decided_or_consumed_row_cannot_be_replaced(agent, operator, run, journal_path):
    """INSERT OR REPLACE (on a server: a plain INSERT onto the key) of an approved, edited and
    consumed row, with its edit and consumption cleared, is refused."""
    asked = agent.approvals.request(run.id, REQUESTED, reason="clean up")
    operator.approvals.approve_edited(asked.id, EDITED, expected_version=asked.version)
    agent.approvals.consume_and_reserve(asked.id, digest_of(EDITED), "fx-1")
    with raw(journal_path) as conn:
        cursor = conn.execute("SELECT * FROM approvals WHERE id = ?", (asked.id,))
        names = [d[0] for d in cursor.description]
        row = dict(zip(names, cursor.fetchone(), strict=True))
    row.update(approved_action=None, approved_digest=None, consumed_at=None)
    row.update(consumed_effect_key=None)
    marks = ", ".join("?" for _ in row)
    refused(
        journal_path,
        f"INSERT OR REPLACE INTO approvals ({', '.join(row)}) VALUES ({marks})",
        tuple(row.values()),
    )


# ---------------------------------------------------------------- 0009b on an existing journal


def migrate(journal_path, revision: str, *, down: bool) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    url = journal_path if isinstance(journal_path, str) else f"sqlite:///{journal_path}"
    engine = create_engine(getattr(url, "url", url))
    cfg = Config()
    cfg.set_main_option("script_location", "proctor.core.storage:migrations")
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            (command.downgrade if down else command.upgrade)(cfg, revision)
    finally:
        engine.dispose()


def test_an_existing_journal_gets_the_census_triggers_from_0009b(
    agent, operator, run, journal_path
):
    """A journal written at 0008x (no census triggers: the edit can be erased there) is
    upgraded by 0009b, and the erasure is refused from then on; nothing else changes."""
    from proctor.core.storage import db

    asked = agent.approvals.request(run.id, REQUESTED, reason="clean up")
    operator.approvals.approve_edited(asked.id, EDITED, expected_version=asked.version)
    migrate(journal_path, "0008x", down=True)
    erase = "UPDATE approvals SET approved_action = NULL, approved_digest = NULL WHERE id = ?"
    with raw(journal_path) as conn:  # at 0008x the erasure goes through
        conn.execute("BEGIN")
        conn.execute(erase, (asked.id,))
        conn.execute("ROLLBACK")
    before = snapshot(journal_path)
    migrate(journal_path, "0011d", down=False)  # the last revision that adds no column
    assert snapshot(journal_path) == before
    migrate(journal_path, "head", down=False)
    refused(journal_path, erase, (asked.id,))
    with raw(journal_path) as conn:
        if isinstance(journal_path, str):
            names = {r[0] for r in conn.execute("SELECT tgname FROM pg_trigger").fetchall()}
        else:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master").fetchall()}
    assert set(db.census_trigger_sql()) <= names


# ---------------------------------------------------------------- an operator's recorded key


@pytest.fixture
def alice_signed(open_journal, agent, run):
    """Alice, signing, approves a request: her key is recorded in ``operator_keys``."""
    from proctor.core import Actor
    from proctor.core.decisions.keys import OperatorKey

    key = OperatorKey.generate("alice")
    alice = open_journal(Actor.operator("alice"), signer=key)
    asked = agent.approvals.request(run.id, {"tool": "pay", "args": {"to": "x"}}, reason="pay")
    alice.approvals.decide(asked.id, True, expected_version=asked.version)
    return key


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM operator_keys",
        "DELETE FROM operator_keys WHERE key_id = ?",
        "INSERT OR REPLACE INTO operator_keys (key_id, operator, public_key, first_seen_at) "
        "SELECT key_id, 'operator:bob', public_key, first_seen_at + 100 FROM operator_keys "
        "WHERE key_id = ?",
        "UPDATE operator_keys SET operator = 'operator:bob' WHERE key_id = ?",
        "UPDATE operator_keys SET first_seen_at = first_seen_at + 100 WHERE key_id = ?",
    ],
    ids=["delete-all", "delete-one", "replace", "rename", "first-seen-later"],
)
def test_an_operators_recorded_key_cannot_be_deleted_or_renamed(
    operator, alice_signed, journal_path, statement
):
    """Deleted (and put back under bob's name, or as first seen later) with every trigger in
    place, alice's key would make the desk and ``proctor verify`` without a trust file call her
    signed decisions invalid, and verify stop expecting her signed revocations."""
    from proctor.core.audit.verify import verify

    params = (alice_signed.key_id,) if "?" in statement else ()
    refused(journal_path, statement, params)
    assert verify(operator, trust=None).ok


def test_the_recorded_keys_cannot_be_truncated_on_a_server(alice_signed, journal_path):
    if not isinstance(journal_path, str):
        pytest.skip("TRUNCATE is a server's statement")
    refused(journal_path, "TRUNCATE operator_keys")


@pytest.mark.parametrize("name", ["trg_operator_keys_no_delete", "trg_operator_keys_no_replace"])
def test_verify_names_a_missing_or_altered_key_trigger(operator, alice_signed, journal_path, name):
    from proctor.core.audit.verify import verify

    server = isinstance(journal_path, str)
    with raw(journal_path) as conn:
        conn.execute(f"DROP TRIGGER {name}" + (" ON operator_keys" if server else ""))
    report = verify(operator, trust=None)
    assert [(p.what, p.where) for p in report.problems] == [("trigger missing", name)]
    if server:
        return  # a server's trigger functions are compared by name (a team login cannot swap them)
    with raw(journal_path) as conn:
        event = "DELETE" if name.endswith("delete") else "INSERT"
        conn.execute(f"CREATE TRIGGER {name} BEFORE {event} ON operator_keys BEGIN SELECT 1; END")
    report = verify(operator, trust=None)
    assert [(p.what, p.where) for p in report.problems] == [("trigger altered", name)]
