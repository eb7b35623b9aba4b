"""The triggers that guard the journal's rows, created and dropped per revision: evidence
rows immutable, identities and keys fixed, the census's rules (core/storage/census.py), the
signed rows; on a PostgreSQL server the same rules in PL/pgSQL (core/storage/pg.py).
Which triggers a revision should have is expected_trigger_names."""

from __future__ import annotations

from sqlalchemy import text

from . import census, pg
from .revisions import _server, has_integrity, has_origin, has_revision, has_signatures
from .schema import (
    IDENTITY_COLUMNS,
    IMMUTABLE_TABLES,
    KEY_KEYS,
    ORIGIN_TABLES,
    REQUEST_IDENTITY_COLUMNS,
    REQUEST_UNIQUE_KEYS,
    SIGNED_TABLES,
    UNIQUE_KEYS,
)


def create_immutability_triggers(conn) -> None:  # Connection
    """UPDATE/DELETE on evidence tables abort (DESIGN invariant 8)."""
    if _server(conn):  # and the change feed's order and wake-up (core/storage/pg.py)
        pg.execute_all(conn, pg.immutable_trigger_sql(IMMUTABLE_TABLES))
        pg.execute_all(conn, pg.feed_trigger_sql())
        if conn.execute(text("SELECT to_regclass('signatures')")).scalar() is not None:
            create_signed_triggers(conn)
        return
    for table in IMMUTABLE_TABLES:
        for op in ("UPDATE", "DELETE"):
            conn.execute(
                text(
                    f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_{op.lower()} "
                    f"BEFORE {op} ON {table} BEGIN "
                    f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
                )
            )
    if conn.execute(
        text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='signatures'")
    ).first():
        create_signed_triggers(conn)


def integrity_trigger_sql() -> dict[str, str]:
    """Revision 0005's triggers by name: an UPDATE that changes an approval's or an effect's
    identity aborts, and an INSERT onto a key that exists aborts on every evidence table and
    on approvals and effects (INSERT OR REPLACE would delete the old row without firing a
    DELETE trigger, unless the writing connection turned ``recursive_triggers`` on, and an
    upsert's DO UPDATE would bypass the identity check). In the schema, whatever the
    connection's settings."""
    return identity_trigger_sql(IDENTITY_COLUMNS, UNIQUE_KEYS)


def request_trigger_sql() -> dict[str, str]:
    """Revision 0006i's triggers by name: the same two rules for questions and memory
    conflicts (what the operator answered or chose between cannot be rewritten, and INSERT OR
    REPLACE cannot swap a row for another), and a pending conflict cannot be replaced through
    the one-pending-per-entry index either (REPLACE would delete it without a trace)."""
    sql = identity_trigger_sql(REQUEST_IDENTITY_COLUMNS, REQUEST_UNIQUE_KEYS)
    table = "memory_reconciliations"
    sql[f"trg_{table}_no_replace_pending"] = (
        f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_replace_pending BEFORE INSERT ON {table} "
        f"WHEN NEW.status = 'pending' AND EXISTS (SELECT 1 FROM {table} "
        f"WHERE entry_id = NEW.entry_id AND status = 'pending') BEGIN "
        f"SELECT RAISE(ABORT, '{table}: that entry has a pending conflict'); END"
    )
    return sql


def identity_trigger_sql(
    identity: dict[str, tuple[str, ...]], keys_of: dict[str, tuple[tuple[str, ...], ...]]
) -> dict[str, str]:
    """``trg_<table>_identity`` (an UPDATE of any listed column aborts) and
    ``trg_<table>_no_replace`` (an INSERT onto an existing key aborts)."""
    sql = {}
    for table, columns in identity.items():
        changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns)
        sql[f"trg_{table}_identity"] = (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_identity BEFORE UPDATE ON {table} "
            f"WHEN {changed} BEGIN "
            f"SELECT RAISE(ABORT, '{table} identity columns are immutable'); END"
        )
    for table, keys in keys_of.items():
        exists = " OR ".join(
            "EXISTS (SELECT 1 FROM {t} WHERE {w})".format(
                t=table, w=" AND ".join(f"{c} = NEW.{c}" for c in key)
            )
            for key in keys
        )
        sql[f"trg_{table}_no_replace"] = (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_replace BEFORE INSERT ON {table} "
            f"WHEN {exists} BEGIN "
            f"SELECT RAISE(ABORT, '{table} rows are immutable: that key exists'); END"
        )
    return sql


def drop_trigger(conn, name: str, table: str) -> None:  # Connection
    if _server(conn):
        pg.drop_trigger(conn, name, table)
    else:
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_integrity_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.integrity_trigger_sql())
        return
    for statement in integrity_trigger_sql().values():
        conn.execute(text(statement))


def drop_integrity_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.integrity_trigger_sql())
        return
    for name in integrity_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_all_triggers(conn) -> None:  # Connection
    """Every trigger of the head schema (0001's, 0005's, 0005s's, 0006o's, 0006i's, 0007j's,
    0009b's and 0010k's)."""
    create_immutability_triggers(conn)
    create_integrity_triggers(conn)
    create_signed_triggers(conn)
    create_origin_triggers(conn)
    create_request_triggers(conn)
    create_signed_replace_triggers(conn)
    create_census_triggers(conn)
    create_key_triggers(conn)
    create_policy_triggers(conn)
    create_assign_triggers(conn)
    create_deadline_triggers(conn)
    from . import comment_sql  # 0017c's

    comment_sql.create_triggers(conn)


def create_assign_triggers(conn) -> None:  # Connection
    """0016a's (core/storage/assign_sql.py)."""
    from . import assign_sql

    _create_evidence_triggers(conn, assign_sql)


def create_deadline_triggers(conn) -> None:  # Connection
    """0018e's (core/storage/deadline_sql.py)."""
    from . import deadline_sql

    _create_evidence_triggers(conn, deadline_sql)


def create_policy_triggers(conn) -> None:  # Connection
    """0014p's (core/storage/policy_sql.py)."""
    from . import policy_sql

    _create_evidence_triggers(conn, policy_sql)


def _create_evidence_triggers(conn, module) -> None:  # Connection, a *_sql module
    if _server(conn):
        pg.execute_all(conn, module.server_sql())
        return
    for statement in module.sqlite_sql().values():
        conn.execute(text(statement))


def guarded_before_census() -> dict[str, set[str]]:
    """The identity columns triggers older than 0009b guard (0005's, 0006i's, 0006o's)."""
    guarded: dict[str, set[str]] = {}
    for table, cols in (*IDENTITY_COLUMNS.items(), *REQUEST_IDENTITY_COLUMNS.items()):
        guarded.setdefault(table, set()).update(cols)
    for table in ORIGIN_TABLES:
        guarded.setdefault(table, set()).add("origin")
    return guarded


def census_checks(*, server: bool = False) -> list[census.Check]:
    """0009b's triggers (core/storage/census.py): every identity column older triggers left
    out is immutable, ``once`` columns are set once and never cleared, versions never step
    back, each status moves only along its state machine, a decision's columns are written
    with it and never after, and the columns that go with a move change only with one."""
    return census.checks(census.POSTGRESQL if server else census.SQLITE, guarded_before_census())


# The census's triggers 0013u added (undo within a hold, a failed run's retry).
CENSUS_0013U = (
    "trg_approvals_undo",
    "trg_approvals_held",
    "trg_runs_retry",
    "trg_runs_retry_reason_along",
)


# The census's triggers 0014u added (an answer or a dismissal undone within its hold).
CENSUS_0014U = ("trg_interactions_undo", "trg_interactions_held", "trg_interactions_once")


def census_trigger_sql() -> dict[str, str]:
    """The census's triggers by name, in SQLite, as the census builds them now (0009b
    installs a frozen copy of them; tests/core/test_census.py keeps the two equal)."""
    return {
        c.name: (
            f"CREATE TRIGGER IF NOT EXISTS {c.name} BEFORE UPDATE ON {c.table} "
            f"WHEN {c.refused} BEGIN SELECT RAISE(ABORT, '{c.message.replace(chr(39), chr(39) * 2)}'); END"
        )
        for c in census_checks()
    }


def create_census_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.census_trigger_sql(census_checks(server=True)))
        return
    for statement in census_trigger_sql().values():
        conn.execute(text(statement))


def drop_census_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.census_trigger_sql(census_checks(server=True)))
        return
    for name in census_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_request_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.request_trigger_sql())
        return
    for statement in request_trigger_sql().values():
        conn.execute(text(statement))


def drop_request_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.request_trigger_sql())
        return
    for name in request_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def origin_trigger_sql() -> dict[str, str]:
    """0006o's triggers by name: an UPDATE that changes a row's ``origin`` (where the agent
    said the request came from) aborts, on every table that has one."""
    return {
        f"trg_{table}_origin": (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_origin BEFORE UPDATE ON {table} "
            f"WHEN NEW.origin IS NOT OLD.origin BEGIN "
            f"SELECT RAISE(ABORT, '{table} origin is immutable'); END"
        )
        for table in ORIGIN_TABLES
    }


def create_origin_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.origin_trigger_sql())
        return
    for statement in origin_trigger_sql().values():
        conn.execute(text(statement))


def drop_origin_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.origin_trigger_sql())
        return
    for name in origin_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def trigger_names(conn) -> set[str]:
    if _server(conn):
        return pg.trigger_names(conn)
    rows = conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
    return {r[0] for r in rows}


def expected_trigger_names(revision: str | None = None, *, server: bool = False) -> set[str]:
    """The triggers a journal at ``revision`` (default: head) must have (``server``: a
    server journal, which also has pg.extra_trigger_names)."""
    names = pg.extra_trigger_names() if server else set()
    names |= {f"trg_{t}_no_{op}" for t in IMMUTABLE_TABLES for op in ("update", "delete")}
    if has_integrity(revision):
        names |= set(integrity_trigger_sql())
    if has_signatures(revision):
        names |= {f"trg_{t}_no_{op}" for t in SIGNED_TABLES for op in ("update", "delete")}
    if has_origin(revision):
        names |= set(origin_trigger_sql())
    if has_revision(revision, "0006i"):
        names |= set(request_trigger_sql())
    if has_revision(revision, "0007j"):
        names |= set(signed_replace_trigger_sql())
    if has_revision(revision, "0009b"):
        names |= set(census_trigger_sql())
        if not has_revision(revision, "0013u"):
            names -= set(CENSUS_0013U)
        if not has_revision(revision, "0014u"):
            names -= set(CENSUS_0014U)
    if has_revision(revision, "0010k"):
        names |= set(pg.key_trigger_sql() if server else key_trigger_sql())
    if has_revision(revision, "0014p"):
        from . import policy_sql

        names |= set(policy_sql.server_sql() if server else policy_sql.sqlite_sql())
    if has_revision(revision, "0016a"):
        from . import assign_sql

        names |= set(assign_sql.server_sql() if server else assign_sql.sqlite_sql())
    if has_revision(revision, "0018e"):
        from . import deadline_sql

        names |= set(deadline_sql.server_sql() if server else deadline_sql.sqlite_sql())
    if has_revision(revision, "0017c"):
        from . import comment_sql

        names |= set(comment_sql.server_sql() if server else comment_sql.sqlite_sql())
    return names


def key_trigger_sql() -> dict[str, str]:
    """0010k's triggers by name: a recorded key is never deleted, nor replaced (INSERT OR
    REPLACE deletes without firing DELETE triggers); 0009b already refuses an UPDATE of it."""
    table = "operator_keys"
    return {
        f"trg_{table}_no_delete": (
            f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_delete BEFORE DELETE ON {table} BEGIN "
            f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
        ),
        **identity_trigger_sql({}, KEY_KEYS),
    }


def create_key_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.key_trigger_sql())
        return
    for statement in key_trigger_sql().values():
        conn.execute(text(statement))


# 0007j: the keys an INSERT OR REPLACE could swap a signature or the journal's id through
SIGNED_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "signatures": (("record_id",),),
    "journal_meta": (("key",),),
}


def signed_replace_trigger_sql() -> dict[str, str]:
    """0007j's triggers by name: an INSERT onto an existing signature or journal fact aborts.
    0005s refused UPDATE and DELETE, but SQLite's REPLACE deletes without firing DELETE
    triggers, so another journal's id (and with it its signed decisions) could be put in."""
    return identity_trigger_sql({}, SIGNED_KEYS)


def create_signed_replace_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.execute_all(conn, pg.identity_trigger_sql({}, SIGNED_KEYS))
        return
    for statement in signed_replace_trigger_sql().values():
        conn.execute(text(statement))


def drop_signed_replace_triggers(conn) -> None:  # Connection
    if _server(conn):
        pg.drop_all(conn, pg.identity_trigger_sql({}, SIGNED_KEYS))
        return
    for name in signed_replace_trigger_sql():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_signed_triggers(conn) -> None:  # Connection
    """0005s: signatures and the journal's id refuse UPDATE and DELETE."""
    if _server(conn):
        pg.execute_all(conn, pg.immutable_trigger_sql(SIGNED_TABLES))
        return
    for table in SIGNED_TABLES:
        for op in ("UPDATE", "DELETE"):
            conn.execute(
                text(
                    f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_{op.lower()} "
                    f"BEFORE {op} ON {table} BEGIN "
                    f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
                )
            )
