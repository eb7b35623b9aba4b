"""run sort indexes: every Runs page sort reads an index in order

Revision ID: 0003
Revises: 0002

The Runs page sorts by started, updated, title, events, status, agent and project and
pages by keyset on (sort column, [created_at,] id). Each sort gets an index in exactly
that order so a page is an index range read, never a sort of the whole table:
(updated_at, id), (title, id), (last_sequence, id), and (status|agent|project,
created_at, id), which replace the (status|agent|project, created_at) indexes of 0001
(they still serve every filter those served).
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ADDED = [
    ("ix_runs_status_created_id", ["status", "created_at", "id"]),
    ("ix_runs_agent_created_id", ["agent", "created_at", "id"]),
    ("ix_runs_project_created_id", ["project", "created_at", "id"]),
    ("ix_runs_updated", ["updated_at", "id"]),
    ("ix_runs_title", ["title", "id"]),
    ("ix_runs_events", ["last_sequence", "id"]),
]
REPLACED = [
    ("ix_runs_status_created", ["status", "created_at"]),
    ("ix_runs_agent", ["agent", "created_at"]),
    ("ix_runs_project", ["project", "created_at"]),
]


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        for name, columns in ADDED:
            batch_op.create_index(name, columns, unique=False)
        for name, _columns in REPLACED:
            batch_op.drop_index(name)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        for name, columns in REPLACED:
            batch_op.create_index(name, columns, unique=False)
        for name, _columns in ADDED:
            batch_op.drop_index(name)
