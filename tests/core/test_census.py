"""The census (core/storage/census.py, issue 31): every column of every table has an entry,
and a test generated from it sends a raw UPDATE to every column of every row kind in every
state it can be in, from a plain ``sqlite3`` connection with the triggers in place (what a
same-user process can do). Each UPDATE must be refused by a trigger, or be named by
``proctor verify`` once it is in, or change only a column the census calls free metadata
(and says why)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest
import team_fixtures

from proctor.core import Actor, Journal, digest_of, errors
from proctor.core.audit.verify import verify
from proctor.core.decisions.keys import OperatorKey
from proctor.core.storage import census

from .conftest import AGENT, OPERATOR
from .helpers import FakeClock, on_server, raw

ACTION = {"tool": "shell", "args": {"command": "make"}}
team_logins = team_fixtures.team_logins  # the fixture (logins in the three roles)


def schema_columns(path: Path | str) -> dict[str, set[str]]:
    """Every table's columns, as the migrated journal has them (either store)."""
    with raw(path) as conn:
        if on_server(path):
            rows = conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema()"
            ).fetchall()
        else:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                )
            ]
            rows = [(t, r[1]) for t in tables for r in conn.execute(f'PRAGMA table_info("{t}")')]
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(table, set()).add(column)
    return found


def test_every_column_of_every_table_has_a_census_entry(journal_path):
    found = schema_columns(journal_path)
    missing = sorted(
        f"{t}.{c}" for t, cols in found.items() for c in cols if c not in census.CENSUS.get(t, {})
    )
    assert not missing, f"columns without a census entry (core/storage/census_table.py): {missing}"
    gone = sorted(
        f"{t}.{c}"
        for t, cols in census.CENSUS.items()
        for c in cols
        if c not in found.get(t, ())
        and (on_server(journal_path) or (t, c) not in census.SERVER_ONLY)
    )
    assert not gone, f"census entries for columns the schema does not have: {gone}"


def test_every_entry_is_complete():
    for table, entries in census.CENSUS.items():
        for column, entry in entries.items():
            where = f"{table}.{column}"
            assert entry.kind in ("identity", "state", "derived", "free"), where
            assert (entry.kind == "state") == bool(entry.rule), where
            if entry.kind in ("free", "derived"):
                assert entry.why, f"{where}: say why it may change"
            if entry.rule in ("moves", "decision", "with_move"):
                assert table in census.MOVES, where
            if entry.rule == "decision":
                assert table in census.OPEN, where


def frozen(name: str):
    import importlib

    return importlib.import_module(f"proctor.core.storage.migrations.versions.{name}")


def installed_at(revision: str) -> dict[str, str]:
    """Name -> normalised SQL of the triggers a fresh SQLite database migrated to ``revision``
    has (made now, not cached: trigger_defs.installed_by_code keeps one per process)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from proctor.core.storage import trigger_defs

    engine = create_engine("sqlite://")
    try:
        with engine.connect() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", "proctor.core.storage:migrations")
            cfg.attributes["connection"] = conn
            with conn.begin():
                command.upgrade(cfg, revision)
            return trigger_defs.triggers_in(conn)
    finally:
        engine.dispose()


def test_a_later_census_change_does_not_change_what_0009b_installs(monkeypatch):
    """A run's title made free metadata by some later change of the census: a journal
    upgraded to 0009b still gets the triggers 0009b was written with (its identity trigger
    still guards the title), not the census of the day."""
    from proctor.core.storage import db, trigger_defs

    written = {
        n: trigger_defs.normalised(sql) for n, sql in frozen("0009b_census_triggers").SQLITE.items()
    }
    monkeypatch.setitem(census.CENSUS["runs"], "title", census.free("a later change"))
    assert "NEW.title" not in db.census_trigger_sql()["trg_runs_census_identity"]
    installed = installed_at("0009b")
    assert {n: installed.get(n) for n in written} == written


def test_the_frozen_trigger_sql_of_0009b_0010k_0011d_0013u_0014u_and_0015u_is_what_the_head_builds_now():
    """0009b, 0010k and 0011d install a frozen copy of their triggers; the head (``create_all_
    triggers``, ``expected_trigger_names``) builds them from the census and db's definitions.
    When this fails those changed: leave the old revision's copy as it is, add a revision that
    installs the new triggers (and drops what they replace), and compare the head with that
    revision's copy here instead."""
    from proctor.core.storage import db, pg

    census_sql, dismissed = frozen("0009b_census_triggers"), frozen("0011d_questions_dismissed")
    undo, answers = frozen("0013u_undo_retry"), frozen("0014u_questions_undo")
    by_clock = frozen("0015u_undo_by_clock")
    assert db.census_trigger_sql() == {
        **census_sql.SQLITE,
        **dismissed.SQLITE,
        **undo.SQLITE,
        **answers.SQLITE,
        **by_clock.SQLITE,
    }
    assert pg.census_trigger_sql(db.census_checks(server=True)) == {
        **census_sql.SERVER,
        **dismissed.SERVER,
        **undo.SERVER,
        **answers.SERVER,
        **by_clock.SERVER,
    }
    key_sql = frozen("0010k_operator_keys_kept")
    assert db.key_trigger_sql() == key_sql.SQLITE
    assert pg.key_trigger_sql() == key_sql.SERVER


def test_a_new_column_without_an_entry_fails_the_census(journal_path, backend):
    """The census test is not vacuous: a column added behind its back is named."""
    with raw(journal_path) as conn:
        conn.execute("ALTER TABLE approvals ADD COLUMN sneaky TEXT")
    with pytest.raises(AssertionError, match=r"approvals\.sneaky"):
        test_every_column_of_every_table_has_a_census_entry(journal_path)


# ---------------------------------------------------------------- every row kind, every state


def build_states(path: Path) -> None:
    clock = FakeClock()
    key = OperatorKey.generate(OPERATOR)
    with (
        Journal.open(path, actor=Actor.agent(AGENT), clock=clock) as agent,
        Journal.open(path, actor=Actor.operator(OPERATOR), clock=clock, signer=key) as op,
    ):
        fill_states(agent, op, clock)


def fill_states(
    agent: Journal, op: Journal, clock: FakeClock, sweeper: Journal | None = None
) -> None:
    """A row of every kind in every state the API can leave it in, through the API.
    ``sweeper``: who expires what is due once ``clock`` moved on (the agent by default; on a
    server, where an agent login expires only by the server's clock, an operator's desk)."""
    live = agent.runs.start("proj", "live")
    done = agent.runs.start("proj", "done", parent_run_id=live.id)
    failed = agent.runs.start("proj", "failed")
    waiting = agent.runs.start("proj", "waiting")
    ran = agent.runs.record_tool_call(live.id, "http.get", {"url": "https://x"})
    agent.runs.finish_tool_call(ran.id, "succeeded", result={"status": 200})
    agent.runs.record_tool_call(live.id, "http.post", {"url": "https://y"})
    broke = agent.runs.record_tool_call(live.id, "http.put", {"url": "https://z"})
    agent.runs.finish_tool_call(broke.id, "failed", error="503")
    agent.approvals.request(live.id, ACTION, reason="pending")
    approved = agent.approvals.request(live.id, {"tool": "a"}, reason="approved")
    op.approvals.decide(approved.id, True, expected_version=1, scope="run")
    consumed = agent.approvals.request(live.id, {"tool": "c"}, reason="consumed")
    op.approvals.decide(consumed.id, True, expected_version=1)
    agent.approvals.consume_and_reserve(consumed.id, consumed.action_digest, "fx-executing")
    agent.effects.begin("fx-executing", owner=agent.effects.default_owner())
    edited = agent.approvals.request(live.id, {"tool": "rm", "args": {"path": "/"}}, reason="e")
    op.approvals.approve_edited(
        edited.id, {"tool": "rm", "args": {"path": "/tmp/b"}}, expected_version=1
    )
    used = agent.approvals.request(live.id, {"tool": "rm", "args": {"path": "/"}}, reason="u")
    op.approvals.approve_edited(
        used.id, {"tool": "rm", "args": {"path": "/tmp/c"}}, expected_version=1
    )
    agent.approvals.consume_and_reserve(
        used.id, digest_of({"tool": "rm", "args": {"path": "/tmp/c"}}), "fx-edited"
    )
    denied = agent.approvals.request(live.id, {"tool": "d"}, reason="denied")
    op.approvals.decide(denied.id, False, expected_version=1, reason="no")
    withdrawn = agent.approvals.request(live.id, {"tool": "w"}, reason="withdrawn")
    agent.approvals.withdraw(withdrawn.id, "not needed")
    agent.approvals.request(live.id, {"tool": "x"}, reason="expires", expires_in=5)
    agent.questions.ask(live.id, "question", "open?")
    shown = agent.questions.ask(live.id, "question", "shown?")
    op.questions.mark_presented(shown.id)
    answered = agent.questions.ask(live.id, "choice", "which?", options=["a", "b"])
    op.questions.answer(answered.id, {"choice": "a"}, expected_version=1)
    gone = agent.questions.ask(live.id, "question", "withdrawn?")
    agent.questions.withdraw(gone.id, "moot")
    dismissed = agent.questions.ask(live.id, "question", "dismissed?")
    op.questions.dismiss(dismissed.id, "not needed", expected_version=1)
    agent.questions.ask(live.id, "question", "expires?", expires_in=5)
    agent.effects.reserve("fx-reserved", tool="t", run_id=live.id, owner="w")
    agent.effects.reserve("fx-committed", tool="t", run_id=live.id, owner="w")
    agent.effects.begin("fx-committed", owner="w")
    agent.effects.commit("fx-committed", {"ok": True}, owner="w", external_id="ext-1")
    agent.effects.reserve("fx-failed", tool="t", run_id=live.id, owner="w")
    agent.effects.begin("fx-failed", owner="w")
    agent.effects.fail("fx-failed", "boom", owner="w")
    agent.effects.reserve("fx-ambiguous", tool="t", run_id=live.id, owner="w", lease_seconds=5)
    agent.effects.reserve("fx-resolved", tool="t", run_id=live.id, owner="w", lease_seconds=5)
    entry = agent.memory.add("project", "proj", "db", "db1", run_id=live.id)
    conflict = agent.memory.record_conflict(entry.id, "db2", incoming_source="s")
    op.memory.resolve(conflict.id, "accepted_incoming", expected_version=1, reason="ok")
    other = agent.memory.add("project", "proj", "cache", "c1")
    agent.memory.record_conflict(other.id, "c2", incoming_source="s")
    third = agent.memory.add("project", "proj", "tz", "UTC")
    dismissed = agent.memory.record_conflict(third.id, "CET", incoming_source="s")
    op.memory.resolve(dismissed.id, "dismissed", expected_version=1, reason="no")
    kept = agent.memory.add("project", "proj", "owner", "ana")
    op.memory.confirm(kept.id, expected_version=kept.version)
    gone_entry = agent.memory.add("project", "proj", "old", "x")
    agent.memory.remove(gone_entry.id, expected_version=gone_entry.version)
    op.approvals.add_rule("allow", "git_status", run_id=live.id)
    revoked = op.approvals.add_rule("deny", "curl", run_id=live.id)
    op.approvals.revoke_rule(revoked.id, expected_version=revoked.version, reason="old")
    clock.advance(10)
    sweeper = sweeper or agent
    sweeper.approvals.expire_due()
    sweeper.questions.expire_due()
    sweeper.effects.sweep_expired()
    resolved = agent.effects.get("fx-resolved")
    op.effects.resolve(
        "fx-resolved", "failed", reason="not sent", expected_version=resolved.version
    )
    agent.runs.wait_for_user(waiting.id)
    agent.runs.complete(done.id, {"ok": True})
    agent.runs.fail(failed.id, "crashed")
    cancelled = agent.runs.start("proj", "cancelled")
    agent.runs.record_tool_call(cancelled.id, "mail.send", {"to": "x"})  # outcome unknown
    op.runs.request_cancel(
        cancelled.id, "stop", expected_version=agent.runs.get(cancelled.id).version
    )
    agent.runs.cancel(cancelled.id, "asked to")
    interrupted = agent.runs.start("proj", "interrupted")
    agent.runs.interrupt(interrupted.id, "host went away")
    running = agent.runs.start("proj", "running")
    fill_policies(agent, op, running.id)


def fill_policies(agent: Journal, op: Journal, run_id: str) -> None:
    """0014p's rows: a group change, a policy with its stage, a revoked one, a request bound
    to a policy with one of its two steps."""
    from proctor.core.policies.models import PolicyDraft, PolicyStage

    me = op.actor.name
    op.policies.add_member("ops", me, reason="on call")
    stage = PolicyStage(groups=["ops"], need=2)
    op.policies.add(PolicyDraft(name="two", action_pattern="pay", stages=[stage]))
    old = op.policies.add(PolicyDraft(name="old", action_pattern="old", stages=[stage]))
    op.policies.revoke(old.id, "replaced")
    op.policies.delegate("carol", until=op.now() + 3600, reason="away")
    ended = op.policies.delegate("dave", until=op.now() + 3600, reason="away")
    op.policies.end_delegation(ended.id, reason="back early")  # 0018e
    late = dict(escalate_after=60, escalate_to="managers", at_deadline="deny", deadline=3600)
    op.policies.add(PolicyDraft(name="late", action_pattern="late", stages=[stage], **late))
    asked = agent.approvals.request(run_id, {"tool": "pay"}, reason="governed")
    op.approvals.decide(asked.id, True, expected_version=asked.version)
    op.assignments.assign_to_me("approval", asked.id, reason="mine")  # 0016a's row
    op.comments.add(asked.id, "checked the invoice")  # 0017c


@pytest.fixture(scope="session")
def states_journal(tmp_path_factory, template_journal) -> Path:
    path = tmp_path_factory.mktemp("states") / "states.db"
    shutil.copy2(template_journal, path)
    build_states(path)
    return path


def row_kind(table: str, row: dict) -> str:
    """A row's kind as the census test names it: its status, and for an approval whether
    it was consumed or edited."""
    kind = str(row.get("status", "row"))
    if table == "approvals":
        kind += "+consumed" if row["consumed_at"] is not None else ""
        kind += "+edited" if row["approved_action"] is not None else ""
    if table == "memory_entries":
        kind = "deleted" if row["deleted"] else "confirmed" if row["confirmed"] else "entry"
    if table == "approval_rules":
        kind = "revoked" if row["revoked_at"] is not None else "live"
    return kind


def key_of(conn: sqlite3.Connection, table: str) -> list[str]:
    keys = [
        r[1]
        for r in sorted(conn.execute(f'PRAGMA table_info("{table}")'), key=lambda r: r[5])
        if r[5]
    ]
    return keys or ["rowid"]


def one_row_per_kind(path: Path, table: str) -> dict[str, dict]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute(f'SELECT * FROM "{table}"')]
    kinds: dict[str, dict] = {}
    for row in rows:
        kinds.setdefault(row_kind(table, row), row)
    return kinds


def new_values(table: str, column: str, value: object) -> list[tuple[str, object]]:
    """What an adversary writes into ``column``: (a label, the value)."""
    if column == "status" and table in census.MOVES:
        states = {s for src, dst in census.MOVES[table].items() for s in (src, *dst)}
        return [(f"status->{s}", s) for s in sorted(states) if s != value]
    out: list[tuple[str, object]] = []
    if isinstance(value, bool):  # a server's boolean (SQLite's are integers)
        out.append(("flipped", not value))
    elif isinstance(value, int | float):
        out += [("minus one", value - 1), ("plus one", value + 1)]
    elif isinstance(value, str):
        out.append(("changed", value + "x"))
    else:
        out.append(("set", "x" if column not in NUMERIC else 1))
    if value is not None:
        out.append(("cleared", None))
    return out


def numeric_columns() -> set[str]:
    from proctor.core.storage import schema as s

    return {
        c.name
        for t in s.metadata.sorted_tables
        for c in t.columns
        if c.type.python_type in (int, float, bool)
    }


NUMERIC = numeric_columns()
CASES = [
    (t, c) for t, cols in census.CENSUS.items() for c in cols if (t, c) not in census.SERVER_ONLY
]


def accepted(path: Path, table: str, key: dict, column: str, value: object) -> bool:
    """Send the UPDATE in a transaction that is rolled back: True if no trigger refused it."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        where = " AND ".join(f'"{k}" IS ?' for k in key)
        conn.execute("BEGIN")
        try:
            conn.execute(
                f'UPDATE "{table}" SET "{column}" = ? WHERE {where}', (value, *key.values())
            )
        except sqlite3.IntegrityError:
            return False
        except sqlite3.DatabaseError:
            return False  # a NOT NULL / type refusal is a refusal too
        finally:
            conn.execute("ROLLBACK")
        return True


def named(path: Path, tmp: Path, table: str, key: dict, column: str, value: object) -> bool:
    """Apply the UPDATE to a copy; True if verify names a problem (or the journal refuses
    to open as what it is)."""
    copy = tmp / f"copy-{table}-{column}.db"
    shutil.copy2(path, copy)
    with contextlib.closing(sqlite3.connect(copy, isolation_level=None)) as conn:
        where = " AND ".join(f'"{k}" IS ?' for k in key)
        conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE {where}', (value, *key.values()))
    try:
        with Journal.open(copy, actor=Actor.operator("auditor"), read_only=True) as j:
            return not verify(j).ok
    except errors.ProctorError:
        return True
    finally:
        copy.unlink()


def agent_could(table: str, column: str, old: object, new: object, label: str) -> bool:
    """The census says this accepted UPDATE gains a same-user process nothing: free
    metadata, a move the agent's own API makes, the agent's own first write of a set-once
    column, a version stepped forward (the next click is stale, no more)."""
    entry = census.CENSUS[table][column]
    if entry.kind == "free":
        return True  # test_every_entry_is_complete: the census says why
    if column == "status" and (old, new) in census.AGENT_MOVES.get(table, set()):
        return True
    if entry.rule == "once" and old is None and (table, column) in census.AGENT_FIRST_WRITES:
        return True
    return entry.rule == "up" and (label == "plus one" or (label == "flipped" and new is True))


@pytest.mark.parametrize(("table", "column"), CASES, ids=[f"{t}.{c}" for t, c in CASES])
def test_every_update_of_every_column_is_refused_or_named(states_journal, tmp_path, table, column):
    entry = census.CENSUS[table][column]
    kinds = one_row_per_kind(states_journal, table)
    assert kinds, f"the states journal has no {table} row"
    with contextlib.closing(sqlite3.connect(states_journal)) as conn:
        keys = key_of(conn, table)
    through = []
    for kind, row in kinds.items():
        key = {k: row[k] for k in keys} if keys != ["rowid"] else dict(row)
        for label, value in new_values(table, column, row[column]):
            if not accepted(states_journal, table, key, column, value):
                continue
            if agent_could(table, column, row[column], value, label):
                continue
            if named(states_journal, tmp_path, table, key, column, value):
                continue
            through.append(f"{kind}: {label} ({row[column]!r} -> {value!r})")
    assert not through, f"{table}.{column} ({entry.kind} {entry.rule}) accepted: {through}"


# ---------------------------------------------------------------- the same, as an agent login


@pytest.fixture(scope="module")
def team_states(pg_server, team_logins):
    """A team journal on a real server with a row of every kind in every state, written by
    an agent login and an operator login (``proctor team init``'s roles and grants)."""
    import time

    from proctor.core.ops.team import init

    name = pg_server.fresh_database()
    init(pg_server.url(name))
    team = team_fixtures.Team(pg_server, name)
    team_fixtures.grant_group(team, "op_dana", "ops")  # a group is a server role too (0018e)
    clock = FakeClock(time.time())  # the server compares a rule's decision with its clock
    key = OperatorKey.generate("op_dana")
    with (
        team.journal("agent_a", Actor.agent(AGENT), clock=clock) as agent,
        team.journal("op_dana", Actor.operator("op_dana"), clock=clock, signer=key) as op,
    ):
        fill_states(agent, op, clock, sweeper=op)
    yield team
    pg_server.drop_database(name)


def server_rows(team, table: str) -> tuple[list[str], dict[str, dict]]:
    with team.owner() as conn:
        cursor = conn.execute(f'SELECT * FROM "{table}"')
        names = [d.name for d in cursor.description]
        rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
        keys = [
            r[0]
            for r in conn.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
                (table,),
            )
        ]
    kinds: dict[str, dict] = {}
    for row in rows:
        kinds.setdefault(row_kind(table, row), row)
    return keys or names, kinds


def server_update(conn, table: str, key: dict, column: str, value: object) -> str:
    where = " AND ".join(f'"{k}" IS NOT DISTINCT FROM %s' for k in key)
    return conn.execute(
        f'UPDATE "{table}" SET "{column}" = %s WHERE {where}', (value, *key.values())
    )


def server_refused(team, table: str, key: dict, column: str, value: object) -> bool:
    """Send the UPDATE as the agent login in a transaction that is rolled back."""
    import psycopg

    with team.raw("agent_a") as conn:
        conn.execute("BEGIN")
        try:
            server_update(conn, table, key, column, value)
        except psycopg.errors.InsufficientPrivilege:
            return True  # the server's grants or its role checks
        except psycopg.IntegrityError:
            return True  # a census trigger (or a constraint)
        except psycopg.DataError:
            return True  # not a value of the column's type
        finally:
            conn.execute("ROLLBACK")
    return False


def server_named(team, table: str, key: dict, column: str, old: object, value: object) -> bool:
    """Commit the agent login's UPDATE, ask verify, then put the row back as the owner."""
    with team.raw("agent_a") as conn:
        server_update(conn, table, key, column, value)
    try:
        with team.journal("op_dana", Actor.operator("op_dana"), read_only=True) as j:
            return not verify(j).ok
    finally:
        with team.owner() as conn:
            conn.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER USER')
            server_update(conn, table, key, column, old)
            conn.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER USER')


@pytest.mark.parametrize(("table", "column"), CASES, ids=[f"{t}.{c}" for t, c in CASES])
def test_every_update_by_an_agent_login_is_refused_or_named(team_states, table, column):
    """On a server, through psycopg as an agent login (the server's grants apply): refused by
    the grants, the role checks or a census trigger, or named by verify, or the census says
    it gains nothing."""
    keys, kinds = server_rows(team_states, table)
    assert kinds, f"the states journal has no {table} row"
    through = []
    for kind, row in kinds.items():
        key = {k: row[k] for k in keys}
        for label, value in new_values(table, column, row[column]):
            if server_refused(team_states, table, key, column, value):
                continue
            if agent_could(table, column, row[column], value, label):
                continue
            if server_named(team_states, table, key, column, row[column], value):
                continue
            through.append(f"{kind}: {label} ({row[column]!r} -> {value!r})")
    assert not through, f"{table}.{column} accepted from an agent login: {through}"
