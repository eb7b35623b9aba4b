"""`proctor migrate-to` into a PostgreSQL server journal (pg-core's real server): every row
arrives byte for byte and verifies as it did in the file; a server journal with rows in it
is refused with nothing written."""

from __future__ import annotations

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.verify import verify

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
