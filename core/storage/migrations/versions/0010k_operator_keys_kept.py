"""operators' recorded keys: never deleted, never replaced

Revision ID: 0010k
Revises: 0009b

``operator_keys`` records each key that signed in the journal with its operator's name and
when it was first seen. Without a trust file, ``proctor verify`` and the desk check signatures
against it, and verify expects a signed revocation from an operator whose key was seen by
then. 0009b refuses an UPDATE of a recorded key, but a same-user process could still DELETE
it (and INSERT it again under another operator's name, or as first seen later; SQLite's
INSERT OR REPLACE does both in one statement): verify then named an honest answer of alice's
as rewritten, "signed with bob's key", and stopped expecting her signed revocations.

- ``trg_operator_keys_no_delete`` (and on a server ``trg_operator_keys_no_truncate``): a
  recorded key is never deleted;
- ``trg_operator_keys_no_replace``: an INSERT onto a recorded key id aborts.

(``db.key_trigger_sql``, ``pg.key_trigger_sql``.) Nothing in Proctor deletes a key: a key is
retired in the trust file, not here. Only triggers are added; no row changes.
"""

from alembic import op

from proctor.core.storage.db import create_key_triggers, drop_key_triggers

revision = "0010k"
down_revision = "0009b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_key_triggers(op.get_bind())


def downgrade() -> None:
    drop_key_triggers(op.get_bind())
