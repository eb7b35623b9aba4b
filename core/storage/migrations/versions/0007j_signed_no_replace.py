"""signatures and the journal's id: never replaced

Revision ID: 0007j
Revises: 0007t

0005s made ``signatures`` and ``journal_meta`` refuse UPDATE and DELETE. SQLite's INSERT OR
REPLACE deletes the old row without firing DELETE triggers (recursive_triggers is off), so a
same-user process could swap the journal's id for another journal's, and with it make that
journal's signed decisions verify here, or swap a signature for another.

- ``trg_signatures_no_replace``, ``trg_journal_meta_no_replace``
  (``db.signed_replace_trigger_sql``): an INSERT onto an existing key aborts. On a server an
  INSERT onto a key already fails, and an upsert's DO UPDATE meets the UPDATE triggers; the
  same triggers are made there too, so both stores refuse alike.

Only triggers are added; nothing is copied.
"""

from alembic import op

from proctor.core.storage.db import create_signed_replace_triggers, drop_signed_replace_triggers

revision = "0007j"
down_revision = "0007t"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_signed_replace_triggers(op.get_bind())


def downgrade() -> None:
    drop_signed_replace_triggers(op.get_bind())
