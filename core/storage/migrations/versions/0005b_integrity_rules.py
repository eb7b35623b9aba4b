"""integrity rules: who asked for an effect or a memory conflict; one pending conflict per entry

Revision ID: 0005b
Revises: 0005r

- ``effects.agent`` / ``memory_reconciliations.agent``: the agent that reserved the effect
  or recorded the conflict (NULL for older rows and for operator-filed ones), so the one
  requester rule (``core.deciders``) can refuse that agent's name as the person resolving it.
- ``ux_recon_entry_pending``: a partial UNIQUE index, at most one ``pending`` conflict per
  memory entry (``Memory.record_conflict`` refuses a second one with ``ConflictPending``;
  the index is the last word against any other writer).

A journal written before this revision may already hold several pending conflicts on one
entry. Before the index is made, all but the newest of them are closed as ``dismissed`` by
``system:migration-0005b`` with the reason saying so (the rows, their content and their
incoming versions are kept; the newest stays for a person).

Columns are added with ALTER TABLE ADD COLUMN (nothing is copied, no trigger is dropped).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005b"
down_revision = "0005r"
branch_labels = None
depends_on = None

SUPERSEDED = (
    "UPDATE memory_reconciliations SET status = 'dismissed', version = version + 1, "
    "resolved_by = 'system:migration-0005b', resolved_at = created_at, "
    "resolution_reason = 'superseded: a newer conflict on the same entry is pending "
    "(schema 0005b keeps one pending conflict per entry)' "
    "WHERE status = 'pending' AND EXISTS (SELECT 1 FROM memory_reconciliations AS newer "
    "WHERE newer.entry_id = memory_reconciliations.entry_id AND newer.status = 'pending' "
    "AND (newer.created_at > memory_reconciliations.created_at OR "
    "(newer.created_at = memory_reconciliations.created_at "
    "AND newer.id > memory_reconciliations.id)))"
)


def upgrade() -> None:
    op.add_column("effects", sa.Column("agent", sa.String(length=200), nullable=True))
    op.add_column(
        "memory_reconciliations", sa.Column("agent", sa.String(length=200), nullable=True)
    )
    op.execute(SUPERSEDED)
    op.create_index(
        "ux_recon_entry_pending",
        "memory_reconciliations",
        ["entry_id"],
        unique=True,
        sqlite_where=sa.text("status = 'pending'"),
        postgresql_where=sa.text("status = 'pending'"),
    )


def downgrade() -> None:
    op.drop_index("ux_recon_entry_pending", table_name="memory_reconciliations")
    op.drop_column("memory_reconciliations", "agent")
    op.drop_column("effects", "agent")
