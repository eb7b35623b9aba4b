"""Storage: the tables, the SQLite and PostgreSQL engines, the statement executor, rows to
models, keyset paging, open-item states, the unit of work (``Tx``) and the store (one read or
write transaction at a time), and the Alembic migrations."""
