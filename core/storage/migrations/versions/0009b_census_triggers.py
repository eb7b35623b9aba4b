"""the census's triggers: identity never changes, state moves only along its machine

Revision ID: 0009b
Revises: 0008x

Every column of every table has a census entry (``core/storage/census.py``): identity,
state, derived or free metadata. These triggers enforce the state rules on both stores
(``db.census_trigger_sql``, ``pg.census_trigger_sql``), on every table that is not evidence:

- ``trg_<table>_census_identity``: the identity columns older triggers left out (a run's
  project, agent, title...; a rule's patterns, scope and expiry; an operator key) are
  immutable;
- ``trg_<table>_once``: an approval's ``consumed_at``/``consumed_effect_key``, a rule's
  revocation, a run's cancel reason are set once and never changed or cleared;
- ``trg_<table>_no_step_back``: ``version`` (and an effect's attempt, a run's current
  attempt and cancel request) never steps back;
- ``trg_<table>_moves``: the status moves only along ``census.MOVES``;
- ``trg_<table>_decision``: an approval's decision and edit (``approved_action``,
  ``approved_digest``, ``decided_*``, ``rule_id``), a question's answer (``response``,
  ``resolved_*``) and a conflict's resolution are written by the UPDATE that leaves the open
  state, never afterwards;
- ``trg_<table>_with_move``: the columns that go with a move (an effect's result, error and
  resolution; a run's error) change only with one;
- ``trg_memory_entries_with_version``: an entry's fields change only with a new version.

The SQL is frozen here as it was written for this revision (``SQLITE``, ``SERVER``): a later
change of the census installs its triggers in a revision of its own and never changes what
0009b installs (tests/core/test_census.py compares this copy with what the census builds
now). Only triggers are added; no row changes.
"""

from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0009b"
down_revision = "0008x"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_runs_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_runs_census_identity BEFORE UPDATE ON runs WHEN NEW.id IS NOT OLD.id OR NEW.project IS NOT OLD.project OR NEW.space IS NOT OLD.space OR NEW.agent IS NOT OLD.agent OR NEW.title IS NOT OLD.title OR NEW.parent_run_id IS NOT OLD.parent_run_id OR NEW.deadline IS NOT OLD.deadline OR NEW.created_at IS NOT OLD.created_at BEGIN SELECT RAISE(ABORT, 'runs identity columns are immutable'); END",
    "trg_runs_once": "CREATE TRIGGER IF NOT EXISTS trg_runs_once BEFORE UPDATE ON runs WHEN (OLD.cancel_reason IS NOT NULL AND NEW.cancel_reason IS NOT OLD.cancel_reason) OR (OLD.error IS NOT NULL AND NEW.error IS NOT OLD.error) BEGIN SELECT RAISE(ABORT, 'runs: cancel_reason, error are set once and never changed or cleared'); END",
    "trg_runs_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_runs_no_step_back BEFORE UPDATE ON runs WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) OR (OLD.current_attempt IS NOT NULL AND (NEW.current_attempt IS NULL OR NEW.current_attempt < OLD.current_attempt)) OR (OLD.cancel_requested IS NOT NULL AND (NEW.cancel_requested IS NULL OR NEW.cancel_requested < OLD.cancel_requested)) BEGIN SELECT RAISE(ABORT, 'runs: version, current_attempt, cancel_requested never step back'); END",
    "trg_runs_moves": "CREATE TRIGGER IF NOT EXISTS trg_runs_moves BEFORE UPDATE ON runs WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'interrupted' AND NEW.status IN ('running', 'waiting_for_user', 'completed', 'failed', 'cancelled'))), 0) BEGIN SELECT RAISE(ABORT, 'runs status moves only along its state machine'); END",
    "trg_runs_cancel_reason_along": "CREATE TRIGGER IF NOT EXISTS trg_runs_cancel_reason_along BEFORE UPDATE ON runs WHEN NEW.cancel_reason IS NOT OLD.cancel_reason AND NEW.cancel_requested IS OLD.cancel_requested BEGIN SELECT RAISE(ABORT, 'runs: cancel_reason changes only with cancel_requested'); END",
    "trg_runs_status_with_event": "CREATE TRIGGER IF NOT EXISTS trg_runs_status_with_event BEFORE UPDATE ON runs WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(NEW.last_sequence > OLD.last_sequence, 0) BEGIN SELECT RAISE(ABORT, 'runs status moves only with its event'); END",
    "trg_runs_with_move": "CREATE TRIGGER IF NOT EXISTS trg_runs_with_move BEFORE UPDATE ON runs WHEN (NEW.finished_at IS NOT OLD.finished_at) AND NEW.status IS OLD.status BEGIN SELECT RAISE(ABORT, 'runs: finished_at change only with a status move'); END",
    "trg_attempts_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_attempts_census_identity BEFORE UPDATE ON attempts WHEN NEW.run_id IS NOT OLD.run_id OR NEW.number IS NOT OLD.number OR NEW.started_at IS NOT OLD.started_at BEGIN SELECT RAISE(ABORT, 'attempts identity columns are immutable'); END",
    "trg_attempts_moves": "CREATE TRIGGER IF NOT EXISTS trg_attempts_moves BEFORE UPDATE ON attempts WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'completed', 'failed', 'interrupted')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'completed', 'failed', 'interrupted'))), 0) BEGIN SELECT RAISE(ABORT, 'attempts status moves only along its state machine'); END",
    "trg_attempts_with_move": "CREATE TRIGGER IF NOT EXISTS trg_attempts_with_move BEFORE UPDATE ON attempts WHEN (NEW.finished_at IS NOT OLD.finished_at OR NEW.error IS NOT OLD.error) AND NEW.status IS OLD.status BEGIN SELECT RAISE(ABORT, 'attempts: finished_at, error change only with a status move'); END",
    "trg_tool_calls_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_tool_calls_census_identity BEFORE UPDATE ON tool_calls WHEN NEW.id IS NOT OLD.id OR NEW.run_id IS NOT OLD.run_id OR NEW.attempt IS NOT OLD.attempt OR NEW.tool IS NOT OLD.tool OR NEW.safety_class IS NOT OLD.safety_class OR NEW.idempotency_key IS NOT OLD.idempotency_key OR NEW.request IS NOT OLD.request OR NEW.created_at IS NOT OLD.created_at BEGIN SELECT RAISE(ABORT, 'tool_calls identity columns are immutable'); END",
    "trg_tool_calls_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_tool_calls_no_step_back BEFORE UPDATE ON tool_calls WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'tool_calls: version never step back'); END",
    "trg_tool_calls_moves": "CREATE TRIGGER IF NOT EXISTS trg_tool_calls_moves BEFORE UPDATE ON tool_calls WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'succeeded', 'failed', 'outcome_unknown')) OR (OLD.status = 'running' AND NEW.status IN ('succeeded', 'failed', 'outcome_unknown')) OR (OLD.status = 'outcome_unknown' AND NEW.status IN ('succeeded', 'failed'))), 0) BEGIN SELECT RAISE(ABORT, 'tool_calls status moves only along its state machine'); END",
    "trg_tool_calls_with_move": "CREATE TRIGGER IF NOT EXISTS trg_tool_calls_with_move BEFORE UPDATE ON tool_calls WHEN (NEW.result IS NOT OLD.result OR NEW.error IS NOT OLD.error) AND NEW.status IS OLD.status BEGIN SELECT RAISE(ABORT, 'tool_calls: result, error change only with a status move'); END",
    "trg_approvals_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_approvals_census_identity BEFORE UPDATE ON approvals WHEN NEW.input_schema IS NOT OLD.input_schema BEGIN SELECT RAISE(ABORT, 'approvals identity columns are immutable'); END",
    "trg_approvals_once": "CREATE TRIGGER IF NOT EXISTS trg_approvals_once BEFORE UPDATE ON approvals WHEN (OLD.consumed_at IS NOT NULL AND NEW.consumed_at IS NOT OLD.consumed_at) OR (OLD.consumed_effect_key IS NOT NULL AND NEW.consumed_effect_key IS NOT OLD.consumed_effect_key) BEGIN SELECT RAISE(ABORT, 'approvals: consumed_at, consumed_effect_key are set once and never changed or cleared'); END",
    "trg_approvals_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_approvals_no_step_back BEFORE UPDATE ON approvals WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'approvals: version never step back'); END",
    "trg_approvals_moves": "CREATE TRIGGER IF NOT EXISTS trg_approvals_moves BEFORE UPDATE ON approvals WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'cancelled')) OR (OLD.status = 'approved' AND NEW.status IN ('expired'))), 0) BEGIN SELECT RAISE(ABORT, 'approvals status moves only along its state machine'); END",
    "trg_approvals_decider": "CREATE TRIGGER IF NOT EXISTS trg_approvals_decider BEFORE UPDATE ON approvals WHEN NEW.status IS NOT OLD.status AND NEW.decided_by IS NULL AND NOT COALESCE(((OLD.status = 'approved' AND NEW.status = 'expired') OR (OLD.status = 'pending' AND NEW.status = 'cancelled') OR (OLD.status = 'pending' AND NEW.status = 'expired')), 0) BEGIN SELECT RAISE(ABORT, 'approvals: a person''s decision names who made it (decided_by)'); END",
    "trg_approvals_consumed_at_along": "CREATE TRIGGER IF NOT EXISTS trg_approvals_consumed_at_along BEFORE UPDATE ON approvals WHEN NEW.consumed_at IS NOT OLD.consumed_at AND NEW.consumed_effect_key IS OLD.consumed_effect_key BEGIN SELECT RAISE(ABORT, 'approvals: consumed_at changes only with consumed_effect_key'); END",
    "trg_approvals_consumed_effect_key_along": "CREATE TRIGGER IF NOT EXISTS trg_approvals_consumed_effect_key_along BEFORE UPDATE ON approvals WHEN NEW.consumed_effect_key IS NOT OLD.consumed_effect_key AND NEW.consumed_at IS OLD.consumed_at BEGIN SELECT RAISE(ABORT, 'approvals: consumed_effect_key changes only with consumed_at'); END",
    "trg_approvals_decision": "CREATE TRIGGER IF NOT EXISTS trg_approvals_decision BEFORE UPDATE ON approvals WHEN (NEW.decided_at IS NOT OLD.decided_at OR NEW.decided_by IS NOT OLD.decided_by OR NEW.decision_reason IS NOT OLD.decision_reason OR NEW.decision_scope IS NOT OLD.decision_scope OR NEW.rule_id IS NOT OLD.rule_id OR NEW.approved_action IS NOT OLD.approved_action OR NEW.approved_digest IS NOT OLD.approved_digest) AND NOT COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), 0) BEGIN SELECT RAISE(ABORT, 'approvals: decided_at, decided_by, decision_reason, decision_scope, rule_id, approved_action, approved_digest are written once, with the decision'); END",
    "trg_approval_rules_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_census_identity BEFORE UPDATE ON approval_rules WHEN NEW.id IS NOT OLD.id OR NEW.effect IS NOT OLD.effect OR NEW.action_pattern IS NOT OLD.action_pattern OR NEW.resource_pattern IS NOT OLD.resource_pattern OR NEW.scope IS NOT OLD.scope OR NEW.run_id IS NOT OLD.run_id OR NEW.project IS NOT OLD.project OR NEW.space IS NOT OLD.space OR NEW.created_by IS NOT OLD.created_by OR NEW.created_at IS NOT OLD.created_at OR NEW.expires_at IS NOT OLD.expires_at OR NEW.source_approval_id IS NOT OLD.source_approval_id OR NEW.predicate IS NOT OLD.predicate BEGIN SELECT RAISE(ABORT, 'approval_rules identity columns are immutable'); END",
    "trg_approval_rules_once": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_once BEFORE UPDATE ON approval_rules WHEN (OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS NOT OLD.revoked_at) OR (OLD.revoked_by IS NOT NULL AND NEW.revoked_by IS NOT OLD.revoked_by) OR (OLD.revoke_reason IS NOT NULL AND NEW.revoke_reason IS NOT OLD.revoke_reason) BEGIN SELECT RAISE(ABORT, 'approval_rules: revoked_at, revoked_by, revoke_reason are set once and never changed or cleared'); END",
    "trg_approval_rules_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_no_step_back BEFORE UPDATE ON approval_rules WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'approval_rules: version never step back'); END",
    "trg_approval_rules_revoked_at_along": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_revoked_at_along BEFORE UPDATE ON approval_rules WHEN NEW.revoked_at IS NOT OLD.revoked_at AND NEW.revoked_by IS OLD.revoked_by BEGIN SELECT RAISE(ABORT, 'approval_rules: revoked_at changes only with revoked_by'); END",
    "trg_approval_rules_revoked_by_along": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_revoked_by_along BEFORE UPDATE ON approval_rules WHEN NEW.revoked_by IS NOT OLD.revoked_by AND NEW.revoked_at IS OLD.revoked_at BEGIN SELECT RAISE(ABORT, 'approval_rules: revoked_by changes only with revoked_at'); END",
    "trg_approval_rules_revoke_reason_along": "CREATE TRIGGER IF NOT EXISTS trg_approval_rules_revoke_reason_along BEFORE UPDATE ON approval_rules WHEN NEW.revoke_reason IS NOT OLD.revoke_reason AND NEW.revoked_at IS OLD.revoked_at BEGIN SELECT RAISE(ABORT, 'approval_rules: revoke_reason changes only with revoked_at'); END",
    "trg_interactions_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_interactions_no_step_back BEFORE UPDATE ON interactions WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'interactions: version never step back'); END",
    "trg_interactions_moves": "CREATE TRIGGER IF NOT EXISTS trg_interactions_moves BEFORE UPDATE ON interactions WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled'))), 0) BEGIN SELECT RAISE(ABORT, 'interactions status moves only along its state machine'); END",
    "trg_interactions_decider": "CREATE TRIGGER IF NOT EXISTS trg_interactions_decider BEFORE UPDATE ON interactions WHEN NEW.status IS NOT OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'presented' AND NEW.status = 'cancelled') OR (OLD.status = 'presented' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'cancelled') OR (OLD.status = 'requested' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'presented')), 0) BEGIN SELECT RAISE(ABORT, 'interactions: a person''s decision names who made it (resolved_by)'); END",
    "trg_interactions_decision": "CREATE TRIGGER IF NOT EXISTS trg_interactions_decision BEFORE UPDATE ON interactions WHEN (NEW.resolved_at IS NOT OLD.resolved_at OR NEW.resolved_by IS NOT OLD.resolved_by OR NEW.response IS NOT OLD.response) AND NOT COALESCE(OLD.status IN ('requested', 'presented') AND NEW.status NOT IN ('requested', 'presented'), 0) BEGIN SELECT RAISE(ABORT, 'interactions: resolved_at, resolved_by, response are written once, with the decision'); END",
    "trg_memory_entries_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_memory_entries_census_identity BEFORE UPDATE ON memory_entries WHEN NEW.id IS NOT OLD.id OR NEW.source_run_id IS NOT OLD.source_run_id OR NEW.created_at IS NOT OLD.created_at BEGIN SELECT RAISE(ABORT, 'memory_entries identity columns are immutable'); END",
    "trg_memory_entries_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_memory_entries_no_step_back BEFORE UPDATE ON memory_entries WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'memory_entries: version never step back'); END",
    "trg_memory_entries_with_version": "CREATE TRIGGER IF NOT EXISTS trg_memory_entries_with_version BEFORE UPDATE ON memory_entries WHEN (NEW.scope IS NOT OLD.scope OR NEW.scope_key IS NOT OLD.scope_key OR NEW.kind IS NOT OLD.kind OR NEW.title IS NOT OLD.title OR NEW.content IS NOT OLD.content OR NEW.priority IS NOT OLD.priority OR NEW.trust IS NOT OLD.trust OR NEW.sensitivity IS NOT OLD.sensitivity OR NEW.pinned IS NOT OLD.pinned OR NEW.confirmed IS NOT OLD.confirmed OR NEW.deleted IS NOT OLD.deleted OR NEW.content_hash IS NOT OLD.content_hash) AND NOT COALESCE(NEW.version > OLD.version, 0) BEGIN SELECT RAISE(ABORT, 'memory_entries: scope, scope_key, kind, title, content, priority, trust, sensitivity, pinned, confirmed, deleted, content_hash change only with a new version (and its mutation)'); END",
    "trg_memory_reconciliations_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_memory_reconciliations_no_step_back BEFORE UPDATE ON memory_reconciliations WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'memory_reconciliations: version never step back'); END",
    "trg_memory_reconciliations_moves": "CREATE TRIGGER IF NOT EXISTS trg_memory_reconciliations_moves BEFORE UPDATE ON memory_reconciliations WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('accepted_local', 'accepted_incoming', 'merged', 'dismissed'))), 0) BEGIN SELECT RAISE(ABORT, 'memory_reconciliations status moves only along its state machine'); END",
    "trg_memory_reconciliations_decider": "CREATE TRIGGER IF NOT EXISTS trg_memory_reconciliations_decider BEFORE UPDATE ON memory_reconciliations WHEN NEW.status IS NOT OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE((0), 0) BEGIN SELECT RAISE(ABORT, 'memory_reconciliations: a person''s decision names who made it (resolved_by)'); END",
    "trg_memory_reconciliations_decision": "CREATE TRIGGER IF NOT EXISTS trg_memory_reconciliations_decision BEFORE UPDATE ON memory_reconciliations WHEN (NEW.resolved_at IS NOT OLD.resolved_at OR NEW.resolved_by IS NOT OLD.resolved_by OR NEW.resolution_reason IS NOT OLD.resolution_reason) AND NOT COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), 0) BEGIN SELECT RAISE(ABORT, 'memory_reconciliations: resolved_at, resolved_by, resolution_reason are written once, with the decision'); END",
    "trg_effects_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_effects_census_identity BEFORE UPDATE ON effects WHEN NEW.agent IS NOT OLD.agent BEGIN SELECT RAISE(ABORT, 'effects identity columns are immutable'); END",
    "trg_effects_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_effects_no_step_back BEFORE UPDATE ON effects WHEN (OLD.attempt IS NOT NULL AND (NEW.attempt IS NULL OR NEW.attempt < OLD.attempt)) OR (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) BEGIN SELECT RAISE(ABORT, 'effects: attempt, version never step back'); END",
    "trg_effects_moves": "CREATE TRIGGER IF NOT EXISTS trg_effects_moves BEFORE UPDATE ON effects WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'reserved' AND NEW.status IN ('executing', 'committed', 'failed', 'ambiguous')) OR (OLD.status = 'executing' AND NEW.status IN ('committed', 'failed', 'ambiguous')) OR (OLD.status = 'ambiguous' AND NEW.status IN ('committed', 'failed')) OR (OLD.status = 'failed' AND NEW.status IN ('reserved'))), 0) BEGIN SELECT RAISE(ABORT, 'effects status moves only along its state machine'); END",
    "trg_effects_decider": "CREATE TRIGGER IF NOT EXISTS trg_effects_decider BEFORE UPDATE ON effects WHEN NEW.status IS NOT OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'executing' AND NEW.status = 'ambiguous') OR (OLD.status = 'executing' AND NEW.status = 'committed') OR (OLD.status = 'executing' AND NEW.status = 'failed') OR (OLD.status = 'failed' AND NEW.status = 'reserved') OR (OLD.status = 'reserved' AND NEW.status = 'ambiguous') OR (OLD.status = 'reserved' AND NEW.status = 'committed') OR (OLD.status = 'reserved' AND NEW.status = 'executing') OR (OLD.status = 'reserved' AND NEW.status = 'failed')), 0) BEGIN SELECT RAISE(ABORT, 'effects: a person''s decision names who made it (resolved_by)'); END",
    "trg_effects_with_move": "CREATE TRIGGER IF NOT EXISTS trg_effects_with_move BEFORE UPDATE ON effects WHEN (NEW.approval_id IS NOT OLD.approval_id OR NEW.result IS NOT OLD.result OR NEW.error IS NOT OLD.error OR NEW.ambiguous_reason IS NOT OLD.ambiguous_reason OR NEW.resolved_by IS NOT OLD.resolved_by OR NEW.resolution_reason IS NOT OLD.resolution_reason OR NEW.started_at IS NOT OLD.started_at) AND NEW.status IS OLD.status BEGIN SELECT RAISE(ABORT, 'effects: approval_id, result, error, ambiguous_reason, resolved_by, resolution_reason, started_at change only with a status move'); END",
    "trg_operator_keys_census_identity": "CREATE TRIGGER IF NOT EXISTS trg_operator_keys_census_identity BEFORE UPDATE ON operator_keys WHEN NEW.key_id IS NOT OLD.key_id OR NEW.operator IS NOT OLD.operator OR NEW.public_key IS NOT OLD.public_key OR NEW.first_seen_at IS NOT OLD.first_seen_at BEGIN SELECT RAISE(ABORT, 'operator_keys identity columns are immutable'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_runs_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_runs_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.id IS DISTINCT FROM OLD.id OR NEW.project IS DISTINCT FROM OLD.project OR NEW.space IS DISTINCT FROM OLD.space OR NEW.agent IS DISTINCT FROM OLD.agent OR NEW.title IS DISTINCT FROM OLD.title OR NEW.parent_run_id IS DISTINCT FROM OLD.parent_run_id OR NEW.deadline IS DISTINCT FROM OLD.deadline OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN RAISE EXCEPTION 'runs identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_census_identity AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_census_identity()",
    ],
    "trg_runs_once": [
        "CREATE OR REPLACE FUNCTION trg_runs_once() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.cancel_reason IS NOT NULL AND NEW.cancel_reason IS DISTINCT FROM OLD.cancel_reason) OR (OLD.error IS NOT NULL AND NEW.error IS DISTINCT FROM OLD.error) THEN RAISE EXCEPTION 'runs: cancel_reason, error are set once and never changed or cleared' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_once AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_once()",
    ],
    "trg_runs_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_runs_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) OR (OLD.current_attempt IS NOT NULL AND (NEW.current_attempt IS NULL OR NEW.current_attempt < OLD.current_attempt)) OR (OLD.cancel_requested IS NOT NULL AND (NEW.cancel_requested IS NULL OR NEW.cancel_requested < OLD.cancel_requested)) THEN RAISE EXCEPTION 'runs: version, current_attempt, cancel_requested never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_no_step_back AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_no_step_back()",
    ],
    "trg_runs_moves": [
        "CREATE OR REPLACE FUNCTION trg_runs_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'interrupted' AND NEW.status IN ('running', 'waiting_for_user', 'completed', 'failed', 'cancelled'))), false) THEN RAISE EXCEPTION 'runs status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_moves AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_moves()",
    ],
    "trg_runs_cancel_reason_along": [
        "CREATE OR REPLACE FUNCTION trg_runs_cancel_reason_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.cancel_reason IS DISTINCT FROM OLD.cancel_reason AND NEW.cancel_requested IS NOT DISTINCT FROM OLD.cancel_requested THEN RAISE EXCEPTION 'runs: cancel_reason changes only with cancel_requested' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_cancel_reason_along AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_cancel_reason_along()",
    ],
    "trg_runs_status_with_event": [
        "CREATE OR REPLACE FUNCTION trg_runs_status_with_event() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(NEW.last_sequence > OLD.last_sequence, false) THEN RAISE EXCEPTION 'runs status moves only with its event' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_status_with_event AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_status_with_event()",
    ],
    "trg_runs_with_move": [
        "CREATE OR REPLACE FUNCTION trg_runs_with_move() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.finished_at IS DISTINCT FROM OLD.finished_at) AND NEW.status IS NOT DISTINCT FROM OLD.status THEN RAISE EXCEPTION 'runs: finished_at change only with a status move' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_with_move AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_with_move()",
    ],
    "trg_attempts_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_attempts_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.number IS DISTINCT FROM OLD.number OR NEW.started_at IS DISTINCT FROM OLD.started_at THEN RAISE EXCEPTION 'attempts identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_attempts_census_identity AFTER UPDATE ON attempts FOR EACH ROW EXECUTE FUNCTION trg_attempts_census_identity()",
    ],
    "trg_attempts_moves": [
        "CREATE OR REPLACE FUNCTION trg_attempts_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'completed', 'failed', 'interrupted')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'completed', 'failed', 'interrupted'))), false) THEN RAISE EXCEPTION 'attempts status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_attempts_moves AFTER UPDATE ON attempts FOR EACH ROW EXECUTE FUNCTION trg_attempts_moves()",
    ],
    "trg_attempts_with_move": [
        "CREATE OR REPLACE FUNCTION trg_attempts_with_move() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.finished_at IS DISTINCT FROM OLD.finished_at OR NEW.error IS DISTINCT FROM OLD.error) AND NEW.status IS NOT DISTINCT FROM OLD.status THEN RAISE EXCEPTION 'attempts: finished_at, error change only with a status move' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_attempts_with_move AFTER UPDATE ON attempts FOR EACH ROW EXECUTE FUNCTION trg_attempts_with_move()",
    ],
    "trg_tool_calls_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_tool_calls_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.id IS DISTINCT FROM OLD.id OR NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.attempt IS DISTINCT FROM OLD.attempt OR NEW.tool IS DISTINCT FROM OLD.tool OR NEW.safety_class IS DISTINCT FROM OLD.safety_class OR NEW.idempotency_key IS DISTINCT FROM OLD.idempotency_key OR NEW.request IS DISTINCT FROM OLD.request OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN RAISE EXCEPTION 'tool_calls identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_tool_calls_census_identity AFTER UPDATE ON tool_calls FOR EACH ROW EXECUTE FUNCTION trg_tool_calls_census_identity()",
    ],
    "trg_tool_calls_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_tool_calls_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'tool_calls: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_tool_calls_no_step_back AFTER UPDATE ON tool_calls FOR EACH ROW EXECUTE FUNCTION trg_tool_calls_no_step_back()",
    ],
    "trg_tool_calls_moves": [
        "CREATE OR REPLACE FUNCTION trg_tool_calls_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'succeeded', 'failed', 'outcome_unknown')) OR (OLD.status = 'running' AND NEW.status IN ('succeeded', 'failed', 'outcome_unknown')) OR (OLD.status = 'outcome_unknown' AND NEW.status IN ('succeeded', 'failed'))), false) THEN RAISE EXCEPTION 'tool_calls status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_tool_calls_moves AFTER UPDATE ON tool_calls FOR EACH ROW EXECUTE FUNCTION trg_tool_calls_moves()",
    ],
    "trg_tool_calls_with_move": [
        "CREATE OR REPLACE FUNCTION trg_tool_calls_with_move() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.result IS DISTINCT FROM OLD.result OR NEW.error IS DISTINCT FROM OLD.error) AND NEW.status IS NOT DISTINCT FROM OLD.status THEN RAISE EXCEPTION 'tool_calls: result, error change only with a status move' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_tool_calls_with_move AFTER UPDATE ON tool_calls FOR EACH ROW EXECUTE FUNCTION trg_tool_calls_with_move()",
    ],
    "trg_approvals_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_approvals_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.input_schema IS DISTINCT FROM OLD.input_schema THEN RAISE EXCEPTION 'approvals identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_census_identity AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_census_identity()",
    ],
    "trg_approvals_once": [
        "CREATE OR REPLACE FUNCTION trg_approvals_once() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.consumed_at IS NOT NULL AND NEW.consumed_at IS DISTINCT FROM OLD.consumed_at) OR (OLD.consumed_effect_key IS NOT NULL AND NEW.consumed_effect_key IS DISTINCT FROM OLD.consumed_effect_key) THEN RAISE EXCEPTION 'approvals: consumed_at, consumed_effect_key are set once and never changed or cleared' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_once AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_once()",
    ],
    "trg_approvals_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_approvals_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'approvals: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_no_step_back AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_no_step_back()",
    ],
    "trg_approvals_moves": [
        "CREATE OR REPLACE FUNCTION trg_approvals_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'cancelled')) OR (OLD.status = 'approved' AND NEW.status IN ('expired'))), false) THEN RAISE EXCEPTION 'approvals status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_moves AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_moves()",
    ],
    "trg_approvals_decider": [
        "CREATE OR REPLACE FUNCTION trg_approvals_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.decided_by IS NULL AND NOT COALESCE(((OLD.status = 'approved' AND NEW.status = 'expired') OR (OLD.status = 'pending' AND NEW.status = 'cancelled') OR (OLD.status = 'pending' AND NEW.status = 'expired')), false) THEN RAISE EXCEPTION 'approvals: a person''s decision names who made it (decided_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_decider AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_decider()",
    ],
    "trg_approvals_consumed_at_along": [
        "CREATE OR REPLACE FUNCTION trg_approvals_consumed_at_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.consumed_at IS DISTINCT FROM OLD.consumed_at AND NEW.consumed_effect_key IS NOT DISTINCT FROM OLD.consumed_effect_key THEN RAISE EXCEPTION 'approvals: consumed_at changes only with consumed_effect_key' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_consumed_at_along AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_consumed_at_along()",
    ],
    "trg_approvals_consumed_effect_key_along": [
        "CREATE OR REPLACE FUNCTION trg_approvals_consumed_effect_key_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.consumed_effect_key IS DISTINCT FROM OLD.consumed_effect_key AND NEW.consumed_at IS NOT DISTINCT FROM OLD.consumed_at THEN RAISE EXCEPTION 'approvals: consumed_effect_key changes only with consumed_at' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_consumed_effect_key_along AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_consumed_effect_key_along()",
    ],
    "trg_approvals_decision": [
        "CREATE OR REPLACE FUNCTION trg_approvals_decision() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.decided_at IS DISTINCT FROM OLD.decided_at OR NEW.decided_by IS DISTINCT FROM OLD.decided_by OR NEW.decision_reason IS DISTINCT FROM OLD.decision_reason OR NEW.decision_scope IS DISTINCT FROM OLD.decision_scope OR NEW.rule_id IS DISTINCT FROM OLD.rule_id OR NEW.approved_action IS DISTINCT FROM OLD.approved_action OR NEW.approved_digest IS DISTINCT FROM OLD.approved_digest) AND NOT COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), false) THEN RAISE EXCEPTION 'approvals: decided_at, decided_by, decision_reason, decision_scope, rule_id, approved_action, approved_digest are written once, with the decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_decision AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_decision()",
    ],
    "trg_approval_rules_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.id IS DISTINCT FROM OLD.id OR NEW.effect IS DISTINCT FROM OLD.effect OR NEW.action_pattern IS DISTINCT FROM OLD.action_pattern OR NEW.resource_pattern IS DISTINCT FROM OLD.resource_pattern OR NEW.scope IS DISTINCT FROM OLD.scope OR NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.project IS DISTINCT FROM OLD.project OR NEW.space IS DISTINCT FROM OLD.space OR NEW.created_by IS DISTINCT FROM OLD.created_by OR NEW.created_at IS DISTINCT FROM OLD.created_at OR NEW.expires_at IS DISTINCT FROM OLD.expires_at OR NEW.source_approval_id IS DISTINCT FROM OLD.source_approval_id OR NEW.predicate IS DISTINCT FROM OLD.predicate THEN RAISE EXCEPTION 'approval_rules identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_census_identity AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_census_identity()",
    ],
    "trg_approval_rules_once": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_once() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at) OR (OLD.revoked_by IS NOT NULL AND NEW.revoked_by IS DISTINCT FROM OLD.revoked_by) OR (OLD.revoke_reason IS NOT NULL AND NEW.revoke_reason IS DISTINCT FROM OLD.revoke_reason) THEN RAISE EXCEPTION 'approval_rules: revoked_at, revoked_by, revoke_reason are set once and never changed or cleared' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_once AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_once()",
    ],
    "trg_approval_rules_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'approval_rules: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_no_step_back AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_no_step_back()",
    ],
    "trg_approval_rules_revoked_at_along": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_revoked_at_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.revoked_at IS DISTINCT FROM OLD.revoked_at AND NEW.revoked_by IS NOT DISTINCT FROM OLD.revoked_by THEN RAISE EXCEPTION 'approval_rules: revoked_at changes only with revoked_by' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_revoked_at_along AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_revoked_at_along()",
    ],
    "trg_approval_rules_revoked_by_along": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_revoked_by_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.revoked_by IS DISTINCT FROM OLD.revoked_by AND NEW.revoked_at IS NOT DISTINCT FROM OLD.revoked_at THEN RAISE EXCEPTION 'approval_rules: revoked_by changes only with revoked_at' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_revoked_by_along AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_revoked_by_along()",
    ],
    "trg_approval_rules_revoke_reason_along": [
        "CREATE OR REPLACE FUNCTION trg_approval_rules_revoke_reason_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.revoke_reason IS DISTINCT FROM OLD.revoke_reason AND NEW.revoked_at IS NOT DISTINCT FROM OLD.revoked_at THEN RAISE EXCEPTION 'approval_rules: revoke_reason changes only with revoked_at' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approval_rules_revoke_reason_along AFTER UPDATE ON approval_rules FOR EACH ROW EXECUTE FUNCTION trg_approval_rules_revoke_reason_along()",
    ],
    "trg_interactions_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_interactions_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'interactions: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_no_step_back AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_no_step_back()",
    ],
    "trg_interactions_moves": [
        "CREATE OR REPLACE FUNCTION trg_interactions_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled'))), false) THEN RAISE EXCEPTION 'interactions status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_moves AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_moves()",
    ],
    "trg_interactions_decider": [
        "CREATE OR REPLACE FUNCTION trg_interactions_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'presented' AND NEW.status = 'cancelled') OR (OLD.status = 'presented' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'cancelled') OR (OLD.status = 'requested' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'presented')), false) THEN RAISE EXCEPTION 'interactions: a person''s decision names who made it (resolved_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_decider AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_decider()",
    ],
    "trg_interactions_decision": [
        "CREATE OR REPLACE FUNCTION trg_interactions_decision() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.resolved_at IS DISTINCT FROM OLD.resolved_at OR NEW.resolved_by IS DISTINCT FROM OLD.resolved_by OR NEW.response IS DISTINCT FROM OLD.response) AND NOT COALESCE(OLD.status IN ('requested', 'presented') AND NEW.status NOT IN ('requested', 'presented'), false) THEN RAISE EXCEPTION 'interactions: resolved_at, resolved_by, response are written once, with the decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_decision AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_decision()",
    ],
    "trg_memory_entries_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_memory_entries_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.id IS DISTINCT FROM OLD.id OR NEW.source_run_id IS DISTINCT FROM OLD.source_run_id OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN RAISE EXCEPTION 'memory_entries identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_entries_census_identity AFTER UPDATE ON memory_entries FOR EACH ROW EXECUTE FUNCTION trg_memory_entries_census_identity()",
    ],
    "trg_memory_entries_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_memory_entries_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'memory_entries: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_entries_no_step_back AFTER UPDATE ON memory_entries FOR EACH ROW EXECUTE FUNCTION trg_memory_entries_no_step_back()",
    ],
    "trg_memory_entries_with_version": [
        "CREATE OR REPLACE FUNCTION trg_memory_entries_with_version() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.scope IS DISTINCT FROM OLD.scope OR NEW.scope_key IS DISTINCT FROM OLD.scope_key OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.title IS DISTINCT FROM OLD.title OR NEW.content IS DISTINCT FROM OLD.content OR NEW.priority IS DISTINCT FROM OLD.priority OR NEW.trust IS DISTINCT FROM OLD.trust OR NEW.sensitivity IS DISTINCT FROM OLD.sensitivity OR NEW.pinned IS DISTINCT FROM OLD.pinned OR NEW.confirmed IS DISTINCT FROM OLD.confirmed OR NEW.deleted IS DISTINCT FROM OLD.deleted OR NEW.content_hash IS DISTINCT FROM OLD.content_hash) AND NOT COALESCE(NEW.version > OLD.version, false) THEN RAISE EXCEPTION 'memory_entries: scope, scope_key, kind, title, content, priority, trust, sensitivity, pinned, confirmed, deleted, content_hash change only with a new version (and its mutation)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_entries_with_version AFTER UPDATE ON memory_entries FOR EACH ROW EXECUTE FUNCTION trg_memory_entries_with_version()",
    ],
    "trg_memory_reconciliations_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_memory_reconciliations_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'memory_reconciliations: version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_reconciliations_no_step_back AFTER UPDATE ON memory_reconciliations FOR EACH ROW EXECUTE FUNCTION trg_memory_reconciliations_no_step_back()",
    ],
    "trg_memory_reconciliations_moves": [
        "CREATE OR REPLACE FUNCTION trg_memory_reconciliations_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('accepted_local', 'accepted_incoming', 'merged', 'dismissed'))), false) THEN RAISE EXCEPTION 'memory_reconciliations status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_reconciliations_moves AFTER UPDATE ON memory_reconciliations FOR EACH ROW EXECUTE FUNCTION trg_memory_reconciliations_moves()",
    ],
    "trg_memory_reconciliations_decider": [
        "CREATE OR REPLACE FUNCTION trg_memory_reconciliations_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE((false), false) THEN RAISE EXCEPTION 'memory_reconciliations: a person''s decision names who made it (resolved_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_reconciliations_decider AFTER UPDATE ON memory_reconciliations FOR EACH ROW EXECUTE FUNCTION trg_memory_reconciliations_decider()",
    ],
    "trg_memory_reconciliations_decision": [
        "CREATE OR REPLACE FUNCTION trg_memory_reconciliations_decision() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.resolved_at IS DISTINCT FROM OLD.resolved_at OR NEW.resolved_by IS DISTINCT FROM OLD.resolved_by OR NEW.resolution_reason IS DISTINCT FROM OLD.resolution_reason) AND NOT COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), false) THEN RAISE EXCEPTION 'memory_reconciliations: resolved_at, resolved_by, resolution_reason are written once, with the decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_memory_reconciliations_decision AFTER UPDATE ON memory_reconciliations FOR EACH ROW EXECUTE FUNCTION trg_memory_reconciliations_decision()",
    ],
    "trg_effects_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_effects_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.agent IS DISTINCT FROM OLD.agent THEN RAISE EXCEPTION 'effects identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_effects_census_identity AFTER UPDATE ON effects FOR EACH ROW EXECUTE FUNCTION trg_effects_census_identity()",
    ],
    "trg_effects_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_effects_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.attempt IS NOT NULL AND (NEW.attempt IS NULL OR NEW.attempt < OLD.attempt)) OR (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) THEN RAISE EXCEPTION 'effects: attempt, version never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_effects_no_step_back AFTER UPDATE ON effects FOR EACH ROW EXECUTE FUNCTION trg_effects_no_step_back()",
    ],
    "trg_effects_moves": [
        "CREATE OR REPLACE FUNCTION trg_effects_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'reserved' AND NEW.status IN ('executing', 'committed', 'failed', 'ambiguous')) OR (OLD.status = 'executing' AND NEW.status IN ('committed', 'failed', 'ambiguous')) OR (OLD.status = 'ambiguous' AND NEW.status IN ('committed', 'failed')) OR (OLD.status = 'failed' AND NEW.status IN ('reserved'))), false) THEN RAISE EXCEPTION 'effects status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_effects_moves AFTER UPDATE ON effects FOR EACH ROW EXECUTE FUNCTION trg_effects_moves()",
    ],
    "trg_effects_decider": [
        "CREATE OR REPLACE FUNCTION trg_effects_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'executing' AND NEW.status = 'ambiguous') OR (OLD.status = 'executing' AND NEW.status = 'committed') OR (OLD.status = 'executing' AND NEW.status = 'failed') OR (OLD.status = 'failed' AND NEW.status = 'reserved') OR (OLD.status = 'reserved' AND NEW.status = 'ambiguous') OR (OLD.status = 'reserved' AND NEW.status = 'committed') OR (OLD.status = 'reserved' AND NEW.status = 'executing') OR (OLD.status = 'reserved' AND NEW.status = 'failed')), false) THEN RAISE EXCEPTION 'effects: a person''s decision names who made it (resolved_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_effects_decider AFTER UPDATE ON effects FOR EACH ROW EXECUTE FUNCTION trg_effects_decider()",
    ],
    "trg_effects_with_move": [
        "CREATE OR REPLACE FUNCTION trg_effects_with_move() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.approval_id IS DISTINCT FROM OLD.approval_id OR NEW.result IS DISTINCT FROM OLD.result OR NEW.error IS DISTINCT FROM OLD.error OR NEW.ambiguous_reason IS DISTINCT FROM OLD.ambiguous_reason OR NEW.resolved_by IS DISTINCT FROM OLD.resolved_by OR NEW.resolution_reason IS DISTINCT FROM OLD.resolution_reason OR NEW.started_at IS DISTINCT FROM OLD.started_at) AND NEW.status IS NOT DISTINCT FROM OLD.status THEN RAISE EXCEPTION 'effects: approval_id, result, error, ambiguous_reason, resolved_by, resolution_reason, started_at change only with a status move' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_effects_with_move AFTER UPDATE ON effects FOR EACH ROW EXECUTE FUNCTION trg_effects_with_move()",
    ],
    "trg_operator_keys_census_identity": [
        "CREATE OR REPLACE FUNCTION trg_operator_keys_census_identity() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.key_id IS DISTINCT FROM OLD.key_id OR NEW.operator IS DISTINCT FROM OLD.operator OR NEW.public_key IS DISTINCT FROM OLD.public_key OR NEW.first_seen_at IS DISTINCT FROM OLD.first_seen_at THEN RAISE EXCEPTION 'operator_keys identity columns are immutable' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_operator_keys_census_identity AFTER UPDATE ON operator_keys FOR EACH ROW EXECUTE FUNCTION trg_operator_keys_census_identity()",
    ],
}


def upgrade() -> None:
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
        return
    for name in SQLITE:
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
