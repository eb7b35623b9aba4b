"""approvals: a decision undone within its hold; runs: a retry of a failed run

Revision ID: 0013u
Revises: 0012w

- ``approvals.hold_until`` (REAL, NULL): a person's decision (approve, deny) may be undone
  until then (``Approvals.undo``), and the approval is not consumed before it
  (``trg_approvals_held`` compares the consume's time with it). The undo moves the row from
  ``approved`` or ``denied`` back to ``pending``, clearing every decision column, and only
  while it is unconsumed and was decided with a hold, as a version of its own (version + 1,
  ``trg_approvals_undo``); its own decision row (signed like the others) is the evidence,
  which ``verify`` looks for (and that it came before the hold ended). A rule's decision has
  no hold.
- ``runs.retry_requested`` (INTEGER, NULL; never steps back) and ``runs.retry_reason``: an
  operator asks a failed run to try again as attempt N (``Runs.request_retry``); the
  agent's ``Runs.retry`` starts attempt N and moves the run from ``failed`` to ``running``
  in one UPDATE. ``failed`` moves again only that way, once per request (``trg_runs_retry``).

The replaced triggers (``trg_approvals_moves``, ``_decision``, ``_decider``,
``trg_runs_moves``) and the new ones are frozen here (``SQLITE``, ``SERVER``) as the census
builds them at this revision; the downgrade puts the earlier copies back and drops the new
triggers and columns.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0013u"
down_revision = "0012w"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_approvals_moves": "CREATE TRIGGER IF NOT EXISTS trg_approvals_moves BEFORE UPDATE ON approvals WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'cancelled')) OR (OLD.status = 'approved' AND NEW.status IN ('expired', 'pending')) OR (OLD.status = 'denied' AND NEW.status IN ('pending'))), 0) BEGIN SELECT RAISE(ABORT, 'approvals status moves only along its state machine'); END",
    "trg_approvals_decision": "CREATE TRIGGER IF NOT EXISTS trg_approvals_decision BEFORE UPDATE ON approvals WHEN (NEW.decided_at IS NOT OLD.decided_at OR NEW.decided_by IS NOT OLD.decided_by OR NEW.decision_reason IS NOT OLD.decision_reason OR NEW.decision_scope IS NOT OLD.decision_scope OR NEW.rule_id IS NOT OLD.rule_id OR NEW.approved_action IS NOT OLD.approved_action OR NEW.approved_digest IS NOT OLD.approved_digest OR NEW.hold_until IS NOT OLD.hold_until) AND NOT (COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), 0) OR COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending' AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, 0)) BEGIN SELECT RAISE(ABORT, 'approvals: decided_at, decided_by, decision_reason, decision_scope, rule_id, approved_action, approved_digest, hold_until are written once, with the decision'); END",
    "trg_approvals_decider": "CREATE TRIGGER IF NOT EXISTS trg_approvals_decider BEFORE UPDATE ON approvals WHEN NEW.status IS NOT OLD.status AND NEW.decided_by IS NULL AND NOT COALESCE(((OLD.status = 'approved' AND NEW.status = 'expired') OR (OLD.status = 'pending' AND NEW.status = 'cancelled') OR (OLD.status = 'pending' AND NEW.status = 'expired') OR (OLD.status = 'approved' AND NEW.status = 'pending') OR (OLD.status = 'denied' AND NEW.status = 'pending')), 0) BEGIN SELECT RAISE(ABORT, 'approvals: a person''s decision names who made it (decided_by)'); END",
    "trg_approvals_undo": "CREATE TRIGGER IF NOT EXISTS trg_approvals_undo BEFORE UPDATE ON approvals WHEN COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending', 0) AND NOT COALESCE(OLD.consumed_at IS NULL AND OLD.hold_until IS NOT NULL AND NEW.version = OLD.version + 1 AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, 0) BEGIN SELECT RAISE(ABORT, 'approvals: a decision is undone only within its hold, before it is consumed, clearing the decision, as a version of its own'); END",
    "trg_approvals_held": "CREATE TRIGGER IF NOT EXISTS trg_approvals_held BEFORE UPDATE ON approvals WHEN OLD.consumed_at IS NULL AND NEW.consumed_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.consumed_at >= OLD.hold_until, 0) BEGIN SELECT RAISE(ABORT, 'approvals: a decision is not consumed before its hold ends (hold_until)'); END",
    "trg_runs_moves": "CREATE TRIGGER IF NOT EXISTS trg_runs_moves BEFORE UPDATE ON runs WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'interrupted' AND NEW.status IN ('running', 'waiting_for_user', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'failed' AND NEW.status IN ('running'))), 0) BEGIN SELECT RAISE(ABORT, 'runs status moves only along its state machine'); END",
    "trg_runs_no_step_back": "CREATE TRIGGER IF NOT EXISTS trg_runs_no_step_back BEFORE UPDATE ON runs WHEN (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) OR (OLD.current_attempt IS NOT NULL AND (NEW.current_attempt IS NULL OR NEW.current_attempt < OLD.current_attempt)) OR (OLD.cancel_requested IS NOT NULL AND (NEW.cancel_requested IS NULL OR NEW.cancel_requested < OLD.cancel_requested)) OR (OLD.retry_requested IS NOT NULL AND (NEW.retry_requested IS NULL OR NEW.retry_requested < OLD.retry_requested)) BEGIN SELECT RAISE(ABORT, 'runs: version, current_attempt, cancel_requested, retry_requested never step back'); END",
    "trg_runs_retry": "CREATE TRIGGER IF NOT EXISTS trg_runs_retry BEFORE UPDATE ON runs WHEN OLD.status = 'failed' AND NEW.status IS NOT OLD.status AND NOT COALESCE(OLD.retry_requested > OLD.current_attempt AND NEW.current_attempt = OLD.retry_requested, 0) BEGIN SELECT RAISE(ABORT, 'runs: a failed run moves again only as the retry an operator asked for, starting the attempt it names (retry_requested)'); END",
    "trg_runs_retry_reason_along": "CREATE TRIGGER IF NOT EXISTS trg_runs_retry_reason_along BEFORE UPDATE ON runs WHEN NEW.retry_reason IS NOT OLD.retry_reason AND NEW.retry_requested IS OLD.retry_requested BEGIN SELECT RAISE(ABORT, 'runs: retry_reason changes only with retry_requested'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_approvals_moves": [
        "CREATE OR REPLACE FUNCTION trg_approvals_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'cancelled')) OR (OLD.status = 'approved' AND NEW.status IN ('expired', 'pending')) OR (OLD.status = 'denied' AND NEW.status IN ('pending'))), false) THEN RAISE EXCEPTION 'approvals status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_moves AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_moves()",
    ],
    "trg_approvals_decision": [
        "CREATE OR REPLACE FUNCTION trg_approvals_decision() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.decided_at IS DISTINCT FROM OLD.decided_at OR NEW.decided_by IS DISTINCT FROM OLD.decided_by OR NEW.decision_reason IS DISTINCT FROM OLD.decision_reason OR NEW.decision_scope IS DISTINCT FROM OLD.decision_scope OR NEW.rule_id IS DISTINCT FROM OLD.rule_id OR NEW.approved_action IS DISTINCT FROM OLD.approved_action OR NEW.approved_digest IS DISTINCT FROM OLD.approved_digest OR NEW.hold_until IS DISTINCT FROM OLD.hold_until) AND NOT (COALESCE(OLD.status IN ('pending') AND NEW.status NOT IN ('pending'), false) OR COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending' AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, false)) THEN RAISE EXCEPTION 'approvals: decided_at, decided_by, decision_reason, decision_scope, rule_id, approved_action, approved_digest, hold_until are written once, with the decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_decision AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_decision()",
    ],
    "trg_approvals_decider": [
        "CREATE OR REPLACE FUNCTION trg_approvals_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.decided_by IS NULL AND NOT COALESCE(((OLD.status = 'approved' AND NEW.status = 'expired') OR (OLD.status = 'pending' AND NEW.status = 'cancelled') OR (OLD.status = 'pending' AND NEW.status = 'expired') OR (OLD.status = 'approved' AND NEW.status = 'pending') OR (OLD.status = 'denied' AND NEW.status = 'pending')), false) THEN RAISE EXCEPTION 'approvals: a person''s decision names who made it (decided_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_decider AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_decider()",
    ],
    "trg_approvals_undo": [
        "CREATE OR REPLACE FUNCTION trg_approvals_undo() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending', false) AND NOT COALESCE(OLD.consumed_at IS NULL AND OLD.hold_until IS NOT NULL AND NEW.version = OLD.version + 1 AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, false) THEN RAISE EXCEPTION 'approvals: a decision is undone only within its hold, before it is consumed, clearing the decision, as a version of its own' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_undo AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_undo()",
    ],
    "trg_approvals_held": [
        "CREATE OR REPLACE FUNCTION trg_approvals_held() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.consumed_at IS NULL AND NEW.consumed_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.consumed_at >= OLD.hold_until, false) THEN RAISE EXCEPTION 'approvals: a decision is not consumed before its hold ends (hold_until)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_held AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_held()",
    ],
    "trg_runs_moves": [
        "CREATE OR REPLACE FUNCTION trg_runs_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'pending' AND NEW.status IN ('running', 'waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'running' AND NEW.status IN ('waiting_for_user', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'waiting_for_user' AND NEW.status IN ('running', 'interrupted', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'interrupted' AND NEW.status IN ('running', 'waiting_for_user', 'completed', 'failed', 'cancelled')) OR (OLD.status = 'failed' AND NEW.status IN ('running'))), false) THEN RAISE EXCEPTION 'runs status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_moves AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_moves()",
    ],
    "trg_runs_no_step_back": [
        "CREATE OR REPLACE FUNCTION trg_runs_no_step_back() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.version IS NOT NULL AND (NEW.version IS NULL OR NEW.version < OLD.version)) OR (OLD.current_attempt IS NOT NULL AND (NEW.current_attempt IS NULL OR NEW.current_attempt < OLD.current_attempt)) OR (OLD.cancel_requested IS NOT NULL AND (NEW.cancel_requested IS NULL OR NEW.cancel_requested < OLD.cancel_requested)) OR (OLD.retry_requested IS NOT NULL AND (NEW.retry_requested IS NULL OR NEW.retry_requested < OLD.retry_requested)) THEN RAISE EXCEPTION 'runs: version, current_attempt, cancel_requested, retry_requested never step back' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_no_step_back AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_no_step_back()",
    ],
    "trg_runs_retry": [
        "CREATE OR REPLACE FUNCTION trg_runs_retry() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.status = 'failed' AND NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(OLD.retry_requested > OLD.current_attempt AND NEW.current_attempt = OLD.retry_requested, false) THEN RAISE EXCEPTION 'runs: a failed run moves again only as the retry an operator asked for, starting the attempt it names (retry_requested)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_retry AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_retry()",
    ],
    "trg_runs_retry_reason_along": [
        "CREATE OR REPLACE FUNCTION trg_runs_retry_reason_along() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.retry_reason IS DISTINCT FROM OLD.retry_reason AND NEW.retry_requested IS NOT DISTINCT FROM OLD.retry_requested THEN RAISE EXCEPTION 'runs: retry_reason changes only with retry_requested' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_runs_retry_reason_along AFTER UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION trg_runs_retry_reason_along()",
    ],
}

NEW = ("trg_approvals_undo", "trg_approvals_held", "trg_runs_retry", "trg_runs_retry_reason_along")


def _install(conn, sqlite: dict[str, str], server: dict[str, list[str]]) -> None:
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, server)
        return
    for name, statement in sqlite.items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        conn.execute(text(statement))


def upgrade() -> None:
    op.add_column("approvals", sa.Column("hold_until", sa.Float(), nullable=True))
    op.add_column("runs", sa.Column("retry_requested", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("retry_reason", sa.Text(), nullable=True))
    _install(op.get_bind(), SQLITE, SERVER)


def downgrade() -> None:
    from importlib import import_module

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg.drop_all(conn, {n: SERVER[n] for n in NEW})
    else:
        for name in NEW:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
    before = import_module("proctor.core.storage.migrations.versions.0009b_census_triggers")
    kept = [n for n in SQLITE if n not in NEW]
    _install(conn, {n: before.SQLITE[n] for n in kept}, {n: before.SERVER[n] for n in kept})
    for table, column in (
        ("runs", "retry_reason"),
        ("runs", "retry_requested"),
        ("approvals", "hold_until"),
    ):
        op.drop_column(table, column)
