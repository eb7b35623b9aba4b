"""comments on inbox items: one evidence table, chained per item

Revision ID: 0017c
Revises: 0015u

``comments``: an operator's comment on an approval, a question, a memory conflict or an
effect (core/comments, docs/policies.md). Rows are only inserted, each with its decision
(``target_kind = 'comment'``, signed when the operator has a key) and its audit row, and
each carries the digest of the item's previous comment (``prev_digest``; 64 zeros for the
first), so ``proctor verify`` names an edited, deleted, reordered or forged one. The
triggers (core/storage/comment_sql.py, frozen here as this revision installs them) refuse an
UPDATE, a DELETE, a put over an existing key, a comment out of order or with another
previous digest, one on no item, one not by an operator and one without its decision. The
downgrade drops them and the table.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0017c"
down_revision = "0015u"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_comments_no_update": "CREATE TRIGGER IF NOT EXISTS trg_comments_no_update BEFORE UPDATE ON comments BEGIN SELECT RAISE(ABORT, 'comments rows are immutable'); END",
    "trg_comments_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_comments_no_delete BEFORE DELETE ON comments BEGIN SELECT RAISE(ABORT, 'comments rows are immutable'); END",
    "trg_comments_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_comments_no_replace BEFORE INSERT ON comments WHEN EXISTS (SELECT 1 FROM comments WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM comments WHERE item_kind = NEW.item_kind AND item_id = NEW.item_id AND seq = NEW.seq) BEGIN SELECT RAISE(ABORT, 'comments rows are immutable: that key exists'); END",
    "trg_comments_in_order": "CREATE TRIGGER IF NOT EXISTS trg_comments_in_order BEFORE INSERT ON comments WHEN NEW.seq <> COALESCE((SELECT max(c.seq) FROM comments c WHERE c.item_kind = NEW.item_kind AND c.item_id = NEW.item_id), 0) + 1 BEGIN SELECT RAISE(ABORT, 'comments: an item''s comments are numbered one after another'); END",
    "trg_comments_chained": "CREATE TRIGGER IF NOT EXISTS trg_comments_chained BEFORE INSERT ON comments WHEN NEW.prev_digest <> COALESCE((SELECT c.digest FROM comments c WHERE c.item_kind = NEW.item_kind AND c.item_id = NEW.item_id AND c.seq = NEW.seq - 1), '0000000000000000000000000000000000000000000000000000000000000000') BEGIN SELECT RAISE(ABORT, 'comments: a comment carries the digest of the item''s previous comment'); END",
    "trg_comments_item": "CREATE TRIGGER IF NOT EXISTS trg_comments_item BEFORE INSERT ON comments WHEN NOT ((NEW.item_kind = 'approval' AND EXISTS (SELECT 1 FROM approvals t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'question' AND EXISTS (SELECT 1 FROM interactions t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'conflict' AND EXISTS (SELECT 1 FROM memory_reconciliations t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'effect' AND EXISTS (SELECT 1 FROM effects t WHERE t.key = NEW.item_id))) BEGIN SELECT RAISE(ABORT, 'comments: a comment is on an approval, question, memory conflict or effect that exists'); END",
    "trg_comments_by_operator": "CREATE TRIGGER IF NOT EXISTS trg_comments_by_operator BEFORE INSERT ON comments WHEN NEW.author NOT LIKE 'operator:%' BEGIN SELECT RAISE(ABORT, 'comments: a comment is written by an operator'); END",
    "trg_comments_decided": "CREATE TRIGGER IF NOT EXISTS trg_comments_decided BEFORE INSERT ON comments WHEN NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'comment' AND d.target_id = NEW.id AND d.actor = NEW.author) BEGIN SELECT RAISE(ABORT, 'comments: a comment is recorded with its decision, by its author'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_comments_no_update": [
        "CREATE OR REPLACE FUNCTION trg_comments_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'comments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_no_update BEFORE UPDATE ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_no_update()",
    ],
    "trg_comments_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_comments_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'comments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_no_delete BEFORE DELETE ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_no_delete()",
    ],
    "trg_comments_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_comments_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'comments rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_no_truncate BEFORE TRUNCATE ON comments FOR EACH STATEMENT EXECUTE FUNCTION trg_comments_no_truncate()",
    ],
    "trg_comments_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_comments_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM comments WHERE id = NEW.id) OR EXISTS (SELECT 1 FROM comments WHERE item_kind = NEW.item_kind AND item_id = NEW.item_id AND seq = NEW.seq) THEN RAISE EXCEPTION 'comments rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_no_replace BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_no_replace()",
    ],
    "trg_comments_in_order": [
        "CREATE OR REPLACE FUNCTION trg_comments_in_order() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.seq <> COALESCE((SELECT max(c.seq) FROM comments c WHERE c.item_kind = NEW.item_kind AND c.item_id = NEW.item_id), 0) + 1 THEN RAISE EXCEPTION 'comments: an item''s comments are numbered one after another' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_in_order BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_in_order()",
    ],
    "trg_comments_chained": [
        "CREATE OR REPLACE FUNCTION trg_comments_chained() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.prev_digest <> COALESCE((SELECT c.digest FROM comments c WHERE c.item_kind = NEW.item_kind AND c.item_id = NEW.item_id AND c.seq = NEW.seq - 1), '0000000000000000000000000000000000000000000000000000000000000000') THEN RAISE EXCEPTION 'comments: a comment carries the digest of the item''s previous comment' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_chained BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_chained()",
    ],
    "trg_comments_item": [
        "CREATE OR REPLACE FUNCTION trg_comments_item() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT ((NEW.item_kind = 'approval' AND EXISTS (SELECT 1 FROM approvals t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'question' AND EXISTS (SELECT 1 FROM interactions t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'conflict' AND EXISTS (SELECT 1 FROM memory_reconciliations t WHERE t.id = NEW.item_id)) OR (NEW.item_kind = 'effect' AND EXISTS (SELECT 1 FROM effects t WHERE t.key = NEW.item_id))) THEN RAISE EXCEPTION 'comments: a comment is on an approval, question, memory conflict or effect that exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_item BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_item()",
    ],
    "trg_comments_by_operator": [
        "CREATE OR REPLACE FUNCTION trg_comments_by_operator() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NEW.author NOT LIKE 'operator:%' THEN RAISE EXCEPTION 'comments: a comment is written by an operator' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_by_operator BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_by_operator()",
    ],
    "trg_comments_decided": [
        "CREATE OR REPLACE FUNCTION trg_comments_decided() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = NEW.decision_id AND d.target_kind = 'comment' AND d.target_id = NEW.id AND d.actor = NEW.author) THEN RAISE EXCEPTION 'comments: a comment is recorded with its decision, by its author' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_comments_decided BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION trg_comments_decided()",
    ],
}


def upgrade() -> None:
    op.create_table(
        "comments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("item_kind", sa.String(length=32), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=250), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("decision_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("prev_digest", sa.String(length=64), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_kind", "item_id", "seq", name="uq_comments_seq"),
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
    op.drop_table("comments")
