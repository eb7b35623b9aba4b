"""Groups of operators, kept in the journal: each change (a person added to or removed from
a group) is a ``group_changes`` row written with its decision (signed when the operator has
a key), its audit row and nothing else; a group's members are the people whose last change
in it adds them."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.writer import record_decision
from proctor.core.storage import schema as s
from proctor.core.storage.sql import insert_rows
from proctor.core.storage.tx import Tx

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


def check_group(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise errors.ValidationError(
            "a group's name is lower-case letters, digits, '.', '_' or '-' (up to 64)",
            field="group",
        )
    return name


def members_in(conn: Any) -> dict[str, list[str]]:
    """Every group that has members now -> its members, sorted."""
    g = s.group_changes.c
    rows = conn.execute(select(g.group_name, g.operator, g.change).order_by(g.seq)).all()
    last: dict[tuple[str, str], str] = {}
    for row in rows:
        last[(row.group_name, row.operator)] = row.change
    out: dict[str, list[str]] = {}
    for (group, operator), change in sorted(last.items()):
        if change == "add":
            out.setdefault(group, []).append(operator)
    return out


def last_change(conn: Any, group: str, operator: str) -> Any:
    """The last change of ``operator`` in ``group`` (seq, change), or None."""
    g = s.group_changes.c
    return conn.execute(
        select(g.seq, g.change)
        .where(g.group_name == group, g.operator == operator)
        .order_by(g.seq.desc())
        .limit(1)
    ).first()


def is_member(conn: Any, group: str, operator: str) -> bool:
    row = last_change(conn, group, operator)
    return row is not None and row.change == "add"


def change_in(
    tx: Tx,
    group: str,
    operator: str,
    change: str,
    reason: str | None,
    request_id: str | None,
    source: str = "api",
) -> str:
    """Add (``change="add"``) or remove ``operator`` in ``group``; the change's id."""
    check_group(group)
    if not operator or len(operator) > 200:
        raise errors.ValidationError("name the operator", field="operator")
    last = last_change(tx.conn, group, operator)
    member = last is not None and last.change == "add"
    if change == "add" and member:
        raise errors.InvalidTransition(f"{operator} is already in {group}")
    if change == "remove" and not member:
        raise errors.InvalidTransition(f"{operator} is not in {group}")
    request = {"op": f"group.{change}", "group": group, "operator": operator, "reason": reason}
    decision = {"group": group, "operator": operator, "change": change}
    did = record_decision(
        tx,
        "group",
        group,
        None,
        decision,
        source=source,
        reason=reason,
        request_id=request_id,
        request=request,
        audit=(f"group.{change}", {"member": member}, {"member": change == "add", **decision}),
    )
    cid = tx.new_id("grp")
    insert_rows(
        tx.conn,
        s.group_changes,
        [
            dict(
                id=cid,
                group_name=group,
                operator=operator,
                seq=(last.seq if last is not None else 0) + 1,
                change=change,
                decision_id=did,
                actor=tx.actor.label,
                created_at=tx.now,
            )
        ],
    )
    return cid
