"""a question an operator dismisses: requested or presented → dismissed, nothing else

Revision ID: 0011d
Revises: 0010k

An operator may close a question without answering it (LangGraph Agent Inbox's "ignore"),
with a reason, as a signed decision (``Questions.dismiss``); the asking agent sees the
question ``dismissed``, not answered. ``trg_interactions_moves`` (0009b) allowed no such
state: this revision replaces it with the census's machine of today, where ``dismissed`` is
reached only from ``requested`` or ``presented`` and, like ``resolved``, is final. 0009b's
``trg_interactions_decider`` already makes the move name its decider (``resolved_by``): it
is not one of the agent's own moves.

The SQL is frozen here (``SQLITE``, ``SERVER``), as in 0009b and 0010k; the downgrade puts
0009b's copy back (a journal with dismissed questions keeps them: nothing moves them
again). Only a trigger is replaced; no row changes.
"""

from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0011d"
down_revision = "0010k"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_interactions_moves": "CREATE TRIGGER IF NOT EXISTS trg_interactions_moves BEFORE UPDATE ON interactions WHEN NEW.status IS NOT OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled', 'dismissed'))), 0) BEGIN SELECT RAISE(ABORT, 'interactions status moves only along its state machine'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_interactions_moves": [
        "CREATE OR REPLACE FUNCTION trg_interactions_moves() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.status IS DISTINCT FROM OLD.status AND NOT COALESCE(((OLD.status = 'requested' AND NEW.status IN ('presented', 'resolved', 'expired', 'cancelled', 'dismissed')) OR (OLD.status = 'presented' AND NEW.status IN ('resolved', 'expired', 'cancelled', 'dismissed'))), false) THEN RAISE EXCEPTION 'interactions status moves only along its state machine' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_moves AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_moves()",
    ],
}


def _install(conn, sqlite: dict[str, str], server: dict[str, list[str]]) -> None:
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, server)
        return
    for name, statement in sqlite.items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        conn.execute(text(statement))


def upgrade() -> None:
    _install(op.get_bind(), SQLITE, SERVER)


def downgrade() -> None:
    from importlib import import_module

    before = import_module("proctor.core.storage.migrations.versions.0009b_census_triggers")
    _install(
        op.get_bind(),
        {n: before.SQLITE[n] for n in SQLITE},
        {n: before.SERVER[n] for n in SERVER},
    )
