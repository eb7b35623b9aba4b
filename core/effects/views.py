"""Read-side views of side effects for the desk: filtered keyset paging (including "the
lease lapsed but nobody marked it yet") and everything known about one effect."""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select

from proctor.core.models import Approval, Effect, EffectStatus, Frozen, Page, Receipt, Run, ToolCall
from proctor.core.storage import schema as s
from proctor.core.storage.paging import escape_like, keyset_page, ordered, seek
from proctor.core.storage.rows import approval_select, to_model, to_models

LIVE = [EffectStatus.RESERVED.value, EffectStatus.EXECUTING.value]


class EffectQuery(Frozen):
    """What the effects list shows. ``lapsed``: live effects whose lease has expired but
    that are not marked ambiguous yet (the status filter is ignored then)."""

    statuses: frozenset[EffectStatus] = frozenset()
    lapsed: bool = False
    run_id: str | None = None
    text: str | None = None  # case-insensitive, in key, tool and idempotency key
    newest_first: bool = True


class EffectContext(Frozen):
    """One effect and what surrounds it: receipts, run, approval and tool call."""

    effect: Effect
    receipts: list[Receipt]
    run: Run | None
    approval: Approval | None
    tool_call: ToolCall | None


def browse(
    conn: Any, q: EffectQuery, now: float, cursor: str | None = None, limit: int = 200
) -> Page[Effect]:
    """One page of effects matching ``q``, read on ``conn``."""
    e = s.effects.c
    conds: list[Any] = []
    if q.lapsed:
        conds += [e.status.in_(LIVE), e.lease_expires_at <= now]
    elif q.statuses:
        conds.append(e.status.in_(sorted(x.value for x in q.statuses)))
    if q.run_id:
        conds.append(e.run_id == q.run_id)
    if q.text:
        like = f"%{escape_like(q.text)}%"
        conds.append(or_(*(c.ilike(like, escape="\\") for c in (e.key, e.tool, e.idempotency_key))))
    key = (e.created_at, e.key)
    after = seek(key, cursor, q.newest_first)
    if after is not None:
        conds.append(after)
    stmt = select(s.effects).where(*conds).order_by(*ordered(key, q.newest_first)).limit(limit + 1)
    return keyset_page(Effect, conn.execute(stmt).all(), limit, key)


def context(journal: Any, key: str) -> EffectContext:
    """The effect, its receipts, its run, the approval it consumed and its tool call.

    The tool call is the approval's, else the run's call with the same idempotency key,
    else the run's latest call of the same tool made before the effect was reserved."""
    from proctor.core.errors import NotFound

    def q(conn: Any) -> EffectContext:
        row = conn.execute(select(s.effects).where(s.effects.c.key == key)).first()
        if row is None:
            raise NotFound(f"effect {key} does not exist")
        effect = to_model(Effect, row)
        receipts = to_models(
            Receipt,
            conn.execute(
                select(s.receipts)
                .where(s.receipts.c.effect_key == key)
                .order_by(s.receipts.c.created_at, s.receipts.c.id)
            ),
        )
        run = (
            _one(conn, Run, select(s.runs).where(s.runs.c.id == effect.run_id))
            if effect.run_id
            else None
        )
        approval = (
            _one(conn, Approval, approval_select().where(s.approvals.c.id == effect.approval_id))
            if effect.approval_id
            else None
        )
        call = _tool_call(conn, effect, approval)
        return EffectContext(
            effect=effect, receipts=receipts, run=run, approval=approval, tool_call=call
        )

    return journal.read(q)


def _one(conn: Any, model: type, stmt: Any) -> Any:
    row = conn.execute(stmt).first()
    return to_model(model, row) if row is not None else None


def _tool_call(conn: Any, effect: Effect, approval: Approval | None) -> ToolCall | None:
    t = s.tool_calls.c
    if approval is not None and approval.tool_call_id:
        found = _one(conn, ToolCall, select(s.tool_calls).where(t.id == approval.tool_call_id))
        if found is not None:
            return found
    if effect.run_id is None:
        return None
    if effect.idempotency_key:
        found = _one(
            conn,
            ToolCall,
            select(s.tool_calls)
            .where(t.run_id == effect.run_id, t.idempotency_key == effect.idempotency_key)
            .order_by(t.created_at.desc())
            .limit(1),
        )
        if found is not None:
            return found
    return _one(
        conn,
        ToolCall,
        select(s.tool_calls)
        .where(t.run_id == effect.run_id, t.tool == effect.tool, t.created_at <= effect.created_at)
        .order_by(t.created_at.desc())
        .limit(1),
    )


__all__ = ["EffectContext", "EffectQuery", "browse", "context"]
