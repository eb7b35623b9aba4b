"""The cross-run inbox: everything that waits for a person, in one keyset-paged list."""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import String, and_, cast, func, literal, or_, select, union_all, update

from . import errors
from . import schema as s
from .items import OPEN_INTERACTION
from .models import BulkResult, InboxFilter, InboxItem, InboxKind, Page
from .origin import from_text as origin_from_text
from .paging import escape_like
from .rows import encode_cursor, keyset_after, order_by
from .signing import SNOOZE, sign_in
from .store import Store
from .tx import Tx

SUMMARY_LEN = 240
INBOX_PAGE = Page[InboxItem]  # parametrised once (pydantic's lookup costs per call)

TABLE_OF = {
    InboxKind.APPROVAL: (s.approvals, s.approvals.c.id),
    InboxKind.QUESTION: (s.interactions, s.interactions.c.id),
    InboxKind.MEMORY: (s.reconciliations, s.reconciliations.c.id),
    InboxKind.EFFECT: (s.effects, s.effects.c.key),
}


def _approvals() -> Any:
    a, r = s.approvals.c, s.runs.c
    return select(
        literal("approval").label("kind"), a.id.label("id"), a.run_id.label("run_id"),
        r.agent.label("agent"), r.project.label("project"), r.space.label("space"),
        r.title.label("run_title"), a.action_name.label("s1"), a.reason.label("s2"),
        a.safety_class.label("safety_class"), a.created_at.label("created_at"),
        a.expires_at.label("expires_at"), a.snoozed_until.label("snoozed_until"),
        a.version.label("version"), a.origin.label("origin"),
    ).join(s.runs, r.id == a.run_id).where(a.status == "pending")


COLUMNS = ("kind", "id", "run_id", "agent", "project", "space", "run_title", "s1", "s2",
           "safety_class", "created_at", "expires_at", "snoozed_until", "version", "origin")


def _labelled(*cols: Any) -> list[Any]:
    """Every part names its columns: a union takes its names from its first part, and a
    kind filter may leave any part first."""
    return [c.label(n) for c, n in zip(cols, COLUMNS, strict=True)]


def _questions() -> Any:
    i, r = s.interactions.c, s.runs.c
    return select(*_labelled(
        literal("question"), i.id, i.run_id, r.agent, r.project, r.space, r.title,
        i.kind, i.prompt, cast(literal(None), String), i.created_at, i.expires_at,
        i.snoozed_until, i.version, i.origin,
    )).join(s.runs, r.id == i.run_id).where(i.status.in_(OPEN_INTERACTION))


def _memory() -> Any:
    m, e, r = s.reconciliations.c, s.memory_entries.c, s.runs.c
    return select(*_labelled(
        literal("memory"), m.id, m.run_id, func.coalesce(r.agent, m.incoming_source),
        func.coalesce(r.project, e.scope_key), func.coalesce(r.space, e.scope),
        func.coalesce(r.title, ""), e.title, m.incoming_source, cast(literal(None), String),
        m.created_at, cast(literal(None), s.reconciliations.c.created_at.type),
        m.snoozed_until, m.version, m.origin,
    )).join(s.memory_entries, e.id == m.entry_id).outerjoin(s.runs, r.id == m.run_id).where(
        m.status == "pending")


def _effects() -> Any:
    f, r = s.effects.c, s.runs.c
    return select(*_labelled(
        literal("effect"), f.key, f.run_id, func.coalesce(r.agent, f.lease_owner, ""),
        func.coalesce(r.project, ""), func.coalesce(r.space, ""), func.coalesce(r.title, ""),
        f.tool, f.ambiguous_reason, f.safety_class, f.created_at,
        cast(literal(None), s.effects.c.created_at.type), f.snoozed_until, f.version, f.origin,
    )).outerjoin(s.runs, r.id == f.run_id).where(f.status == "ambiguous")


PARTS = {InboxKind.APPROVAL: _approvals, InboxKind.QUESTION: _questions,
         InboxKind.MEMORY: _memory, InboxKind.EFFECT: _effects}


def summary(kind: str, s1: str | None, s2: str | None) -> str:
    s1, s2 = (s1 or "").strip(), " ".join((s2 or "").split())
    text = {"approval": f"{s1}: {s2}", "question": f"[{s1}] {s2}",
            "memory": f"conflict in “{s1}” from {s2}",
            "effect": f"{s1}: outcome unknown ({s2})"}[kind]
    return text if len(text) <= SUMMARY_LEN else text[: SUMMARY_LEN - 1] + "…"


class Inbox:
    def __init__(self, store: Store) -> None:
        self.j = store

    def _union(self, f: InboxFilter, now: float) -> Any:
        kinds = f.kinds or frozenset(InboxKind)
        u = union_all(*(PARTS[k]() for k in InboxKind if k in kinds)).subquery("inbox")
        return u, self._conds(u.c, f, now)

    @staticmethod
    def _conds(c: Any, f: InboxFilter, now: float) -> builtins.list[Any]:
        """The filter's conditions on a part's (or the union's) columns."""
        snoozed = c.snoozed_until > now
        conds = [
            snoozed if f.snoozed else or_(c.snoozed_until.is_(None), c.snoozed_until <= now),
            c.agent == f.agent if f.agent else None,
            c.project == f.project if f.project else None,
            c.safety_class == f.safety_class if f.safety_class else None,
        ]
        if f.text:
            like = f"%{escape_like(f.text)}%"
            conds.append(or_(*(col.ilike(like, escape="\\")
                               for col in (c.run_title, c.agent, c.s1, c.s2, c.id))))
        return [x for x in conds if x is not None]

    def _page(self, f: InboxFilter, now: float, cursor: str | None, size: int) -> Any:
        """One page: each kind's part filtered, ordered and cut to ``size`` on its own (its
        (status, created_at, id) index walks it in order and stops), then the parts merged,
        ordered and cut again. Sorting the whole union first would sort every waiting item."""
        kinds = f.kinds or frozenset(InboxKind)
        parts = []
        for kind in (k for k in InboxKind if k in kinds):
            part = PARTS[kind]().subquery(f"{kind.value}s")
            c = part.c
            conds = self._conds(c, f, now)
            after = keyset_after(c.created_at, c.id, cursor, f.newest_first)
            if after is not None:
                conds.append(after)
            cut = select(part).where(*conds).order_by(
                *order_by(c.created_at, c.id, f.newest_first)).limit(size)
            parts.append(select(cut.subquery(f"{kind.value}_page")))
        u = union_all(*parts).subquery("inbox")
        return select(u).order_by(*order_by(u.c.created_at, u.c.id, f.newest_first)).limit(size)

    def list(self, f: InboxFilter | None = None, *, cursor: str | None = None,
             limit: int = 200) -> Page[InboxItem]:
        f = f or InboxFilter()
        stmt = self._page(f, self.j.now(), cursor, limit + 1)
        rows = self.j.read(lambda c: c.execute(stmt).all())
        items = [self._item(r) for r in rows[:limit]]
        cursor = encode_cursor(items[-1].created_at, items[-1].id) \
            if len(rows) > limit and items else None
        return INBOX_PAGE(items=items, next_cursor=cursor)

    def pick(self, f: InboxFilter | None, ids: builtins.list[str]) -> builtins.list[InboxItem]:
        """Those of ``ids`` that are in the inbox under ``f`` now (unordered): a live view
        re-reads just the items a change touched instead of a whole page."""
        if not ids:
            return []
        u, conds = self._union(f or InboxFilter(), self.j.now())
        stmt = select(u).where(*conds, u.c.id.in_(sorted(set(ids))))
        rows = self.j.read(lambda c: c.execute(stmt).all())
        return [self._item(r) for r in rows]

    @staticmethod
    def _item(r: Any) -> InboxItem:
        return InboxItem(
            kind=InboxKind(r.kind), id=r.id, run_id=r.run_id, agent=r.agent or "",
            project=r.project or "", space=r.space or "", run_title=r.run_title or "",
            summary=summary(r.kind, r.s1, r.s2), safety_class=r.safety_class,
            created_at=r.created_at, expires_at=r.expires_at, snoozed_until=r.snoozed_until,
            version=r.version, origin=origin_from_text(r.origin))

    def count(self, f: InboxFilter | None = None) -> int:
        u, conds = self._union(f or InboxFilter(), self.j.now())
        stmt = select(func.count()).select_from(u).where(*conds)
        return self.j.read(lambda c: int(c.execute(stmt).scalar_one()))

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
            return {name: sorted(v for v in conn.execute(
                select(getattr(u.c, name)).where(*conds).distinct()).scalars() if v)
                for name in ("agent", "project", "safety_class")}

        return self.j.read(q)

    def snooze(self, kind: InboxKind | str, item_id: str, until: float | None, *,
               expected_version: int, request_id: str | None = None) -> None:
        """Hide an item until ``until`` (None wakes it). Not a decision; audited."""
        self.j.require_operator()
        kind = InboxKind(kind)
        table, key = TABLE_OF[kind]
        request = {"op": "inbox.snooze", "kind": kind.value, "id": item_id, "until": until,
                   "expected_version": expected_version}

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = tx.conn.execute(select(table).where(key == item_id)).first()
            if row is None:
                raise errors.NotFound(f"{kind.value} {item_id} does not exist")
            if row.version != expected_version:
                raise errors.StaleVersion(f"{kind.value} {item_id} changed since you looked")
            done = tx.conn.execute(update(table).where(
                and_(key == item_id, table.c.version == row.version)).values(
                snoozed_until=until, version=row.version + 1)).rowcount
            if done != 1:
                raise errors.StaleVersion(f"{kind.value} {item_id} changed meanwhile")
            entity = {"question": "interaction", "memory": "reconciliation"}.get(
                kind.value, kind.value)
            tx.changed(entity, item_id, row.run_id)
            audit_id = tx.audit("inbox.snoozed" if until else "inbox.unsnoozed", entity,
                                item_id, run_id=row.run_id,
                                before={"snoozed_until": row.snoozed_until},
                                after={"snoozed_until": until}, request_id=request_id,
                                request=request)
            sign_in(tx, SNOOZE, audit_id, entity, item_id, {"snoozed_until": until}, None)

        self.j.write(op)

    def bulk_snooze(self, items: builtins.list[tuple[InboxKind | str, str, int]], until: float | None,
                    *, request_id: str | None = None) -> builtins.list[BulkResult]:
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
                results.append(BulkResult(id=item_id, ok=False, error=str(err),
                                          error_type=type(err).__name__))
        return results
