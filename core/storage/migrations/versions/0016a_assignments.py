"""assignments: "assign to me" on an inbox item

Revision ID: 0016a
Revises: 0014u

One evidence table (rows only inserted; docs/policies.md): ``assignments`` (an operator took
an inbox item on: its kind, its id, the operator, the decision that records it), with
``ix_assignments_item`` (item_id, created_at): an item's assignee is its newest row's. The
triggers (core/storage/assign_sql.py, frozen here as this revision installs them) refuse an
UPDATE, a DELETE (a TRUNCATE on the server), an insert over an existing id, and a row
without its decision (``target_kind`` ``assignment`` on the same item, by the assignee).
The downgrade drops them and the table.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0016a"
down_revision = "0014u"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_assignments_no_update": "CREATE TRIGGER IF NOT EXISTS trg_assignments_no_update BEFORE UPDATE ON assignments BEGIN SELECT RAISE(ABORT, 'assignments rows are immutable'); END",
    "trg_assignments_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_assignments_no_delete BEFORE DELETE ON assignments BEGIN SELECT RAISE(ABORT, 'assignments rows are immutable'); END",
    "trg_assignments_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_assignments_no_replace BEFORE INSERT ON assignments WHEN EXISTS (SELECT 1 FROM assignments WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM assignments WHERE item_id = NEW.item_id AND seq = NEW.seq) BEGIN SELECT RAISE(ABORT, 'assignments rows are immutable: that key exists'); END",
    "trg_assignments_decided": "CREATE TRIGGER IF NOT EXISTS trg_assignments_decided BEFORE INSERT ON assignments WHEN NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'assignment' AND d.target_id = NEW.item_id AND d.actor = 'operator:' || NEW.assignee) BEGIN SELECT RAISE(ABORT, 'assignments: an assignment is recorded with its decision, by the assignee'); END",
    "trg_assignments_in_order": "CREATE TRIGGER IF NOT EXISTS trg_assignments_in_order BEFORE INSERT ON assignments WHEN NEW.seq <> COALESCE((SELECT max(o.seq) FROM assignments o WHERE o.item_id = NEW.item_id), 0) + 1 BEGIN SELECT RAISE(ABORT, 'assignments: the assignments of an item are numbered one after another'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_assignments_no_update": [
        "CREATE OR REPLACE FUNCTION trg_assignments_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'assignments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_no_update BEFORE UPDATE ON assignments FOR EACH ROW EXECUTE FUNCTION trg_assignments_no_update()",
    ],
    "trg_assignments_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_assignments_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'assignments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_no_delete BEFORE DELETE ON assignments FOR EACH ROW EXECUTE FUNCTION trg_assignments_no_delete()",
    ],
    "trg_assignments_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_assignments_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'assignments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_no_truncate BEFORE TRUNCATE ON assignments FOR EACH STATEMENT EXECUTE FUNCTION trg_assignments_no_truncate()",
    ],
    "trg_assignments_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_assignments_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM assignments WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM assignments WHERE item_id = NEW.item_id AND seq = NEW.seq) THEN RAISE EXCEPTION 'assignments rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_no_replace BEFORE INSERT ON assignments FOR EACH ROW EXECUTE FUNCTION trg_assignments_no_replace()",
    ],
    "trg_assignments_decided": [
        "CREATE OR REPLACE FUNCTION trg_assignments_decided() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'assignment' AND d.target_id = NEW.item_id AND d.actor = 'operator:' || NEW.assignee) THEN RAISE EXCEPTION 'assignments: an assignment is recorded with its decision, by the assignee' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_decided BEFORE INSERT ON assignments FOR EACH ROW EXECUTE FUNCTION trg_assignments_decided()",
    ],
    "trg_assignments_in_order": [
        "CREATE OR REPLACE FUNCTION trg_assignments_in_order() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.seq <> COALESCE((SELECT max(o.seq) FROM assignments o WHERE o.item_id = NEW.item_id), 0) + 1 THEN RAISE EXCEPTION 'assignments: the assignments of an item are numbered one after another' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_assignments_in_order BEFORE INSERT ON assignments FOR EACH ROW EXECUTE FUNCTION trg_assignments_in_order()",
    ],
}


def upgrade() -> None:
    op.create_table(
        "assignments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("item_kind", sa.String(16), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("assignee", sa.String(200), nullable=False),
        sa.Column("decision_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("item_id", "seq", name="uq_assignments_seq"),
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
    op.drop_table("assignments")
