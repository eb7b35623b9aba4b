"""The inbox sorted by waiter, paged stably (issue 37). The sort key's first part is live (is
an agent waiting for the request now?), so ranked at each page's own time a row whose agent
started or stopped waiting between two pages moved across the cursor: skipped, or shown
twice. Every page of one listing ranks at the first page's time instead (the cursor carries
it), and a stamp written after that time counts as not waiting: a request's rank then never
moves toward the front between pages, so no row is skipped; a row whose agent starts waiting
after the first page keeps its place. (Only a row shown in the waiting group whose agent
stamps again after the first page can come once more, further on; the desk's list is keyed
by item and shows it once.)"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case

from proctor.core import errors
from proctor.core.kernel import waiting
from proctor.core.storage.rows import decode_cursor, encode_cursor


def waiter_rank_sql(c: Any, as_of: float, newest_first: bool) -> Any:
    """``waiting.waiter_rank`` in SQL, at ``as_of``: 1 for a request an agent waited for
    then when the newest come first (descending), 0 when the oldest do; the others the
    other. A stamp after ``as_of`` is not counted (see the module's note)."""
    fresh = and_(c.waiter_seen_at >= as_of - waiting.FRESH_S, c.waiter_seen_at <= as_of)
    first, rest = (1, 0) if newest_first else (0, 1)
    return case((fresh, first), else_=rest).label("waiter_rank")


def split(cursor: str | None, now: float) -> tuple[float, str | None]:
    """(the time every page ranks at, the key cursor ``seek`` reads) of a waiter cursor;
    a first page (None) ranks at ``now``."""
    if cursor is None:
        return now, None
    values = decode_cursor(cursor)
    if not values or not isinstance(values[0], float):
        raise errors.ValidationError(
            f"page cursor {cursor!r} is not a cursor of this list", field="cursor"
        )
    return values[0], encode_cursor(*values[1:])


def joined(as_of: float, key_cursor: str | None) -> str | None:
    """The next page's cursor: the ranking time, then the key of the last row shown."""
    if key_cursor is None:
        return None
    return encode_cursor(as_of, *decode_cursor(key_cursor))
