"""origin: where each request came from, as the agent reported it

Revision ID: 0006o
Revises: 0005b

- ``origin`` (TEXT, NULL for older rows and operator-filed ones) on ``approvals``,
  ``interactions``, ``effects`` and ``memory_reconciliations``: canonical JSON of
  ``models.Origin`` (runtime, host process name / pid / machine, tool, client name), written
  by the integration that filed the row. It is the agent's word (shown as such), not part of
  any digest: it never changes what the operator approves.
- ``trg_<table>_origin`` (``db.origin_trigger_sql``): an UPDATE that changes it aborts, so
  it cannot be rewritten after filing. (Separate from 0005's identity triggers, which stay
  as they are.)

Columns are added with ALTER TABLE ADD COLUMN (nothing is copied, no trigger is dropped).
"""

import sqlalchemy as sa
from alembic import op

from proctor.core.storage.db import create_origin_triggers, drop_origin_triggers
from proctor.core.storage.schema import ORIGIN_TABLES

revision = "0006o"
down_revision = "0005b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ORIGIN_TABLES:
        op.add_column(table, sa.Column("origin", sa.Text(), nullable=True))
    create_origin_triggers(op.get_bind())


def downgrade() -> None:
    drop_origin_triggers(op.get_bind())
    for table in reversed(ORIGIN_TABLES):
        op.drop_column(table, "origin")
