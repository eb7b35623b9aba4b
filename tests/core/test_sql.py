"""Prepared write-path statements (core/storage/sql.py): what they return, the errors they raise, and
that a statement recorder still sees every statement of a write."""

from __future__ import annotations

import pytest
from sqlalchemy import event, exc

from proctor.core import errors
from proctor.core.storage import pg
from proctor.core.storage import schema as s
from proctor.core.storage.sql import insert_rows, row_where, update_where

from .helpers import ACTION


def in_write(journal, fn):  # a Journal and a callable
    return journal.write(lambda tx: fn(tx.conn))


def test_rows_read_like_result_rows_with_booleans_converted(agent, run):
    row = in_write(agent, lambda c: row_where(c, s.runs, id=run.id))
    assert row.id == run.id and row._mapping["project"] == run.project
    assert row.cancel_requested is False  # SQLite stores 0; the Boolean column reads False
    assert in_write(agent, lambda c: row_where(c, s.runs, id="run_missing")) is None


def test_none_in_a_where_means_is_null(agent, run):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    changed = in_write(
        agent,
        lambda c: update_where(
            c, s.approvals, {"snoozed_until": 5.0}, id=approval.id, consumed_at=None
        ),
    )
    assert changed == 1  # "consumed_at = NULL" would match nothing
    assert (
        in_write(
            agent, lambda c: row_where(c, s.approvals, id=approval.id, decided_at=None)
        ).snoozed_until
        == 5.0
    )


def test_driver_errors_come_back_as_sqlalchemy_errors(agent, run):
    row = {"run_id": run.id, "number": 1, "status": "running", "started_at": 0.0}
    with pytest.raises(exc.IntegrityError):
        in_write(agent, lambda c: insert_rows(c, s.attempts, [row]))  # attempt 1 exists
    with pytest.raises(errors.Refused, match="immutable"):  # the trigger still fires: typed
        in_write(agent, lambda c: update_where(c, s.events, {"type": "x"}, run_id=run.id))


def test_a_recorder_sees_every_statement_and_the_results_do_not_change(agent, operator, run):
    plain = agent.approvals.request(run.id, ACTION, reason="plain")
    seen: list[str] = []

    def record(conn, cursor, statement, *_args):  # SQLAlchemy event signature
        seen.append(
            statement.split()[0].upper() + " " + statement.split()[2]
            if statement.lstrip().upper().startswith("INSERT")
            else statement.split()[0].upper()
        )

    event.listen(agent._writer, "before_cursor_execute", record)
    try:
        recorded = agent.approvals.request(run.id, ACTION, reason="recorded")
        events = agent.runs.append_events(run.id, [("a", {"n": 1}), ("b", None)])
    finally:
        event.remove(agent._writer, "before_cursor_execute", record)
    assert seen[0] == "BEGIN" and seen.count("BEGIN") == 2
    assert {"INSERT approvals", "INSERT events", "INSERT changes", "UPDATE"} <= set(seen)
    assert recorded.status == plain.status == "pending" and recorded.reason == "recorded"
    assert recorded.model_dump().keys() == plain.model_dump().keys()
    assert [e.type for e in events] == ["a", "b"]
    assert agent.runs.events(run.id, limit=100)[-2:] == events


def test_a_row_read_with_its_parent_reads_like_two_row_wheres(agent, run):
    from proctor.core.storage.sql import parent_and_row, row_and_parent

    agent.effects.reserve("k", tool="t", run_id=run.id, action=None)
    agent.effects.reserve("orphan", tool="t", action=None)

    def read(c):
        return (
            row_and_parent(c, s.effects, s.runs, "run_id", key="k"),
            row_and_parent(c, s.effects, s.runs, "run_id", key="orphan"),
            row_and_parent(c, s.effects, s.runs, "run_id", key="missing"),
            parent_and_row(c, s.runs, run.id, s.effects, key="k"),
            parent_and_row(c, s.runs, run.id, s.effects, key="missing"),
            parent_and_row(c, s.runs, "run_missing", s.effects, key="k"),
            row_where(c, s.effects, key="k"),
            row_where(c, s.runs, id=run.id),
        )

    seen: list[str] = []

    def record(*args):  # SQLAlchemy's signature
        seen.append(args[2])

    for listening in (False, True):  # straight to the driver, and through a recorder
        if listening:
            event.listen(agent._writer, "before_cursor_execute", record)
        try:
            (effect, head), orphan, missing, beside, alone, no_run, plain, plain_run = in_write(
                agent, read
            )
        finally:
            if listening:
                event.remove(agent._writer, "before_cursor_execute", record)
        assert effect == plain and effect._mapping == plain._mapping
        assert head == plain_run and head.cancel_requested is False  # Boolean converted
        assert orphan[0].key == "orphan" and orphan[1] is None
        assert missing == (None, None)
        assert beside == (plain_run, plain) and alone == (plain_run, None)
        assert no_run is None
        assert head._replace(version=99).version == 99  # what the run cache needs of it
        reads = [x for x in seen if x.startswith("SELECT") and x != pg.LOCK_SQL]  # a
        assert len(reads) == (8 if listening else 0)  # server's write lock is a SELECT too


def test_the_joined_reads_compile_for_postgresql():
    """Portable: the same Core statements, compiled with PostgreSQL's dialect (no driver)."""
    from sqlalchemy.dialects import postgresql

    from proctor.core.storage.sql import _beside_parent, _where_keys, _with_parent

    pg = postgresql.dialect()
    joined = str(
        _with_parent(s.effects, s.runs, "run_id", _where_keys({"key": "k"})).compile(dialect=pg)
    )
    beside = str(
        _beside_parent(
            s.runs, s.approvals, _where_keys({"request_key": "r", "consumed_at": None})
        ).compile(dialect=pg)
    )
    for text in (joined, beside):
        assert "LEFT OUTER JOIN" in text and "?" not in text and "%(" in text
    assert "approvals.consumed_at IS NULL" in beside
