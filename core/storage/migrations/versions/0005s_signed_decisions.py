"""signed decisions: signatures, operators' public keys, the journal's id

Revision ID: 0005s
Revises: 0005

- ``signatures``: one operator's Ed25519 signature per signed record (a decision, a rule,
  a rule's revocation, a snooze), over the RFC 8785 payload stored beside it
  (docs/signed-decisions.md). Immutable by trigger.
- ``operator_keys``: public keys seen signing, for display only: trust never comes from
  the journal (agents get it from a trusted-operators file).
- ``journal_meta``: ``journal_id``, a random id every signature names (a signature made
  in one journal does not verify in another). Immutable by trigger.

New tables only; nothing existing is copied or changed. Downgrade drops them.
"""

import uuid

import sqlalchemy as sa
from alembic import op

from proctor.core.storage.db import create_signed_triggers

revision = "0005s"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signatures",
        sa.Column("record_id", sa.String(length=250), nullable=False),
        sa.Column("record_kind", sa.String(length=32), nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("operator", sa.String(length=250), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("signature", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("record_id"),
    )
    op.create_table(
        "operator_keys",
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("operator", sa.String(length=250), nullable=False),
        sa.Column("public_key", sa.String(length=100), nullable=False),
        sa.Column("first_seen_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key_id"),
    )
    op.create_table(
        "journal_meta",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.execute(
        sa.text("INSERT INTO journal_meta (key, value) VALUES ('journal_id', :v)").bindparams(
            v=f"jnl_{uuid.uuid4().hex}"
        )
    )
    create_signed_triggers(op.get_bind())


def downgrade() -> None:
    op.drop_table("journal_meta")
    op.drop_table("operator_keys")
    op.drop_table("signatures")
