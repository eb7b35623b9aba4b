"""Evidence is immutable by trigger, sequences are gapless, and `verify` recomputes both hash
chains and names the first broken link (DESIGN §2 invariant 8)."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from sqlalchemy import text

from proctor.core.audit.verify import verify
from proctor.core.storage.schema import IMMUTABLE_TABLES

from .helpers import drop_immutability_triggers, raw, row_counts

EVIDENCE = ("events", "receipts", "decisions", "audit", "memory_mutations", "changes")


@pytest.fixture
def journal_path(tmp_path, busy_template):
    """Every test here starts from a copy of the session's busy journal."""
    path = tmp_path / "busy.db"
    shutil.copy2(busy_template[0], path)
    return path


@pytest.fixture
def busy(busy_template):
    return busy_template[1]


def restore_triggers(journal) -> None:
    from proctor.core.storage.db import create_all_triggers

    journal.write(lambda tx: create_all_triggers(tx.conn))


def test_busy_journal_verifies(agent, busy, journal_path):
    counts = row_counts(journal_path)
    assert all(counts[t] > 0 for t in EVIDENCE), counts
    report = verify(agent)
    assert report.ok, report.problems
    assert report.checked_runs == 3 and report.checked_events == counts["events"]
    assert report.checked_audit == counts["audit"]
    for run_id in busy["runs"]:
        seqs = [e.sequence for e in agent.runs.events(run_id, limit=1000)]
        assert seqs == list(range(1, len(seqs) + 1))
        assert agent.runs.get(run_id).last_sequence == len(seqs)


def test_schema_protects_every_evidence_table():
    assert set(EVIDENCE) <= set(IMMUTABLE_TABLES)


@pytest.mark.parametrize("table", EVIDENCE)
@pytest.mark.parametrize("sql", ["UPDATE {t} SET created_at = created_at + 1", "DELETE FROM {t}"])
def test_evidence_rows_cannot_be_changed_by_raw_sql(busy, journal_path, table, sql):
    before = row_counts(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.DatabaseError, match="immutable"):
        conn.execute(sql.format(t=table))
    assert row_counts(journal_path) == before


def test_missing_triggers_are_reported(agent, busy, journal_path):
    with raw(journal_path) as conn:
        conn.execute("DROP TRIGGER trg_events_no_update")
    report = verify(agent)
    assert not report.ok
    assert [(p.what, p.where) for p in report.problems] == [
        ("trigger missing", "trg_events_no_update")
    ]


def tamper(journal_path, sql, *params):
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(sql, params)


def test_tampered_event_names_the_first_broken_link(agent, busy, journal_path):
    run_id = busy["runs"][1]
    for seq in (5, 3):  # two edits; verify must name the earlier one
        tamper(
            journal_path,
            "UPDATE events SET payload = '{\"n\":99}' WHERE run_id = ? AND sequence = ?",
            run_id,
            seq,
        )
    restore_triggers(agent)
    report = verify(agent)
    assert not report.ok
    first = report.first_problem
    assert first.what == "event chain broken"
    assert run_id in first.where and "#3" in first.where
    assert [p.what for p in report.problems] == ["event chain broken"]
    assert verify(agent, run_id=busy["runs"][0]).ok


def test_deleted_event_is_a_sequence_gap(agent, busy, journal_path):
    run_id = busy["runs"][1]
    tamper(journal_path, "DELETE FROM events WHERE run_id = ? AND sequence = 2", run_id)
    restore_triggers(agent)
    first = verify(agent).first_problem
    assert first.what == "sequence gap" and "#3" in first.where and "#2" in first.detail


def test_tampered_audit_row_breaks_the_audit_chain(agent, busy, journal_path):
    tamper(journal_path, "UPDATE audit SET reason = 'nothing to see' WHERE sequence = 2")
    restore_triggers(agent)
    report = verify(agent)
    assert [(p.what, p.where.split(" (")[0]) for p in report.problems] == [
        ("audit chain broken", "audit #2")
    ]


def test_truncated_history_no_longer_matches_the_run_head(agent, busy, journal_path):
    run_id = busy["runs"][1]
    last = agent.runs.get(run_id).last_sequence
    tamper(journal_path, "DELETE FROM events WHERE run_id = ? AND sequence = ?", run_id, last)
    restore_triggers(agent)
    first = verify(agent).first_problem
    assert first.what == "run head mismatch" and run_id in first.where


def test_verify_one_run(agent, busy):
    report = verify(agent, run_id=busy["runs"][0])
    assert report.ok and report.checked_runs == 1 and report.checked_audit == 0
    n = agent.read(
        lambda c: c.execute(
            text("SELECT COUNT(*) FROM events WHERE run_id = :r"), {"r": busy["runs"][0]}
        ).scalar()
    )
    assert report.checked_events == n
