"""an escalation's deadline (deny, or keep waiting) and a delegation ended early

Revision ID: 0018e
Revises: 0016a (written on 0014u)

- ``policies.at_deadline`` (``deny`` / ``wait``, NULL: wait) and ``policies.deadline``
  (seconds after a request was filed): a policy whose escalation denies at its deadline.
  Every step taken at or after it is refused (``trg_approval_steps_deadline``), so is an
  approval's move to ``approved`` decided at or after it (``trg_approvals_deadline``); a
  request is denied by a policy (``decided_by`` ``policy:ID``) only by the policy it was
  bound to, at or after its deadline (``trg_approvals_policy_denies``).
- ``delegation_ends``: a delegation ended early by its delegator (evidence: never updated,
  deleted or put again; by the delegator, before the delegation's end, with its decision
  row). 0014p's ``trg_approval_steps_delegated`` is replaced: a step for another person is
  refused once the delegation is ended.
- On a server, 0014p's ``trg_approval_steps_member`` asks ``proctor_group_member(group,
  person)`` (made here: the journal's groups); ``proctor team init`` replaces that function
  with one that also asks the group's server role (core/ops/team_groups.py).

The triggers are frozen here (``SQLITE``, ``SERVER``) as core/storage/deadline_sql.py and
policy_sql.py build them at this revision; the downgrade puts 0014p's
``trg_approval_steps_delegated`` and ``trg_approval_steps_member`` back and drops the rest,
the table and the columns.
"""

from importlib import import_module

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0018e"
down_revision = "0016a"
branch_labels = None
depends_on = None

REPLACED = ("trg_approval_steps_delegated", "trg_approval_steps_member")

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_delegation_ends_no_update": "CREATE TRIGGER IF NOT EXISTS trg_delegation_ends_no_update BEFORE UPDATE ON delegation_ends BEGIN SELECT RAISE(ABORT, 'delegation_ends rows are immutable'); END",
    "trg_delegation_ends_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_delegation_ends_no_delete BEFORE DELETE ON delegation_ends BEGIN SELECT RAISE(ABORT, 'delegation_ends rows are immutable'); END",
    "trg_delegation_ends_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_delegation_ends_no_replace BEFORE INSERT ON delegation_ends WHEN EXISTS (SELECT 1 FROM delegation_ends WHERE delegation_id = NEW.delegation_id) BEGIN SELECT RAISE(ABORT, 'delegation_ends rows are immutable: that key exists'); END",
    "trg_delegation_ends_by": "CREATE TRIGGER IF NOT EXISTS trg_delegation_ends_by BEFORE INSERT ON delegation_ends WHEN NOT EXISTS (SELECT 1 FROM delegations d WHERE d.id = NEW.delegation_id AND NEW.ended_by = 'operator:' || d.operator AND NEW.ended_at < d.ends_at) BEGIN SELECT RAISE(ABORT, 'delegation_ends: a delegation is ended by its delegator, before its end'); END",
    "trg_delegation_ends_decided": "CREATE TRIGGER IF NOT EXISTS trg_delegation_ends_decided BEFORE INSERT ON delegation_ends WHEN NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'delegation' AND d.target_id = NEW.delegation_id AND d.actor = NEW.ended_by) BEGIN SELECT RAISE(ABORT, 'delegation_ends: an end is recorded with its decision'); END",
    "trg_approval_steps_deadline": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_deadline BEFORE INSERT ON approval_steps WHEN EXISTS (SELECT 1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE p.id = NEW.policy_id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.created_at >= a.created_at + p.deadline) BEGIN SELECT RAISE(ABORT, 'approval_steps: no step is taken once the policy''s deadline has denied the request'); END",
    "trg_approvals_deadline": "CREATE TRIGGER IF NOT EXISTS trg_approvals_deadline BEFORE UPDATE ON approvals WHEN OLD.status = 'pending' AND NEW.status = 'approved' AND EXISTS (SELECT 1 FROM policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.decided_at >= NEW.created_at + p.deadline) BEGIN SELECT RAISE(ABORT, 'approvals: a request is not approved at or after its policy''s deadline (it is denied)'); END",
    "trg_approvals_policy_denies": "CREATE TRIGGER IF NOT EXISTS trg_approvals_policy_denies BEFORE UPDATE ON approvals WHEN OLD.status = 'pending' AND NEW.status <> 'pending' AND NEW.decided_by LIKE 'policy:%' AND NOT EXISTS (SELECT 1 FROM policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id AND NEW.decided_by = 'policy:' || p.id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.status = 'denied' AND NEW.decided_at >= NEW.created_at + p.deadline) BEGIN SELECT RAISE(ABORT, 'approvals: a policy denies only the requests bound to it, at its deadline'); END",
    "trg_approval_steps_delegated": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_delegated BEFORE INSERT ON approval_steps WHEN NEW.for_operator IS NOT NULL AND NOT EXISTS (SELECT 1 FROM delegations d WHERE d.operator = NEW.for_operator AND d.delegate = NEW.operator AND d.starts_at <= NEW.created_at AND NEW.created_at < d.ends_at AND NOT EXISTS (SELECT 1 FROM delegation_ends e WHERE e.delegation_id = d.id AND e.ended_at <= NEW.created_at)) BEGIN SELECT RAISE(ABORT, 'approval_steps: a step for another person is taken only by their delegate, within the delegation''s period (0018e: and before its delegator ended it)'); END",
    "trg_approval_steps_member": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_member BEFORE INSERT ON approval_steps WHEN COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = NEW.group_name AND gc.operator = COALESCE(NEW.for_operator, NEW.operator) ORDER BY gc.seq DESC LIMIT 1), 'none') <> 'add' BEGIN SELECT RAISE(ABORT, 'approval_steps: only a member of the group takes its step'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_delegation_ends_no_update": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegation_ends rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_no_update BEFORE UPDATE ON delegation_ends FOR EACH ROW EXECUTE FUNCTION trg_delegation_ends_no_update()",
    ],
    "trg_delegation_ends_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegation_ends rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_no_delete BEFORE DELETE ON delegation_ends FOR EACH ROW EXECUTE FUNCTION trg_delegation_ends_no_delete()",
    ],
    "trg_delegation_ends_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegation_ends rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_no_truncate BEFORE TRUNCATE ON delegation_ends FOR EACH STATEMENT EXECUTE FUNCTION trg_delegation_ends_no_truncate()",
    ],
    "trg_delegation_ends_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM delegation_ends WHERE delegation_id = NEW.delegation_id) THEN RAISE EXCEPTION 'delegation_ends rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_no_replace BEFORE INSERT ON delegation_ends FOR EACH ROW EXECUTE FUNCTION trg_delegation_ends_no_replace()",
    ],
    "trg_delegation_ends_by": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_by() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM delegations d WHERE d.id = NEW.delegation_id AND NEW.ended_by = 'operator:' || d.operator AND NEW.ended_at < d.ends_at) THEN RAISE EXCEPTION 'delegation_ends: a delegation is ended by its delegator, before its end' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_by BEFORE INSERT ON delegation_ends FOR EACH ROW EXECUTE FUNCTION trg_delegation_ends_by()",
    ],
    "trg_delegation_ends_decided": [
        "CREATE OR REPLACE FUNCTION trg_delegation_ends_decided() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'delegation' AND d.target_id = NEW.delegation_id AND d.actor = NEW.ended_by) THEN RAISE EXCEPTION 'delegation_ends: an end is recorded with its decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegation_ends_decided BEFORE INSERT ON delegation_ends FOR EACH ROW EXECUTE FUNCTION trg_delegation_ends_decided()",
    ],
    "trg_approval_steps_deadline": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_deadline() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE p.id = NEW.policy_id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.created_at >= a.created_at + p.deadline) THEN RAISE EXCEPTION 'approval_steps: no step is taken once the policy''s deadline has denied the request' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_deadline BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_deadline()",
    ],
    "trg_approvals_deadline": [
        "CREATE OR REPLACE FUNCTION trg_approvals_deadline() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.status = 'pending' AND NEW.status = 'approved' AND EXISTS (SELECT 1 FROM policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.decided_at >= NEW.created_at + p.deadline) THEN RAISE EXCEPTION 'approvals: a request is not approved at or after its policy''s deadline (it is denied)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_deadline AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_deadline()",
    ],
    "trg_approvals_policy_denies": [
        "CREATE OR REPLACE FUNCTION trg_approvals_policy_denies() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.status = 'pending' AND NEW.status <> 'pending' AND NEW.decided_by LIKE 'policy:%' AND NOT EXISTS (SELECT 1 FROM policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id AND NEW.decided_by = 'policy:' || p.id AND p.at_deadline = 'deny' AND p.deadline IS NOT NULL AND NEW.status = 'denied' AND NEW.decided_at >= NEW.created_at + p.deadline) THEN RAISE EXCEPTION 'approvals: a policy denies only the requests bound to it, at its deadline' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_policy_denies AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_policy_denies()",
    ],
    "trg_approval_steps_delegated": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_delegated() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.for_operator IS NOT NULL AND NOT EXISTS (SELECT 1 FROM delegations d WHERE d.operator = NEW.for_operator AND d.delegate = NEW.operator AND d.starts_at <= NEW.created_at AND NEW.created_at < d.ends_at AND NOT EXISTS (SELECT 1 FROM delegation_ends e WHERE e.delegation_id = d.id AND e.ended_at <= NEW.created_at)) THEN RAISE EXCEPTION 'approval_steps: a step for another person is taken only by their delegate, within the delegation''s period (0018e: and before its delegator ended it)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_delegated BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_delegated()",
    ],
    "trg_approval_steps_member": [
        "CREATE OR REPLACE FUNCTION proctor_group_member(grp text, person text) RETURNS boolean LANGUAGE sql STABLE SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ SELECT COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = grp AND gc.operator = person ORDER BY gc.seq DESC LIMIT 1), 'none') = 'add' $fn$",
        "CREATE OR REPLACE FUNCTION trg_approval_steps_member() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT proctor_group_member(NEW.group_name, COALESCE(NEW.for_operator, NEW.operator)) THEN RAISE EXCEPTION 'approval_steps: only a member of the group takes its step' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_member BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_member()",
    ],
}


def _before(dialect: str) -> dict:
    """The replaced triggers as 0014p installed them."""
    module = import_module("proctor.core.storage.migrations.versions.0014p_policies")
    out = module.SERVER if dialect == "postgresql" else module.SQLITE
    return {n: out[n] for n in REPLACED}


def upgrade() -> None:
    op.add_column("policies", sa.Column("at_deadline", sa.String(length=16), nullable=True))
    op.add_column("policies", sa.Column("deadline", sa.Float(), nullable=True))
    op.create_table(
        "delegation_ends",
        sa.Column("delegation_id", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("ended_by", sa.String(length=250), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["delegation_id"], ["delegations.id"]),
        sa.PrimaryKeyConstraint("delegation_id"),
    )
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, SERVER)
        return
    for name, statement in SQLITE.items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        conn.execute(text(statement))


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg.drop_all(conn, {n: v for n, v in SERVER.items() if n not in REPLACED})
        pg.execute_all(conn, _before("postgresql"))
        conn.execute(text("DROP FUNCTION IF EXISTS proctor_group_member(text, text)"))
    else:
        for name in SQLITE:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        for statement in _before("sqlite").values():
            conn.execute(text(statement))
    op.drop_table("delegation_ends")
    op.drop_column("policies", "deadline")
    op.drop_column("policies", "at_deadline")
