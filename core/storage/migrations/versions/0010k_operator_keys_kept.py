"""operators' recorded keys: never deleted, never replaced

Revision ID: 0010k
Revises: 0009b

``operator_keys`` records each key that signed in the journal with its operator's name and
when it was first seen. Without a trust file, ``proctor verify`` and the desk check signatures
against it, and verify expects a signed revocation from an operator whose key was seen by
then. 0009b refuses an UPDATE of a recorded key, but a same-user process could still DELETE
it (and INSERT it again under another operator's name, or as first seen later; SQLite's
INSERT OR REPLACE does both in one statement): verify then named an honest answer of alice's
as rewritten, "signed with bob's key", and stopped expecting her signed revocations.

- ``trg_operator_keys_no_delete`` (and on a server ``trg_operator_keys_no_truncate``): a
  recorded key is never deleted;
- ``trg_operator_keys_no_replace``: an INSERT onto a recorded key id aborts.

(``db.key_trigger_sql``, ``pg.key_trigger_sql``.) Nothing in Proctor deletes a key: a key is
retired in the trust file, not here. The SQL is frozen here (``SQLITE``, ``SERVER``), as in
0009b. Only triggers are added; no row changes.
"""

from alembic import op
from sqlalchemy import text

from proctor.core.storage import pg

revision = "0010k"
down_revision = "0009b"
branch_labels = None
depends_on = None

# name -> the CREATE TRIGGER statement (SQLite)
SQLITE: dict[str, str] = {
    "trg_operator_keys_no_delete": "CREATE TRIGGER IF NOT EXISTS trg_operator_keys_no_delete BEFORE DELETE ON operator_keys BEGIN SELECT RAISE(ABORT, 'operator_keys rows are immutable'); END",
    "trg_operator_keys_no_replace": "CREATE TRIGGER IF NOT EXISTS trg_operator_keys_no_replace BEFORE INSERT ON operator_keys WHEN EXISTS (SELECT 1 FROM operator_keys WHERE key_id = NEW.key_id) BEGIN SELECT RAISE(ABORT, 'operator_keys rows are immutable: that key exists'); END",
}

# name -> its function and its trigger (PostgreSQL; pg.execute_all fills in the schema)
SERVER: dict[str, list[str]] = {
    "trg_operator_keys_no_delete": [
        "CREATE OR REPLACE FUNCTION trg_operator_keys_no_delete() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'operator_keys rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_operator_keys_no_delete BEFORE DELETE ON operator_keys FOR EACH ROW EXECUTE FUNCTION trg_operator_keys_no_delete()",
    ],
    "trg_operator_keys_no_truncate": [
        "CREATE OR REPLACE FUNCTION trg_operator_keys_no_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN RAISE EXCEPTION 'operator_keys rows are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_operator_keys_no_truncate BEFORE TRUNCATE ON operator_keys FOR EACH STATEMENT EXECUTE FUNCTION trg_operator_keys_no_truncate()",
    ],
    "trg_operator_keys_no_replace": [
        "CREATE OR REPLACE FUNCTION trg_operator_keys_no_replace() RETURNS trigger LANGUAGE plpgsql SET search_path = @journal_schema@, pg_catalog, pg_temp AS $fn$ BEGIN IF EXISTS (SELECT 1 FROM operator_keys WHERE key_id = NEW.key_id) THEN RAISE EXCEPTION 'operator_keys rows are immutable: that key exists' USING ERRCODE = 'integrity_constraint_violation'; END IF; RETURN NEW; END $fn$",
        "CREATE OR REPLACE TRIGGER trg_operator_keys_no_replace BEFORE INSERT ON operator_keys FOR EACH ROW EXECUTE FUNCTION trg_operator_keys_no_replace()",
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
