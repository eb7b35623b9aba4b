"""lean indexes: an index leaves out the rows its reads never ask for

Revision ID: 0008x
Revises: 0007j

Every index a row is in costs an entry (and a page) on each write that moves it. Three of them
held rows that no read of theirs can ask for (store issue 24), and now hold only the others
(partial indexes, the same on SQLite and on a server):

- ``ix_approvals_action`` (action_name, decided_at) WHERE decided_at IS NOT NULL: it serves
  "the decisions on this action" (the history beside an approval, a rule's draft), which ask
  for decided approvals only; a pending request is no longer in it.
- ``ix_approvals_expiry`` (status, expires_at) WHERE expires_at IS NOT NULL: it serves the
  expiry sweep (``expires_at <= now``); an approval that never expires is no longer in it.
- ``ix_runs_parent`` (parent_run_id) WHERE parent_run_id IS NOT NULL: it serves "the children
  of this run"; a run without a parent is no longer in it.

And three UNIQUE constraints on a column most rows leave NULL (``audit.request_id``,
``decisions.request_id``: an operator's request id; ``memory_mutations.idempotency_key``)
become UNIQUE indexes of the rows that have one, ``ux_<table>_<column>``: the same rule (NULLs
never collide), and a row without one writes no entry. SQLite cannot drop a constraint, so
those three tables are made anew from their stored statements (same columns, same rows, their
indexes and triggers as they were); on a server the constraint is dropped.

No row changes. Downgrade makes the full indexes and the constraints again.
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0008x"
down_revision = "0007j"
branch_labels = None
depends_on = None

# (name, table, columns, the rows kept)
NARROWED = [
    ("ix_approvals_action", "approvals", ["action_name", "decided_at"], "decided_at IS NOT NULL"),
    ("ix_approvals_expiry", "approvals", ["status", "expires_at"], "expires_at IS NOT NULL"),
    ("ix_runs_parent", "runs", ["parent_run_id"], "parent_run_id IS NOT NULL"),
]

# (table, column): UNIQUE over the rows that have a value
KEYED = [
    ("audit", "request_id"),
    ("decisions", "request_id"),
    ("memory_mutations", "idempotency_key"),
]


def upgrade() -> None:
    for name, table, columns, where in NARROWED:
        op.drop_index(name, table_name=table)
        op.create_index(
            name, table, columns, sqlite_where=sa.text(where), postgresql_where=sa.text(where)
        )
    conn = op.get_bind()
    for table, column in KEYED:
        _to_partial_unique(conn, table, column)


def downgrade() -> None:
    conn = op.get_bind()
    for table, column in KEYED:
        _to_unique_constraint(conn, table, column)
    for name, table, columns, _where in NARROWED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, columns)


def _sqlite_table(conn, table: str) -> tuple[str, list[str]]:
    """The table's CREATE statement, and those of its own indexes and triggers, as SQLite
    stores them."""
    sql = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :t"), {"t": table}
    ).scalar_one()
    parts = list(
        conn.execute(
            sa.text(
                "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = :t "
                "AND sql IS NOT NULL ORDER BY type, name"
            ),
            {"t": table},
        ).scalars()
    )
    return sql, parts


def _remake(conn, table: str, sql: str, parts: list[str]) -> None:
    """SQLite cannot drop or add a table's UNIQUE constraint: the table is made anew from
    ``sql`` (its stored statement, edited), its rows copied in column order, and its indexes
    and triggers made again as they were (none of another table names it)."""
    made, n = re.subn(rf'^CREATE TABLE "?{table}"? \(', f"CREATE TABLE _new_{table} (", sql)
    assert n == 1, sql
    conn.exec_driver_sql(made)
    conn.exec_driver_sql(f"INSERT INTO _new_{table} SELECT * FROM {table}")
    conn.exec_driver_sql(f"DROP TABLE {table}")
    conn.exec_driver_sql(f"ALTER TABLE _new_{table} RENAME TO {table}")
    for statement in parts:
        conn.exec_driver_sql(statement)


def _unique_constraint(conn, table: str, column: str) -> str | None:
    for unique in sa.inspect(conn).get_unique_constraints(table):
        if unique["column_names"] == [column]:
            return unique["name"]
    return None


def _to_partial_unique(conn, table: str, column: str) -> None:
    name, where = f"ux_{table}_{column}", f"{column} IS NOT NULL"
    if conn.dialect.name == "postgresql":
        constraint = _unique_constraint(conn, table, column)
        assert constraint is not None, (table, column)
        op.drop_constraint(constraint, table, type_="unique")
    else:
        sql, parts = _sqlite_table(conn, table)
        kept = re.sub(rf",\s*UNIQUE \({column}\)", "", sql, count=1)
        assert kept != sql, sql
        _remake(conn, table, kept, parts)
    op.create_index(
        name,
        table,
        [column],
        unique=True,
        sqlite_where=sa.text(where),
        postgresql_where=sa.text(where),
    )


def _to_unique_constraint(conn, table: str, column: str) -> None:
    op.drop_index(f"ux_{table}_{column}", table_name=table)
    if conn.dialect.name == "postgresql":
        op.create_unique_constraint(f"{table}_{column}_key", table, [column])
        return
    sql, parts = _sqlite_table(conn, table)
    assert sql.endswith(")"), sql
    _remake(conn, table, sql[:-1].rstrip() + f", \n\tUNIQUE ({column})\n)", parts)
