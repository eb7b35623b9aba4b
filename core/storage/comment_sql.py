"""0017c's triggers (comments on inbox items, core/comments), for both stores, from one list.

A comment is evidence: its row is inserted, never updated, deleted or put again over its key
(``id``, or the item's ``seq``). An insert is refused unless it is the item's next comment
(``seq`` one past the last), carries the digest of the item's previous comment
(``prev_digest``; 64 zeros for the first), names an item that exists, is by an operator,
and has its decision row (``target_kind = 'comment'``, the comment's id, by its author).
The trigger cannot recompute the comment's own digest (SQLite has no sha256): ``proctor
verify`` does (core/comments/verify.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from proctor.core.kernel.canonical import ZERO_DIGEST

from . import pg
from .policy_sql import Guard, evidence_sqlite_sql
from .schema import COMMENT_KEYS, COMMENT_TABLES

# item kind -> (table, key column) of the inbox item a comment is on
ITEM_TABLES = {
    "approval": ("approvals", "id"),
    "question": ("interactions", "id"),
    "conflict": ("memory_reconciliations", "id"),
    "effect": ("effects", "key"),
}

_SAME_ITEM = "c.item_kind = NEW.item_kind AND c.item_id = NEW.item_id"
_ITEM_EXISTS = " OR ".join(
    f"(NEW.item_kind = '{kind}' AND EXISTS (SELECT 1 FROM {table} t WHERE t.{key} = NEW.item_id))"
    for kind, (table, key) in ITEM_TABLES.items()
)

GUARDS = (
    Guard(
        "trg_comments_in_order",
        "comments",
        "INSERT",
        f"NEW.seq <> COALESCE((SELECT max(c.seq) FROM comments c WHERE {_SAME_ITEM}), 0) + 1",
        "comments: an item's comments are numbered one after another",
    ),
    Guard(
        "trg_comments_chained",
        "comments",
        "INSERT",
        f"NEW.prev_digest <> COALESCE((SELECT c.digest FROM comments c WHERE {_SAME_ITEM} "
        f"AND c.seq = NEW.seq - 1), '{ZERO_DIGEST}')",
        "comments: a comment carries the digest of the item's previous comment",
    ),
    Guard(
        "trg_comments_item",
        "comments",
        "INSERT",
        f"NOT ({_ITEM_EXISTS})",
        "comments: a comment is on an approval, question, memory conflict or effect that exists",
    ),
    Guard(
        "trg_comments_by_operator",
        "comments",
        "INSERT",
        "NEW.author NOT LIKE 'operator:%'",
        "comments: a comment is written by an operator",
    ),
    Guard(
        "trg_comments_decided",
        "comments",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND "
        "d.target_kind = 'comment' AND d.target_id = NEW.id AND d.actor = NEW.author)",
        "comments: a comment is recorded with its decision, by its author",
    ),
)


def sqlite_sql() -> dict[str, str]:
    """Name -> CREATE TRIGGER (SQLite) of every 0017c trigger."""
    return evidence_sqlite_sql(COMMENT_TABLES, COMMENT_KEYS, GUARDS)


def server_sql() -> dict[str, list[str]]:
    """The same rules in PL/pgSQL (UPDATE, DELETE and TRUNCATE refused)."""
    sql = pg.immutable_trigger_sql(COMMENT_TABLES)
    sql.update(pg.identity_trigger_sql({}, COMMENT_KEYS))
    for g in GUARDS:
        sql[g.name] = pg._trigger(
            g.name,
            g.table,
            "BEFORE INSERT",
            f"IF {g.refused} THEN {pg._refuse(g.message)} END IF; RETURN NEW;",
        )
    return sql


def create_triggers(conn: Any) -> None:  # Connection
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, server_sql())
        return
    for statement in sqlite_sql().values():
        conn.execute(text(statement))
