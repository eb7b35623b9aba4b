"""A question and a memory conflict are fixed once filed (schema 0006i): what the person
answered, or chose between, cannot be rewritten with raw SQL, and INSERT OR REPLACE cannot
swap the row for another. The status, the answer and the snooze still move."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core.storage import db as core_db

from .helpers import drop_trigger, raw

SCHEMA = {"type": "object", "properties": {"account": {"type": "string"}}}


def file_question(agent, run):
    return agent.questions.ask(run.id, "question", "Refund which account?", response_schema=SCHEMA)


def file_conflict(agent, run):
    entry = agent.memory.add("project", "alpha", "payout-account", "acct-1")
    return agent.memory.record_conflict(entry.id, "acct-2", incoming_source="sync", run_id=run.id)


QUESTION_REWRITES = [
    ("prompt", "'Refund every account?'"),
    ("request", "'{}'"),
    ("response_schema", '\'{"type":"object"}\''),
    ("options", "'[\"every account\"]'"),
    ("expires_at", "12345.0"),
    ("run_id", "'run-other'"),
    ("agent", "'operator'"),
    ("request_key", "'k-other'"),
]
CONFLICT_REWRITES = [
    ("incoming_content", "'acct-666'"),
    ("local_content", "'acct-666'"),
    ("entry_id", "'mem-other'"),
    ("incoming_source", "'the operator'"),
    ("agent", "'operator'"),
]


@pytest.mark.parametrize(("column", "value"), QUESTION_REWRITES)
def test_raw_sql_cannot_rewrite_what_a_question_asks(agent, run, journal_path, column, value):
    q = file_question(agent, run)
    with (
        raw(journal_path) as conn,
        pytest.raises(sqlite3.IntegrityError, match="identity columns are immutable"),
    ):
        conn.execute(f"UPDATE interactions SET {column} = {value} WHERE id = ?", (q.id,))
    assert agent.questions.get(q.id).prompt == "Refund which account?"


@pytest.mark.parametrize(("column", "value"), CONFLICT_REWRITES)
def test_raw_sql_cannot_rewrite_what_a_conflict_offers(agent, run, journal_path, column, value):
    m = file_conflict(agent, run)
    with (
        raw(journal_path) as conn,
        pytest.raises(sqlite3.IntegrityError, match="identity columns are immutable"),
    ):
        conn.execute(f"UPDATE memory_reconciliations SET {column} = {value} WHERE id = ?", (m.id,))
    assert agent.memory.conflict(m.id).incoming_content == "acct-2"


@pytest.mark.sqlite_only
def test_insert_or_replace_cannot_swap_an_answered_question(agent, operator, run, journal_path):
    q = file_question(agent, run)
    operator.questions.answer(q.id, {"account": "acct-1"}, expected_version=q.version)
    with raw(journal_path) as conn:
        conn.execute("PRAGMA recursive_triggers = OFF")
        row = conn.execute("SELECT * FROM interactions WHERE id = ?", (q.id,)).fetchone()
        names = [d[0] for d in conn.execute("SELECT * FROM interactions LIMIT 0").description]
        forged = dict(zip(names, row, strict=True))
        forged["prompt"] = "Refund every account?"
        marks = ", ".join("?" for _ in names)
        for verb in ("INSERT OR REPLACE", "REPLACE"):
            with pytest.raises(sqlite3.IntegrityError, match="that key exists"):
                conn.execute(
                    f"{verb} INTO interactions ({', '.join(names)}) VALUES ({marks})",
                    list(forged.values()),
                )
    assert operator.questions.get(q.id).prompt == "Refund which account?"


def test_insert_or_replace_cannot_swap_a_pending_conflict(agent, run, journal_path):
    """Neither onto its id nor through the one-pending-per-entry index (a new id)."""
    m = file_conflict(agent, run)
    with raw(journal_path) as conn:
        row = conn.execute("SELECT * FROM memory_reconciliations WHERE id = ?", (m.id,)).fetchone()
        names = [
            d[0] for d in conn.execute("SELECT * FROM memory_reconciliations LIMIT 0").description
        ]
        marks = ", ".join("?" for _ in names)
        statement = (
            f"INSERT OR REPLACE INTO memory_reconciliations ({', '.join(names)}) VALUES ({marks})"
        )
        for new_id in (m.id, "rec-forged"):
            forged = dict(zip(names, row, strict=True), id=new_id, incoming_content="acct-666")
            with pytest.raises(sqlite3.IntegrityError, match=r"immutable|pending conflict"):
                conn.execute(statement, list(forged.values()))
        ids = [r[0] for r in conn.execute("SELECT id FROM memory_reconciliations")]
    assert ids == [m.id]
    assert agent.memory.conflict(m.id).incoming_content == "acct-2"


def test_answers_snoozes_and_resolutions_still_move(agent, operator, run):
    q = file_question(agent, run)
    operator.questions.answer(q.id, {"account": "acct-1"}, expected_version=q.version)
    assert operator.questions.get(q.id).status.value == "resolved"
    m = file_conflict(agent, run)
    done = operator.memory.resolve(
        m.id, "accepted_incoming", expected_version=m.version, reason="the sync is right"
    )
    assert done.status.value == "accepted_incoming"


def test_a_journal_without_the_triggers_is_reported(journal_path, agent):
    with raw(journal_path) as conn:
        drop_trigger(conn, "trg_interactions_identity", "interactions")
        drop_trigger(
            conn, "trg_memory_reconciliations_no_replace_pending", "memory_reconciliations"
        )
    missing = agent.missing_triggers()
    assert {"trg_interactions_identity", "trg_memory_reconciliations_no_replace_pending"} <= set(
        missing
    )


def test_request_triggers_belong_to_0006i_only():
    assert core_db.request_trigger_sql().keys() <= core_db.expected_trigger_names()
    assert not core_db.request_trigger_sql().keys() & core_db.expected_trigger_names("0006o")


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("table", "key", "row"),
    [
        ("journal_meta", "key", {"key": "journal_id", "value": "jrn_of_another_journal"}),
        ("signatures", "record_id", None),
    ],
)
def test_insert_or_replace_cannot_swap_the_journal_id_or_a_signature(
    agent, operator, run, journal_path, table, key, row
):
    """Schema 0007j: REPLACE deletes without firing 0005s's DELETE trigger; another journal's
    id would make its signed decisions verify here."""
    if row is None:
        from proctor.core.decisions.keys import OperatorKey

        signer = operator.__class__.open(
            journal_path, actor=operator.actor, signer=OperatorKey.generate(operator.actor.name)
        )
        a = agent.approvals.request(run.id, {"tool": "t", "args": {}}, reason="r")
        signer.approvals.decide(a.id, True, expected_version=a.version)
        signer.close()
    with raw(journal_path) as conn:
        conn.execute("PRAGMA recursive_triggers = OFF")
        names = [d[0] for d in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]
        stored = conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchone()
        assert stored is not None
        forged = dict(zip(names, stored, strict=True), **(row or {}))
        if row is None:
            forged["signature"] = "forged"
        marks = ", ".join("?" for _ in names)
        for verb in ("INSERT OR REPLACE", "REPLACE"):
            with pytest.raises(sqlite3.IntegrityError, match="that key exists"):
                conn.execute(
                    f"{verb} INTO {table} ({', '.join(names)}) VALUES ({marks})",
                    list(forged.values()),
                )
        assert (
            conn.execute(
                f"SELECT * FROM {table} WHERE {key} = ?", (stored[names.index(key)],)
            ).fetchone()
            == stored
        )
