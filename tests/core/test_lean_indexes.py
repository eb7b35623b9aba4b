"""0008x (store issue 24): three indexes hold only the rows their reads ask for, and those
reads still seek them, with the statements and parameters the core sends: an undecided
approval is not in ``ix_approvals_action``, one that never expires not in
``ix_approvals_expiry``, a run without a parent not in ``ix_runs_parent``. And three keys
most rows leave NULL (an operator's request id on audit and decision rows, a memory write's
idempotency key) are unique by a partial UNIQUE index instead of a constraint: the same rule
on both stores, with the no-replace triggers dropped, and a round trip through 0007j."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

import pytest
from sqlalchemy import event

from proctor.core import Actor, Journal
from proctor.core.models import RuleDraft

from .helpers import ACTION, drop_trigger, on_server, raw
from .test_journal_open import REAL_HEAD

NARROWED = {
    "ix_approvals_action": "decided_at IS NOT NULL",
    "ix_approvals_expiry": "expires_at IS NOT NULL",
    "ix_runs_parent": "parent_run_id IS NOT NULL",
}


def entries(path, index: str) -> int:
    """The entries of ``index`` (its leaf cells, read with ``dbstat``)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = ? AND pagetype = 'leaf'",
            (index,),
        ).fetchone()[0]


def definitions(path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return dict(
            conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE name IN "
                f"({', '.join('?' * len(NARROWED))})",
                tuple(NARROWED),
            )
        )


@contextlib.contextmanager
def sent(journal: Journal):
    """The statements (with their parameters) ``journal`` sends meanwhile."""
    seen: list[tuple[str, Any]] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    engines = {journal._reader, journal._writer}
    for engine in engines:
        event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", note)


def plans(path, statements: list[tuple[str, Any]]) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [
            " | ".join(r[-1] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
            for sql, params in statements
        ]


def seeks(path, statements: list[tuple[str, Any]], index: str) -> bool:
    return any(f"USING INDEX {index} (" in p for p in plans(path, statements))


@pytest.mark.sqlite_only
def test_an_undecided_unexpiring_approval_and_a_parentless_run_enter_none_of_them(
    journal_path, agent, operator, run
):
    before = {name: entries(journal_path, name) for name in NARROWED}
    pending = agent.approvals.request(run.id, ACTION, reason="r")  # no expiry, undecided
    agent.runs.start("proj", "no parent")
    assert {name: entries(journal_path, name) for name in NARROWED} == before
    operator.approvals.decide(pending.id, True, expected_version=pending.version)
    agent.approvals.request(run.id, ACTION, reason="r", expires_in=60)
    agent.runs.start("proj", "child", parent_run_id=run.id)
    assert {name: entries(journal_path, name) - before[name] for name in NARROWED} == {
        "ix_approvals_action": 1,
        "ix_approvals_expiry": 1,
        "ix_runs_parent": 1,
    }


@pytest.mark.sqlite_only
def test_the_reads_of_each_narrowed_index_still_seek_it(journal_path, agent, operator, clock, run):
    decided = agent.approvals.request(run.id, ACTION, reason="r")
    operator.approvals.decide(decided.id, True, expected_version=decided.version)
    later = agent.approvals.request(run.id, ACTION, reason="r", expires_in=5)
    child = agent.runs.start("proj", "child", parent_run_id=run.id)
    with sent(operator) as similar:
        assert [a.id for a in operator.approvals.similar(later.id)] == [decided.id]
    assert seeks(journal_path, similar, "ix_approvals_action"), plans(journal_path, similar)
    draft = RuleDraft(
        effect="allow",
        action_pattern=ACTION["tool"],
        resource_pattern="*",
        scope="project",
        project="proj",
    )
    with sent(operator) as preview:
        found = operator.approvals.preview_rule(draft)
    assert [h.id for h in found.past] == [decided.id] and [h.id for h in found.pending] == [
        later.id
    ]
    assert seeks(journal_path, preview, "ix_approvals_action"), plans(journal_path, preview)
    clock.advance(10)
    with sent(operator) as sweep:
        assert operator.approvals.expire_due() == 1
    assert seeks(journal_path, sweep, "ix_approvals_expiry"), plans(journal_path, sweep)
    with sent(operator) as facts:
        assert [c.id for c in operator.runs.facts(run.id).children] == [child.id]
    assert seeks(journal_path, facts, "ix_runs_parent"), plans(journal_path, facts)


@pytest.mark.sqlite_only
def test_a_0007j_journal_gets_the_narrowed_indexes_and_gives_them_back(
    journal_path, run, downgrade
):
    downgrade(journal_path, "0007j")
    assert not any("WHERE" in sql for sql in definitions(journal_path).values())
    with Journal.open(journal_path, actor=Actor.agent("a")) as j:
        assert j.schema_revision == REAL_HEAD
    made = definitions(journal_path)
    assert set(made) == set(NARROWED)
    for name, where in NARROWED.items():
        assert made[name].endswith(f"WHERE {where}"), made[name]


def test_a_server_journal_has_the_same_narrowed_indexes(pg_url):
    from sqlalchemy import create_engine, text

    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            made = dict(
                conn.execute(
                    text(
                        "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:names)"
                    ),
                    {"names": list(NARROWED)},
                ).all()
            )
    finally:
        engine.dispose()
    assert set(made) == set(NARROWED)
    for name, where in NARROWED.items():
        assert made[name].endswith(f"WHERE ({where})"), made[name]


KEYED = {"audit": "request_id", "decisions": "request_id", "memory_mutations": "idempotency_key"}
UNIQUE = {f"ux_{table}_{column}" for table, column in KEYED.items()}


def keyed_rows(agent, operator, run) -> None:
    """Audit and decision rows with and without a request id; mutations with and without
    an idempotency key."""
    for n in range(2):
        a = agent.approvals.request(run.id, ACTION, reason="r")
        operator.approvals.decide(
            a.id, True, expected_version=a.version, request_id=f"rq-{n}" if n else None
        )
    entry = agent.memory.add("project", "proj", "t", "one")
    entry = agent.memory.replace(entry.id, "two", expected_version=entry.version)
    agent.memory.replace(entry.id, "three", expected_version=entry.version, idempotency_key="k-1")


def copy_of_a_row(conn, table: str, column: str, value: str | None, new_id: str):
    """The SQL and values of an INSERT of a copy of a ``table`` row that has ``column`` set,
    with ``column`` = ``value`` and its own keys made new (``new_id``)."""
    names = [r[0] for r in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]
    row = dict(
        zip(
            names,
            conn.execute(f"SELECT * FROM {table} WHERE {column} IS NOT NULL").fetchone(),
            strict=True,
        )
    )
    row.update({column: value, "id": new_id})
    if table == "audit":
        row["sequence"] = conn.execute("SELECT max(sequence) + 1 FROM audit").fetchone()[0]
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
    return sql, [row[n] for n in names]


def test_a_set_key_stays_unique_without_the_no_replace_triggers(journal_path, agent, operator, run):
    keyed_rows(agent, operator, run)
    with raw(journal_path) as conn:
        for table, column in KEYED.items():
            drop_trigger(conn, f"trg_{table}_no_replace", table)
            taken = conn.execute(
                f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"
            ).fetchone()[0]
            sql, values = copy_of_a_row(conn, table, column, taken, f"{table}-copy")
            with pytest.raises(sqlite3.IntegrityError, match=column):
                conn.execute(sql, values)
            for n in range(2):  # rows without one never collide
                conn.execute(*copy_of_a_row(conn, table, column, None, f"{table}-none-{n}"))


def unique_indexes(path) -> dict[str, str]:
    with raw(path) as conn:
        if on_server(path):
            rows = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'ux_%%'"
            ).fetchall()
        else:
            rows = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'ux_%'"
            ).fetchall()
    return {name: sql for name, sql in rows if name in UNIQUE}


def test_each_key_is_unique_where_it_is_set(journal_path):
    made = unique_indexes(journal_path)
    assert set(made) == UNIQUE
    for table, column in KEYED.items():
        sql = made[f"ux_{table}_{column}"]
        assert sql.startswith("CREATE UNIQUE INDEX") and f"{column} IS NOT NULL" in sql, sql


@pytest.mark.sqlite_only
def test_rows_without_a_key_write_no_entry(journal_path, agent, operator, run):
    keyed_rows(agent, operator, run)
    assert {name: entries(journal_path, name) for name in UNIQUE} == dict.fromkeys(UNIQUE, 1)


@pytest.mark.sqlite_only
def test_a_round_trip_through_0007j_keeps_every_row_trigger_and_key(
    journal_path, agent, operator, run, downgrade
):
    from proctor.core.audit.verify import verify

    from .helpers import as_downgraded, snapshot

    keyed_rows(agent, operator, run)
    before = snapshot(journal_path)
    agent.close()
    operator.close()
    downgrade(journal_path, "0007j")
    assert unique_indexes(journal_path) == {}
    down = snapshot(journal_path)
    assert down == as_downgraded(before, down)
    with raw(journal_path) as conn:
        for table, column in KEYED.items():
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[
                0
            ]
            assert f"UNIQUE ({column})" in sql, sql
    with Journal.open(journal_path, actor=Actor.operator("o")) as j:
        assert j.schema_revision == REAL_HEAD
        assert j.missing_triggers() == set()
        assert verify(j).ok
    assert set(unique_indexes(journal_path)) == UNIQUE
    assert snapshot(journal_path) == before
    with raw(journal_path) as conn:
        for table, column in KEYED.items():
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[
                0
            ]
            assert f"UNIQUE ({column})" not in sql, sql


def test_a_server_journal_round_trip_through_0007j_keeps_every_row_and_key(pg_url):
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, inspect

    from proctor.core.audit.verify import verify

    from .helpers import as_downgraded, snapshot

    with (
        Journal.open(pg_url, actor=Actor.agent("a")) as agent,
        Journal.open(pg_url, actor=Actor.operator("o")) as operator,
    ):
        keyed_rows(agent, operator, agent.runs.start("proj", "t"))
    before = snapshot(pg_url)
    engine = create_engine(pg_url)
    cfg = Config()
    cfg.set_main_option("script_location", "proctor.core.storage:migrations")

    def unique_columns() -> dict[str, list[list[str]]]:
        with engine.connect() as conn:
            found = inspect(conn)
            return {t: [u["column_names"] for u in found.get_unique_constraints(t)] for t in KEYED}

    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0007j")
        down = snapshot(pg_url)
        assert unique_indexes(pg_url) == {} and down == as_downgraded(before, down)
        assert all([column] in unique_columns()[t] for t, column in KEYED.items())
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        assert set(unique_indexes(pg_url)) == UNIQUE and snapshot(pg_url) == before
        assert not any([column] in unique_columns()[t] for t, column in KEYED.items())
        with Journal.open(pg_url, actor=Actor.operator("o")) as j:
            assert j.missing_triggers() == set() and verify(j).ok
    finally:
        engine.dispose()
