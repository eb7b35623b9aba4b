"""Alembic environment: runs on the connection Proctor hands over."""

from __future__ import annotations

from alembic import context

from proctor.core.storage.schema import for_postgresql, metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only used by `alembic revision --autogenerate`
    from sqlalchemy import create_engine

    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite://")
    connection = engine.connect()

if connection.dialect.name == "postgresql":
    for_postgresql()
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
