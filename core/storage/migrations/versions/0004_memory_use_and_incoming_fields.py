"""memory: last use, the incoming version's fields, each change's run event

Revision ID: 0004
Revises: 0003

- ``memory_entries.last_used_at`` / ``use_count``: agents report which entries they read
  (``memory.mark_used``); 0 means never used. ``ix_memory_last_used`` (last_used_at, id)
  serves the Memory page's "Last used" sort and its keyset paging.
- ``memory_reconciliations.incoming_kind/priority/trust/sensitivity``: what the incoming
  version says about those fields (NULL: it did not carry the field).
- ``memory_mutations.event_sequence``: the sequence of the event the change appended to
  its run (NULL for older rows and changes without a live run).

Every column is added with ALTER TABLE ADD COLUMN (nothing is copied, the immutability
triggers on memory_mutations stay). Downgrade drops them; the batch copy of
memory_mutations drops its triggers with the old table, so they are made again.
"""

import sqlalchemy as sa
from alembic import op

from proctor.core.storage.db import create_immutability_triggers

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

INCOMING: list[tuple[str, sa.types.TypeEngine]] = [
    ("incoming_kind", sa.String(length=32)),
    ("incoming_priority", sa.Integer()),
    ("incoming_trust", sa.String(length=32)),
    ("incoming_sensitivity", sa.String(length=32)),
]


def upgrade() -> None:
    with op.batch_alter_table("memory_entries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("last_used_at", sa.Float(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("use_count", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.create_index("ix_memory_last_used", ["last_used_at", "id"], unique=False)
    with op.batch_alter_table("memory_reconciliations", schema=None) as batch_op:
        for name, type_ in INCOMING:
            batch_op.add_column(sa.Column(name, type_, nullable=True))
    with op.batch_alter_table("memory_mutations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("event_sequence", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_mutations", schema=None) as batch_op:
        batch_op.drop_column("event_sequence")
    create_immutability_triggers(op.get_bind())
    with op.batch_alter_table("memory_reconciliations", schema=None) as batch_op:
        for name, _type in reversed(INCOMING):
            batch_op.drop_column(name)
    with op.batch_alter_table("memory_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_last_used")
        batch_op.drop_column("use_count")
        batch_op.drop_column("last_used_at")
