"""questions and memory conflicts: fixed once filed

Revision ID: 0006i
Revises: 0006o

0005 made an approval's and an effect's identity immutable and refused INSERT OR REPLACE on
them; questions (``interactions``) and memory conflicts (``memory_reconciliations``) had
neither, so a same-user process could rewrite the prompt a person answered, the two
versions a person chose between, or swap a whole row with INSERT OR REPLACE.

- ``trg_<table>_identity`` (``db.request_trigger_sql``): an UPDATE that changes what the
  row asks (prompt, request, schema, options, expiry, key and digest; the local and incoming
  versions of a conflict, its entry, source and run) aborts; status, answer, snooze and
  version still move.
- ``trg_<table>_no_replace``: an INSERT onto an existing id (or a question's request key)
  aborts; ``trg_memory_reconciliations_no_replace_pending``: an INSERT of a second pending
  conflict for an entry aborts before the one-pending index could REPLACE the first.

Only triggers are added; nothing is copied.
"""

from alembic import op

from proctor.core.storage.db import create_request_triggers, drop_request_triggers

revision = "0006i"
down_revision = "0006o"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_request_triggers(op.get_bind())


def downgrade() -> None:
    drop_request_triggers(op.get_bind())
