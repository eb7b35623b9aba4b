"""approval policies: groups of operators, policies, their stages, each approver's step

Revision ID: 0014p
Revises: 0013u

Seven evidence tables (rows only inserted; docs/policies.md): ``group_changes`` (a person added
to or removed from a group, each with its signed decision), ``delegations`` (an operator
hands their part to another for a period), ``policies`` and
``policy_stages`` (what a matching request needs: M approvals of distinct people of the
stage's groups, stage after stage), ``policy_revocations``, ``policy_bindings`` (the policy
a request was bound to when it was filed) and ``approval_steps`` (each approver's step,
with its signed decision). The triggers (core/storage/policy_sql.py, frozen here as this
revision installs them) refuse a step that is not by a member of the stage's group, is by
the agent that asked, is a second step of one person, comes before an earlier stage is
complete or has no decision row; and an approval bound to a policy moves to ``approved``
only once the policy is satisfied and no step denies. The downgrade drops them.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0014p"
down_revision = "0013u"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_group_changes_no_update": "CREATE TRIGGER IF NOT EXISTS trg_group_changes_no_update BEFORE UPDATE ON group_changes BEGIN SELECT RAISE(ABORT, 'group_changes rows are immutable'); END",
    "trg_group_changes_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_group_changes_no_delete BEFORE DELETE ON group_changes BEGIN SELECT RAISE(ABORT, 'group_changes rows are immutable'); END",
    "trg_delegations_no_update": "CREATE TRIGGER IF NOT EXISTS trg_delegations_no_update BEFORE UPDATE ON delegations BEGIN SELECT RAISE(ABORT, 'delegations rows are immutable'); END",
    "trg_delegations_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_delegations_no_delete BEFORE DELETE ON delegations BEGIN SELECT RAISE(ABORT, 'delegations rows are immutable'); END",
    "trg_policies_no_update": "CREATE TRIGGER IF NOT EXISTS trg_policies_no_update BEFORE UPDATE ON policies BEGIN SELECT RAISE(ABORT, 'policies rows are immutable'); END",
    "trg_policies_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_policies_no_delete BEFORE DELETE ON policies BEGIN SELECT RAISE(ABORT, 'policies rows are immutable'); END",
    "trg_policy_stages_no_update": "CREATE TRIGGER IF NOT EXISTS trg_policy_stages_no_update BEFORE UPDATE ON policy_stages BEGIN SELECT RAISE(ABORT, 'policy_stages rows are immutable'); END",
    "trg_policy_stages_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_policy_stages_no_delete BEFORE DELETE ON policy_stages BEGIN SELECT RAISE(ABORT, 'policy_stages rows are immutable'); END",
    "trg_policy_revocations_no_update": "CREATE TRIGGER IF NOT EXISTS trg_policy_revocations_no_update BEFORE UPDATE ON policy_revocations BEGIN SELECT RAISE(ABORT, 'policy_revocations rows are immutable'); END",
    "trg_policy_revocations_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_policy_revocations_no_delete BEFORE DELETE ON policy_revocations BEGIN SELECT RAISE(ABORT, 'policy_revocations rows are immutable'); END",
    "trg_policy_bindings_no_update": "CREATE TRIGGER IF NOT EXISTS trg_policy_bindings_no_update BEFORE UPDATE ON policy_bindings BEGIN SELECT RAISE(ABORT, 'policy_bindings rows are immutable'); END",
    "trg_policy_bindings_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_policy_bindings_no_delete BEFORE DELETE ON policy_bindings BEGIN SELECT RAISE(ABORT, 'policy_bindings rows are immutable'); END",
    "trg_approval_steps_no_update": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_no_update BEFORE UPDATE ON approval_steps BEGIN SELECT RAISE(ABORT, 'approval_steps rows are immutable'); END",
    "trg_approval_steps_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_no_delete BEFORE DELETE ON approval_steps BEGIN SELECT RAISE(ABORT, 'approval_steps rows are immutable'); END",
    "trg_group_changes_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_group_changes_no_replace BEFORE INSERT ON group_changes WHEN EXISTS (SELECT 1 FROM group_changes WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM group_changes WHERE group_name = NEW.group_name AND operator = NEW.operator AND seq = NEW.seq) BEGIN SELECT RAISE(ABORT, 'group_changes rows are immutable: that key exists'); END",
    "trg_delegations_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_delegations_no_replace BEFORE INSERT ON delegations WHEN EXISTS (SELECT 1 FROM delegations WHERE id = NEW.id) BEGIN SELECT RAISE(ABORT, 'delegations rows are immutable: that key exists'); END",
    "trg_policies_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_policies_no_replace BEFORE INSERT ON policies WHEN EXISTS (SELECT 1 FROM policies WHERE id = NEW.id) BEGIN SELECT RAISE(ABORT, 'policies rows are immutable: that key exists'); END",
    "trg_policy_stages_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_policy_stages_no_replace BEFORE INSERT ON policy_stages WHEN EXISTS (SELECT 1 FROM policy_stages WHERE policy_id = NEW.policy_id AND stage = NEW.stage AND group_name = NEW.group_name) BEGIN SELECT RAISE(ABORT, 'policy_stages rows are immutable: that key exists'); END",
    "trg_policy_revocations_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_policy_revocations_no_replace BEFORE INSERT ON policy_revocations WHEN EXISTS (SELECT 1 FROM policy_revocations WHERE policy_id = NEW.policy_id) BEGIN SELECT RAISE(ABORT, 'policy_revocations rows are immutable: that key exists'); END",
    "trg_policy_bindings_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_policy_bindings_no_replace BEFORE INSERT ON policy_bindings WHEN EXISTS (SELECT 1 FROM policy_bindings WHERE approval_id = NEW.approval_id) BEGIN SELECT RAISE(ABORT, 'policy_bindings rows are immutable: that key exists'); END",
    "trg_approval_steps_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_no_replace BEFORE INSERT ON approval_steps WHEN EXISTS (SELECT 1 FROM approval_steps WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM approval_steps WHERE approval_id = NEW.approval_id AND operator = NEW.operator) BEGIN SELECT RAISE(ABORT, 'approval_steps rows are immutable: that key exists'); END",
    "trg_group_changes_in_order": "CREATE TRIGGER IF NOT EXISTS trg_group_changes_in_order BEFORE INSERT ON group_changes WHEN NEW.seq <> COALESCE((SELECT max(gc.seq) FROM group_changes gc WHERE gc.group_name = NEW.group_name AND gc.operator = NEW.operator), 0) + 1 BEGIN SELECT RAISE(ABORT, 'group_changes: a person''s changes in a group are numbered one after another'); END",
    "trg_approval_steps_open": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_open BEFORE INSERT ON approval_steps WHEN NOT EXISTS (SELECT 1 FROM approvals a WHERE a.id = NEW.approval_id AND a.status = 'pending') BEGIN SELECT RAISE(ABORT, 'approval_steps: a step is taken only on a pending request'); END",
    "trg_approval_steps_bound": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_bound BEFORE INSERT ON approval_steps WHEN NOT EXISTS (SELECT 1 FROM policy_bindings b WHERE b.approval_id = NEW.approval_id AND b.policy_id = NEW.policy_id) BEGIN SELECT RAISE(ABORT, 'approval_steps: a step follows the policy its request was bound to'); END",
    "trg_approval_steps_requester": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_requester BEFORE INSERT ON approval_steps WHEN EXISTS (SELECT 1 FROM approvals a JOIN runs r ON r.id = a.run_id WHERE a.id = NEW.approval_id AND (a.agent IN (NEW.operator, NEW.for_operator) OR r.agent IN (NEW.operator, NEW.for_operator))) BEGIN SELECT RAISE(ABORT, 'approval_steps: the agent that asked never approves its own request'); END",
    "trg_approval_steps_once_each": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_once_each BEFORE INSERT ON approval_steps WHEN EXISTS (SELECT 1 FROM approval_steps o WHERE o.approval_id = NEW.approval_id AND (o.operator = NEW.operator OR COALESCE(o.for_operator, o.operator) = COALESCE(NEW.for_operator, NEW.operator))) BEGIN SELECT RAISE(ABORT, 'approval_steps: each person takes one step on a request'); END",
    "trg_approval_steps_delegated": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_delegated BEFORE INSERT ON approval_steps WHEN NEW.for_operator IS NOT NULL AND NOT EXISTS (SELECT 1 FROM delegations d WHERE d.operator = NEW.for_operator AND d.delegate = NEW.operator AND d.starts_at <= NEW.created_at AND NEW.created_at < d.ends_at) BEGIN SELECT RAISE(ABORT, 'approval_steps: a step for another person is taken only by their delegate, within the delegation''s period'); END",
    "trg_approval_steps_group": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_group BEFORE INSERT ON approval_steps WHEN NOT EXISTS (SELECT 1 FROM policy_stages ps WHERE ps.policy_id = NEW.policy_id AND ps.stage = NEW.stage AND ps.group_name = NEW.group_name) AND NOT EXISTS (SELECT 1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE p.id = NEW.policy_id AND p.escalate_to = NEW.group_name AND NEW.created_at >= a.created_at + p.escalate_after) BEGIN SELECT RAISE(ABORT, 'approval_steps: a step is taken for a group of its stage (or the group the policy escalates to, once the request has waited that long)'); END",
    "trg_approval_steps_member": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_member BEFORE INSERT ON approval_steps WHEN COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = NEW.group_name AND gc.operator = COALESCE(NEW.for_operator, NEW.operator) ORDER BY gc.seq DESC LIMIT 1), 'none') <> 'add' BEGIN SELECT RAISE(ABORT, 'approval_steps: only a member of the group takes its step'); END",
    "trg_approval_steps_in_order": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_in_order BEFORE INSERT ON approval_steps WHEN NEW.approve = 1 AND EXISTS (SELECT 1 FROM policy_stages ps WHERE ps.policy_id = NEW.policy_id AND ps.stage < NEW.stage AND (SELECT count(*) FROM approval_steps st WHERE st.approval_id = NEW.approval_id AND st.stage = ps.stage AND st.approve = 1) < ps.need) BEGIN SELECT RAISE(ABORT, 'approval_steps: a stage approves only after every earlier stage is complete'); END",
    "trg_approval_steps_decided": "CREATE TRIGGER IF NOT EXISTS trg_approval_steps_decided BEFORE INSERT ON approval_steps WHEN NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'approval_step' AND d.target_id = NEW.approval_id) BEGIN SELECT RAISE(ABORT, 'approval_steps: a step is recorded with its decision'); END",
    "trg_approvals_policy": "CREATE TRIGGER IF NOT EXISTS trg_approvals_policy BEFORE UPDATE ON approvals WHEN OLD.status = 'pending' AND NEW.status = 'approved' AND (EXISTS (SELECT 1 FROM policy_bindings b JOIN policy_stages ps ON ps.policy_id = b.policy_id WHERE b.approval_id = NEW.id AND (SELECT count(*) FROM approval_steps st WHERE st.approval_id = NEW.id AND st.stage = ps.stage AND st.approve = 1) < ps.need) OR EXISTS (SELECT 1 FROM approval_steps st WHERE st.approval_id = NEW.id AND st.approve = 0)) BEGIN SELECT RAISE(ABORT, 'approvals: a request under a policy is approved only when its policy is satisfied'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_group_changes_no_update": [
        "CREATE OR REPLACE FUNCTION trg_group_changes_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'group_changes rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_group_changes_no_update BEFORE UPDATE ON group_changes FOR EACH ROW EXECUTE FUNCTION trg_group_changes_no_update()",
    ],
    "trg_group_changes_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_group_changes_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'group_changes rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_group_changes_no_delete BEFORE DELETE ON group_changes FOR EACH ROW EXECUTE FUNCTION trg_group_changes_no_delete()",
    ],
    "trg_group_changes_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_group_changes_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'group_changes rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_group_changes_no_truncate BEFORE TRUNCATE ON group_changes FOR EACH STATEMENT EXECUTE FUNCTION trg_group_changes_no_truncate()",
    ],
    "trg_delegations_no_update": [
        "CREATE OR REPLACE FUNCTION trg_delegations_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegations_no_update BEFORE UPDATE ON delegations FOR EACH ROW EXECUTE FUNCTION trg_delegations_no_update()",
    ],
    "trg_delegations_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_delegations_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegations_no_delete BEFORE DELETE ON delegations FOR EACH ROW EXECUTE FUNCTION trg_delegations_no_delete()",
    ],
    "trg_delegations_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_delegations_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'delegations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegations_no_truncate BEFORE TRUNCATE ON delegations FOR EACH STATEMENT EXECUTE FUNCTION trg_delegations_no_truncate()",
    ],
    "trg_policies_no_update": [
        "CREATE OR REPLACE FUNCTION trg_policies_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policies rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policies_no_update BEFORE UPDATE ON policies FOR EACH ROW EXECUTE FUNCTION trg_policies_no_update()",
    ],
    "trg_policies_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_policies_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policies rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policies_no_delete BEFORE DELETE ON policies FOR EACH ROW EXECUTE FUNCTION trg_policies_no_delete()",
    ],
    "trg_policies_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_policies_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policies rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policies_no_truncate BEFORE TRUNCATE ON policies FOR EACH STATEMENT EXECUTE FUNCTION trg_policies_no_truncate()",
    ],
    "trg_policy_stages_no_update": [
        "CREATE OR REPLACE FUNCTION trg_policy_stages_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_stages rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_stages_no_update BEFORE UPDATE ON policy_stages FOR EACH ROW EXECUTE FUNCTION trg_policy_stages_no_update()",
    ],
    "trg_policy_stages_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_policy_stages_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_stages rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_stages_no_delete BEFORE DELETE ON policy_stages FOR EACH ROW EXECUTE FUNCTION trg_policy_stages_no_delete()",
    ],
    "trg_policy_stages_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_policy_stages_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_stages rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_stages_no_truncate BEFORE TRUNCATE ON policy_stages FOR EACH STATEMENT EXECUTE FUNCTION trg_policy_stages_no_truncate()",
    ],
    "trg_policy_revocations_no_update": [
        "CREATE OR REPLACE FUNCTION trg_policy_revocations_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_revocations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_revocations_no_update BEFORE UPDATE ON policy_revocations FOR EACH ROW EXECUTE FUNCTION trg_policy_revocations_no_update()",
    ],
    "trg_policy_revocations_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_policy_revocations_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_revocations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_revocations_no_delete BEFORE DELETE ON policy_revocations FOR EACH ROW EXECUTE FUNCTION trg_policy_revocations_no_delete()",
    ],
    "trg_policy_revocations_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_policy_revocations_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_revocations rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_revocations_no_truncate BEFORE TRUNCATE ON policy_revocations FOR EACH STATEMENT EXECUTE FUNCTION trg_policy_revocations_no_truncate()",
    ],
    "trg_policy_bindings_no_update": [
        "CREATE OR REPLACE FUNCTION trg_policy_bindings_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_bindings rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_bindings_no_update BEFORE UPDATE ON policy_bindings FOR EACH ROW EXECUTE FUNCTION trg_policy_bindings_no_update()",
    ],
    "trg_policy_bindings_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_policy_bindings_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_bindings rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_bindings_no_delete BEFORE DELETE ON policy_bindings FOR EACH ROW EXECUTE FUNCTION trg_policy_bindings_no_delete()",
    ],
    "trg_policy_bindings_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_policy_bindings_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'policy_bindings rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_bindings_no_truncate BEFORE TRUNCATE ON policy_bindings FOR EACH STATEMENT EXECUTE FUNCTION trg_policy_bindings_no_truncate()",
    ],
    "trg_approval_steps_no_update": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'approval_steps rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_no_update BEFORE UPDATE ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_no_update()",
    ],
    "trg_approval_steps_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'approval_steps rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_no_delete BEFORE DELETE ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_no_delete()",
    ],
    "trg_approval_steps_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'approval_steps rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_no_truncate BEFORE TRUNCATE ON approval_steps FOR EACH STATEMENT EXECUTE FUNCTION trg_approval_steps_no_truncate()",
    ],
    "trg_group_changes_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_group_changes_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM group_changes WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM group_changes WHERE group_name = NEW.group_name AND operator = NEW.operator AND seq = NEW.seq) THEN RAISE EXCEPTION 'group_changes rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_group_changes_no_replace BEFORE INSERT ON group_changes FOR EACH ROW EXECUTE FUNCTION trg_group_changes_no_replace()",
    ],
    "trg_delegations_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_delegations_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM delegations WHERE id = NEW.id) THEN RAISE EXCEPTION 'delegations rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_delegations_no_replace BEFORE INSERT ON delegations FOR EACH ROW EXECUTE FUNCTION trg_delegations_no_replace()",
    ],
    "trg_policies_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_policies_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM policies WHERE id = NEW.id) THEN RAISE EXCEPTION 'policies rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policies_no_replace BEFORE INSERT ON policies FOR EACH ROW EXECUTE FUNCTION trg_policies_no_replace()",
    ],
    "trg_policy_stages_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_policy_stages_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM policy_stages WHERE policy_id = NEW.policy_id AND stage = NEW.stage AND group_name = NEW.group_name) THEN RAISE EXCEPTION 'policy_stages rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_stages_no_replace BEFORE INSERT ON policy_stages FOR EACH ROW EXECUTE FUNCTION trg_policy_stages_no_replace()",
    ],
    "trg_policy_revocations_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_policy_revocations_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM policy_revocations WHERE policy_id = NEW.policy_id) THEN RAISE EXCEPTION 'policy_revocations rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_revocations_no_replace BEFORE INSERT ON policy_revocations FOR EACH ROW EXECUTE FUNCTION trg_policy_revocations_no_replace()",
    ],
    "trg_policy_bindings_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_policy_bindings_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM policy_bindings WHERE approval_id = NEW.approval_id) THEN RAISE EXCEPTION 'policy_bindings rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_policy_bindings_no_replace BEFORE INSERT ON policy_bindings FOR EACH ROW EXECUTE FUNCTION trg_policy_bindings_no_replace()",
    ],
    "trg_approval_steps_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM approval_steps WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM approval_steps WHERE approval_id = NEW.approval_id AND operator = NEW.operator) THEN RAISE EXCEPTION 'approval_steps rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_no_replace BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_no_replace()",
    ],
    "trg_group_changes_in_order": [
        "CREATE OR REPLACE FUNCTION trg_group_changes_in_order() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.seq <> COALESCE((SELECT max(gc.seq) FROM group_changes gc WHERE gc.group_name = NEW.group_name AND gc.operator = NEW.operator), 0) + 1 THEN RAISE EXCEPTION 'group_changes: a person''s changes in a group are numbered one after another' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_group_changes_in_order BEFORE INSERT ON group_changes FOR EACH ROW EXECUTE FUNCTION trg_group_changes_in_order()",
    ],
    "trg_approval_steps_open": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_open() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM approvals a WHERE a.id = NEW.approval_id AND a.status = 'pending') THEN RAISE EXCEPTION 'approval_steps: a step is taken only on a pending request' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_open BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_open()",
    ],
    "trg_approval_steps_bound": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_bound() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM policy_bindings b WHERE b.approval_id = NEW.approval_id AND b.policy_id = NEW.policy_id) THEN RAISE EXCEPTION 'approval_steps: a step follows the policy its request was bound to' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_bound BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_bound()",
    ],
    "trg_approval_steps_requester": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_requester() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM approvals a JOIN runs r ON r.id = a.run_id WHERE a.id = NEW.approval_id AND (a.agent IN (NEW.operator, NEW.for_operator) OR r.agent IN (NEW.operator, NEW.for_operator))) THEN RAISE EXCEPTION 'approval_steps: the agent that asked never approves its own request' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_requester BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_requester()",
    ],
    "trg_approval_steps_once_each": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_once_each() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM approval_steps o WHERE o.approval_id = NEW.approval_id AND (o.operator = NEW.operator OR COALESCE(o.for_operator, o.operator) = COALESCE(NEW.for_operator, NEW.operator))) THEN RAISE EXCEPTION 'approval_steps: each person takes one step on a request' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_once_each BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_once_each()",
    ],
    "trg_approval_steps_delegated": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_delegated() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.for_operator IS NOT NULL AND NOT EXISTS (SELECT 1 FROM delegations d WHERE d.operator = NEW.for_operator AND d.delegate = NEW.operator AND d.starts_at <= NEW.created_at AND NEW.created_at < d.ends_at) THEN RAISE EXCEPTION 'approval_steps: a step for another person is taken only by their delegate, within the delegation''s period' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_delegated BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_delegated()",
    ],
    "trg_approval_steps_group": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_group() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM policy_stages ps WHERE ps.policy_id = NEW.policy_id AND ps.stage = NEW.stage AND ps.group_name = NEW.group_name) AND NOT EXISTS (SELECT 1 FROM policies p JOIN approvals a ON a.id = NEW.approval_id WHERE p.id = NEW.policy_id AND p.escalate_to = NEW.group_name AND NEW.created_at >= a.created_at + p.escalate_after) THEN RAISE EXCEPTION 'approval_steps: a step is taken for a group of its stage (or the group the policy escalates to, once the request has waited that long)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_group BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_group()",
    ],
    "trg_approval_steps_member": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_member() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF COALESCE((SELECT gc.change FROM group_changes gc WHERE gc.group_name = NEW.group_name AND gc.operator = COALESCE(NEW.for_operator, NEW.operator) ORDER BY gc.seq DESC LIMIT 1), 'none') <> 'add' THEN RAISE EXCEPTION 'approval_steps: only a member of the group takes its step' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_member BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_member()",
    ],
    "trg_approval_steps_in_order": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_in_order() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.approve = 1 AND EXISTS (SELECT 1 FROM policy_stages ps WHERE ps.policy_id = NEW.policy_id AND ps.stage < NEW.stage AND (SELECT count(*) FROM approval_steps st WHERE st.approval_id = NEW.approval_id AND st.stage = ps.stage AND st.approve = 1) < ps.need) THEN RAISE EXCEPTION 'approval_steps: a stage approves only after every earlier stage is complete' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_in_order BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_in_order()",
    ],
    "trg_approval_steps_decided": [
        "CREATE OR REPLACE FUNCTION trg_approval_steps_decided() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'approval_step' AND d.target_id = NEW.approval_id) THEN RAISE EXCEPTION 'approval_steps: a step is recorded with its decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_steps_decided BEFORE INSERT ON approval_steps FOR EACH ROW EXECUTE FUNCTION trg_approval_steps_decided()",
    ],
    "trg_approvals_policy": [
        "CREATE OR REPLACE FUNCTION trg_approvals_policy() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.status = 'pending' AND NEW.status = 'approved' AND (EXISTS (SELECT 1 FROM policy_bindings b JOIN policy_stages ps ON ps.policy_id = b.policy_id WHERE b.approval_id = NEW.id AND (SELECT count(*) FROM approval_steps st WHERE st.approval_id = NEW.id AND st.stage = ps.stage AND st.approve = 1) < ps.need) OR EXISTS (SELECT 1 FROM approval_steps st WHERE st.approval_id = NEW.id AND st.approve = 0)) THEN RAISE EXCEPTION 'approvals: a request under a policy is approved only when its policy is satisfied' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_policy AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_policy()",
    ],
}


TABLES = (
    "approval_steps",
    "policy_bindings",
    "policy_revocations",
    "policy_stages",
    "policies",
    "delegations",
    "group_changes",
)


def upgrade() -> None:
    op.create_table(
        "group_changes",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("group_name", sa.String(length=200), nullable=False),
        sa.Column("operator", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=250), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("group_name", "operator", "seq", name="uq_group_changes_seq"),
    )
    op.create_table(
        "delegations",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("operator", sa.String(length=200), nullable=False),
        sa.Column("delegate", sa.String(length=200), nullable=False),
        sa.Column("starts_at", sa.Float(), nullable=False),
        sa.Column("ends_at", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "policies",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("action_pattern", sa.String(length=400), nullable=False),
        sa.Column("resource_pattern", sa.String(length=400), nullable=False),
        sa.Column("safety_class", sa.String(length=32), nullable=True),
        sa.Column("predicate", sa.Text(), nullable=True),
        sa.Column("project", sa.String(length=200), nullable=False),
        sa.Column("space", sa.String(length=200), nullable=True),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("escalate_after", sa.Float(), nullable=True),
        sa.Column("escalate_to", sa.String(length=200), nullable=True),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=250), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "policy_stages",
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("stage", sa.Integer(), nullable=False),
        sa.Column("group_name", sa.String(length=200), nullable=False),
        sa.Column("need", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.id"]),
        sa.PrimaryKeyConstraint("policy_id", "stage", "group_name"),
    )
    op.create_table(
        "policy_revocations",
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("revoked_by", sa.String(length=250), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.id"]),
        sa.PrimaryKeyConstraint("policy_id"),
    )
    op.create_table(
        "policy_bindings",
        sa.Column("approval_id", sa.String(length=64), nullable=False),
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["approval_id"], ["approvals.id"]),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.id"]),
        sa.PrimaryKeyConstraint("approval_id"),
    )
    op.create_table(
        "approval_steps",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("approval_id", sa.String(length=64), nullable=False),
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("stage", sa.Integer(), nullable=False),
        sa.Column("group_name", sa.String(length=200), nullable=False),
        sa.Column("operator", sa.String(length=200), nullable=False),
        sa.Column("for_operator", sa.String(length=200), nullable=True),
        sa.Column("approve", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["approval_id"], ["approvals.id"]),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("approval_id", "operator", name="uq_approval_steps_once_each"),
    )
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, SERVER)
        return
    for statement in SQLITE.values():
        conn.execute(text(statement))


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg.drop_all(conn, SERVER)
    else:
        for name in SQLITE:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
    for table in TABLES:
        op.drop_table(table)
