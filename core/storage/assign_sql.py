"""0016a's triggers ("assign to me", docs/policies.md), for both stores, from one list.

``assignments`` is evidence: rows are inserted, never updated, deleted or put again over
their key, and each item's rows are numbered 1, 2, ... (``seq``). A row is refused unless its decision row exists: a decision on the same item
(``target_kind`` ``assignment``), by the operator it names as the assignee."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from . import pg
from .schema import ASSIGN_KEYS

TABLES = ("assignments",)
DECIDED = "trg_assignments_decided"
# the decision row that records the assignment: same item, by the assignee themselves
REFUSED = (
    "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND "
    "d.target_kind = 'assignment' AND d.target_id = NEW.item_id AND "
    "d.actor = 'operator:' || NEW.assignee)"
)
MESSAGE = "assignments: an assignment is recorded with its decision, by the assignee"
IN_ORDER = "trg_assignments_in_order"
OUT_OF_ORDER = (
    "NEW.seq <> COALESCE((SELECT max(o.seq) FROM assignments o WHERE o.item_id = "
    "NEW.item_id), 0) + 1"
)
ORDER_MESSAGE = "assignments: the assignments of an item are numbered one after another"


def sqlite_sql() -> dict[str, str]:
    """Name -> CREATE TRIGGER (SQLite) of every 0016a trigger."""
    from .policy_sql import Guard, evidence_sqlite_sql

    return evidence_sqlite_sql(
        TABLES,
        ASSIGN_KEYS,
        [
            Guard(name, "assignments", "INSERT", refused, message)
            for name, refused, message in (
                (DECIDED, REFUSED, MESSAGE),
                (IN_ORDER, OUT_OF_ORDER, ORDER_MESSAGE),
            )
        ],
    )


def server_sql() -> dict[str, list[str]]:
    """The same rules in PL/pgSQL."""
    sql = pg.immutable_trigger_sql(TABLES)
    sql.update(pg.identity_trigger_sql({}, ASSIGN_KEYS))
    for name, refused, message in (
        (DECIDED, REFUSED, MESSAGE),
        (IN_ORDER, OUT_OF_ORDER, ORDER_MESSAGE),
    ):
        sql[name] = pg._trigger(
            name,
            "assignments",
            "BEFORE INSERT",
            f"IF {refused} THEN {pg._refuse(message)} END IF; RETURN NEW;",
        )
    return sql


# A copy of a whole journal (core/ops/migrate_to.py) inserts the rows table by table in key
# order: an assignment may arrive before its decision, and an item's assignments out of
# number. The copy drops these guards for its own transaction and makes them again before it
# commits; ``proctor verify`` then checks every assignment's decision on arrival.
COPY_GUARDS = (DECIDED, IN_ORDER)


def drop_copy_guards(conn: Any) -> None:  # Connection
    for name in COPY_GUARDS:
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name} ON assignments"))
        else:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def create_copy_guards(conn: Any) -> None:  # Connection
    if conn.dialect.name == "postgresql":
        server = server_sql()
        pg.execute_all(conn, {n: server[n] for n in COPY_GUARDS})
        return
    sqlite = sqlite_sql()
    for name in COPY_GUARDS:
        conn.execute(text(sqlite[name]))
