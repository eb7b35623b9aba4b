"""open-item indexes: (run_id, status) on approvals, interactions and effects

Revision ID: 0002
Revises: 0001

A run's open items (pending approvals, open questions, ambiguous effects) are counted per
run in run lists and after every decision; these indexes answer each count from the index.
(run_id, status) on effects replaces the plain run_id index it starts with.
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.create_index("ix_approvals_run_status", ["run_id", "status"], unique=False)
    with op.batch_alter_table("interactions", schema=None) as batch_op:
        batch_op.create_index("ix_interactions_run_status", ["run_id", "status"], unique=False)
    with op.batch_alter_table("effects", schema=None) as batch_op:
        batch_op.create_index("ix_effects_run_status", ["run_id", "status"], unique=False)
        batch_op.drop_index("ix_effects_run")


def downgrade() -> None:
    with op.batch_alter_table("effects", schema=None) as batch_op:
        batch_op.create_index("ix_effects_run", ["run_id"], unique=False)
        batch_op.drop_index("ix_effects_run_status")
    with op.batch_alter_table("interactions", schema=None) as batch_op:
        batch_op.drop_index("ix_interactions_run_status")
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_index("ix_approvals_run_status")
