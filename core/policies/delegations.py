"""Delegation: an operator hands their part to another operator for a period ("away until
Monday"). Within it, the delegate may take the step a policy asks of the delegator: one step
per person, counted as the delegator's (a delegate who is a member too still takes one step
on a request). Each delegation is a ``delegations`` row with its decision (signed by the
delegator when they have a key) and its audit row; it ends at its end, not before."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

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


def _model(row: Any) -> Delegation:
    return Delegation(
        id=row.id,
        operator=row.operator,
        delegate=row.delegate,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        reason=row.reason,
        created_at=row.created_at,
    )


def delegations_in(conn: Any, *, now: float | None) -> list[Delegation]:
    """Every delegation (``now``: only those running or still to come), newest first."""
    d = s.delegations.c
    stmt = select(s.delegations).order_by(d.created_at.desc(), d.id.desc())
    if now is not None:
        stmt = stmt.where(d.ends_at > now)
    return [_model(r) for r in conn.execute(stmt).all()]


def delegators_of(conn: Any, delegate: str, at: float) -> list[str]:
    """Who has handed their part to ``delegate`` at time ``at``."""
    d = s.delegations.c
    rows = conn.execute(
        select(d.operator).where(d.delegate == delegate, d.starts_at <= at, d.ends_at > at)
    ).all()
    return sorted({r.operator for r in rows})


def delegation_at(conn: Any, operator: str, delegate: str, at: float) -> Any:
    d = s.delegations.c
    return conn.execute(
        select(s.delegations)
        .where(d.operator == operator, d.delegate == delegate, d.starts_at <= at, d.ends_at > at)
        .order_by(d.created_at)
        .limit(1)
    ).first()
