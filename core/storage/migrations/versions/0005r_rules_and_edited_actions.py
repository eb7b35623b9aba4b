"""rules you can see and revoke; edited actions

Revision ID: 0005r
Revises: 0005s

- ``approval_rules.predicate``: the rule's condition over the action's canonical JSON
  (``core/kernel/predicates.py``, e.g. ``args.amount <= 100``); NULL matches every action its
  tool and resource patterns match.
- ``approval_rules.revoke_reason``: why the operator revoked it (revoked rules stay as
  history).
- ``approvals.input_schema``: the JSON Schema of the tool's arguments, when the agent
  supplied one (an edited action is validated against it).
- ``approvals.approved_action`` / ``approved_digest``: the action the operator approved
  after editing it, and its own digest; NULL when the action was approved as requested.
  The requested ``action`` and ``action_digest`` stay as evidence.

Every column is added with ALTER TABLE ADD COLUMN (nothing is copied).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005r"
down_revision = "0005s"
branch_labels = None
depends_on = None

RULE_COLUMNS: list[tuple[str, sa.types.TypeEngine]] = [
    ("predicate", sa.Text()),
    ("revoke_reason", sa.Text()),
]
APPROVAL_COLUMNS: list[tuple[str, sa.types.TypeEngine]] = [
    ("input_schema", sa.Text()),
    ("approved_action", sa.Text()),
    ("approved_digest", sa.String(length=64)),
]


def upgrade() -> None:
    with op.batch_alter_table("approval_rules", schema=None) as batch_op:
        for name, type_ in RULE_COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=True))
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        for name, type_ in APPROVAL_COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        for name, _type in reversed(APPROVAL_COLUMNS):
            batch_op.drop_column(name)
    with op.batch_alter_table("approval_rules", schema=None) as batch_op:
        for name, _type in reversed(RULE_COLUMNS):
            batch_op.drop_column(name)
