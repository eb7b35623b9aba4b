"""What verify's checks share: the page size of a scan, how many bad rows of a kind are named,
and the key-ordered pages a check reads a table in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proctor.core.storage import db
from proctor.core.storage.rows import all_rows

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal


BATCH = 5000


def _has_digests(journal: Journal) -> bool:
    """False for an older journal read without upgrading (0005 added the digests)."""
    return db.has_integrity(journal.schema_revision)


def _pages(journal: Journal, base: Any, key: Any, conds: list[Any]) -> Any:
    """The rows of the select ``base`` matching ``conds`` in ``key`` order, a page per
    read."""
    after = None
    while True:
        stmt = base.where(*conds, *([key > after] if after is not None else []))
        rows = journal.read(all_rows(stmt.order_by(key).limit(BATCH)))
        yield from rows
        if len(rows) < BATCH:
            return
        after = getattr(rows[-1], key.name)


LIMIT = 100  # bad rows named per kind (the first is the one to look at)
