"""team mode: who filed each request, as the server authenticated them

Revision ID: 0007t
Revises: 0006i

On a PostgreSQL server journal, ``approvals``, ``interactions`` and
``memory_reconciliations`` get ``requested_by``: the database login (``session_user``) that
inserted the row, set by the server whatever the INSERT says (``trg_<table>_requested_by``)
and never changed after (an UPDATE keeps the old value). ``proctor team init`` checks it
against the login deciding the request: requester ≠ approver, checked by the server
(core/ops/team.py). The column is not in the SQLAlchemy schema: Proctor never writes it.

A no-op on SQLite: a journal file has one OS user and no logins to tell apart.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007t"
down_revision = "0006i"
branch_labels = None
depends_on = None

TABLES = ("approvals", "interactions", "memory_reconciliations")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    schema = bind.execute(sa.text("SELECT current_schema()")).scalar_one()
    for table in TABLES:
        name = f"trg_{table}_requested_by"
        bind.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS requested_by text"))
        bind.execute(
            sa.text(  # search_path pinned, pg_temp last, as every trigger's (pg.py)
                f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
                f'SET search_path = "{schema}", pg_catalog, pg_temp AS $fn$ '
                "BEGIN IF TG_OP = 'INSERT' THEN NEW.requested_by := session_user; "
                "ELSE NEW.requested_by := OLD.requested_by; END IF; RETURN NEW; END $fn$"
            )
        )
        bind.execute(
            sa.text(
                f"CREATE OR REPLACE TRIGGER {name} BEFORE INSERT OR UPDATE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {name}()"
            )
        )


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for table in TABLES:
        name = f"trg_{table}_requested_by"
        bind.execute(sa.text(f"DROP TRIGGER IF EXISTS {name} ON {table}"))
        bind.execute(sa.text(f"DROP FUNCTION IF EXISTS {name}()"))
        bind.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN IF EXISTS requested_by"))
