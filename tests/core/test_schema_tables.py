"""The schema's Core tables (core/storage/schema.py) describe exactly what the migrations build:
Alembic's own comparison of a new journal with ``schema.metadata`` (every table, column, type,
nullability, index and unique constraint) finds no difference, on SQLite and on a PostgreSQL
server; and the comparison is not blind: a column whose nullability is flipped is reported."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import MetaData, create_engine

from proctor.core import Actor, Journal
from proctor.core.storage import schema


def differences(url: str, metadata: MetaData) -> list[Any]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def new_sqlite_journal(tmp_path: Path) -> str:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    return f"sqlite:///{path}"


def test_a_new_journal_is_what_the_tables_say(tmp_path: Path) -> None:
    assert differences(new_sqlite_journal(tmp_path), schema.metadata) == []


def test_a_new_server_journal_is_what_the_tables_say(pg_url: str) -> None:
    """Apart from 0007t's ``requested_by`` (the server's own record of the login that filed a
    request, which Proctor never writes: not in the tables, as that migration says)."""
    Journal.open(pg_url, actor=Actor.operator("setup")).close()
    team = importlib.import_module(
        "proctor.core.storage.migrations.versions.0007t_requested_by_login"
    )
    found = differences(pg_url, schema.metadata)
    server_only = [d for d in found if d[0] == "remove_column" and d[3].name == "requested_by"]
    assert sorted(d[2] for d in server_only) == sorted(team.TABLES)
    assert [d for d in found if d not in server_only] == []


def test_every_column_whose_nullability_differs_is_reported(tmp_path: Path) -> None:
    """A copy of the tables with every non-key column's NOT NULL flipped: the comparison names
    each such column, so a conversion that lost one ``nullable=False`` would fail above."""
    copy = MetaData()
    for table in schema.metadata.sorted_tables:
        table.to_metadata(copy)
    expected = set()
    for table in copy.tables.values():
        for column in table.columns:
            if not column.primary_key:
                column.nullable = not column.nullable
                expected.add((table.name, column.name))
    assert expected, "no column to flip"
    found = {
        (d[0][2], d[0][3])
        for d in differences(new_sqlite_journal(tmp_path), copy)
        if isinstance(d, list) and d and d[0][0] == "modify_nullable"
    }
    assert found == expected


@pytest.mark.parametrize(
    "table", sorted(name for name, t in schema.metadata.tables.items() if t.indexes)
)
def test_a_dropped_index_or_constraint_is_reported(tmp_path: Path, table: str) -> None:
    copy = MetaData()
    for t in schema.metadata.sorted_tables:
        t.to_metadata(copy)
    target = copy.tables[table]
    target.indexes.discard(sorted(target.indexes, key=lambda i: str(i.name))[0])
    kinds = {d[0] for d in differences(new_sqlite_journal(tmp_path), copy) if isinstance(d, tuple)}
    assert "remove_index" in kinds


SERVER_DDL = """
import json
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateIndex
from proctor.core.storage import pg, schema
pg.make_engine(pg.address("postgresql+psycopg://nobody@127.0.0.1:1/none"), read_only=False,
               immediate=True, timeout=1.0)  # what opening a server journal does; no connection
out = {}
for table in schema.metadata.sorted_tables:
    for index in table.indexes:
        out[index.name] = [str(CreateIndex(index).compile(dialect=d())).partition(" WHERE ")[2]
                           for d in (sqlite.dialect, postgresql.dialect)]
print(json.dumps(out))
"""


def test_a_server_engine_gives_every_partial_index_the_same_where_as_sqlite() -> None:
    """The schema names only ``sqlite_where`` (so importing it never loads SQLAlchemy's
    PostgreSQL dialect); a server journal's engine gives each partial index the same clause
    for PostgreSQL, in a fresh process where nothing else has done it."""
    import json
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", SERVER_DDL], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    wheres = json.loads(run.stdout)
    partial = {name: w for name, w in wheres.items() if w[0]}
    assert "ux_recon_entry_pending" in partial and "ix_runs_parent" in partial
    assert {name: w[1] for name, w in partial.items()} == {n: w[0] for n, w in partial.items()}
    assert all(not w[1] for name, w in wheres.items() if name not in partial)
