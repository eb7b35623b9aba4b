"""Opening a journal: file modes, pragmas, read-only, schema too new/old, damaged and foreign
files (issue 2 storage rules)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from proctor.core import Actor, ActorKind, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.storage import db as core_db
from proctor.core.storage import revisions as core_revisions

from .helpers import ACTION, raw, snapshot

REAL_HEAD = core_db.SCHEMA_HEAD


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def umask_zero():
    old = os.umask(0)
    yield
    os.umask(old)


def test_new_journal_is_private_folder_and_files(tmp_path, umask_zero):
    path = tmp_path / "fresh" / "journal.db"
    with Journal.open(path, actor=Actor.agent("a")) as journal:
        journal.runs.start("p", "t")
        assert mode(path.parent) == 0o700
        for suffix in ("", "-wal", "-shm"):
            assert mode(Path(f"{path}{suffix}")) == 0o600, suffix


@pytest.mark.sqlite_only
def test_connections_use_wal_full_sync_foreign_keys(journal_path):
    with Journal.open(journal_path, busy_timeout=2.5) as journal:
        pragmas = journal.read(
            lambda c: {
                name: c.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
            }
        )
    assert pragmas == {
        "journal_mode": "wal",
        "synchronous": 2,
        "foreign_keys": 1,
        "busy_timeout": 2500,
    }


@pytest.mark.sqlite_only
def test_a_rebuildable_journal_may_skip_the_per_commit_fsync(journal_path):
    with Journal.open(journal_path, synchronous="NORMAL") as journal:
        assert journal.read(lambda c: c.exec_driver_sql("PRAGMA synchronous").scalar()) == 1
        journal.runs.start("p", "t")
    with Journal.open(journal_path) as journal:  # the next open is FULL again
        assert journal.read(lambda c: c.exec_driver_sql("PRAGMA synchronous").scalar()) == 2
        assert journal.runs.count() == 1


@pytest.mark.sqlite_only
def test_writes_take_the_lock_up_front_and_report_busy(journal_path):
    with Journal.open(journal_path, actor=Actor.agent("a"), busy_timeout=0.1) as journal:
        run = journal.runs.start("p", "t")
        with raw(journal_path) as other:
            other.execute("BEGIN IMMEDIATE")
            before_reads = journal.runs.get(run.id)  # WAL: readers never wait
            with pytest.raises(errors.StoreBusy):
                journal.runs.append_event(run.id, "x", {})
            other.execute("ROLLBACK")
        assert journal.runs.get(run.id) == before_reads
        assert journal.runs.append_event(run.id, "x", {}).sequence == 2


def test_urls_paths_and_actors(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_OPERATOR", "night-shift")
    path = tmp_path / "j.db"
    with Journal.open(f"sqlite:///{path}") as journal:
        assert journal.path == path and journal.actor == Actor.operator("night-shift")
    with Journal.open(path, actor="bob") as journal:
        assert journal.actor.kind is ActorKind.OPERATOR and journal.actor.name == "bob"
    with pytest.raises(errors.StoreError):
        Journal.open("postgresql://db/proctor")
    with pytest.raises(errors.StoreError):
        Journal.open(tmp_path)
    with pytest.raises(errors.NotFound):
        Journal.open(tmp_path / "missing.db", create=False)
    with pytest.raises(errors.NotFound):
        Journal.open(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.sqlite_only
def test_a_url_that_lost_a_slash_is_refused_not_made_a_file(tmp_path, monkeypatch):
    """Path("postgresql+psycopg://u:pw@host/db") is "postgresql+psycopg:/u:pw@host/db": opened
    as a path it would make a local file named after the server, password included."""
    monkeypatch.chdir(tmp_path)
    for given in (
        "postgresql+psycopg:/alice:pw@db.example.org:5432/proctor",
        str(Path("postgresql://alice@db/proctor")),
        "sqlite:/j.db",
    ):
        with pytest.raises(errors.StoreError, match="one slash"):
            Journal.open(given)
    assert list(tmp_path.iterdir()) == []


def test_empty_file_becomes_a_journal(tmp_path):
    path = tmp_path / "empty.db"
    path.touch(mode=0o600)
    with Journal.open(path, actor=Actor.agent("a")) as journal:
        assert journal.runs.start("p", "t").status == "running"
        assert journal.missing_triggers() == set()
        assert journal.integrity_check() == ["ok"]


# ---------------------------------------------------------------- read-only


@pytest.fixture
def populated(agent, operator, run):
    """Something for every write method to act on; returns the ids."""
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    approved = agent.approvals.request(run.id, {"tool": "t2"}, reason="r")
    operator.approvals.decide(approved.id, True, expected_version=1)
    question = agent.questions.ask(run.id, "question", "why?")
    entry = agent.memory.add("project", "proj", "t", "c")
    conflict = agent.memory.record_conflict(entry.id, "c2", incoming_source="s")
    agent.effects.reserve("live", tool="t", owner="w")
    agent.effects.reserve("amb", tool="t", owner="w")
    agent.effects.mark_ambiguous("amb", "lost", owner="w")
    rule = operator.approvals.add_rule("allow", "never", run_id=run.id)
    call = agent.runs.record_tool_call(run.id, "t", {})
    return {
        "run": run.id,
        "approval": approval.id,
        "approved": approved,
        "question": question.id,
        "entry": entry.id,
        "conflict": conflict.id,
        "rule": rule.id,
        "call": call.id,
    }


def write_calls(a: Journal, o: Journal, ids: dict) -> list:
    """Every public write, each with arguments that would succeed on a writable journal."""
    r = ids["run"]
    return [
        lambda: a.runs.start("p", "t"),
        lambda: a.runs.start_attempt(r),
        lambda: a.runs.append_event(r, "x", {}),
        lambda: a.runs.append_events(r, [("x", 1)]),
        lambda: a.runs.record_tool_call(r, "t", {}),
        lambda: a.runs.finish_tool_call(ids["call"], "succeeded"),
        lambda: a.runs.wait_for_user(r),
        lambda: a.runs.resume(r),
        lambda: a.runs.interrupt(r, "x"),
        lambda: a.runs.complete(r),
        lambda: a.runs.fail(r, "x"),
        lambda: a.runs.cancel(r, "x"),
        lambda: o.runs.request_cancel(r, "x", expected_version=o.runs.get(r).version),
        lambda: a.approvals.request(r, ACTION, reason="again"),
        lambda: a.approvals.withdraw(ids["approval"], "x"),
        lambda: a.approvals.consume_and_reserve(
            ids["approved"].id, ids["approved"].action_digest, "new-key"
        ),
        lambda: o.approvals.decide(ids["approval"], True, expected_version=1),
        lambda: o.approvals.add_rule("deny", "*", run_id=r),
        lambda: o.approvals.revoke_rule(ids["rule"], expected_version=1),
        lambda: a.questions.ask(r, "question", "more?"),
        lambda: a.questions.withdraw(ids["question"], "x"),
        lambda: o.questions.answer(ids["question"], {"text": "x"}, expected_version=1),
        lambda: a.memory.add("user", "u", "t", "c"),
        lambda: a.memory.replace(ids["entry"], "c3", expected_version=1),
        lambda: a.memory.remove(ids["entry"], expected_version=1),
        lambda: o.memory.confirm(ids["entry"], expected_version=1),
        lambda: a.memory.pin(ids["entry"], expected_version=1),
        lambda: a.memory.record_conflict(ids["entry"], "c4", incoming_source="s"),
        lambda: o.memory.resolve(
            ids["conflict"], "dismissed", expected_version=1, reason="checked"
        ),
        lambda: a.effects.reserve("new-key", tool="t"),
        lambda: a.effects.begin("live", owner="w"),
        lambda: a.effects.renew("live", owner="w"),
        lambda: a.effects.fail("live", "x", owner="w"),
        lambda: a.effects.mark_ambiguous("live", "x", owner="w"),
        lambda: o.effects.resolve("amb", "failed", reason="r", expected_version=3),
        lambda: o.inbox.snooze("approval", ids["approval"], None, expected_version=1),
        a.approvals.expire_due,
        a.questions.expire_due,
        a.effects.sweep_expired,
    ]


def test_read_only_refuses_every_write_and_changes_nothing(journal_path, populated, clock):
    before = snapshot(journal_path)
    with (
        Journal.open(journal_path, actor=Actor.agent("agent-1"), read_only=True, clock=clock) as a,
        Journal.open(journal_path, actor=Actor.operator("alice"), read_only=True, clock=clock) as o,
    ):
        calls = write_calls(a, o, populated)
        for n, call in enumerate(calls):
            with pytest.raises(errors.StoreReadOnly):  # noqa: PT012 - the block is the one operation under test
                call()
                pytest.fail(f"write #{n} succeeded on a read-only journal")
        [result] = o.approvals.bulk_decide([(populated["approval"], 1)], True)
        assert result.error_type == "StoreReadOnly"
        assert a.runs.get(populated["run"]).id == populated["run"]  # reads work
        assert verify(a).ok
    assert snapshot(journal_path) == before


def test_waiting_on_a_read_only_journal_reports_the_stored_state(journal_path, agent, run, clock):
    """``wait`` applies a due expiry only where it can write; read-only, it just reports."""
    approval = agent.approvals.request(run.id, ACTION, reason="r", expires_in=5)
    question = agent.questions.ask(run.id, "question", "why?", expires_in=5)
    clock.advance(10)
    with Journal.open(
        journal_path, actor=Actor.agent("observer"), read_only=True, clock=clock
    ) as ro:
        assert ro.approvals.wait(approval.id, timeout=0).status == "pending"
        assert ro.questions.wait(question.id, timeout=0).status == "requested"
        with pytest.raises(errors.StoreReadOnly):
            ro.approvals.expire_due()
    assert agent.approvals.wait(approval.id, timeout=0).status == "expired"


def test_every_write_call_works_on_a_writable_journal(agent, operator, populated):
    """The list above is not vacuous: each call succeeds when the journal is writable."""
    moved_on = (
        errors.RunTerminal,
        errors.InvalidTransition,
        errors.StaleVersion,
        errors.AlreadyDecided,
    )  # an earlier call in the list moved the item on
    for call in write_calls(agent, operator, populated):
        with contextlib.suppress(*moved_on):
            call()


def test_read_only_connection_itself_refuses_writes(journal_path, run):
    with Journal.open(journal_path, actor=Actor.agent("a"), read_only=True) as journal:
        journal.read_only = False  # even without the flag check, mode=ro holds
        with pytest.raises(errors.StoreReadOnly):
            journal.runs.append_event(run.id, "x", {})


# ---------------------------------------------------------------- schema versions


def set_revision(path: Path, revision: str) -> None:
    with raw(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))


@pytest.mark.sqlite_only
@pytest.mark.parametrize("read_only", [False, True])
def test_newer_schema_is_refused(journal_path, read_only):
    set_revision(journal_path, "9999")
    before = file_digest(journal_path)
    with pytest.raises(errors.SchemaTooNew) as info:
        Journal.open(journal_path, read_only=read_only)
    assert "9999" in str(info.value)
    assert file_digest(journal_path) == before


@pytest.fixture
def code_knows_newer_schema(monkeypatch):
    """Pretend this code knows a revision after its real head, so the stored journal is 'old'."""
    for module in (core_db, core_revisions):  # db re-exports what revisions defines
        monkeypatch.setattr(module, "SCHEMA_REVISIONS", (*core_db.SCHEMA_REVISIONS, "9000"))
        monkeypatch.setattr(module, "SCHEMA_HEAD", "9000")


@pytest.mark.sqlite_only
def test_old_schema_policy_error(journal_path, run, code_knows_newer_schema):
    before = file_digest(journal_path)
    with pytest.raises(errors.SchemaTooOld):
        Journal.open(journal_path, on_old_schema="error")
    assert file_digest(journal_path) == before


def test_old_schema_policy_read_only(journal_path, run, code_knows_newer_schema):
    with Journal.open(journal_path, actor=Actor.agent("a"), on_old_schema="read_only") as j:
        assert j.read_only and j.schema_revision == REAL_HEAD
        assert j.runs.get(run.id).id == run.id
        with pytest.raises(errors.StoreReadOnly):
            j.runs.append_event(run.id, "x", {})


def index_names(path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}


OPEN_ITEM_INDEXES = {
    "ix_approvals_run_status",
    "ix_interactions_run_status",
    "ix_effects_run_status",
}


@pytest.mark.sqlite_only
def test_a_0001_journal_migrates_to_the_open_item_indexes(journal_path, run, downgrade):
    downgrade(journal_path, "0001")
    assert not OPEN_ITEM_INDEXES & index_names(journal_path)
    assert "ix_effects_run" in index_names(journal_path)
    with Journal.open(journal_path, actor=Actor.agent("a")) as j:
        assert j.schema_revision == REAL_HEAD and not j.read_only
        assert j.runs.get(run.id).open_items == 0
        assert verify(j).ok
    assert index_names(journal_path) >= OPEN_ITEM_INDEXES
    assert "ix_effects_run" not in index_names(journal_path)
    with contextlib.closing(sqlite3.connect(journal_path)) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(REAL_HEAD,)]
        plan = " ".join(
            r[-1]
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT count(*) FROM approvals "
                "WHERE run_id = ? AND status = 'pending'",
                (run.id,),
            )
        )
    assert "ix_approvals_run_status" in plan


@pytest.mark.sqlite_only
def test_old_schema_is_migrated_after_a_private_backup(journal_path, run, code_knows_newer_schema):
    with Journal.open(journal_path, actor=Actor.agent("a")) as journal:
        assert not journal.read_only
    [backup] = list(journal_path.parent.glob("journal.db.backup-*"))
    assert mode(backup) == 0o600
    with sqlite3.connect(backup) as conn:
        assert conn.execute("SELECT id FROM runs").fetchall() == [(run.id,)]


# ---------------------------------------------------------------- damaged and foreign files


def test_garbage_file_is_corrupt_and_left_alone(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"definitely not sqlite " * 500)
    before = file_digest(path)
    for read_only in (False, True):
        with pytest.raises(errors.Corrupt):
            Journal.open(path, read_only=read_only)
    assert file_digest(path) == before


@pytest.mark.sqlite_only
def test_damaged_pages_are_reported_as_corrupt(journal_path, agent, run):
    agent.runs.append_events(run.id, [("bulk", {"pad": "x" * 500, "i": i}) for i in range(400)])
    agent.close()
    size = journal_path.stat().st_size
    with open(journal_path, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xa5" * 16384)
    try:
        journal = Journal.open(journal_path, actor=Actor.agent("a"))
    except errors.Corrupt:
        return  # found at open: fine
    with journal:
        try:
            report = verify(journal)
        except errors.Corrupt:
            return  # found while reading: fine
    assert not report.ok and report.first_problem.what == "integrity"


def test_foreign_sqlite_file_is_not_a_journal(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('keep me')")
    conn.close()
    before = file_digest(path)
    for read_only in (False, True):
        with pytest.raises(errors.Corrupt) as info:
            Journal.open(path, read_only=read_only)
        assert "not a Proctor journal" in str(info.value)
    assert file_digest(path) == before


@pytest.mark.sqlite_only
def test_an_older_journal_opened_read_only_reads_everything(journal_path, downgrade):
    """Columns a later revision added read as 'absent' (TEMP views on the read-only
    connection): the operator who chose not to upgrade still browses memory, conflicts,
    history, the inbox and the timeline, and nothing is written."""
    with Journal.open(journal_path, actor=Actor.agent("bot")) as a:
        run = a.runs.start("shop", "older memory")
        entry = a.memory.add("project", "shop", "Deploy day", "Tuesday", run_id=run.id)
        a.memory.replace(entry.id, "Thursday", expected_version=1, run_id=run.id)
        conflict = a.memory.record_conflict(
            entry.id, "Friday", incoming_source="sync", run_id=run.id
        )
    downgrade(journal_path, "0003")
    before = journal_path.read_bytes()
    with Journal.open(journal_path, read_only=True) as j:
        assert j.schema_revision == "0003"
        [shown] = j.memory.list()
        assert shown.content == "Thursday" and shown.use_count == 0
        assert [m.event_sequence for m in j.memory.history(entry.id)] == [None, None]
        [pending] = j.memory.conflicts()
        assert pending.id == conflict.id and pending.incoming_kind is None
        assert [i.id for i in j.inbox.list().items] == [conflict.id]
        assert j.memory.browse().items
    assert journal_path.read_bytes() == before


@pytest.mark.parametrize(
    "given",
    [
        "postgresql+psycopg2://alice:s3cret@h/db",
        "mysql://alice:s3cret@h/db",
        "postgresql+psycopg:/alice:s3cret@h:5432/db",
        "postgres:/alice:s3cret@h/db",
    ],
)
def test_a_refused_url_is_told_without_its_password(given, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(errors.StoreError) as caught:
        Journal.open(given)
    err = caught.value
    assert "s3cret" not in f"{err} {err.message} {err.hint}"
    assert "alice:***@" in err.message
