"""Delegation: an operator hands their part to another operator for a period ("away until
Monday"). Within it, the delegate may take the step a policy asks of the delegator: one step
per person, counted as the delegator's (a delegate who is a member too still takes one step
on a request). Each delegation is a ``delegations`` row with its decision (signed by the
delegator when they have a key) and its audit row; it ends at its end, or earlier when the
delegator ends it (0018e: a ``delegation_ends`` row with its own decision and audit row):
a step the delegate takes after that is not the delegator's."""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select

from proctor.core import errors
from proctor.core.decisions.writer import record_decision
from proctor.core.storage import schema as s
from proctor.core.storage.sql import insert_rows
from proctor.core.storage.tx import Tx

from .models import Delegation

MAX_DAYS = 90.0


def delegate_in(
    tx: Tx,
    delegate: str,
    *,
    starts_at: float | None,
    ends_at: float,
    reason: str | None,
    request_id: str | None,
    source: str = "api",
) -> str:
    me = tx.actor.name
    start = tx.now if starts_at is None else float(starts_at)
    if not delegate or len(delegate) > 200:
        raise errors.ValidationError("name the delegate", field="delegate")
    if delegate == me:
        raise errors.ValidationError("a delegate is another operator", field="delegate")
    if not start < ends_at or ends_at <= tx.now:
        raise errors.ValidationError(
            "the delegation must end after it starts, in the future", field="until"
        )
    if ends_at - start > MAX_DAYS * 86400:
        raise errors.ValidationError(f"a delegation lasts at most {MAX_DAYS:g} days", field="until")
    content = {"delegate": delegate, "starts_at": start, "ends_at": ends_at}
    did = record_decision(
        tx,
        "delegation",
        me,
        None,
        content,
        source=source,
        reason=reason,
        request_id=request_id,
        request={"op": "delegation.add", **content, "reason": reason},
        audit=("delegation.made", None, content),
    )
    lid = tx.new_id("dlg")
    insert_rows(
        tx.conn,
        s.delegations,
        [
            dict(
                id=lid,
                operator=me,
                delegate=delegate,
                starts_at=start,
                ends_at=ends_at,
                reason=reason,
                decision_id=did,
                created_at=tx.now,
            )
        ],
    )
    return lid


def end_in(
    tx: Tx, delegation_id: str, *, reason: str, request_id: str | None, source: str = "api"
) -> None:
    """End the delegation ``delegation_id`` now; only its delegator ends it, before its end."""
    row = tx.conn.execute(select(s.delegations).where(s.delegations.c.id == delegation_id)).first()
    if row is None:
        raise errors.NotFound(f"delegation {delegation_id} does not exist")
    if row.operator != tx.actor.name:
        raise errors.NotAllowed(
            f"delegation {delegation_id} is {row.operator}'s: only they end it",
            hint=f"Ask {row.operator}, or wait for its end.",
        )
    e = s.delegation_ends.c
    gone = tx.conn.execute(select(e.ended_at).where(e.delegation_id == delegation_id)).first()
    if gone is not None or row.ends_at <= tx.now:
        raise errors.InvalidTransition(f"delegation {delegation_id} has already ended")
    content = {"ended": delegation_id, "delegate": row.delegate, "ended_at": tx.now}
    did = record_decision(
        tx,
        "delegation",
        delegation_id,
        None,
        content,
        source=source,
        reason=reason,
        request_id=request_id,
        request={"op": "delegation.end", "id": delegation_id, "reason": reason},
        audit=("delegation.ended", {"ends_at": row.ends_at}, {"ended_at": tx.now}),
    )
    insert_rows(
        tx.conn,
        s.delegation_ends,
        [
            dict(
                delegation_id=delegation_id,
                reason=reason,
                decision_id=did,
                ended_by=tx.actor.label,
                ended_at=tx.now,
            )
        ],
    )


def _running(at: float) -> Any:
    """Delegations not ended by their delegator at ``at``."""
    ends = s.delegation_ends.alias("ended")
    return ~exists().where(ends.c.delegation_id == s.delegations.c.id, ends.c.ended_at <= at)


def _model(row: Any) -> Delegation:
    return Delegation(
        id=row.id,
        operator=row.operator,
        delegate=row.delegate,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        reason=row.reason,
        created_at=row.created_at,
        ended_at=row.ended_at,
    )


def delegations_in(conn: Any, *, now: float | None) -> list[Delegation]:
    """Every delegation (``now``: only those running or still to come), newest first."""
    d = s.delegations.c
    e = s.delegation_ends.c
    stmt = (
        select(s.delegations, e.ended_at)
        .outerjoin(s.delegation_ends, e.delegation_id == d.id)
        .order_by(d.created_at.desc(), d.id.desc())
    )
    if now is not None:
        stmt = stmt.where(d.ends_at > now, _running(now))
    return [_model(r) for r in conn.execute(stmt).all()]


def delegators_of(conn: Any, delegate: str, at: float) -> list[str]:
    """Who has handed their part to ``delegate`` at time ``at``."""
    d = s.delegations.c
    rows = conn.execute(
        select(d.operator).where(
            d.delegate == delegate, d.starts_at <= at, d.ends_at > at, _running(at)
        )
    ).all()
    return sorted({r.operator for r in rows})


def delegation_at(conn: Any, operator: str, delegate: str, at: float) -> Any:
    d = s.delegations.c
    return conn.execute(
        select(s.delegations)
        .where(
            d.operator == operator,
            d.delegate == delegate,
            d.starts_at <= at,
            d.ends_at > at,
            _running(at),
        )
        .order_by(d.created_at)
        .limit(1)
    ).first()
