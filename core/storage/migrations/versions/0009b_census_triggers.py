"""the census's triggers: identity never changes, state moves only along its machine

Revision ID: 0009b
Revises: 0008x

Every column of every table has a census entry (``core/storage/census.py``): identity,
state, derived or free metadata. These triggers enforce the state rules on both stores
(``db.census_trigger_sql``, ``pg.census_trigger_sql``), on every table that is not evidence:

- ``trg_<table>_census_identity``: the identity columns older triggers left out (a run's
  project, agent, title...; a rule's patterns, scope and expiry; an operator key) are
  immutable;
- ``trg_<table>_once``: an approval's ``consumed_at``/``consumed_effect_key``, a rule's
  revocation, a run's cancel reason are set once and never changed or cleared;
- ``trg_<table>_no_step_back``: ``version`` (and an effect's attempt, a run's current
  attempt and cancel request) never steps back;
- ``trg_<table>_moves``: the status moves only along ``census.MOVES``;
- ``trg_<table>_decision``: an approval's decision and edit (``approved_action``,
  ``approved_digest``, ``decided_*``, ``rule_id``), a question's answer (``response``,
  ``resolved_*``) and a conflict's resolution are written by the UPDATE that leaves the open
  state, never afterwards;
- ``trg_<table>_with_move``: the columns that go with a move (an effect's result, error and
  resolution; a run's error) change only with one;
- ``trg_memory_entries_with_version``: an entry's fields change only with a new version.

Only triggers are added; no row changes.
"""

from alembic import op

from proctor.core.storage.db import create_census_triggers, drop_census_triggers

revision = "0009b"
down_revision = "0008x"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_census_triggers(op.get_bind())


def downgrade() -> None:
    drop_census_triggers(op.get_bind())
