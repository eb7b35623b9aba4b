"""integrity: immutable identities, no rewrite by REPLACE/upsert, digests on every evidence row

Revision ID: 0005
Revises: 0004

- ``effects.action_digest``: sha256 of the effect's canonical action, backfilled from the
  stored action (the read paths and ``proctor verify`` recompute it).
- ``memory_mutations.prev_digest`` / ``digest``: a hash chain per memory entry in version
  order (``integrity.mutation_digest``), backfilled for every existing row. The rows are
  immutable by trigger: the backfill drops ``trg_memory_mutations_no_update`` for the length
  of this transaction and makes it again.
- Triggers (``db.integrity_trigger_sql``): an UPDATE that changes an approval's or an
  effect's identity columns aborts; an INSERT onto an existing key aborts on every evidence
  table and on approvals and effects (closes INSERT OR REPLACE and upserts).

Columns are added with ALTER TABLE ADD COLUMN (no copy; the other triggers stay). Downgrade
drops the triggers and the columns; the batch copies drop the old tables' triggers with
them, so 0001's are made again.
"""

import sqlalchemy as sa
from alembic import op

from proctor.core.kernel.canonical import ZERO_DIGEST, sha256_hex
from proctor.core.kernel.integrity import MUTATION_KEYS, mutation_digest
from proctor.core.storage.db import (
    create_immutability_triggers,
    create_integrity_triggers,
    drop_integrity_triggers,
    drop_trigger,
)

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table("effects", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("action_digest", sa.String(length=64), nullable=False, server_default="")
        )
    with op.batch_alter_table("memory_mutations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("prev_digest", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("digest", sa.String(length=64), nullable=True))
    for key, action in conn.execute(sa.text("SELECT key, action FROM effects")).all():
        conn.execute(
            sa.text("UPDATE effects SET action_digest = :d WHERE key = :k"),
            {"d": sha256_hex(action), "k": key},
        )
    _chain_mutations(conn)
    create_integrity_triggers(conn)


def _chain_mutations(conn) -> None:
    drop_trigger(conn, "trg_memory_mutations_no_update", "memory_mutations")
    rows = (
        conn.execute(
            sa.text(
                f"SELECT {', '.join(MUTATION_KEYS)} FROM memory_mutations "
                "ORDER BY entry_id, version, created_at, id"
            )
        )
        .mappings()
        .all()
    )
    prev_entry, prev = None, ZERO_DIGEST
    for row in rows:
        if row["entry_id"] != prev_entry:
            prev_entry, prev = row["entry_id"], ZERO_DIGEST
        digest = mutation_digest(prev, dict(row))
        conn.execute(
            sa.text("UPDATE memory_mutations SET prev_digest = :p, digest = :d WHERE id = :i"),
            {"p": prev, "d": digest, "i": row["id"]},
        )
        prev = digest
    create_immutability_triggers(conn)


def downgrade() -> None:
    drop_integrity_triggers(op.get_bind())
    with op.batch_alter_table("memory_mutations", schema=None) as batch_op:
        batch_op.drop_column("digest")
        batch_op.drop_column("prev_digest")
    with op.batch_alter_table("effects", schema=None) as batch_op:
        batch_op.drop_column("action_digest")
    create_immutability_triggers(op.get_bind())
