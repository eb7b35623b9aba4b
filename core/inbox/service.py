"""The cross-run inbox: everything that waits for a person, in one keyset-paged list."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, or_, select, union_all

from proctor.core import errors
from proctor.core.decisions.signing import SNOOZE, sign_in
from proctor.core.kernel import waiting
from proctor.core.models import (
    BulkResult,
    InboxFilter,
    InboxItem,
    InboxKind,
    Page,
)
from proctor.core.storage.paging import cursor_after, escape_like, ordered, seek
from proctor.core.storage.sql import row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import waiter_order
from .rows import (  # noqa: F401 - PARTS, summary: re-exported
    PARTS,
    SUMMARY_LEN,
    TABLE_OF,
    inbox_item,
    summary,
    summary_sql,
)

INBOX_PAGE = Page[InboxItem]  # parametrised once (pydantic's lookup costs per call)


KEY_OF = {"age": ("created_at", "id"), "waiter": ("waiter_rank", "created_at", "id")}


def order_key(c: Any, f: InboxFilter) -> tuple[Any, ...]:
    """The columns an inbox page is ordered and paged by (its cursor's, ``KEY_OF``)."""
    return tuple(getattr(c, name) for name in KEY_OF[f.sort])


class Inbox:
    def __init__(self, store: Store, views: Any = None) -> None:
        """``views``: the operator views' reads (``only_in``, ``marked_in``:
        core/policies/views.py, handed over by the facade: the policies sit above the inbox)."""
        self.j = store
        self.views = views

    def _only(self, conn: Any, f: InboxFilter, now: float) -> set[str] | None:
        return self.views.only_in(conn, f, now) if self.views is not None else None

    def _marked(self, conn: Any, items: builtins.list[InboxItem], now: float) -> Any:
        return self.views.marked_in(conn, items, now) if self.views is not None else items

    def _union(self, f: InboxFilter, now: float, only: set[str] | None = None) -> Any:
        kinds = f.kinds or frozenset(InboxKind)
        u = union_all(*(PARTS[k]() for k in InboxKind if k in kinds)).subquery("inbox")
        return u, self._conds(u.c, f, now, only)

    @staticmethod
    def _conds(
        c: Any, f: InboxFilter, now: float, only: set[str] | None = None
    ) -> builtins.list[Any]:
        """The filter's conditions on a part's (or the union's) columns; ``only``: the ids
        its operator views keep (``views.only_in``)."""
        snoozed = c.snoozed_until > now
        conds = [
            c.id.in_(sorted(only)) if only is not None else None,
            snoozed if f.snoozed else or_(c.snoozed_until.is_(None), c.snoozed_until <= now),
            c.agent == f.agent if f.agent else None,
            c.project == f.project if f.project else None,
            c.safety_class == f.safety_class if f.safety_class else None,
            c.created_at > f.created_after if f.created_after is not None else None,
            c.created_at <= f.created_until if f.created_until is not None else None,
            c.waiter_seen_at >= now - waiting.FRESH_S if f.waited else None,
        ]
        if f.text:
            like = f"%{escape_like(f.text)}%"
            conds.append(
                or_(
                    *(
                        col.ilike(like, escape="\\")
                        for col in (c.run_title, c.agent, summary_sql(c), c.id)
                    )
                )
            )
        return [x for x in conds if x is not None]

    def _page(
        self,
        f: InboxFilter,
        now: float,
        cursor: str | None,
        size: int,
        only: set[str] | None = None,
        as_of: float | None = None,
    ) -> Any:
        """One page: each kind's part filtered, ordered and cut to ``size`` on its own (its
        (status, created_at, id) index walks it in order and stops), then the parts merged,
        ordered and cut again. Sorting the whole union first would sort every waiting item.
        Sorted by waiter, each part is ranked first (``waiter_rank_sql``) and the key is
        (rank, created_at, id), ranked ``as_of`` the first page's time (waiter_order.py)."""
        kinds = f.kinds or frozenset(InboxKind)
        parts = []
        for kind in (k for k in InboxKind if k in kinds):
            ranked = part = PARTS[kind]().subquery(f"{kind.value}s")
            if f.sort == "waiter":  # (by age alone, the part is walked in its index's order)
                at = now if as_of is None else as_of
                rank = waiter_order.waiter_rank_sql(part.c, at, f.newest_first)
                ranked = select(part, rank).subquery(f"{kind.value}s_ranked")
            c = ranked.c
            conds = self._conds(c, f, now, only)
            after = seek(order_key(c, f), cursor, f.newest_first)
            if after is not None:
                conds.append(after)
            cut = (
                select(ranked)
                .where(*conds)
                .order_by(*ordered(order_key(c, f), f.newest_first))
                .limit(size)
            )
            parts.append(select(cut.subquery(f"{kind.value}_page")))
        u = union_all(*parts).subquery("inbox")
        return select(u).order_by(*ordered(order_key(u.c, f), f.newest_first)).limit(size)

    def list(
        self, f: InboxFilter | None = None, *, cursor: str | None = None, limit: int = 200
    ) -> Page[InboxItem]:
        f = f or InboxFilter()
        now = self.j.now()
        as_of = now
        if f.sort == "waiter":  # every page ranks at the first one's time
            as_of, cursor = waiter_order.split(cursor, now)

        def read(conn: Any) -> tuple[Any, builtins.list[InboxItem]]:
            page = self._page(f, now, cursor, limit + 1, self._only(conn, f, now), as_of)
            rows = conn.execute(page).all()
            return rows, self._marked(conn, [self._item(r) for r in rows[:limit]], now)

        rows, items = self.j.read(read)
        after = cursor_after(rows, limit, KEY_OF[f.sort])
        return INBOX_PAGE(
            items=items,
            next_cursor=waiter_order.joined(as_of, after) if f.sort == "waiter" else after,
        )

    def pick(self, f: InboxFilter | None, ids: builtins.list[str]) -> builtins.list[InboxItem]:
        """Those of ``ids`` that are in the inbox under ``f`` now (unordered): a live view
        re-reads just the items a change touched instead of a whole page."""
        if not ids:
            return []
        f, now = f or InboxFilter(), self.j.now()

        def read(conn: Any) -> builtins.list[InboxItem]:
            u, conds = self._union(f, now, self._only(conn, f, now))
            rows = conn.execute(select(u).where(*conds, u.c.id.in_(sorted(set(ids))))).all()
            return self._marked(conn, [self._item(r) for r in rows], now)

        return self.j.read(read)

    _item = staticmethod(inbox_item)

    def count(self, f: InboxFilter | None = None) -> int:
        f, now = f or InboxFilter(), self.j.now()

        def read(conn: Any) -> int:
            u, conds = self._union(f, now, self._only(conn, f, now))
            return int(conn.execute(select(func.count()).select_from(u).where(*conds)).scalar_one())

        return self.j.read(read)

    def counts(self) -> dict[InboxKind, int]:
        """Waiting items per kind (snoozed ones excluded): the sidebar badges."""
        u, conds = self._union(InboxFilter(), self.j.now())
        stmt = select(u.c.kind, func.count()).where(*conds).group_by(u.c.kind)
        rows = self.j.read(lambda c: c.execute(stmt).all())
        found = {InboxKind(k): int(n) for k, n in rows}
        return {k: found.get(k, 0) for k in InboxKind}

    def facets(self) -> dict[str, builtins.list[str]]:
        """Distinct agents, projects and safety classes among waiting items (filter menus)."""
        u, conds = self._union(InboxFilter(), self.j.now())

        def q(conn: Any) -> dict[str, builtins.list[str]]:
            return {
                name: sorted(
                    v
                    for v in conn.execute(
                        select(getattr(u.c, name)).where(*conds).distinct()
                    ).scalars()
                    if v
                )
                for name in ("agent", "project", "safety_class")
            }

        return self.j.read(q)

    def snooze(
        self,
        kind: InboxKind | str,
        item_id: str,
        until: float | None,
        *,
        expected_version: int,
        request_id: str | None = None,
    ) -> None:
        """Hide an item until ``until`` (None wakes it). Not a decision; audited."""
        self.j.require_operator()
        kind = InboxKind(kind)
        table, key = TABLE_OF[kind]
        request = {
            "op": "inbox.snooze",
            "kind": kind.value,
            "id": item_id,
            "until": until,
            "expected_version": expected_version,
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = row_where(tx.conn, table, **{key.name: item_id})
            if row is None:
                raise errors.NotFound(f"{kind.value} {item_id} does not exist")
            if row.version != expected_version:
                raise errors.StaleVersion(f"{kind.value} {item_id} changed since you looked")
            done = update_where(
                tx.conn,
                table,
                dict(snoozed_until=until, version=row.version + 1),
                **{key.name: item_id, "version": row.version},
            )
            if done != 1:
                raise errors.StaleVersion(f"{kind.value} {item_id} changed meanwhile")
            entity = kind.change_kind
            tx.changed(entity, item_id, row.run_id)
            audit_id = tx.audit(
                "inbox.snoozed" if until else "inbox.unsnoozed",
                entity,
                item_id,
                run_id=row.run_id,
                before={"snoozed_until": row.snoozed_until},
                after={"snoozed_until": until},
                request_id=request_id,
                request=request,
            )
            sign_in(tx, SNOOZE, audit_id, entity, item_id, {"snoozed_until": until}, None)

        self.j.write(op)

    def bulk_snooze(
        self,
        items: Sequence[tuple[InboxKind | str, str, int]],
        until: float | None,
        *,
        request_id: str | None = None,
    ) -> builtins.list[BulkResult]:
        """Snooze (or, with ``until`` None, wake) each (kind, id, version the operator saw),
        each in its own transaction; a per-item result for each, in order."""
        self.j.require_operator()
        results = []
        for kind, item_id, version in items:
            rid = f"{request_id}:{item_id}" if request_id else None
            try:
                self.snooze(kind, item_id, until, expected_version=version, request_id=rid)
                results.append(BulkResult(id=item_id, ok=True))
            except errors.ProctorError as err:
                results.append(
                    BulkResult(id=item_id, ok=False, error=str(err), error_type=type(err).__name__)
                )
        return results
