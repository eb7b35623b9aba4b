"""The schema's revisions, oldest first, and what a revision added: the tests of a journal's
revision (has_integrity, has_revision, ...), the columns and tables later revisions added
(a read-only connection to an older journal sees them through TEMP views), the journal's
current revision."""

from __future__ import annotations

import sqlite3

from sqlalchemy import text

from . import pg
from . import schema as _schema
from .schema import DEADLINE_TABLES, POLICY_TABLES

# Every revision this code knows, oldest first. A test checks it against Alembic.
SCHEMA_REVISIONS = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0005s",
    "0005r",
    "0005b",
    "0006o",
    "0006i",
    "0007t",
    "0007j",
    "0008x",
    "0009b",
    "0010k",
    "0011d",
    "0012w",
    "0013u",
    "0014p",
    "0014u",
    "0016a",
    "0018e",
    "0015u",
    "0017c",
)


SCHEMA_HEAD = SCHEMA_REVISIONS[-1]


# The revision that added the identity/no-replace triggers and the effect and memory digests.
INTEGRITY_REVISION = "0005"


def has_integrity(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0005's triggers and digests."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index(INTEGRITY_REVISION)


# Columns later revisions added to existing tables, with what an older journal means by their
# absence. A read-only connection to an older journal (the operator chose not to upgrade it)
# sees them through TEMP views, so every read works on any revision without writing a byte.
NO_TIME = "CAST(NULL AS DOUBLE PRECISION)"  # typed: a UNION of it and a REAL column works


ADDED_COLUMNS: dict[str, dict[str, str]] = {  # table -> column -> SQL value when absent
    "memory_entries": {"last_used_at": "0", "use_count": "0"},  # 0004
    "memory_reconciliations": {
        "incoming_kind": "NULL",
        "incoming_priority": "NULL",
        "incoming_trust": "NULL",
        "incoming_sensitivity": "NULL",
        "agent": "NULL",
        "origin": "NULL",
    },  # 0004, agent: 0005b
    "interactions": {
        "origin": "NULL",
        "waiter_seen_at": NO_TIME,
        "hold_until": NO_TIME,
        "taken_at": NO_TIME,
    },  # 0006o, 0012w, hold_until and taken_at: 0014u
    "memory_mutations": {
        "event_sequence": "NULL",  # 0004
        "prev_digest": "NULL",
        "digest": "NULL",
    },  # 0005
    "effects": {
        "action_digest": "NULL",
        "agent": "NULL",
        "origin": "NULL",
    },  # 0005, agent: 0005b, origin: 0006o
    "approval_rules": {"predicate": "NULL", "revoke_reason": "NULL"},  # 0005r
    "approvals": {
        "input_schema": "NULL",
        "approved_action": "NULL",
        "approved_digest": "NULL",
        "origin": "NULL",
        "waiter_seen_at": NO_TIME,
        "hold_until": NO_TIME,
    },  # 0005r, origin: 0006o, waiter_seen_at: 0012w, hold_until: 0013u
    "runs": {"retry_requested": "NULL", "retry_reason": "NULL"},  # 0013u
    "policies": {"at_deadline": "NULL", "deadline": NO_TIME},  # 0018e
}


def add_compat_views(conn: sqlite3.Connection) -> list[str]:
    """On a read-only connection: a TEMP view per table that lacks ADDED_COLUMNS (an older
    journal), with the missing columns filled in. Returns the tables given a view."""
    viewed = []
    for table, added in ADDED_COLUMNS.items():
        have = {row[1] for row in conn.execute(f'PRAGMA main.table_info("{table}")')}
        missing = [f"{value} AS {name}" for name, value in added.items() if name not in have]
        if have and missing:
            conn.execute(
                f'CREATE TEMP VIEW "{table}" AS SELECT *, {", ".join(missing)} FROM main."{table}"'
            )
            viewed.append(table)
    for table, columns in ADDED_TABLES.items():
        if not conn.execute(
            "SELECT 1 FROM main.sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone():
            empty = ", ".join(f"NULL AS {name}" for name in columns)
            conn.execute(f'CREATE TEMP VIEW "{table}" AS SELECT {empty} WHERE 0')
            viewed.append(table)
    return viewed


# Tables a later revision added: an older journal opened read-only reads them as empty.
ADDED_TABLES: dict[str, tuple[str, ...]] = {
    "signatures": (
        "record_id",
        "record_kind",
        "key_id",
        "operator",
        "payload",
        "signature",
        "created_at",
    ),
    "operator_keys": ("key_id", "operator", "public_key", "first_seen_at"),
    "journal_meta": ("key", "value"),
    # 0014p: the policy tables (core/storage/schema.py, POLICY_TABLES)
    **{
        name: tuple(c.name for c in _schema.metadata.tables[name].columns)
        for name in (*POLICY_TABLES, *DEADLINE_TABLES)
    },
    # 0016a: who took an item on (core/storage/assign_sql.py)
    "assignments": tuple(c.name for c in _schema.assignments.columns),
    # 0017c: comments on inbox items (core/storage/comment_sql.py)
    "comments": tuple(c.name for c in _schema.comments.columns),
}


def _server(conn) -> bool:  # Connection
    """True for a connection to a server journal: its triggers are PL/pgSQL (core/storage/pg.py),
    rendered from the same definitions, with the same names."""
    return conn.dialect.name == "postgresql"


def has_revision(revision: str | None, wanted: str) -> bool:
    """True for a journal at ``revision`` (None: head) that has ``wanted`` applied."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index(wanted)


def has_origin(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0006o's origin columns."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index("0006o")


def has_signatures(revision: str | None) -> bool:
    """True for a journal at ``revision`` (None: head) that has 0005s's signature tables."""
    if revision is None or revision not in SCHEMA_REVISIONS:
        return True
    return SCHEMA_REVISIONS.index(revision) >= SCHEMA_REVISIONS.index("0005s")


def current_revision(conn) -> str | None:
    if _server(conn):
        return pg.current_revision(conn)
    has = conn.execute(
        text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'")
    ).first()
    if not has:
        return None
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return row[0] if row else None
