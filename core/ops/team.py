"""Team mode: the three roles a PostgreSQL server enforces (`proctor team init`).

- ``proctor_observer`` reads (SELECT on every table; nothing else).
- ``proctor_agent`` reads and writes what agents write: runs, attempts, events, tool calls,
  requests (approvals, questions, memory conflicts), memory, effects and receipts, and the
  audit and change rows those writes make. It never decides, answers or resolves.
- ``proctor_operator`` also decides, answers and resolves, makes and revokes rules, and
  signs (signatures, operator keys).

Grants alone cannot tell a decision from a request (both are an UPDATE of an approval, an
INSERT of a decision row), so BEFORE INSERT/UPDATE triggers check every row against the
login that sends it (``session_user``: ``SET ROLE`` does not change it, and only a
superuser could):

- a row that names an operator (``operator:NAME`` as a decision's, audit row's, event's,
  mutation's or receipt's actor; a decider; a rule's maker or revoker; a signature's
  operator) is refused unless the login is a member of ``proctor_operator`` and NAME is the
  login itself — the operator recorded is the authenticated one, not a typed name;
- an agent login cannot move an approval out of ``pending`` except to expire or cancel it,
  or by a standing rule (``decided_by = 'rule:ID'``) that an operator made, that is live,
  whose scope covers the run and whose tool and resource patterns match the action; it can
  never change an edited action, a snooze or a decision already made; it cannot answer a
  question, resolve a memory conflict, an ambiguous effect or a tool call whose outcome is
  unknown, or confirm a memory entry;
- a rule decides only while live by the server's clock (``statement_timestamp()``), never
  by a ``decided_at`` the writer chose; a rule decision's ``decided_at`` must be within
  ``CLOCK_SKEW`` seconds of the server's clock;
- no login decides a request its own login filed (``requested_by``, revision 0007t, is set
  by the server at INSERT), whatever ``decided_by`` says, except by a live rule another
  operator made: requester ≠ approver, checked by the server; an operator decides as
  ``operator:<login>`` or by such a rule, nothing else;
- an approval once consumed stays consumed (``consumed_*`` never change again), and a
  committed effect stays committed, for every login but the owner;
- an agent login cannot write a person's trust (``user_confirmed``, ``operator_edited``)
  nor change what a person confirmed in a memory entry (``MEMORY_PROTECTED``);
- an agent login withdraws or expires only a request (approval, question) its own login
  filed, and expires one only at or after its expiry by the server's clock (an approval only
  if it expires to a denial; an approved one lapses only after its time to be used);
- no agent or observer login holds operators' writes hostage: it has UPDATE on columns, not
  tables (so no ``LOCK TABLE`` above ROW EXCLUSIVE, which blocks no one); its writes and row
  locks take the write lock (row-level security, ``policy_sql``); and a writer that has
  waited ``HOLD_S`` for the write lock ends the agent or observer session holding it
  (``proctor_write_lock``, ``lock_sql``). Agent and observer logins also get short session
  defaults (``AGENT_SETTINGS``), which a session may change: the guarantee is the lock's;
- ``team add-user`` never turns a role name, the owner, ``postgres``, a superuser or a
  CREATEROLE role into a team login, and sends the password only as a SCRAM verifier.

Running ``proctor team init`` again replaces every function, trigger, grant and policy
(CREATE OR REPLACE), and sets the session defaults of every agent and observer login, so it
upgrades a server an older Proctor set up. Ending a session needs an owner that is a
superuser or a member of ``pg_signal_backend``.

The owner of the tables (whoever ran ``proctor team init``; a superuser) is not checked: it
can drop any trigger anyway. Give agents and operators their own logins, never the owner's.
Refusals raise SQLSTATE 42501 (insufficient_privilege): ``NotAllowed`` in Proctor.

What the server does not check: a rule's ``when`` condition (a predicate over the action's
arguments) is evaluated by the agent's Proctor; an agent login can claim any agent name.

Modules: this one sets a server up (``init``, ``add_user``); ``team_access`` holds the roles,
the tables each writes, grants, the write lock, row-level security and session defaults;
``team_checks`` the check triggers.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.models import Actor, Frozen

from . import team_groups
from .team_access import (
    AGENT,
    AGENT_SETTINGS,
    AGENT_TABLES,
    HOLD_S,
    LOGIN,
    OBSERVER,
    OPERATOR,
    OPERATOR_TABLES,
    ROLES,
    RoleName,
    columns_of,
    grants_sql,
    limits_sql,
    literal,
    lock_sql,
    policy_sql,
    quote_ident,
    roles_sql,
    session_limits_sql,
)
from .team_checks import check_trigger_sql, helper_sql


class TeamReport(Frozen):
    url: str
    schema_revision: str
    roles: list[str]
    created_roles: list[str]
    checked_tables: list[str]


def init(url: str) -> TeamReport:
    """Create (or upgrade) the journal's schema at ``url`` with the same Alembic history as
    ``Journal.open``, then the three roles, their grants and the checks. Run it as the
    database's owner; running it again brings grants and checks up to date."""
    journal = Journal.open(url, actor=Actor.operator("team-init"), create=True)
    try:
        if not journal.server:
            raise errors.NotAllowed(
                f"{journal.path} is a journal file, not a server journal",
                hint="Roles need a PostgreSQL server: pass a postgresql+psycopg:// URL.",
            )
        created: list[str] = []

        def op(tx: Any) -> None:
            conn = tx.conn
            owner = conn.execute(text("SELECT current_user")).scalar_one()
            schema = conn.execute(text("SELECT current_schema()")).scalar_one()
            database = conn.execute(text("SELECT current_database()")).scalar_one()
            have = {
                r[0]
                for r in conn.execute(
                    text("SELECT rolname FROM pg_roles WHERE rolname LIKE 'proctor\\_%'")
                )
            }
            created.extend(r for r in ROLES.values() if r not in have)
            for statement in (
                roles_sql()
                + grants_sql(schema, database, columns_of(conn, schema))
                + [s.replace("{schema}", schema) for s in helper_sql(owner)]
                + [s.replace("{schema}", schema) for s in lock_sql(owner)]
                + policy_sql()
                + session_limits_sql(conn)
            ):
                conn.execute(text(statement))
            for statements in check_trigger_sql(schema).values():
                for statement in statements:
                    conn.execute(text(statement))
            conn.execute(text(team_groups.member_function_sql(schema, team=True)))

        journal.write(op)
        return TeamReport(
            url=str(journal.path),
            schema_revision=journal.schema_revision,
            roles=list(ROLES.values()),
            created_roles=created,
            checked_tables=list(OPERATOR_TABLES),
        )
    finally:
        journal.close()


def _scram(conn: Any, name: str, password: str) -> str:
    """The password's SCRAM-SHA-256 verifier, computed here (libpq's PQencryptPasswordConn):
    the password itself never reaches the server, its logs or pg_stat_statements."""
    pgconn = conn.connection.dbapi_connection.pgconn
    verifier = pgconn.encrypt_password(password.encode(), name.encode(), b"scram-sha-256")
    text_ = bytes(verifier).decode("ascii")
    if not text_.startswith("SCRAM-SHA-256$"):
        raise errors.NotAllowed("the server's client library did not make a SCRAM verifier")
    return text_


def add_user(
    url: str, name: str, role: RoleName, password: str, groups: tuple[str, ...] = ()
) -> bool:
    """A login ``name`` in ``role`` (created, or its password and role set if it exists),
    an operator in ``groups`` (their server roles, core/ops/team_groups.py). True when
    created. Run it as a role that may create roles (the owner)."""
    if not LOGIN.fullmatch(name):
        raise errors.ValidationError(
            f"{name!r} is not a login name Proctor makes (lower-case "
            "letters, digits and _, starting with a letter or _)",
            field="name",
        )
    if role not in ROLES:
        raise errors.ValidationError(
            f"unknown role {role!r} (agent, operator or observer)", field="role"
        )
    if groups and role != "operator":
        raise errors.ValidationError("only an operator login is put in groups", field="group")
    for group in groups:
        team_groups.role_of(group)
    if not password or "\x00" in password:
        raise errors.ValidationError("a login needs a password", field="password")
    if name in ROLES.values() or name == "postgres" or name.startswith("pg_"):
        raise errors.ValidationError(
            f"{name!r} is a role Proctor or the server keeps; a login needs its own name",
            field="name",
        )
    journal = Journal.open(url, actor=Actor.operator("team-init"), create=False)
    try:
        made: list[bool] = []

        def op(tx: Any) -> None:
            conn = tx.conn
            owner = conn.execute(text("SELECT current_user")).scalar_one()
            found = conn.execute(
                text("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = :n"),
                {"n": name},
            ).first()
            if name == owner or (found is not None and found[0]):
                raise errors.NotAllowed(
                    f"{name!r} is the owner, a superuser or a role that creates roles; "
                    "team add-user does not turn it into a team login",
                    hint="Pick a new name for the login.",
                )
            exists = found is not None
            verb = "ALTER" if exists else "CREATE"
            ident = quote_ident(name)
            conn.exec_driver_sql(
                f"{verb} ROLE {ident} LOGIN NOSUPERUSER NOCREATEDB "
                f"NOCREATEROLE INHERIT PASSWORD "
                f"{literal(_scram(conn, name, password))}"
            )
            for other in ROLES.values():
                if other != ROLES[role]:
                    conn.exec_driver_sql(f"REVOKE {other} FROM {ident}")
            conn.exec_driver_sql(f"GRANT {ROLES[role]} TO {ident}")
            for setting in AGENT_SETTINGS:  # an operator's sessions keep the server's defaults
                conn.exec_driver_sql(f"ALTER ROLE {ident} RESET {setting}")
            if role != "operator":
                for statement in limits_sql(name):
                    conn.exec_driver_sql(statement)
            team_groups.grant_groups(conn, name, list(groups))
            made.append(not exists)

        journal.write(op)
        team_groups.record_groups(journal, name, list(groups))
        return made[0]
    finally:
        journal.close()


# the names the module had before its access and checks moved out
from .team_access import OPERATOR_COLUMNS, STRICT_TABLES  # noqa: E402
from .team_checks import (  # noqa: E402
    APPROVAL_RULES,
    CHECKED,
    CLOCK_SKEW,
    DECISION_RULES,
    EFFECT_RULES,
    MEMORY_PROTECTED,
    MEMORY_RULES,
    PERSON_TRUST_SQL,
    RULE_DECIDES,
    TOOL_CALL_RULES,
)

__all__ = [
    "AGENT",
    "AGENT_SETTINGS",
    "AGENT_TABLES",
    "APPROVAL_RULES",
    "CHECKED",
    "CLOCK_SKEW",
    "DECISION_RULES",
    "EFFECT_RULES",
    "HOLD_S",
    "MEMORY_PROTECTED",
    "MEMORY_RULES",
    "OBSERVER",
    "OPERATOR",
    "OPERATOR_COLUMNS",
    "OPERATOR_TABLES",
    "PERSON_TRUST_SQL",
    "ROLES",
    "RULE_DECIDES",
    "STRICT_TABLES",
    "TOOL_CALL_RULES",
    "RoleName",
    "TeamReport",
    "add_user",
    "check_trigger_sql",
    "helper_sql",
    "init",
    "lock_sql",
    "policy_sql",
]
