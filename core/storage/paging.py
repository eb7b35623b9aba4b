"""Paging: keyset pages of rows (a cursor names the last row shown, the next page seeks past
it in index order), the runs' sorts, and LIKE escaping for the search boxes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from sqlalchemy import exists, func, or_, select, tuple_

from proctor.core import errors
from proctor.core.models import Frozen, Page, Run

from . import schema as s
from .items import is_open_question
from .rows import decode_cursor, encode_cursor, to_models

MAX_PAGE = 1000
RUN_PAGE = Page[Run]  # parametrized once: pydantic builds a new class on many lookups


# ---------------------------------------------------------------- the keyset paging helper
# Every paged list (runs, effects, the inbox, memory) is ordered by a unique key of columns
# (what it sorts by, then what breaks ties); a page's cursor encodes the key of its last row,
# and the next page is the rows strictly after it: one row-value range seek that the key's
# index reads in order, never an OFFSET.


def seek(cols: Sequence[Any], cursor: str | None, descending: bool) -> Any:
    """The WHERE for the rows strictly after ``cursor`` in ``cols`` order (None: the first
    page)."""
    if cursor is None:
        return None
    values = decode_cursor(cursor)
    if len(values) != len(cols):
        raise errors.ValidationError(
            f"page cursor {cursor!r} is not a cursor of this list", field="cursor"
        )
    key, after = tuple_(*cols), tuple_(*values)
    return key < after if descending else key > after


def ordered(cols: Sequence[Any], descending: bool) -> list[Any]:
    """The ORDER BY of ``cols`` (all one direction: what ``seek`` pages through)."""
    return [c.desc() if descending else c.asc() for c in cols]


def cursor_after(rows: Sequence[Any], limit: int, cols: Sequence[Any]) -> str | None:
    """The cursor of a page read with ``limit + 1`` rows: the key (``cols``: columns or
    their names) of its last row shown, or None when the extra row is absent (no next
    page)."""
    if len(rows) <= limit or limit < 1:
        return None
    last = rows[limit - 1]._mapping
    return encode_cursor(*(last[c if isinstance(c, str) else c.name] for c in cols))


def keyset_page(model: Any, rows: Sequence[Any], limit: int, cols: Sequence[Any]) -> Page:
    """``rows`` (read with ``limit + 1``) as a page of ``model`` with its next cursor."""
    return Page[model](
        items=to_models(model, rows[:limit]), next_cursor=cursor_after(rows, limit, cols)
    )


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


RunSort = Literal["started", "updated", "status", "agent", "project", "title", "events"]


class RunQuery(Frozen):
    """What the Runs page shows: filters and the sort (all applied in SQL)."""

    status: tuple[str, ...] = ()
    agent: str | None = None
    project: str | None = None
    text: str | None = None  # title, id, agent or project contains
    since: float | None = None
    until: float | None = None
    has_open_items: bool = False
    sort: RunSort = "started"
    descending: bool = True


def run_conditions(q: RunQuery) -> list[Any]:
    r = s.runs.c
    conds = [
        r.status.in_(q.status) if q.status else None,
        r.agent == q.agent if q.agent else None,
        r.project == q.project if q.project else None,
        r.created_at >= q.since if q.since is not None else None,
        r.created_at < q.until if q.until is not None else None,
        has_open_items_clause() if q.has_open_items else None,
    ]
    if q.text:
        like = f"%{escape_like(q.text)}%"
        conds.append(
            or_(*(col.ilike(like, escape="\\") for col in (r.title, r.id, r.agent, r.project)))
        )
    return [c for c in conds if c is not None]


# The order of each run sort: its column, then what breaks ties, each one matched by an
# index (0001: created; 0003: updated, title, events, status/agent/project + created).
RUN_SORTS: dict[str, tuple[Any, ...]] = {
    "started": (s.runs.c.created_at, s.runs.c.id),
    "updated": (s.runs.c.updated_at, s.runs.c.id),
    "title": (s.runs.c.title, s.runs.c.id),
    "events": (s.runs.c.last_sequence, s.runs.c.id),
    "status": (s.runs.c.status, s.runs.c.created_at, s.runs.c.id),
    "agent": (s.runs.c.agent, s.runs.c.created_at, s.runs.c.id),
    "project": (s.runs.c.project, s.runs.c.created_at, s.runs.c.id),
}


def sort_fields(sort: str) -> tuple[str, ...]:
    """The Run fields a sort orders by, tie-breaks included (what a view sorts rows by)."""
    return tuple(c.name for c in RUN_SORTS[sort])


def has_open_items_clause() -> Any:
    """The run has a pending approval, an open question or an ambiguous effect: three
    EXISTS probes of the (run_id, status) indexes, stopping at the first row found."""
    r = s.runs.c
    return or_(
        exists().where(s.approvals.c.run_id == r.id, s.approvals.c.status == "pending"),
        exists().where(s.questions.c.run_id == r.id, is_open_question(s.questions.c.status)),
        exists().where(s.effects.c.run_id == r.id, s.effects.c.status == "ambiguous"),
    )


def run_page_statement(
    conds: list[Any], sort: str, descending: bool, cursor: str | None, limit: int
) -> Any:
    """One page of runs in ``sort`` order, keyset after ``cursor``: the sort's index is
    read in order (a row-value range seek past the cursor), so no page sorts."""
    cols = RUN_SORTS[sort]
    after = seek(cols, cursor, descending)
    where = [*conds, *([after] if after is not None else [])]
    return select(s.runs).where(*where).order_by(*ordered(cols, descending)).limit(limit + 1)


def open_items_on(run_id: Any) -> Any:
    """Pending approvals + open questions + ambiguous effects of the run ``run_id`` names
    (a column of an outer query), each counted from its (run_id, status) index."""
    a = (
        select(func.count())
        .where(s.approvals.c.run_id == run_id, s.approvals.c.status == "pending")
        .scalar_subquery()
    )
    q = (
        select(func.count())
        .where(s.questions.c.run_id == run_id, is_open_question(s.questions.c.status))
        .scalar_subquery()
    )
    e = (
        select(func.count())
        .where(s.effects.c.run_id == run_id, s.effects.c.status == "ambiguous")
        .scalar_subquery()
    )
    return (a + q + e).label("open_items")


def run_page_with_open_items(page_stmt: Any) -> Any:
    """``page_stmt`` (already limited) as a subquery, with each of its rows' open items: the
    counts run over the page's rows only, after the LIMIT."""
    page = page_stmt.subquery("page")
    return select(page, open_items_on(page.c.id))


def run_page(
    conn: Any, conds: list[Any], sort: str, descending: bool, cursor: str | None, limit: int
) -> Page[Run]:
    """Runs matching ``conds`` in ``sort`` order, keyset-paged; open items are counted for
    the page's rows only."""
    limit = max(1, min(limit, MAX_PAGE))
    stmt = run_page_with_open_items(run_page_statement(conds, sort, descending, cursor, limit))
    names = sort_fields(sort)

    def key(row: Any) -> tuple:
        return tuple(row._mapping[n] for n in names)

    # The outer select has no ORDER BY of its own (it would sort again): order the page's
    # rows by the same unique key here (text compares as SQLite's BINARY collation does).
    rows = sorted(conn.execute(stmt).all(), key=key, reverse=descending)
    return RUN_PAGE(
        items=to_models(Run, rows[:limit]), next_cursor=cursor_after(rows, limit, RUN_SORTS[sort])
    )


__all__ = [
    "MAX_PAGE",
    "RUN_SORTS",
    "RunQuery",
    "RunSort",
    "cursor_after",
    "escape_like",
    "has_open_items_clause",
    "keyset_page",
    "ordered",
    "run_conditions",
    "run_page",
    "run_page_statement",
    "run_page_with_open_items",
    "seek",
    "sort_fields",
]
