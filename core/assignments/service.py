"""``journal.assignments``: assign an inbox item to yourself, and read who has an item."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from proctor.core import errors
from proctor.core.decisions.writer import MAX_REASON, record_decision
from proctor.core.inbox.rows import PARTS
from proctor.core.kernel.limits import check_text
from proctor.core.models import InboxKind
from proctor.core.storage import schema as s
from proctor.core.storage.sql import insert_rows
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx


def assignees_in(conn: Any, ids: list[str]) -> dict[str, str]:
    """Item id -> its assignee (its last assignment's), for those of ``ids`` that have one."""
    if not ids:
        return {}
    a = s.assignments.c
    rows = conn.execute(
        select(a.item_id, a.assignee).where(a.item_id.in_(sorted(set(ids)))).order_by(a.seq)
    ).all()
    return {r.item_id: r.assignee for r in rows}


def next_seq(conn: Any, item_id: str) -> int:
    a = s.assignments.c
    last = conn.execute(select(func.max(a.seq)).where(a.item_id == item_id)).scalar()
    return int(last or 0) + 1


def assigned_ids_in(conn: Any, assignee: str) -> set[str]:
    """The items whose newest assignment names ``assignee``."""
    a = s.assignments.c
    ids = [r.item_id for r in conn.execute(select(a.item_id).where(a.assignee == assignee))]
    return {i for i, who in assignees_in(conn, ids).items() if who == assignee}


def _waiting(conn: Any, kind: InboxKind, item_id: str) -> Any:
    part = PARTS[kind]().subquery("waiting")
    return conn.execute(select(part).where(part.c.id == item_id)).first()


class Assignments:
    def __init__(self, store: Store) -> None:
        self.j = store

    def of(self, item_id: str) -> str | None:
        """Who has ``item_id`` (None: nobody)."""
        return self.j.read(lambda c: assignees_in(c, [item_id]).get(item_id))

    def assign_to_me(
        self,
        kind: InboxKind | str,
        item_id: str,
        *,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> str:
        """Take a waiting item on: a decision (``target_kind`` ``assignment``, signed when the
        operator has a key), its audit row and an ``assignments`` row (the item's next ``seq``), in one transaction.
        Returns the assignee (this operator). An item already theirs is left as it is."""
        self.j.require_operator()
        kind = InboxKind(kind)
        text = (reason or "").strip() or None
        if text:
            check_text(text, "the reason", "reason", MAX_REASON)
        me = self.j.actor.name
        request = {"op": "item.assign", "kind": kind.value, "id": item_id, "reason": text}

        def op(tx: Tx) -> str:
            if tx.replayed(request_id, request):
                return me
            row = _waiting(tx.conn, kind, item_id)
            if row is None:
                raise errors.NotFound(f"{kind.value} {item_id} is not waiting for a person")
            before = assignees_in(tx.conn, [item_id]).get(item_id)
            if before == me:
                return me
            content = {"item_kind": kind.value, "item_id": item_id, "assignee": me}
            did = record_decision(
                tx,
                "assignment",
                item_id,
                row.run_id,
                content,
                source=source,
                reason=text,
                request_id=request_id,
                request=request,
                audit=("item.assigned", {"assignee": before}, content),
            )
            insert_rows(
                tx.conn,
                s.assignments,
                [
                    dict(
                        id=tx.new_id("asg"),
                        item_kind=kind.value,
                        item_id=item_id,
                        seq=next_seq(tx.conn, item_id),
                        assignee=me,
                        decision_id=did,
                        created_at=tx.now,
                    )
                ],
            )
            tx.changed(kind.change_kind, item_id, row.run_id)
            return me

        return self.j.write(op)
