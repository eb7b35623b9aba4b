"""interactions: an answer or a dismissal undone within its hold

Revision ID: 0014u
Revises: 0014p (chained after it at the merge; written on 0013u)

- ``interactions.hold_until`` (REAL, NULL): a person's answer (or dismissal) may be undone
  until then (``Questions.undo``); the asking agent does not see it before
  (``Question.as_agent_sees``: every agent-side read). The undo moves the row from
  ``resolved`` or ``dismissed`` back to ``presented``, clearing every decision column, only
  while the agent has not taken the answer, it was given with a hold, and the store's own
  clock is still within the hold (``trg_interactions_undo``); its own decision row (signed
  like the others) is the evidence.
- ``interactions.taken_at`` (REAL, NULL; set once): the agent's read that took the held
  answer once its hold passed; not before the hold ends (``trg_interactions_held``), and
  the answer is never undone after it.

- ``ix_approvals_waiter``, ``ix_interactions_waiter`` (waiter_seen_at) WHERE waiter_seen_at
  IS NOT NULL: an agent's wait stamps ``waiter_seen_at`` without a change row, so the desk's
  feed read also asks for the rows stamped since its last look (``Changes.since(...,
  looks_after=)``), a seek on these, not a scan; a request nobody waited on has no entry.

The replaced triggers (``trg_interactions_moves``, ``_decider``, ``_decision``) and the new
ones are frozen here (``SQLITE``, ``SERVER``) as the census builds them at this revision; the
downgrade puts the earlier copies back and drops the new triggers and columns.
"""

from importlib import import_module

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0014u"
down_revision = "0014p"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_interactions_once": "CREATE TRIGGER IF NOT EXISTS trg_interactions_once BEFORE UPDATE ON interactions WHEN (OLD.taken_at IS NOT NULL AND NEW.taken_at IS NOT OLD.taken_at) BEGIN SELECT RAISE(ABORT, 'interactions: taken_at are set once and never changed or cleared'); END",
    "trg_interactions_moves": "CREATE TRIGGER IF NOT EXISTS trg_interactions_moves BEFORE UPDATE ON interactions WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'resolved' AND NEW.status IN ('presented')) OR (OLD.status = 'dismissed' AND NEW.status IN ('presented'))), 0) BEGIN SELECT RAISE(ABORT, 'interactions status moves only along its state machine'); END",
    "trg_interactions_decider": "CREATE TRIGGER IF NOT EXISTS trg_interactions_decider BEFORE UPDATE ON interactions WHEN NEW.status IS NOT OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'presented' AND NEW.status = 'cancelled') OR (OLD.status = 'presented' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'cancelled') OR (OLD.status = 'requested' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'presented') OR (OLD.status = 'resolved' AND NEW.status = 'presented') OR (OLD.status = 'dismissed' AND NEW.status = 'presented')), 0) BEGIN SELECT RAISE(ABORT, 'interactions: a person''s decision names who made it (resolved_by)'); END",
    "trg_interactions_undo": "CREATE TRIGGER IF NOT EXISTS trg_interactions_undo BEFORE UPDATE ON interactions WHEN COALESCE(OLD.status IN ('resolved', 'dismissed') AND NEW.status = 'presented', 0) AND NOT COALESCE(OLD.taken_at IS NULL AND OLD.hold_until IS NOT NULL AND OLD.hold_until > ((julianday('now') - 2440587.5) * 86400.0) AND NEW.version = OLD.version + 1 AND NEW.resolved_at IS NULL AND NEW.resolved_by IS NULL AND NEW.response IS NULL AND NEW.hold_until IS NULL, 0) BEGIN SELECT RAISE(ABORT, 'interactions: a decision is undone only within its hold, before it is taken, clearing the decision, as a version of its own'); END",
    "trg_interactions_held": "CREATE TRIGGER IF NOT EXISTS trg_interactions_held BEFORE UPDATE ON interactions WHEN OLD.taken_at IS NULL AND NEW.taken_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.taken_at >= OLD.hold_until, 0) BEGIN SELECT RAISE(ABORT, 'interactions: a decision is not taken before its hold ends (hold_until)'); END",
    "trg_interactions_decision": "CREATE TRIGGER IF NOT EXISTS trg_interactions_decision BEFORE UPDATE ON interactions WHEN (NEW.resolved_at IS NOT OLD.resolved_at OR NEW.resolved_by IS NOT OLD.resolved_by OR NEW.response IS NOT OLD.response OR NEW.hold_until IS NOT OLD.hold_until) AND NOT (COALESCE(OLD.status IN ('requested', 'presented') AND NEW.status NOT IN ('requested', 'presented'), 0) OR COALESCE(OLD.status IN ('resolved', 'dismissed') AND NEW.status = 'presented' AND NEW.resolved_at IS NULL AND NEW.resolved_by IS NULL AND NEW.response IS NULL AND NEW.hold_until IS NULL, 0)) BEGIN SELECT RAISE(ABORT, 'interactions: resolved_at, resolved_by, response, hold_until are written once, with the decision'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_interactions_once": [
        "CREATE OR REPLACE FUNCTION trg_interactions_once() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (OLD.taken_at IS NOT NULL AND NEW.taken_at IS DISTINCT FROM OLD.taken_at) THEN RAISE EXCEPTION 'interactions: taken_at are set once and never changed or cleared' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_once AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_once()",
    ],
    "trg_interactions_moves": [
        "CREATE OR REPLACE FUNCTION trg_interactions_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'resolved' AND NEW.status IN ('presented')) OR (OLD.status = 'dismissed' AND NEW.status IN ('presented'))), false) THEN RAISE EXCEPTION 'interactions status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_moves AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_moves()",
    ],
    "trg_interactions_decider": [
        "CREATE OR REPLACE FUNCTION trg_interactions_decider() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NEW.resolved_by IS NULL AND NOT COALESCE(((OLD.status = 'presented' AND NEW.status = 'cancelled') OR (OLD.status = 'presented' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'cancelled') OR (OLD.status = 'requested' AND NEW.status = 'expired') OR (OLD.status = 'requested' AND NEW.status = 'presented') OR (OLD.status = 'resolved' AND NEW.status = 'presented') OR (OLD.status = 'dismissed' AND NEW.status = 'presented')), false) THEN RAISE EXCEPTION 'interactions: a person''s decision names who made it (resolved_by)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_decider AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_decider()",
    ],
    "trg_interactions_undo": [
        "CREATE OR REPLACE FUNCTION trg_interactions_undo() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF COALESCE(OLD.status IN ('resolved', 'dismissed') AND NEW.status = 'presented', false) AND NOT COALESCE(OLD.taken_at IS NULL AND OLD.hold_until IS NOT NULL AND OLD.hold_until > (extract(epoch from clock_timestamp())::double precision) AND NEW.version = OLD.version + 1 AND NEW.resolved_at IS NULL AND NEW.resolved_by IS NULL AND NEW.response IS NULL AND NEW.hold_until IS NULL, false) THEN RAISE EXCEPTION 'interactions: a decision is undone only within its hold, before it is taken, clearing the decision, as a version of its own' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_undo AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_undo()",
    ],
    "trg_interactions_held": [
        "CREATE OR REPLACE FUNCTION trg_interactions_held() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.taken_at IS NULL AND NEW.taken_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.taken_at >= OLD.hold_until, false) THEN RAISE EXCEPTION 'interactions: a decision is not taken before its hold ends (hold_until)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_held AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_held()",
    ],
    "trg_interactions_decision": [
        "CREATE OR REPLACE FUNCTION trg_interactions_decision() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF (NEW.resolved_at IS DISTINCT FROM OLD.resolved_at OR NEW.resolved_by IS DISTINCT FROM OLD.resolved_by OR NEW.response IS DISTINCT FROM OLD.response OR NEW.hold_until IS DISTINCT FROM OLD.hold_until) AND NOT (COALESCE(OLD.status IN ('requested', 'presented') AND NEW.status NOT IN ('requested', 'presented'), false) OR COALESCE(OLD.status IN ('resolved', 'dismissed') AND NEW.status = 'presented' AND NEW.resolved_at IS NULL AND NEW.resolved_by IS NULL AND NEW.response IS NULL AND NEW.hold_until IS NULL, false)) THEN RAISE EXCEPTION 'interactions: resolved_at, resolved_by, response, hold_until are written once, with the decision' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_decision AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_decision()",
    ],
}

NEW = ("trg_interactions_once", "trg_interactions_undo", "trg_interactions_held")
COLUMNS = ("hold_until", "taken_at")
# (name, table): the looks the desk probes for (partial: only rows an agent looked at)
WAITER_INDEXES = (("ix_approvals_waiter", "approvals"), ("ix_interactions_waiter", "interactions"))
LOOKED = "waiter_seen_at IS NOT NULL"


def _install(conn, sqlite: dict[str, str], server: dict[str, list[str]]) -> None:
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, server)
        return
    for name, statement in sqlite.items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        conn.execute(text(statement))


def _before(dialect: str) -> dict:
    """The replaced triggers as the revisions before this one installed them."""
    out: dict = {}
    for name in ("0009b_census_triggers", "0011d_questions_dismissed", "0013u_undo_retry"):
        module = import_module(f"proctor.core.storage.migrations.versions.{name}")
        out.update(module.SERVER if dialect == "postgresql" else module.SQLITE)
    return {n: out[n] for n in SQLITE if n not in NEW}


def upgrade() -> None:
    for column in COLUMNS:
        op.add_column("interactions", sa.Column(column, sa.Float(), nullable=True))
    _install(op.get_bind(), SQLITE, SERVER)
    for name, table in WAITER_INDEXES:
        op.create_index(
            name,
            table,
            ["waiter_seen_at"],
            sqlite_where=sa.text(LOOKED),
            postgresql_where=sa.text(LOOKED),
        )


def downgrade() -> None:
    conn = op.get_bind()
    for name, table in WAITER_INDEXES:
        op.drop_index(name, table_name=table)
    if conn.dialect.name == "postgresql":
        pg.drop_all(conn, {n: SERVER[n] for n in NEW})
        pg.execute_all(conn, _before("postgresql"))
    else:
        for name in NEW:
            conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        _install(conn, _before("sqlite"), {})
    for column in reversed(COLUMNS):
        op.drop_column("interactions", column)
