"""A journal on a PostgreSQL server: what only a server journal has to prove.

The whole core suite also runs on a server journal (tests/core/conftest.py); here are the
server's own rules: raw SQL refused as SQLite's triggers refuse it (said in psycopg's own
words, no adapter), the change feed that never skips under a late commit, NOTIFY, the
write lock's timeout, and connection failures told in a sentence."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.storage import pg

from .helpers import ACTION


def connect(server, url: str) -> psycopg.Connection:  # tests/pg_server.PgServer
    """A raw connection to the journal's database, in autocommit mode: the adversary."""
    return psycopg.connect(server.dsn(url.rsplit("/", 1)[1]), autocommit=True)


@pytest.fixture
def raw(pg_server, pg_url):
    conn = connect(pg_server, pg_url)
    yield conn
    conn.close()


@pytest.fixture
def pair(pg_url):
    agent = Journal.open(pg_url, actor=Actor.agent("agent-1"))
    operator = Journal.open(pg_url, actor=Actor.operator("alice"))
    yield agent, operator
    agent.close()
    operator.close()


def decided(agent: Journal, operator: Journal):
    run = agent.runs.start("proj", "raw sql")
    approval = agent.approvals.request(run.id, ACTION, reason="clean up")
    operator.approvals.decide(approval.id, True, expected_version=1, reason="fine")
    return run, approval


# ---------------------------------------------------------------- raw SQL, refused
REFUSED = [
    ("UPDATE approvals SET action = %s WHERE id = %s", lambda a: ('{"tool":"pay"}', a.id)),
    ("UPDATE approvals SET action_digest = %s WHERE id = %s", lambda a: ("0" * 64, a.id)),
    (
        "UPDATE decisions SET decision = '{\"approved\":false}' WHERE target_id = %s",
        lambda a: (a.id,),
    ),
    ("UPDATE decisions SET actor = 'operator:mallory' WHERE target_id = %s", lambda a: (a.id,)),
    ("DELETE FROM decisions WHERE target_id = %s", lambda a: (a.id,)),
    ("DELETE FROM audit WHERE entity_id = %s", lambda a: (a.id,)),
    ("UPDATE audit SET actor = 'operator:mallory' WHERE entity_id = %s", lambda a: (a.id,)),
    ("DELETE FROM events WHERE run_id = %s", lambda a: (a.run_id,)),
    ("UPDATE events SET payload = '{}' WHERE run_id = %s", lambda a: (a.run_id,)),
    ("DELETE FROM changes", lambda a: ()),
    ("UPDATE changes SET entity_id = 'forged'", lambda a: ()),
    ("TRUNCATE audit", lambda a: ()),
    ("TRUNCATE changes", lambda a: ()),
    ("TRUNCATE events CASCADE", lambda a: ()),
    ("DELETE FROM journal_meta", lambda a: ()),
    ("UPDATE journal_meta SET value = 'jnl_other'", lambda a: ()),
    # an upsert's DO UPDATE goes through the UPDATE triggers
    (
        "INSERT INTO approvals SELECT * FROM approvals WHERE id = %s ON CONFLICT (id) DO UPDATE "
        'SET action = \'{"tool":"pay"}\'',
        lambda a: (a.id,),
    ),
    # a forged change row onto an existing seq (the no-replace rule)
    (
        "INSERT INTO changes (seq, entity_kind, entity_id, run_id, created_at) "
        "SELECT seq, 'approval', 'forged', NULL, 0 FROM changes ORDER BY seq LIMIT 1",
        lambda a: (),
    ),
]


@pytest.mark.parametrize(("sql", "params"), REFUSED, ids=[s[:40] for s, _ in REFUSED])
def test_the_server_refuses_what_the_sqlite_triggers_refuse(pair, raw, sql, params):
    agent, operator = pair
    _run, approval = decided(agent, operator)
    before = {
        t: raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("approvals", "decisions", "audit", "events", "changes")
    }
    with pytest.raises(psycopg.errors.IntegrityError, match="immutable"):
        raw.execute(sql, params(approval))
    after = {t: raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in before}
    assert after == before
    stored = operator.approvals.get(approval.id)
    assert stored.action == ACTION and stored.status == "approved"
    assert verify(operator).ok


def test_a_refusal_is_refused_with_sqlites_words_and_the_trigger_set_is_complete(pair):
    agent, operator = pair
    _run, approval = decided(agent, operator)

    def forge(tx):  # a service bug writing raw SQL in a transaction
        from sqlalchemy import text

        tx.conn.execute(
            text("UPDATE approvals SET action = '{}' WHERE id = :i"), {"i": approval.id}
        )

    with pytest.raises(errors.Refused, match="identity columns are immutable") as refused:
        operator.write(forge)
    assert refused.value.rule == "approvals identity columns are immutable"  # SQLite's words
    assert operator.missing_triggers() == set()
    names = operator.read(lambda c: pg.trigger_names(c))
    assert {
        "trg_audit_no_truncate",
        "trg_changes_ordered",
        "trg_approvals_identity",
        "trg_changes_no_replace",
    } <= names


def test_verify_names_a_dropped_trigger(pair, raw):
    _agent, operator = pair
    raw.execute("DROP TRIGGER trg_decisions_no_update ON decisions")
    raw.execute("ALTER TABLE audit DISABLE TRIGGER trg_audit_no_delete")
    assert operator.missing_triggers() == {"trg_decisions_no_update", "trg_audit_no_delete"}
    report = verify(operator)
    assert not report.ok


# ---------------------------------------------------------------- the change feed
def backend_waiting_on_lock(raw, pid: int) -> bool:
    row = raw.execute(
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
    ).fetchone()
    return row is not None and row[0] == "Lock"


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def late_commit(pg_server, pg_url, operator: Journal, agent: Journal, watch):
    """A raw writer takes its change row's seq and holds its transaction open; the agent
    writes meanwhile; the desk reads the feed before and after. Returns the seqs the desk
    read, the late row's seq, and every seq committed."""
    seen = operator.changes.latest()
    first = connect(pg_server, pg_url)
    first.execute("BEGIN")
    first.execute(
        "INSERT INTO changes (entity_kind, entity_id, run_id, created_at) "
        "VALUES ('run', 'late', NULL, 0)"
    )
    done = threading.Event()
    pids: list[int] = []

    def write() -> None:
        agent.runs.start("proj", "meanwhile")
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    read: list[int] = []
    # the agent's write either waits for the lock, or commits: read the feed as a desk does
    wait_for(
        lambda: (
            done.is_set()
            or any(  # (watch: outside any transaction, fresh stats)
                backend_waiting_on_lock(watch, pid) for pid in _agent_pids(watch, pids)
            )
        )
    )
    batch = operator.changes.since(seen)
    read += [c.seq for c in batch.changes]
    seen = batch.until
    first.execute("COMMIT")
    first.close()
    writer.join(30)
    assert done.is_set()
    batch = operator.changes.since(seen)
    read += [c.seq for c in batch.changes]
    every = operator.changes.since(0).changes
    [late] = [c.seq for c in every if c.entity_id == "late"]
    return read, late, [c.seq for c in every]


def _agent_pids(conn, pids: list[int]) -> list[int]:
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'proctor' "
        "AND pid <> pg_backend_pid()"
    ).fetchall()
    return [r[0] for r in rows]


def test_a_late_commit_is_never_skipped_by_the_feed(pg_server, pg_url, pair, raw):
    agent, operator = pair
    agent.runs.start("proj", "before")
    before = operator.changes.latest()
    read, late, committed = late_commit(pg_server, pg_url, operator, agent, raw)
    new = [s for s in committed if s > before]
    assert read == new, (read, new)  # every committed row read, in order, once
    assert new == list(range(before + 1, before + len(new) + 1))  # and no gap
    assert late in read


def test_without_the_ordering_trigger_the_same_interleaving_skips(pg_server, pg_url, pair, raw):
    """The control: the interleaving above is real. With ``trg_changes_ordered`` dropped (the
    rows numbered by a plain sequence, outside the lock), the agent commits a higher seq
    first and the desk's cursor passes the late row."""
    agent, operator = pair
    agent.runs.start("proj", "before")
    raw.execute("DROP TRIGGER trg_changes_ordered ON changes")
    raw.execute(
        "SELECT setval(pg_get_serial_sequence('changes', 'seq'), (SELECT max(seq) FROM changes))"
    )
    read, late, _committed = late_commit(pg_server, pg_url, operator, agent, raw)
    assert late not in read  # skipped: the desk never learns of it


def test_a_write_notifies_a_waiting_desk(pair):
    agent, operator = pair
    assert operator.changes.wait(0.05) is False  # nothing happened: it times out
    run = agent.runs.start("proj", "wake up")
    assert operator.changes.wait(10) is True
    while operator.changes._listener.latest < operator.changes.latest():  # the payload: the
        assert operator.changes.wait(10) is True  # newest seq (the rest may come in a moment)
    assert operator.changes._listener.latest == operator.changes.latest()
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(operator.changes.wait(20)))
    waiter.start()
    time.sleep(0.1)  # the waiter is (most likely) blocked now; either way it must see this
    agent.runs.append_event(run.id, "step", {})
    waiter.join(30)
    assert woke == [True]


def test_changes_wait_wakes_on_another_writers_commit(journal_path, clock):
    with (
        Journal.open(journal_path, actor=Actor.agent("a"), clock=clock) as agent,
        Journal.open(journal_path, actor=Actor.operator("o"), clock=clock) as operator,
    ):
        assert operator.changes.wait(0.05) is False
        threading.Timer(0.1, lambda: agent.runs.start("p", "t")).start()
        assert operator.changes.wait(10) is True


# ---------------------------------------------------------------- the write lock
def test_a_writer_that_waits_too_long_is_told_the_journal_is_busy(pg_url, raw):
    agent = Journal.open(pg_url, actor=Actor.agent("agent-1"), busy_timeout=0.2)
    try:
        raw.execute("BEGIN")
        raw.execute(pg.LOCK_SQL)  # another host's writer holds the write lock
        with pytest.raises(errors.StoreBusy, match="busy"):
            agent.runs.start("proj", "blocked")
        raw.execute("ROLLBACK")
        assert agent.runs.list().items == []
        agent.runs.start("proj", "after")  # the connection is fine afterwards
    finally:
        agent.close()


def test_a_lock_timeout_is_busy_not_a_lost_connection(pg_url, raw, monkeypatch):
    """lock_timeout at BEGIN is the server's answer on a working connection: no reconnect
    (which would close every thread's connections and wait a second full timeout), and the
    aborted transaction is rolled back so the next write on this thread works."""
    agent = Journal.open(pg_url, actor=Actor.agent("agent-1"), busy_timeout=0.5)
    reconnects: list[int] = []
    plain = agent.reconnect
    monkeypatch.setattr(agent, "reconnect", lambda: (reconnects.append(1), plain())[1])
    try:
        agent.runs.start("proj", "before")  # this thread's write connection exists
        raw.execute("BEGIN")
        raw.execute(pg.LOCK_SQL)  # another host's writer holds the write lock
        with pytest.raises(errors.StoreBusy, match="busy"):
            agent.runs.start("proj", "blocked")
        assert reconnects == []  # one lock_timeout waited, no connection dropped
        raw.execute("ROLLBACK")
        agent.runs.start("proj", "after")  # the same connection, not left aborted
        assert reconnects == []
        assert sorted(r.title for r in agent.runs.list().items) == ["after", "before"]
    finally:
        agent.close()


def test_only_a_broken_connection_is_lost():
    lookup = psycopg.errors.lookup
    for state in ("55P03", "40P01", "57014", "53100"):  # lock timeout, deadlock, cancel, disk
        assert not pg.lost_connection(lookup(state)("x")), state
    for state in ("08006", "08003", "57P01", "57P02", "57P03"):
        assert pg.lost_connection(lookup(state)("x")), state
    assert pg.lost_connection(psycopg.OperationalError("the connection is closed"))
    assert pg.lost_connection(psycopg.InterfaceError("the connection is lost"))


def test_a_dead_client_cannot_keep_the_write_lock(pg_url):
    """The server ends a transaction its client left idle, and TCP keepalives find a dead
    peer: on the store's connections and on the LISTEN connection."""
    with Journal.open(pg_url, actor=Actor.agent("a")) as journal:

        def settings(conn):
            params = conn.connection.driver_connection.info.get_parameters()
            return (
                conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar(),
                params.get("keepalives"),
                params.get("keepalives_idle"),
            )

        assert journal.read(settings) == ("1min", "1", "10")
        assert journal.write(lambda tx: settings(tx.conn)) == ("1min", "1", "10")
        listen = pg.Listener(journal.path)
        try:
            params = listen._connection().info.get_parameters()
            assert (params.get("keepalives"), params.get("keepalives_idle")) == ("1", "10")
        finally:
            listen.close()


def test_connections_the_server_dropped_are_made_anew(pair, raw):
    """A server restart or a dropped network kills the kept connections while idle: the next
    read and the next write open fresh ones (nothing had begun, so nothing is retried twice)."""
    agent, operator = pair
    agent.runs.start("proj", "before")
    operator.runs.list()
    killed = raw.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = 'proctor'"
    ).fetchone()[0]
    assert killed >= 2
    assert len(operator.runs.list().items) == 1
    agent.runs.start("proj", "after")
    assert len(operator.runs.list().items) == 2


def test_reads_are_one_snapshot(pair, raw):
    agent, operator = pair
    agent.runs.start("proj", "one")

    def twice(conn):
        from sqlalchemy import text

        first = conn.execute(text("SELECT count(*) FROM runs")).scalar()
        agent.runs.start("proj", "committed in between")
        return first, conn.execute(text("SELECT count(*) FROM runs")).scalar()

    assert operator.read(twice) == (1, 1)
    assert len(operator.runs.list().items) == 2


# ---------------------------------------------------------------- opening
def test_connection_failures_are_told_in_a_sentence(pg_server):
    port = pg_server.port
    cases = {
        f"postgresql+psycopg://proctor:wrong@127.0.0.1:{port}/postgres": "refused the login",
        f"postgresql+psycopg://proctor:proctor-test@127.0.0.1:{port}/nosuchdb": "no such database",
        "postgresql+psycopg://proctor:proctor-test@127.0.0.1:1/db": "cannot reach",
    }
    for url, said in cases.items():
        with pytest.raises(errors.StoreError) as caught:
            Journal.open(url, actor=Actor.agent("a"))
        err = caught.value
        assert said in err.message, err.message
        assert "proctor-test" not in str(err) and "wrong" not in str(err).split("://")[0]
        assert "***" in err.message  # the address is named, its password hidden
        assert type(err).__module__ == "proctor.core.errors"


def test_an_empty_database_is_made_a_journal_and_another_is_refused(pg_server):
    empty = pg_server.url(pg_server.empty_database())
    with pytest.raises(errors.NotFound):
        Journal.open(empty, actor=Actor.agent("a"), create=False)
    with Journal.open(empty, actor=Actor.agent("a")) as journal:
        assert journal.schema_revision == journal.schema_revision  # opened at head
        assert journal.missing_triggers() == set()
        journal.runs.start("p", "t")
    other = pg_server.empty_database()
    conn = connect(pg_server, pg_server.url(other))
    conn.execute("CREATE TABLE invoices (id int)")
    conn.close()
    with pytest.raises(errors.NotAJournal, match="PostgreSQL database but not a Proctor"):
        Journal.open(pg_server.url(other), actor=Actor.agent("a"))


def test_read_only_on_a_server(pg_url):
    with Journal.open(pg_url, actor=Actor.agent("a")) as agent:
        agent.runs.start("p", "t")
    with Journal.open(pg_url, actor=Actor.operator("o"), read_only=True) as observer:
        assert len(observer.runs.list().items) == 1
        with pytest.raises(errors.StoreReadOnly):
            observer.runs.start("p", "refused")


def test_values_sqlite_stores_the_server_stores(pair):
    agent, _ = pair
    run = agent.runs.start("p" * 250, "t" * 5000)  # past String(200): SQLite keeps it whole
    assert agent.runs.get(run.id).project == "p" * 250
    with pytest.raises(errors.ValidationError, match="NUL"):  # the one value it cannot hold
        agent.runs.start("p", "a\x00b")


def test_the_same_history_upgrades_and_downgrades_a_server_journal(pg_server):
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from proctor.core.storage.db import SCHEMA_HEAD

    url = pg_server.url(pg_server.empty_database())
    engine = create_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", "proctor.core.storage:migrations")
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0004")
        with Journal.open(url, actor=Actor.agent("a"), on_old_schema="read_only") as old:
            assert old.read_only and old.schema_revision == "0004"
            # read as if at head (TEMP views fill in what 0005..0006i added), nothing written
            assert old.runs.list().items == [] and old.inbox.list().items == []
            assert old.approvals.rules() == [] and old.effects.list().items == []
            with pytest.raises(errors.StoreReadOnly):
                old.runs.start("p", "refused")
        with Journal.open(url, actor=Actor.agent("a")) as agent:  # migrates to head
            assert agent.schema_revision == SCHEMA_HEAD
            assert agent.missing_triggers() == set()
            run = agent.runs.start("p", "t")
            agent.approvals.request(run.id, ACTION, reason="r")
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0005")
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        with Journal.open(url, actor=Actor.operator("o")) as operator:
            assert operator.missing_triggers() == set()
            assert verify(operator).ok
    finally:
        engine.dispose()


def test_a_server_journal_has_no_witness_file(pg_url, tmp_path, monkeypatch):
    """The desk's head witness is of a file's lost -wal: for a server journal it writes
    nothing anywhere (no file named after the URL in the working folder)."""
    from proctor.core.audit.witness import HeadWitness, check

    monkeypatch.chdir(tmp_path)
    with Journal.open(pg_url, actor=Actor.operator("o")) as journal:
        witness = HeadWitness(journal.path)
        witness.observe(journal.changes.since(0).changes)
        assert witness.write({"proctor_head_witness": 1}) is False
        assert check(journal) is None
    assert list(tmp_path.rglob("*")) == []


def test_agents_opening_a_new_server_journal_at_once_migrate_it_once(pg_server):
    """Several processes start against an empty database together: one creates the schema
    (under the write lock), the others wait and find it made."""
    url = pg_server.url(pg_server.empty_database())
    opened: list[Journal] = []
    failures: list[BaseException] = []

    def open_one(n: int) -> None:
        try:
            opened.append(Journal.open(url, actor=Actor.agent(f"agent-{n}"), busy_timeout=60))
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)

    threads = [threading.Thread(target=open_one, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    try:
        assert failures == []
        assert len(opened) == 4
        assert opened[0].missing_triggers() == set()
        for journal in opened:
            journal.runs.start("p", "t")
        assert len(opened[0].runs.list().items) == 4
    finally:
        for journal in opened:
            journal.close()


def test_the_urls_own_options_are_kept(pg_server, pg_url, raw):
    """A schema chosen in the URL (``?options=-csearch_path=...``) is the journal's schema,
    and the store's lock timeout still applies."""
    raw.execute("CREATE SCHEMA team")
    url = pg_url + "?options=-csearch_path%3Dteam"
    with Journal.open(url, actor=Actor.agent("a"), busy_timeout=1.5) as journal:
        journal.runs.start("p", "in its own schema")
        assert journal.read(lambda c: c.exec_driver_sql("SHOW lock_timeout").scalar()) == "1500ms"
        assert (
            journal.read(lambda c: c.exec_driver_sql("SELECT current_schema()").scalar()) == "team"
        )
    assert raw.execute("SELECT count(*) FROM team.runs").fetchone()[0] == 1
    assert raw.execute("SELECT count(*) FROM public.runs").fetchone()[0] == 0


def test_a_temp_table_cannot_stand_in_for_a_journal_table_in_a_trigger(pair, raw):
    """TEMP tables are searched first by default: a session's TEMP ``changes`` must not be
    what the server's triggers read (their search_path is pinned, pg_temp last)."""
    _agent, operator = pair
    latest = operator.changes.latest()
    raw.execute("CREATE TEMP TABLE changes (seq integer)")
    raw.execute("INSERT INTO pg_temp.changes VALUES (1000000)")
    raw.execute("CREATE TEMP TABLE audit (sequence integer, id text, request_id text)")
    raw.execute(
        "INSERT INTO public.changes (entity_kind, entity_id, run_id, created_at) "
        "VALUES ('run', 'x', NULL, 0)"
    )
    assert operator.changes.latest() == latest + 1  # numbered from the journal's own rows
    configs = raw.execute(
        "SELECT proname, proconfig FROM pg_proc WHERE proname LIKE 'trg_%'"
    ).fetchall()
    assert configs and all(c and c[0].endswith("pg_temp") for _n, c in configs), configs


def test_a_migration_that_waits_too_long_is_told_the_journal_is_busy(pg_server):
    url = pg_server.url(pg_server.empty_database())
    holder = connect(pg_server, url)
    try:
        holder.execute("BEGIN")
        holder.execute(pg.LOCK_SQL)  # another process is migrating it (or writing)
        with pytest.raises(errors.StoreBusy):
            Journal.open(url, actor=Actor.agent("a"), busy_timeout=0.3)
        holder.execute("ROLLBACK")
        with Journal.open(url, actor=Actor.agent("a")) as journal:
            assert journal.missing_triggers() == set()
    finally:
        holder.close()


def test_without_the_driver_a_server_url_is_refused_in_a_sentence(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the team extra were missing
    with pytest.raises(errors.StoreError, match="needs the psycopg driver") as caught:
        Journal.open("postgresql+psycopg://u:secret@127.0.0.1:1/db", actor=Actor.agent("a"))
    assert "proctor[team]" in caught.value.hint and "secret" not in str(caught.value)
