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
"""

from __future__ import annotations

import re
from typing import Any, Literal

from sqlalchemy import text

from proctor.core import errors
from proctor.core.decisions.writer import CONSUME_WINDOW
from proctor.core.journal import Journal
from proctor.core.models import Actor, Frozen
from proctor.core.ops.team_undo import APPROVAL_UNDO, QUESTION_UNDO

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
}
STRICT_TABLES = ("signatures", "operator_keys")
# how far (seconds) a rule decision's decided_at may be from the server's clock
CLOCK_SKEW = 300
PERSON_TRUST_SQL = "('user_confirmed', 'operator_edited')"  # core/memory.PERSON_TRUST
# what a person confirmed (or wrote) in a memory entry, which only an operator login changes
MEMORY_PROTECTED = (
    "scope",
    "scope_key",
    "kind",
    "title",
    "content",
    "content_hash",
    "priority",
    "trust",
    "sensitivity",
    "pinned",
    "confirmed",
    "deleted",
)
CHECKED = "trg_{table}_team"


class TeamReport(Frozen):
    url: str
    schema_revision: str
    roles: list[str]
    created_roles: list[str]
    checked_tables: list[str]


def _refuse(message: str) -> str:
    quoted = message.replace("'", "''")
    return (
        f"RAISE EXCEPTION '{quoted}' USING ERRCODE = 'insufficient_privilege', "
        "HINT = 'Connect as a login of the role that may do this.';"
    )


def helper_sql(owner: str) -> list[str]:
    """The functions every check uses (SECURITY INVOKER; search_path pinned so a session's
    temporary tables cannot stand in for the journal's)."""
    path = "SET search_path = {schema}, pg_catalog, pg_temp"
    return [
        f"""CREATE OR REPLACE FUNCTION proctor_privileged() RETURNS boolean LANGUAGE sql
        STABLE {path} AS $fn$ SELECT pg_has_role(session_user, '{owner}', 'MEMBER') $fn$""",
        f"""CREATE OR REPLACE FUNCTION proctor_is_operator() RETURNS boolean LANGUAGE sql
        STABLE {path} AS $fn$ SELECT pg_has_role(session_user, '{OPERATOR}', 'MEMBER') $fn$""",
        # an "operator:NAME" value is only this login's own (``strict``: any value must be)
        f"""CREATE OR REPLACE FUNCTION proctor_check_operator(value text, strict boolean)
        RETURNS void LANGUAGE plpgsql STABLE {path} AS $fn$ BEGIN
          IF value IS NULL THEN RETURN; END IF;
          IF strict OR value LIKE 'operator:%' THEN
            IF NOT proctor_is_operator() THEN
              {_refuse("an agent or observer login cannot write an operator's row")}
            END IF;
            IF value IS DISTINCT FROM 'operator:' || session_user THEN
              RAISE EXCEPTION 'the operator recorded must be the login (operator:%), not %',
                session_user, value USING ERRCODE = 'insufficient_privilege';
            END IF;
          END IF;
        END $fn$""",
        # the server's clock (the statement's start), in the journal's epoch seconds: what a
        # rule's expiry is compared with, never a time the writer chose
        f"""CREATE OR REPLACE FUNCTION proctor_now() RETURNS double precision LANGUAGE sql
        STABLE {path} AS $fn$
          SELECT extract(epoch FROM statement_timestamp())::double precision $fn$""",
        # fnmatch.fnmatchcase's glob as an anchored regular expression
        f"""CREATE OR REPLACE FUNCTION proctor_glob_regex(glob text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE {path} AS $fn$ DECLARE
          out text := '^'; i int := 1; n int := length(glob); c text; j int;
        BEGIN
          WHILE i <= n LOOP
            c := substr(glob, i, 1);
            IF c = '*' THEN out := out || '.*';
            ELSIF c = '?' THEN out := out || '.';
            ELSIF c = '[' THEN
              j := i + 1;
              IF j <= n AND substr(glob, j, 1) = '!' THEN j := j + 1; END IF;
              IF j <= n AND substr(glob, j, 1) = ']' THEN j := j + 1; END IF;
              WHILE j <= n AND substr(glob, j, 1) <> ']' LOOP j := j + 1; END LOOP;
              IF j > n THEN out := out || '\\['; ELSE
                c := substr(glob, i + 1, j - i - 1);
                IF left(c, 1) = '!' THEN c := '^' || substr(c, 2);
                ELSIF left(c, 1) = '^' THEN c := '\\' || c; END IF;
                out := out || '[' || replace(c, '\\', '\\\\') || ']';
                i := j;
              END IF;
            ELSE out := out || regexp_replace(c, '([.^$+(){{}}|\\\\\\[\\]])', '\\\\\\1', 'g');
            END IF;
            i := i + 1;
          END LOOP;
          RETURN out || '$';
        END $fn$""",
        # core/decision_rows.action_resource: the action's resource as rules match it
        f"""CREATE OR REPLACE FUNCTION proctor_action_resource(action text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE {path} AS $fn$ DECLARE a jsonb := action::jsonb; k text;
        BEGIN
          IF a ? 'resource' THEN
            IF jsonb_typeof(a->'resource') <> 'string' THEN RETURN NULL; END IF;
            RETURN a->>'resource';
          END IF;
          IF jsonb_typeof(a->'args') <> 'object' THEN RETURN ''; END IF;
          FOREACH k IN ARRAY ARRAY['path', 'url', 'command', 'to', 'table', 'account'] LOOP
            IF a->'args' ? k THEN
              IF jsonb_typeof(a->'args'->k) <> 'string' THEN RETURN NULL; END IF;
              RETURN a->'args'->>k;
            END IF;
          END LOOP;
          RETURN '';
        END $fn$""",
        # a standing rule may decide this approval: an operator's, live, scoped to its run
        f"""CREATE OR REPLACE FUNCTION proctor_rule_decides(rule text, appr approvals)
        RETURNS boolean LANGUAGE plpgsql STABLE {path} AS $fn$ DECLARE r approval_rules;
          run runs; res text;
        BEGIN
          SELECT * INTO r FROM approval_rules WHERE id = rule;
          SELECT * INTO run FROM runs WHERE id = appr.run_id;
          IF r.id IS NULL OR run.id IS NULL OR r.revoked_at IS NOT NULL
             OR r.created_by NOT LIKE 'operator:%'
             OR (r.expires_at IS NOT NULL AND r.expires_at <= proctor_now())
             OR appr.decided_at IS NULL
             OR abs(appr.decided_at - proctor_now()) > {CLOCK_SKEW} THEN
            RETURN false;
          END IF;
          IF NOT (r.run_id = run.id OR (r.scope = 'space' AND (r.project = run.project
                  OR r.project = '*') AND (r.space IS NULL OR r.space = run.space))) THEN
            RETURN false;
          END IF;
          res := proctor_action_resource(appr.action);
          RETURN res IS NOT NULL
             AND appr.action_name ~ proctor_glob_regex(r.action_pattern)
             AND res ~ proctor_glob_regex(r.resource_pattern)
             AND appr.status = CASE r.effect WHEN 'allow' THEN 'approved' ELSE 'denied' END;
        END $fn$""",
    ]


def _operator_checks(table: str) -> str:
    bare = table in STRICT_TABLES  # every value there must be this operator's own label
    columns = OPERATOR_COLUMNS.get(table, ())
    checks = []
    for c in columns:  # a value written now (an UPDATE that keeps it is not checked again)
        check = f"PERFORM proctor_check_operator(NEW.{c}::text, {str(bare).lower()});"
        checks.append(
            f"IF TG_OP = 'INSERT' THEN {check} ELSIF NEW.{c} IS DISTINCT FROM "
            f"OLD.{c} THEN {check} END IF;"
        )
    return " ".join(checks)


def _decided(table: str, column: str) -> str:  # the column it reads
    """A login deciding a request its own login filed is refused."""
    return (
        f"IF OLD.requested_by = session_user THEN "
        f"{_refuse(f'the login that filed this {table} row cannot decide it')} END IF;"
    )


# a genuine standing-rule decision: the rule an operator made (not this login), live, covering it
RULE_DECIDES = (
    "NEW.rule_id IS NOT NULL AND NEW.decided_by = 'rule:' || NEW.rule_id "
    "AND proctor_rule_decides(NEW.rule_id, NEW) AND (SELECT created_by FROM "
    "approval_rules WHERE id = NEW.rule_id) IS DISTINCT FROM "
    "'operator:' || session_user"
)

# what an agent login may not do to a request (approvals, questions): withdraw or expire one
# another login filed, or expire one before its expiry by the server's clock
OTHERS_REQUEST = "an agent login withdraws or expires only the requests its own login filed"
NOT_DUE = (
    "an agent login expires a request only at or after its expiry by the server's clock "
    "(and an approval only if it expires to a denial)"
)
# core/storage/waiter.py: only the login that filed a request stamps that it waits for it
WAITER_STAMP = f"""
  IF TG_OP = 'UPDATE' AND NEW.waiter_seen_at IS DISTINCT FROM OLD.waiter_seen_at
     AND OLD.requested_by IS DISTINCT FROM session_user THEN
    {_refuse("an agent login stamps that it waits only on the requests its own login filed")}
  END IF;
"""
# core/decisions/writer.consume_deadline: until when an approved approval may be consumed
CONSUME_DEADLINE = (
    "(CASE WHEN OLD.expires_at IS NOT NULL AND coalesce(OLD.decided_at, OLD.created_at) "
    "< OLD.expires_at THEN OLD.expires_at ELSE coalesce(OLD.decided_at, OLD.created_at) "
    f"+ {CONSUME_WINDOW} END"
    " + GREATEST(coalesce(OLD.hold_until - coalesce(OLD.decided_at, OLD.created_at), 0), 0))"
)

APPROVAL_RULES = f"""
  IF (TG_OP = 'INSERT' AND NEW.status IN ('approved', 'denied'))
     OR (TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
         AND OLD.status = 'pending' AND NEW.status IN ('approved', 'denied')) THEN
    IF (TG_OP = 'INSERT' OR OLD.requested_by = session_user) AND NOT ({RULE_DECIDES}) THEN
      {_refuse("the login that filed this approvals row cannot decide it")}
    END IF;
    IF proctor_is_operator() AND NEW.decided_by IS DISTINCT FROM 'operator:' || session_user
       AND NOT ({RULE_DECIDES}) THEN
      {_refuse("an operator login decides as itself (operator:<login>) or by a live rule")}
    END IF;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.consumed_at IS NOT NULL OR OLD.consumed_effect_key IS NOT NULL)
     AND (NEW.consumed_at IS DISTINCT FROM OLD.consumed_at
          OR NEW.consumed_effect_key IS DISTINCT FROM OLD.consumed_effect_key) THEN
    {_refuse("an approval once consumed stays consumed (it gates one effect)")}
  END IF;
  {APPROVAL_UNDO}
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'pending' OR NEW.decided_by IS NOT NULL OR NEW.approved_action IS NOT NULL
       OR NEW.approved_digest IS NOT NULL OR NEW.rule_id IS NOT NULL THEN
      {_refuse("an agent login files an approval as pending; only operators decide it")}
    END IF;
    RETURN NEW;
  END IF;
  {WAITER_STAMP}
  IF NEW.approved_action IS DISTINCT FROM OLD.approved_action
     OR NEW.approved_digest IS DISTINCT FROM OLD.approved_digest
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until THEN
    {_refuse("an agent login cannot edit, snooze or decide an approval")}
  END IF;
  IF NEW.status IS NOT DISTINCT FROM OLD.status THEN
    IF NEW.decided_by IS DISTINCT FROM OLD.decided_by
       OR NEW.decided_at IS DISTINCT FROM OLD.decided_at
       OR NEW.decision_reason IS DISTINCT FROM OLD.decision_reason
       OR NEW.decision_scope IS DISTINCT FROM OLD.decision_scope
       OR NEW.rule_id IS DISTINCT FROM OLD.rule_id THEN
      {_refuse("an agent login cannot change a decision")}
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.status IN ('expired', 'cancelled') AND OLD.requested_by IS DISTINCT FROM session_user
  THEN
    {_refuse(OTHERS_REQUEST)}
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('expired', 'cancelled')
     AND coalesce(NEW.decided_by, '') NOT LIKE 'rule:%' AND NEW.rule_id IS NULL THEN
    IF NEW.status = 'expired' AND (OLD.on_expiry IS DISTINCT FROM 'deny'
       OR OLD.expires_at IS NULL OR OLD.expires_at > proctor_now()) THEN
      {_refuse(NOT_DUE)}
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'approved' AND NEW.status = 'expired'
     AND NEW.decided_by IS NOT DISTINCT FROM OLD.decided_by
     AND NEW.decision_scope IS NOT DISTINCT FROM OLD.decision_scope
     AND NEW.rule_id IS NOT DISTINCT FROM OLD.rule_id THEN
    IF {CONSUME_DEADLINE} > proctor_now() THEN
      {_refuse("an agent login lets an approval lapse only once its time to be used has passed")}
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('approved', 'denied')
     AND NEW.rule_id IS NOT NULL AND NEW.decided_by = 'rule:' || NEW.rule_id
     AND proctor_rule_decides(NEW.rule_id, NEW) THEN
    RETURN NEW;
  END IF;
  {_refuse("an agent login cannot decide an approval")}
"""


# an agent login withdraws or expires only a question its login filed, and expires it only when due
QUESTION_CLOSING = f"""
  {WAITER_STAMP}
  IF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
     AND NEW.status IN ('expired', 'cancelled') THEN
    IF OLD.requested_by IS DISTINCT FROM session_user THEN
      {_refuse(OTHERS_REQUEST)}
    END IF;
    IF NEW.status = 'expired' AND (OLD.expires_at IS NULL OR OLD.expires_at > proctor_now()) THEN
      {_refuse(NOT_DUE)}
    END IF;
  END IF;
"""


def _resolution_rules(
    table: str, closed: str, answer: str, closing: str = "", undo: str = ""
) -> str:
    """A question (``closed``: answered or dismissed) or a memory conflict (``closed``: resolved): an
    agent login files it open and may withdraw a question or let it expire (``closing``
    says when), never close it with an answer; an operator login cannot close what its
    own login filed."""
    return f"""
  IF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status AND {closed} THEN
    {_decided(table, "resolved_by")}
  END IF;
  {undo}
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  {closing}
  IF TG_OP = 'INSERT' THEN
    IF NEW.resolved_by IS NOT NULL OR NEW.{answer} IS NOT NULL OR {closed} THEN
      {_refuse(f"an agent login files a {table} row open; only operators close it")}
    END IF;
    RETURN NEW;
  END IF;
  IF {closed} AND NEW.status IS DISTINCT FROM OLD.status
     OR NEW.{answer} IS DISTINCT FROM OLD.{answer}
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until THEN
    {_refuse(f"an agent login cannot answer or resolve a {table} row")}
  END IF;
  RETURN NEW;
"""


EFFECT_RULES = f"""
  IF TG_OP = 'UPDATE' AND OLD.status = 'committed' AND NEW.status IS DISTINCT FROM OLD.status
  THEN
    {_refuse("a committed effect stays committed (it never runs again)")}
  END IF;
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.resolved_by IS NOT NULL OR NEW.resolution_reason IS NOT NULL THEN
      {_refuse("an agent login cannot resolve an effect")}
    END IF;
    RETURN NEW;
  END IF;
  -- a retry of a failed effect clears the last resolution (core/effects/rows.py); nothing
  -- else an agent login writes may set one, or move an ambiguous effect on
  IF (NEW.resolved_by IS NOT NULL AND NEW.resolved_by IS DISTINCT FROM OLD.resolved_by)
     OR (NEW.resolution_reason IS NOT NULL
         AND NEW.resolution_reason IS DISTINCT FROM OLD.resolution_reason)
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until
     OR (OLD.status = 'ambiguous' AND NEW.status IS DISTINCT FROM OLD.status) THEN
    {_refuse("an agent login cannot resolve an ambiguous effect")}
  END IF;
  RETURN NEW;
"""


DECISION_RULES = f"""
  IF NOT proctor_is_operator() AND NEW.actor NOT LIKE 'rule:%' AND NEW.actor NOT LIKE
     'system:%' THEN
    {_refuse("an agent login records no decisions (only a rule's or the system's)")}
  END IF;
  RETURN NEW;
"""


# core/runs/service.request_retry: only an operator asks a failed run to try again (0013u)
RETRY_COLUMNS = ("retry_requested", "retry_reason")
RUN_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF (TG_OP = 'INSERT' AND (NEW.retry_requested IS NOT NULL OR NEW.retry_reason IS NOT NULL))
     OR (TG_OP = 'UPDATE' AND (NEW.retry_requested IS DISTINCT FROM OLD.retry_requested
         OR NEW.retry_reason IS DISTINCT FROM OLD.retry_reason)) THEN
    {_refuse("only an operator login asks a run to retry (retry_requested, retry_reason)")}
  END IF;
  RETURN NEW;
"""

TOOL_CALL_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status = 'outcome_unknown'
     AND NEW.status IS DISTINCT FROM OLD.status THEN
    {_refuse("a person resolves a tool call whose outcome is unknown, not an agent login")}
  END IF;
  RETURN NEW;
"""

MEMORY_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF (NEW.confirmed OR NEW.trust IN {PERSON_TRUST_SQL}) AND (TG_OP = 'INSERT'
      OR NEW.confirmed IS DISTINCT FROM OLD.confirmed OR NEW.trust IS DISTINCT FROM OLD.trust)
  THEN
    {_refuse("only an operator login confirms a memory entry or writes a person's trust")}
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.confirmed OR OLD.trust IN {PERSON_TRUST_SQL})
     AND ({" OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in MEMORY_PROTECTED)}) THEN
    {_refuse("an agent login cannot change a memory entry a person confirmed")}
  END IF;
  RETURN NEW;
"""


def check_trigger_sql(schema: str) -> dict[str, list[str]]:
    """``trg_<table>_team``: one BEFORE INSERT OR UPDATE trigger per written table."""
    extra = {
        "approvals": APPROVAL_RULES,
        "effects": EFFECT_RULES,
        "decisions": DECISION_RULES,
        "tool_calls": TOOL_CALL_RULES,
        "runs": RUN_RULES,
        "memory_entries": MEMORY_RULES,
        "interactions": _resolution_rules(
            "interactions",
            "NEW.status IN ('resolved', 'dismissed')",
            "response",
            QUESTION_CLOSING,
            QUESTION_UNDO,
        ),
        "memory_reconciliations": _resolution_rules(
            "memory_reconciliations", "NEW.status <> 'pending'", "resolution_reason"
        ),
    }
    sql = {}
    for table in OPERATOR_TABLES:
        name = CHECKED.format(table=table)
        only_operators = (
            ""
            if table in AGENT_TABLES
            else (
                f"IF NOT proctor_is_operator() THEN "
                f"{_refuse(f'only an operator login writes {table}')} END IF;"
            )
        )
        body = (
            f"IF proctor_privileged() THEN RETURN NEW; END IF; {only_operators} "
            f"{_operator_checks(table)} {extra.get(table, 'RETURN NEW;')}"
        )
        sql[name] = [
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
            f"SET search_path = {schema}, pg_catalog, pg_temp AS $fn$ BEGIN {body} END $fn$",
            f"CREATE OR REPLACE TRIGGER {name} BEFORE INSERT OR UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {name}()",
        ]
    return sql


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


def _roles_sql() -> list[str]:
    return [
        f"DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') "
        f"THEN CREATE ROLE {role} NOLOGIN; END IF; END $do$"
        for role in ROLES.values()
    ]


def _grants_sql(schema: str, database: str, columns: dict[str, list[str]]) -> list[str]:
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


def _columns(conn: Any, schema: str) -> dict[str, list[str]]:
    rows = conn.execute(
        text(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = :s ORDER BY table_name, ordinal_position"
        ),
        {"s": schema},
    )
    found: dict[str, list[str]] = {}
    for table, column in rows:
        found.setdefault(table, []).append(_quote_ident(column))
    return found


def _session_limits_sql(conn: Any) -> list[str]:
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
        f"ALTER ROLE {_quote_ident(login)} SET {name} = {_literal(value)}"
        for name, value in AGENT_SETTINGS.items()
    ]


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
                _roles_sql()
                + _grants_sql(schema, database, _columns(conn, schema))
                + [s.replace("{schema}", schema) for s in helper_sql(owner)]
                + [s.replace("{schema}", schema) for s in lock_sql(owner)]
                + policy_sql()
                + _session_limits_sql(conn)
            ):
                conn.execute(text(statement))
            for statements in check_trigger_sql(schema).values():
                for statement in statements:
                    conn.execute(text(statement))

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


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _scram(conn: Any, name: str, password: str) -> str:
    """The password's SCRAM-SHA-256 verifier, computed here (libpq's PQencryptPasswordConn):
    the password itself never reaches the server, its logs or pg_stat_statements."""
    pgconn = conn.connection.dbapi_connection.pgconn
    verifier = pgconn.encrypt_password(password.encode(), name.encode(), b"scram-sha-256")
    text_ = bytes(verifier).decode("ascii")
    if not text_.startswith("SCRAM-SHA-256$"):
        raise errors.NotAllowed("the server's client library did not make a SCRAM verifier")
    return text_


def add_user(url: str, name: str, role: RoleName, password: str) -> bool:
    """A login ``name`` in ``role`` (created, or its password and role set if it exists).
    True when created. Run it as a role that may create roles (the owner)."""
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
            ident = _quote_ident(name)
            conn.exec_driver_sql(
                f"{verb} ROLE {ident} LOGIN NOSUPERUSER NOCREATEDB "
                f"NOCREATEROLE INHERIT PASSWORD "
                f"{_literal(_scram(conn, name, password))}"
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
            made.append(not exists)

        journal.write(op)
        return made[0]
    finally:
        journal.close()


__all__ = [
    "AGENT",
    "OBSERVER",
    "OPERATOR",
    "ROLES",
    "TeamReport",
    "add_user",
    "check_trigger_sql",
    "init",
]
