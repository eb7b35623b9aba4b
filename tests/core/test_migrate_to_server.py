"""`proctor migrate-to` into a PostgreSQL server journal (pg-core's real server): every row
arrives byte for byte and verifies as it did in the file; a server journal with rows in it
is refused with nothing written."""

from __future__ import annotations

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify

from . import test_migrate_to as file_case
from .conftest import AGENT, OPERATOR

key, trust_path, source = file_case.key, file_case.trust_path, file_case.source  # fixtures


def test_a_journal_file_arrives_on_the_server_byte_for_byte(source, pg_server, trust_path):
    name = pg_server.empty_database()  # a new database: the target's Journal.open migrates it
    url = pg_server.url(name)
    try:
        report, before, after = file_case.migrate(source, url)
        assert report.ok, report.verify.problems
        assert after == before  # ids, times, JSON text, digests, signatures, the journal id
        assert report.rows["events"] == len(before["events"]) > 0
        with Journal.open(source, actor=Actor.operator(OPERATOR), read_only=True) as j:
            at_home = verify(j, trust=trust_path)
        with Journal.open(url, actor=Actor.operator(OPERATOR), read_only=True) as j:
            arrived = verify(j, trust=trust_path)
            assert j.missing_triggers() == set()
        assert arrived.signatures == at_home.signatures and arrived.signatures["signed"] == 3
        assert arrived.problems == at_home.problems
        with Journal.open(url, actor=Actor.agent(AGENT)) as j:  # and it goes on as a journal
            run = j.runs.start("proj", "after the move")
            assert j.runs.get(run.id).last_sequence == 1
            assert j.changes.latest() > max(row[0] for row in before["changes"])
    finally:
        pg_server.drop_database(name)


def test_a_server_journal_with_rows_in_it_is_refused(source, pg_url):
    with Journal.open(pg_url, actor=Actor.agent(AGENT)) as j:
        j.runs.start("proj", "already here")
        before = file_case.every_row(j)
    with pytest.raises(errors.NotAllowed, match="not empty"):
        file_case.migrate(source, pg_url)
    with Journal.open(pg_url, actor=Actor.agent(AGENT)) as j:
        assert file_case.every_row(j) == before


def test_a_child_run_older_than_its_parent_arrives(tmp_path, pg_url, monkeypatch):
    """A clock set back (or another host's) gives a child run an earlier created_at than
    its parent: the copy still puts the parent first, and the server's foreign key holds."""
    import proctor.core.ops.migrate_to as mt

    monkeypatch.setattr(mt, "PAGE", 2)  # pages cut between a parent and its children
    now = [1000.0]
    path = tmp_path / "clock.db"
    with Journal.open(path, actor=Actor.agent(AGENT), clock=lambda: now[0]) as j:
        parent = j.runs.start("proj", "parent")
        now[0] = 10.0  # the clock went back
        child = j.runs.start("proj", "child", parent_run_id=parent.id)
        now[0] = 5.0
        grandchild = j.runs.start("proj", "grandchild", parent_run_id=child.id)
        now[0] = 1.0
        j.runs.start("proj", "alone")
    report, before, after = file_case.migrate(path, pg_url)
    assert report.ok, report.verify.problems
    assert after == before
    assert report.rows["runs"] == 4
    with Journal.open(pg_url, actor=Actor.operator(OPERATOR), read_only=True) as j:
        assert j.runs.get(grandchild.id).parent_run_id == child.id


def test_a_row_the_target_refuses_is_a_typed_error(tmp_path, pg_url):
    """A source whose run names a parent it lacks (altered behind the journal): the
    server's foreign key refuses it as Corrupt, not a raw IntegrityError; nothing copied."""
    import sqlite3

    path = tmp_path / "orphan.db"
    with Journal.open(path, actor=Actor.agent(AGENT)) as j:
        run = j.runs.start("proj", "orphan")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DROP TRIGGER trg_runs_census_identity")  # a run's parent is identity
    conn.execute("UPDATE runs SET parent_run_id = 'run_missing' WHERE id = ?", (run.id,))
    conn.commit()
    conn.close()
    with pytest.raises(errors.Corrupt, match="refused a row of runs"):
        file_case.migrate(path, pg_url)
    with Journal.open(pg_url, actor=Actor.agent(AGENT)) as j:
        assert j.runs.list().items == []
