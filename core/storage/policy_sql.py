"""0014p's triggers (approval policies, docs/policies.md), for both stores, from one list.

The policy tables are evidence: rows are inserted, never updated, deleted or put again over
their key. An approver's step is refused unless it is on a pending request, follows the
policy the request was bound to when it was filed, is by a member of a group of its stage
(by the group's journal: its last change for that person adds them) — or by their
delegate within the delegation's period, taking that member's part — is not by the agent
that asked, is that person's only step on the request, comes after every earlier stage is
complete (an approving step) and has its decision row. A policy that escalates lets the
group it names step for the stage a request waits for, once the request has waited that
long. An approval bound to a policy moves
to ``approved`` only when every stage has its number of approving steps and no step denies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from . import pg
from .schema import POLICY_KEYS, POLICY_TABLES


@dataclass(frozen=True)
class Guard:
    """One trigger: a ``when`` (INSERT / UPDATE) on ``table`` whose ``refused`` holds aborts."""

    name: str
    table: str
    when: str
    refused: str
    message: str


def _unmet(approval: str, stage_filter: str) -> str:
    """A stage of the policy (``ps``) that has fewer approving steps on ``approval`` than it
    needs."""
    return (
        f"{stage_filter} AND (SELECT count(*) FROM approval_steps st WHERE st.approval_id = "
        f"{approval} AND st.stage = ps.stage AND st.approve = 1) < ps.need"
    )


GUARDS = (
    Guard(
        "trg_group_changes_in_order",
        "group_changes",
        "INSERT",
        "NEW.seq <> COALESCE((SELECT max(gc.seq) FROM group_changes gc WHERE gc.group_name = "
        "NEW.group_name AND gc.operator = NEW.operator), 0) + 1",
        "group_changes: a person's changes in a group are numbered one after another",
    ),
    Guard(
        "trg_approval_steps_open",
        "approval_steps",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM approvals a WHERE a.id = NEW.approval_id "
        "AND a.status = 'pending')",
        "approval_steps: a step is taken only on a pending request",
    ),
    Guard(
        "trg_approval_steps_bound",
        "approval_steps",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM policy_bindings b WHERE b.approval_id = NEW.approval_id "
        "AND b.policy_id = NEW.policy_id)",
        "approval_steps: a step follows the policy its request was bound to",
    ),
    Guard(
        "trg_approval_steps_requester",
        "approval_steps",
        "INSERT",
        "EXISTS (SELECT 1 FROM approvals a JOIN runs r ON r.id = a.run_id WHERE a.id = "
        "NEW.approval_id AND (a.agent IN (NEW.operator, NEW.for_operator) OR r.agent IN "
        "(NEW.operator, NEW.for_operator)))",
        "approval_steps: the agent that asked never approves its own request",
    ),
    Guard(
        "trg_approval_steps_once_each",
        "approval_steps",
        "INSERT",
        "EXISTS (SELECT 1 FROM approval_steps o WHERE o.approval_id = NEW.approval_id "
        "AND (o.operator = NEW.operator OR COALESCE(o.for_operator, o.operator) = "
        "COALESCE(NEW.for_operator, NEW.operator)))",
        "approval_steps: each person takes one step on a request",
    ),
    Guard(
        "trg_approval_steps_delegated",
        "approval_steps",
        "INSERT",
        "NEW.for_operator IS NOT NULL AND NOT EXISTS (SELECT 1 FROM delegations d WHERE "
        "d.operator = NEW.for_operator AND d.delegate = NEW.operator AND d.starts_at <= "
        "NEW.created_at AND NEW.created_at < d.ends_at AND NOT EXISTS (SELECT 1 FROM "
        "delegation_ends e WHERE e.delegation_id = d.id AND e.ended_at <= NEW.created_at))",
        "approval_steps: a step for another person is taken only by their delegate, "
        "within the delegation's period (0018e: and before its delegator ended it)",
    ),
    Guard(
        "trg_approval_steps_group",
        "approval_steps",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM policy_stages ps WHERE ps.policy_id = NEW.policy_id "
        "AND ps.stage = NEW.stage AND ps.group_name = NEW.group_name) AND NOT EXISTS (SELECT "
        "1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE p.id = "
        "NEW.policy_id AND p.escalate_to = NEW.group_name AND NEW.created_at >= a.created_at "
        "+ p.escalate_after)",
        "approval_steps: a step is taken for a group of its stage (or the group the policy "
        "escalates to, once the request has waited that long)",
    ),
    Guard(
        "trg_approval_steps_member",
        "approval_steps",
        "INSERT",
        "COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = "
        "NEW.group_name AND gc.operator = COALESCE(NEW.for_operator, NEW.operator) ORDER BY "
        "gc.seq DESC LIMIT 1), 'none') <> 'add'",
        "approval_steps: only a member of the group takes its step",
    ),
    Guard(
        "trg_approval_steps_in_order",
        "approval_steps",
        "INSERT",
        "NEW.approve = 1 AND EXISTS (SELECT 1 FROM policy_stages ps WHERE "
        + _unmet("NEW.approval_id", "ps.policy_id = NEW.policy_id AND ps.stage < NEW.stage")
        + ")",
        "approval_steps: a stage approves only after every earlier stage is complete",
    ),
    Guard(
        "trg_approval_steps_decided",
        "approval_steps",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND "
        "d.target_kind = 'approval_step' AND d.target_id = NEW.approval_id)",
        "approval_steps: a step is recorded with its decision",
    ),
    Guard(
        "trg_approvals_policy",
        "approvals",
        "UPDATE",
        "OLD.status = 'pending' AND NEW.status = 'approved' AND (EXISTS (SELECT 1 FROM "
        "policy_bindings b JOIN policy_stages ps ON ps.policy_id = b.policy_id WHERE "
        + _unmet("NEW.id", "b.approval_id = NEW.id")
        + ") OR EXISTS (SELECT 1 FROM approval_steps st WHERE st.approval_id = NEW.id "
        "AND st.approve = 0))",
        "approvals: a request under a policy is approved only when its policy is satisfied",
    ),
)


def _quoted(message: str) -> str:
    return message.replace("'", "''")


def evidence_sqlite_sql(
    tables: tuple[str, ...], keys: dict, guards: tuple[Guard, ...] | list[Guard]
) -> dict[str, str]:
    """Name -> CREATE TRIGGER (SQLite) for evidence tables: their rows never change or go,
    their keys are never put over, and each ``Guard`` refuses what it names (0014p's and the
    later evidence tables' one shape)."""
    from .db import identity_trigger_sql

    sql: dict[str, str] = {}
    for table in tables:
        for op in ("UPDATE", "DELETE"):
            name = f"trg_{table}_no_{op.lower()}"
            sql[name] = (
                f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {op} ON {table} BEGIN "
                f"SELECT RAISE(ABORT, '{table} rows are immutable'); END"
            )
    sql.update(identity_trigger_sql({}, keys))
    for g in guards:
        sql[g.name] = (
            f"CREATE TRIGGER IF NOT EXISTS {g.name} BEFORE {g.when} ON {g.table} "
            f"WHEN {g.refused} BEGIN SELECT RAISE(ABORT, '{_quoted(g.message)}'); END"
        )
    return sql


def sqlite_sql() -> dict[str, str]:
    """Name -> CREATE TRIGGER (SQLite) of every 0014p trigger."""
    return evidence_sqlite_sql(POLICY_TABLES, POLICY_KEYS, GUARDS)


def server_sql() -> dict[str, list[str]]:
    """The same rules in PL/pgSQL (AFTER UPDATE for the approval's move, like the census's,
    so team mode's role checks answer first)."""
    sql = pg.immutable_trigger_sql(POLICY_TABLES)
    sql.update(pg.identity_trigger_sql({}, POLICY_KEYS))
    for g in GUARDS:
        if g.when == "UPDATE":
            sql[g.name] = pg._trigger(
                g.name,
                g.table,
                "AFTER UPDATE",
                f"IF {g.refused} THEN {pg._refuse(g.message)} END IF; RETURN NULL;",
            )
        else:
            sql[g.name] = pg._trigger(
                g.name,
                g.table,
                "BEFORE INSERT",
                f"IF {g.refused} THEN {pg._refuse(g.message)} END IF; RETURN NEW;",
            )
    sql[MEMBER] = member_server_sql()
    return sql


MEMBER = "trg_approval_steps_member"


def member_server_sql() -> list[str]:
    """0018e's step membership check on a server: ``proctor_group_member`` (the journal's
    groups; ``proctor team init`` replaces it with one that also asks the server's roles,
    core/ops/team_groups.py)."""
    from .deadline_sql import member_function_sql

    g = next(g for g in GUARDS if g.name == MEMBER)
    refused = "NOT proctor_group_member(NEW.group_name, COALESCE(NEW.for_operator, NEW.operator))"
    return [
        member_function_sql(pg.SCHEMA, team=False),
        *pg._trigger(
            g.name,
            g.table,
            "BEFORE INSERT",
            f"IF {refused} THEN {pg._refuse(g.message)} END IF; RETURN NEW;",
        ),
    ]


# The guards a copy of a whole journal (core/ops/migrate_to.py) cannot meet row by row: it
# inserts every step of an approval already decided, in key order, not in the order they
# were taken. The copy drops them for its own transaction and makes them again before it
# commits; ``proctor verify`` then checks every approval under a policy on arrival.
def _copy_guards() -> list[Guard]:
    from . import deadline_sql

    return [g for g in (*GUARDS, *deadline_sql.GUARDS) if g.when == "INSERT"]


def drop_copy_guards(conn: Any) -> None:  # Connection
    for g in _copy_guards():
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"DROP TRIGGER IF EXISTS {g.name} ON {g.table}"))
        else:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {g.name}"))


def create_copy_guards(conn: Any) -> None:  # Connection
    from . import deadline_sql

    names = [g.name for g in _copy_guards()]
    if conn.dialect.name == "postgresql":
        server = {**server_sql(), **deadline_sql.server_sql()}
        pg.execute_all(conn, {n: server[n] for n in names})
        return
    sqlite = {**sqlite_sql(), **deadline_sql.sqlite_sql()}
    for name in names:
        conn.execute(text(sqlite[name]))
