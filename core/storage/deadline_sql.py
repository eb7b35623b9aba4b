"""0018e's triggers (an escalation's deadline, a delegation ended early; docs/policies.md),
for both stores, from one list.

``delegation_ends`` is evidence like the 0014p tables (inserted, never updated, deleted or
put again over its key); an end is written by the delegator, before the delegation's own
end, with its decision row. A policy whose escalation denies at its deadline refuses every
step taken at or after it (the step's time against the request's) and an approval's move to
``approved`` decided at or after it; a request is denied by a policy (``decided_by``
``policy:ID``) only by the policy it was bound to, at or after that policy's deadline. The
delegate's step after the end is refused by 0014p's ``trg_approval_steps_delegated``, which
0018e replaces (core/storage/policy_sql.py builds it at head).
"""

from __future__ import annotations

from . import pg
from .policy_sql import Guard, evidence_sqlite_sql
from .schema import DEADLINE_KEYS, DEADLINE_TABLES

GROUP_ROLE = "proctor_group_"  # a group's server role in team mode (core/ops/team_groups.py)
# the journal's part: the person's last change in the group adds them
JOURNAL_MEMBER = (
    "COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = grp AND "
    "gc.operator = person ORDER BY gc.seq DESC LIMIT 1), 'none') = 'add'"
)


DENY_AT = "p.at_deadline = 'deny' AND p.deadline IS NOT NULL"

GUARDS = (
    Guard(
        "trg_delegation_ends_by",
        "delegation_ends",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM delegations d WHERE d.id = NEW.delegation_id AND "
        "NEW.ended_by = 'operator:' || d.operator AND NEW.ended_at < d.ends_at)",
        "delegation_ends: a delegation is ended by its delegator, before its end",
    ),
    Guard(
        "trg_delegation_ends_decided",
        "delegation_ends",
        "INSERT",
        "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND "
        "d.target_kind = 'delegation' AND d.target_id = NEW.delegation_id AND "
        "d.actor = NEW.ended_by)",
        "delegation_ends: an end is recorded with its decision",
    ),
    Guard(
        "trg_approval_steps_deadline",
        "approval_steps",
        "INSERT",
        "EXISTS (SELECT 1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE "
        f"p.id = NEW.policy_id AND {DENY_AT} AND NEW.created_at >= a.created_at + p.deadline)",
        "approval_steps: no step is taken once the policy's deadline has denied the request",
    ),
    Guard(
        "trg_approvals_deadline",
        "approvals",
        "UPDATE",
        "OLD.status = 'pending' AND NEW.status = 'approved' AND EXISTS (SELECT 1 FROM "
        "policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id "
        f"AND {DENY_AT} AND NEW.decided_at >= NEW.created_at + p.deadline)",
        "approvals: a request is not approved at or after its policy's deadline (it is denied)",
    ),
    Guard(
        "trg_approvals_policy_denies",
        "approvals",
        "UPDATE",
        "OLD.status = 'pending' AND NEW.status <> 'pending' AND NEW.decided_by LIKE "
        "'policy:%' AND NOT EXISTS (SELECT 1 FROM policy_bindings b JOIN policies p ON p.id = "
        "b.policy_id WHERE b.approval_id = NEW.id AND NEW.decided_by = 'policy:' || p.id AND "
        f"{DENY_AT} AND NEW.status = 'denied' AND NEW.decided_at >= NEW.created_at + p.deadline)",
        "approvals: a policy denies only the requests bound to it, at its deadline",
    ),
)


def sqlite_sql() -> dict[str, str]:
    """Name -> CREATE TRIGGER (SQLite) of every trigger 0018e adds."""
    return evidence_sqlite_sql(DEADLINE_TABLES, DEADLINE_KEYS, GUARDS)


def server_sql() -> dict[str, list[str]]:
    """The same rules in PL/pgSQL (AFTER UPDATE for an approval's move, as 0014p's)."""
    sql = pg.immutable_trigger_sql(DEADLINE_TABLES)
    sql.update(pg.identity_trigger_sql({}, DEADLINE_KEYS))
    for g in GUARDS:
        when, back = ("AFTER UPDATE", "NULL") if g.when == "UPDATE" else ("BEFORE INSERT", "NEW")
        sql[g.name] = pg._trigger(
            g.name,
            g.table,
            when,
            f"IF {g.refused} THEN {pg._refuse(g.message)} END IF; RETURN {back};",
        )
    return sql


def member_function_sql(schema: str, *, team: bool) -> str:
    """``proctor_group_member(grp, person)``: the journal's membership (``team``: and the
    server role's)."""
    path = f"SET search_path = {schema}, pg_catalog, pg_temp"
    if not team:
        return (
            "CREATE OR REPLACE FUNCTION proctor_group_member(grp text, person text) RETURNS "
            f"boolean LANGUAGE sql STABLE {path} AS $fn$ SELECT {JOURNAL_MEMBER} $fn$"
        )
    return f"""CREATE OR REPLACE FUNCTION proctor_group_member(grp text, person text)
        RETURNS boolean LANGUAGE plpgsql STABLE {path} AS $fn$ BEGIN
          IF NOT ({JOURNAL_MEMBER}) THEN RETURN false; END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = person AND NOT r.rolsuper)
             OR NOT EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = '{GROUP_ROLE}' || grp) THEN
            RETURN false;
          END IF;
          RETURN pg_has_role(person, '{GROUP_ROLE}' || grp, 'MEMBER');
        END $fn$"""
