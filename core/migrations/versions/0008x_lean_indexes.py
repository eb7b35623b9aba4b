"""lean indexes: an index leaves out the rows its reads never ask for

Revision ID: 0008x
Revises: 0007j

Every index a row is in costs an entry (and a page) on each write that moves it. Three of them
held rows that no read of theirs can ask for (store issue 24), and now hold only the others
(partial indexes, the same on SQLite and on a server):

- ``ix_approvals_action`` (action_name, decided_at) WHERE decided_at IS NOT NULL: it serves
  "the decisions on this action" (the history beside an approval, a rule's draft), which ask
  for decided approvals only; a pending request is no longer in it.
- ``ix_approvals_expiry`` (status, expires_at) WHERE expires_at IS NOT NULL: it serves the
  expiry sweep (``expires_at <= now``); an approval that never expires is no longer in it.
- ``ix_runs_parent`` (parent_run_id) WHERE parent_run_id IS NOT NULL: it serves "the children
  of this run"; a run without a parent is no longer in it.

Only indexes are rebuilt; no row changes. Downgrade makes the full indexes again.
"""

import sqlalchemy as sa
from alembic import op

revision = '0008x'
down_revision = '0007j'
branch_labels = None
depends_on = None

# (name, table, columns, the rows kept)
NARROWED = [
    ('ix_approvals_action', 'approvals', ['action_name', 'decided_at'],
     'decided_at IS NOT NULL'),
    ('ix_approvals_expiry', 'approvals', ['status', 'expires_at'], 'expires_at IS NOT NULL'),
    ('ix_runs_parent', 'runs', ['parent_run_id'], 'parent_run_id IS NOT NULL'),
]


def upgrade() -> None:
    for name, table, columns, where in NARROWED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, columns, sqlite_where=sa.text(where),
                        postgresql_where=sa.text(where))


def downgrade() -> None:
    for name, table, columns, _where in NARROWED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, columns)
