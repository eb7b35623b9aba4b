"""waiter_seen_at: when a waiting agent last looked for its request's answer

Revision ID: 0012w
Revises: 0011d

- ``waiter_seen_at`` (REAL, NULL until an agent waits) on ``approvals`` and
  ``interactions``: stamped by the requesting agent's ``wait`` (``Approvals.wait``,
  ``Questions.wait``) at most every ``WAITER_STAMP_S`` seconds, so the desk can tell a
  request a live agent waits for from one whose requester went away. A lease-like
  timestamp, not an event per look. The census calls it free: no decision reads it.

Columns are added with ALTER TABLE ADD COLUMN (nothing is copied, no trigger is dropped:
a free column has no census trigger).
"""

import sqlalchemy as sa
from alembic import op

revision = "0012w"
down_revision = "0011d"
branch_labels = None
depends_on = None

TABLES = ("approvals", "interactions")


def upgrade() -> None:
    for table in TABLES:
        op.add_column(table, sa.Column("waiter_seen_at", sa.Float(), nullable=True))


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_column(table, "waiter_seen_at")
