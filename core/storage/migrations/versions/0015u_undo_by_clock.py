"""approvals: undone and consumed by the store's own clock; questions: taken by it too

Revision ID: 0015u
Revises: 0018e (chained after it at the merge; written on 0014u)

- ``trg_approvals_undo`` also requires the store's own clock to be within the hold (as
  0014u's ``trg_interactions_undo`` does): an undo written by hand after the hold is refused,
  whatever clock the writer keeps.
- ``trg_approvals_held`` and ``trg_interactions_held`` also require the store's own clock to
  have passed the hold: an agent's raw UPDATE that consumes an approval (or takes an answer)
  during its hold with a ``consumed_at`` (``taken_at``) of its own choosing past the hold is
  refused (before, only the written time was compared with the hold).

The replaced triggers are frozen here (``SQLITE``, ``SERVER``) as the census builds them at
this revision; the downgrade puts 0013u's and 0014u's copies back.
"""

from importlib import import_module

from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0015u"
down_revision = "0018e"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_approvals_undo": "CREATE TRIGGER IF NOT EXISTS trg_approvals_undo BEFORE UPDATE ON approvals WHEN COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending', 0) AND NOT COALESCE(OLD.consumed_at IS NULL AND OLD.hold_until IS NOT NULL AND OLD.hold_until > ((julianday('now') - 2440587.5) * 86400.0) AND NEW.version = OLD.version + 1 AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, 0) BEGIN SELECT RAISE(ABORT, 'approvals: a decision is undone only within its hold, before it is consumed, clearing the decision, as a version of its own'); END",
    "trg_approvals_held": "CREATE TRIGGER IF NOT EXISTS trg_approvals_held BEFORE UPDATE ON approvals WHEN OLD.consumed_at IS NULL AND NEW.consumed_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.consumed_at >= OLD.hold_until AND ((julianday('now') - 2440587.5) * 86400.0) >= OLD.hold_until, 0) BEGIN SELECT RAISE(ABORT, 'approvals: a decision is not consumed before its hold ends (hold_until)'); END",
    "trg_interactions_held": "CREATE TRIGGER IF NOT EXISTS trg_interactions_held BEFORE UPDATE ON interactions WHEN OLD.taken_at IS NULL AND NEW.taken_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.taken_at >= OLD.hold_until AND ((julianday('now') - 2440587.5) * 86400.0) >= OLD.hold_until, 0) BEGIN SELECT RAISE(ABORT, 'interactions: a decision is not taken before its hold ends (hold_until)'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_approvals_undo": [
        "CREATE OR REPLACE FUNCTION trg_approvals_undo() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF COALESCE(OLD.status IN ('approved', 'denied') AND NEW.status = 'pending', false) AND NOT COALESCE(OLD.consumed_at IS NULL AND OLD.hold_until IS NOT NULL AND OLD.hold_until > (extract(epoch from clock_timestamp())::double precision) AND NEW.version = OLD.version + 1 AND NEW.decided_at IS NULL AND NEW.decided_by IS NULL AND NEW.decision_reason IS NULL AND NEW.decision_scope IS NULL AND NEW.rule_id IS NULL AND NEW.approved_action IS NULL AND NEW.approved_digest IS NULL AND NEW.hold_until IS NULL, false) THEN RAISE EXCEPTION 'approvals: a decision is undone only within its hold, before it is consumed, clearing the decision, as a version of its own' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_undo AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_undo()",
    ],
    "trg_approvals_held": [
        "CREATE OR REPLACE FUNCTION trg_approvals_held() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.consumed_at IS NULL AND NEW.consumed_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.consumed_at >= OLD.hold_until AND (extract(epoch from clock_timestamp())::double precision) >= OLD.hold_until, false) THEN RAISE EXCEPTION 'approvals: a decision is not consumed before its hold ends (hold_until)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_approvals_held AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION trg_approvals_held()",
    ],
    "trg_interactions_held": [
        "CREATE OR REPLACE FUNCTION trg_interactions_held() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF OLD.taken_at IS NULL AND NEW.taken_at IS NOT NULL AND OLD.hold_until IS NOT NULL AND NOT COALESCE(NEW.taken_at >= OLD.hold_until AND (extract(epoch from clock_timestamp())::double precision) >= OLD.hold_until, false) THEN RAISE EXCEPTION 'interactions: a decision is not taken before its hold ends (hold_until)' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NULL; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_interactions_held AFTER UPDATE ON interactions FOR EACH ROW EXECUTE FUNCTION trg_interactions_held()",
    ],
}


def _install(conn, sqlite: dict[str, str], server: dict[str, list[str]]) -> None:
    if conn.dialect.name == "postgresql":
        pg.execute_all(conn, server)
        return
    for name, statement in sqlite.items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
        conn.execute(text(statement))


def _before() -> tuple[dict[str, str], dict[str, list[str]]]:
    """The replaced triggers as 0013u and 0014u installed them."""
    sqlite: dict[str, str] = {}
    server: dict[str, list[str]] = {}
    for name in ("0013u_undo_retry", "0014u_questions_undo"):
        module = import_module(f"proctor.core.storage.migrations.versions.{name}")
        sqlite.update(module.SQLITE)
        server.update(module.SERVER)
    return {n: sqlite[n] for n in SQLITE}, {n: server[n] for n in SERVER}


def upgrade() -> None:
    _install(op.get_bind(), SQLITE, SERVER)


def downgrade() -> None:
    _install(op.get_bind(), *_before())
