"""Read-side views of agent memory for the desk: filtered and sorted keyset paging, scope
counts with token estimates, and the values the filter menus offer.

Token usage is an estimate: ``ceil(characters / 4)`` per scope (the usual rule of thumb
for English text under BPE tokenizers). No tokenizer is loaded; the figure is meant to
compare a scope against its budget, not to bill anyone.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from sqlalchemy import and_, case, func, or_, select

from proctor.core.models import Frozen, MemoryEntry, MemoryScope, Page, Trust
from proctor.core.storage import schema as s
from proctor.core.storage.paging import keyset_page, ordered, seek

CHARS_PER_TOKEN = 4
Sort = Literal["updated", "created", "priority", "title", "used"]


def estimate_tokens(chars: int) -> int:
    """Estimated tokens for ``chars`` characters of text (ceil(chars / 4))."""
    return math.ceil(max(0, chars) / CHARS_PER_TOKEN)


class MemoryQuery(Frozen):
    """What the memory list shows. ``None`` means "any" for every filter."""

    scope: MemoryScope | None = None
    scope_key: str | None = None
    kind: str | None = None
    trust: Trust | None = None
    sensitivity: str | None = None
    pinned: bool | None = None
    confirmed: bool | None = None
    deleted: bool | None = False  # False: live entries; True: removed ones; None: both
    text: str | None = None  # case-insensitive, in title and content
    sort: Sort = "updated"
    descending: bool = True


class ScopeUsage(Frozen):
    """One scope (project/space/user + key): how many entries, and how big."""

    scope: MemoryScope
    scope_key: str
    entries: int  # live (not removed)
    removed: int
    pinned: int
    chars: int  # characters of live content
    conflicts: int  # pending reconciliation items

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.chars)


def _sort_columns(sort: Sort) -> list[Any]:
    m = s.memory_entries.c
    return {
        "updated": [m.updated_at, m.id],
        "created": [m.created_at, m.id],
        "priority": [m.priority, m.updated_at, m.id],
        "title": [m.title, m.id],
        "used": [m.last_used_at, m.id],
    }[sort]  # ix_memory_last_used; 0: never used


def _conditions(q: MemoryQuery) -> list[Any]:
    from proctor.core.storage.paging import escape_like

    m = s.memory_entries.c
    conds = [
        m.scope == q.scope.value if q.scope else None,
        m.scope_key == q.scope_key if q.scope_key is not None else None,
        m.kind == q.kind if q.kind else None,
        m.trust == q.trust.value if q.trust else None,
        m.sensitivity == q.sensitivity if q.sensitivity else None,
        m.pinned.is_(q.pinned) if q.pinned is not None else None,
        m.confirmed.is_(q.confirmed) if q.confirmed is not None else None,
        m.deleted.is_(q.deleted) if q.deleted is not None else None,
    ]
    if q.text:
        like = f"%{escape_like(q.text)}%"
        conds.append(or_(m.content.ilike(like, escape="\\"), m.title.ilike(like, escape="\\")))
    return [c for c in conds if c is not None]


def browse_statement(q: MemoryQuery, cursor: str | None, limit: int) -> Any:
    """The SELECT of one page: ``limit + 1`` rows after ``cursor`` (the extra one says
    whether there is a next page)."""
    cols = _sort_columns(q.sort)
    conds = _conditions(q)
    after = seek(cols, cursor, q.descending)
    if after is not None:
        conds.append(after)
    return (
        select(s.memory_entries)
        .where(*conds)
        .order_by(*ordered(cols, q.descending))
        .limit(limit + 1)
    )


def browse(
    journal: Any, q: MemoryQuery, cursor: str | None = None, limit: int = 200
) -> Page[MemoryEntry]:
    """One keyset page of entries matching ``q``, in ``q.sort`` order."""
    stmt = browse_statement(q, cursor, limit)
    rows = journal.read(lambda c: c.execute(stmt).all())
    return keyset_page(MemoryEntry, rows, limit, _sort_columns(q.sort))


def scopes(journal: Any) -> list[ScopeUsage]:
    """Every scope that holds entries or conflicts, with its counts and live size."""
    m, r = s.memory_entries.c, s.conflicts.c
    live = case((m.deleted.is_(False), 1), else_=0)
    entries = select(
        m.scope,
        m.scope_key,
        func.sum(live).label("entries"),
        func.sum(1 - live).label("removed"),
        func.sum(case((and_(m.deleted.is_(False), m.pinned.is_(True)), 1), else_=0)).label(
            "pinned"
        ),
        func.sum(case((m.deleted.is_(False), func.length(m.content)), else_=0)).label("chars"),
    ).group_by(m.scope, m.scope_key)
    pending = (
        select(m.scope, m.scope_key, func.count().label("n"))
        .select_from(s.conflicts.join(s.memory_entries, m.id == r.entry_id))
        .where(r.status == "pending")
        .group_by(m.scope, m.scope_key)
    )

    def q(conn: Any) -> list[ScopeUsage]:
        conflicts = {(row.scope, row.scope_key): int(row.n) for row in conn.execute(pending)}
        out = []
        for row in conn.execute(entries):
            out.append(
                ScopeUsage(
                    scope=MemoryScope(row.scope),
                    scope_key=row.scope_key,
                    entries=int(row.entries or 0),
                    removed=int(row.removed or 0),
                    pinned=int(row.pinned or 0),
                    chars=int(row.chars or 0),
                    conflicts=conflicts.get((row.scope, row.scope_key), 0),
                )
            )
        return sorted(out, key=lambda u: (list(MemoryScope).index(u.scope), u.scope_key))

    return journal.read(q)


def facets(journal: Any) -> dict[str, list[str]]:
    """Distinct kinds and sensitivities in use (the filter menus)."""
    m = s.memory_entries.c

    def q(conn: Any) -> dict[str, list[str]]:
        return {
            name: sorted(
                v for v in conn.execute(select(getattr(m, name)).distinct()).scalars() if v
            )
            for name in ("kind", "sensitivity")
        }

    return journal.read(q)


__all__ = [
    "MemoryQuery",
    "ScopeUsage",
    "browse",
    "browse_statement",
    "estimate_tokens",
    "facets",
    "scopes",
]
