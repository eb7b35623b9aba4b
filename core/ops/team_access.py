"""Team mode's roles and what each may write, and the server-side access that is not a
check trigger: grants (UPDATE by column for agents), the write lock that no agent or observer
login can hold hostage (``lock_sql``), row-level security (``policy_sql``) and the session
defaults of agent and observer logins. Part of :mod:`.team` (see its docstring)."""

from __future__ import annotations

import re
from typing import Any, Literal

from sqlalchemy import text

AGENT, OPERATOR, OBSERVER = "proctor_agent", "proctor_operator", "proctor_observer"
ROLES = {"agent": AGENT, "operator": OPERATOR, "observer": OBSERVER}
RoleName = Literal["agent", "operator", "observer"]
LOGIN = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# What each role may write (INSERT and UPDATE); every role reads every table. No role may
# DELETE or TRUNCATE anything, or write journal_meta or alembic_version.
AGENT_TABLES = (
    "runs",
    "attempts",
    "events",
    "tool_calls",
    "approvals",
    "interactions",
    "decisions",
    "memory_entries",
    "memory_mutations",
    "memory_reconciliations",
    "effects",
    "receipts",
    "audit",
    "changes",
    "policy_bindings",  # 0014p: the policy a request is bound to as it is filed
)
OPERATOR_TABLES = (
    *AGENT_TABLES,
    "approval_rules",
    "signatures",
    "operator_keys",
    # 0014p: groups, policies and each approver's step
    "group_changes",
    "delegations",
    "policies",
    "policy_stages",
    "policy_revocations",
    "approval_steps",
    "assignments",  # 0016a: "assign to me"
    "delegation_ends",  # 0018e: a delegation ended early
)

# table -> columns that name an operator as "operator:NAME"
OPERATOR_COLUMNS: dict[str, tuple[str, ...]] = {
    "decisions": ("actor",),
    "audit": ("actor",),
    "events": ("actor",),
    "memory_mutations": ("actor",),
    "receipts": ("actor",),
    "approvals": ("decided_by",),
    "interactions": ("resolved_by",),
    "memory_reconciliations": ("resolved_by",),
    "effects": ("resolved_by",),
    "approval_rules": ("created_by", "revoked_by"),
    "tool_calls": (),
    "signatures": ("operator",),
    "operator_keys": ("operator",),
    "group_changes": ("actor",),
    "policies": ("created_by",),
    "policy_revocations": ("revoked_by",),
    "delegation_ends": ("ended_by",),
}
STRICT_TABLES = ("signatures", "operator_keys")
# core/runs/service.request_retry: only an operator asks a failed run to try again (0013u)
RETRY_COLUMNS = ("retry_requested", "retry_reason")


# How long a writer waits on an agent or observer login that holds the write lock before
# ending that login's session (a Proctor write holds it for milliseconds)
HOLD_S = 1.0
WAIT_STEP_MS = 100  # the lock is waited for in steps this long, the holders checked between
# the lock every Proctor write takes first (core/storage/pg.py WRITE_LOCK), as pg_locks shows it
LOCK_KEY = "l.classid = {k1}::oid AND l.objid = {k2}::oid AND l.objsubid = 2"
# a backend of an agent or observer login of this database (never an operator's, the owner's
# or a superuser's: pg_has_role makes a superuser a member of every role)
SUSPECT = (
    "a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.usename IS NOT NULL "
    f"AND (pg_has_role(a.usename, '{AGENT}', 'MEMBER') "
    f"OR pg_has_role(a.usename, '{OBSERVER}', 'MEMBER')) "
    f"AND NOT pg_has_role(a.usename, '{OPERATOR}', 'MEMBER') "
    "AND NOT pg_has_role(a.usename, '{owner}', 'MEMBER')"
)
# what an agent or observer session may be set to by default (a session can SET its own; the
# guarantee is proctor_write_lock's, these stop a buggy client early)
AGENT_SETTINGS = {
    "idle_in_transaction_session_timeout": "5s",
    "statement_timeout": "30s",
    "lock_timeout": "5s",
}


def lock_sql(owner: str) -> list[str]:
    """The write lock on a team server, and what keeps an agent or observer login from
    holding it (or anything an operator's write needs) hostage:

    - ``proctor_write_lock(wait_ms)`` (SECURITY DEFINER, the owner's: it reads every backend
      and ends some) takes the lock every Proctor write takes first, waiting at most
      ``wait_ms``; once it has waited ``HOLD_S``, a backend of an agent or observer login that
      holds the lock (in a transaction or for its session, shared or not) is ended
      (``pg_terminate_backend``), and the writer, already queued, gets the lock next;
    - an agent login's INSERT, UPDATE and row lock (``FOR UPDATE``/``FOR SHARE``) take the
      same lock (row-level security: ``proctor_agent_holds_lock()`` in the policies), so no
      agent login holds a row lock, or an uncommitted key, outside it: every hold an agent
      login can make is one the rule above ends.

    No agent or observer login stalls a write for longer than about ``HOLD_S``; an operator's
    own hold is never ended."""
    from proctor.core.storage.pg import WRITE_LOCK

    k1, k2 = WRITE_LOCK
    path = "SET search_path = {schema}, pg_catalog, pg_temp"
    suspect = SUSPECT.replace("{owner}", owner)
    key = LOCK_KEY.format(k1=k1, k2=k2)
    return [
        f"""CREATE OR REPLACE FUNCTION proctor_end_lock_holders() RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER {path} AS $fn$ DECLARE victim int; ended int := 0;
        BEGIN
          PERFORM pg_stat_clear_snapshot();  -- pg_stat_activity, as it is now
          FOR victim IN SELECT a.pid FROM pg_stat_activity a WHERE {suspect}
            AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid
                        AND l.locktype = 'advisory' AND l.granted AND {key})
          LOOP
            BEGIN  -- no wait: this writer queues for the lock at once
              PERFORM pg_terminate_backend(victim);
              ended := ended + 1;
            EXCEPTION WHEN insufficient_privilege THEN  -- an owner that may not signal
              RAISE WARNING 'proctor: the owner may not end backend % (pg_signal_backend)',
                victim;
            END;
          END LOOP;
          RETURN ended;
        END $fn$""",
        f"""CREATE OR REPLACE FUNCTION proctor_write_lock(wait_ms integer) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER {path}
        SET lock_timeout = '{WAIT_STEP_MS}ms' AS $fn$
        DECLARE started timestamptz := clock_timestamp(); waited double precision;
        BEGIN
          IF pg_try_advisory_xact_lock({k1}, {k2}) THEN RETURN; END IF;
          LOOP
            waited := extract(epoch FROM clock_timestamp() - started);
            IF waited >= {HOLD_S} THEN PERFORM proctor_end_lock_holders(); END IF;
            IF waited * 1000 >= wait_ms THEN
              RAISE EXCEPTION 'the write lock was held for longer than this writer waits'
                USING ERRCODE = 'lock_not_available';
            END IF;
            BEGIN
              PERFORM pg_advisory_xact_lock({k1}, {k2});
              RETURN;
            EXCEPTION WHEN lock_not_available THEN NULL;
            END;
          END LOOP;
        END $fn$""",
        # true when this transaction holds the write lock, taking it if it is free
        f"""CREATE OR REPLACE FUNCTION proctor_agent_holds_lock() RETURNS boolean
        LANGUAGE sql VOLATILE {path} AS $fn$
          SELECT pg_try_advisory_xact_lock({k1}, {k2}) $fn$""",
        "DROP FUNCTION IF EXISTS proctor_end_outside_writers()",
        "REVOKE ALL ON FUNCTION proctor_end_lock_holders() FROM PUBLIC",
        "REVOKE ALL ON FUNCTION proctor_write_lock(integer) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION proctor_write_lock(integer) TO {AGENT}, {OPERATOR}",
    ]


def policy_sql() -> list[str]:
    """Row-level security on the tables agents write: everyone reads every row; an
    operator writes as its grants and checks allow; an agent login's INSERT, UPDATE or row
    lock holds the write lock (``proctor_agent_holds_lock``; a Proctor write holds it
    already). The owner (and its members) is not subject to it."""
    sql = []
    for table in AGENT_TABLES:
        policies = {
            "proctor_read": "FOR SELECT USING (true)",
            "proctor_operator_writes": f"FOR ALL TO {OPERATOR} USING (true) WITH CHECK (true)",
            "proctor_agent_inserts": f"FOR INSERT TO {AGENT} WITH CHECK "
            "(proctor_agent_holds_lock())",
            "proctor_agent_updates": f"FOR UPDATE TO {AGENT} USING "
            "(proctor_agent_holds_lock()) WITH CHECK (true)",
        }
        sql.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        for name, body in policies.items():
            sql.append(f"DROP POLICY IF EXISTS {name} ON {table}")
            sql.append(f"CREATE POLICY {name} ON {table} {body}")
    return sql


def roles_sql() -> list[str]:
    return [
        f"DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') "
        f"THEN CREATE ROLE {role} NOLOGIN; END IF; END $do$"
        for role in ROLES.values()
    ]


def grants_sql(schema: str, database: str, columns: dict[str, list[str]]) -> list[str]:
    everyone = ", ".join(ROLES.values())
    sql = [
        f'GRANT CONNECT ON DATABASE "{database}" TO {everyone}',
        f"GRANT USAGE ON SCHEMA {schema} TO {everyone}",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {everyone}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {everyone}",
        f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC",
    ]
    sql.append(f"GRANT INSERT, UPDATE ON {', '.join(OPERATOR_TABLES)} TO {OPERATOR}")
    for table, names in columns.items():
        # UPDATE of each column, not of the table: LOCK TABLE in a mode that blocks others'
        # writes or reads (SHARE and up) needs the table's own UPDATE, DELETE or TRUNCATE
        if table in AGENT_TABLES:
            sql.append(f"GRANT INSERT ON {table} TO {AGENT}")
            kept = [n for n in names if table != "runs" or n.strip('"') not in RETRY_COLUMNS]
            sql.append(f"GRANT UPDATE ({', '.join(kept)}) ON {table} TO {AGENT}")
    for role in (AGENT, OPERATOR):
        sql.append(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
    return sql


def columns_of(conn: Any, schema: str) -> dict[str, list[str]]:
    rows = conn.execute(
        text(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = :s ORDER BY table_name, ordinal_position"
        ),
        {"s": schema},
    )
    found: dict[str, list[str]] = {}
    for table, column in rows:
        found.setdefault(table, []).append(quote_ident(column))
    return found


def session_limits_sql(conn: Any) -> list[str]:
    """Each agent or observer login's session defaults (``AGENT_SETTINGS``): set for the
    logins there are now (``team init`` run again upgrades older ones) and by ``add-user``."""
    logins = conn.execute(
        text(
            "SELECT r.rolname FROM pg_roles r WHERE r.rolcanlogin AND NOT r.rolsuper "
            "AND (pg_has_role(r.rolname, :a, 'MEMBER') OR pg_has_role(r.rolname, :o, 'MEMBER')) "
            "AND NOT pg_has_role(r.rolname, :op, 'MEMBER')"
        ),
        {"a": AGENT, "o": OBSERVER, "op": OPERATOR},
    ).scalars()
    return [statement for login in logins for statement in limits_sql(login)]


def limits_sql(login: str) -> list[str]:
    return [
        f"ALTER ROLE {quote_ident(login)} SET {name} = {literal(value)}"
        for name, value in AGENT_SETTINGS.items()
    ]


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
