"""Undo: a person takes back their own decision within its hold, before the agent acts on it.

One step for every kind of held decision (an approval's approve or deny, a question's answer
or dismissal): the item is open again (its decision columns cleared, version + 1), the run
waits for a person again, and an undo decision (signed like any other), an audit row and a
run event record it. ``NotUndoable`` after the hold, once the agent acted on the decision, for
a decision made without a hold (the store's triggers refuse the same for raw SQL), or by
anyone but the person who decided (a team server's login check refuses that too; ``verify``
names an undo by another operator)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Table

from proctor.core import errors
from proctor.core.decisions.writer import record_decision
from proctor.core.kernel.limits import check_text
from proctor.core.models import ChangeKind
from proctor.core.storage.items import status_when_opening
from proctor.core.storage.rows import written_row
from proctor.core.storage.sql import update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

T = TypeVar("T")


@dataclass(frozen=True)
class Held:
    """A kind of held decision, as its undo sees it."""

    kind: str  # the decision's target kind: "approval", "interaction"
    noun: str  # as people read it: "approval", "question"
    table: Table
    change: ChangeKind
    decided: tuple[str, ...]  # the statuses a decision leaves
    reopened: str  # the status an undo puts back
    by: str  # the column naming who decided
    used: str  # the column the agent's use of the decision sets
    used_for: str | None  # the column naming what it was used for (an effect's key), if any
    cleared: tuple[str, ...]  # the decision's columns, cleared by an undo
    what: str  # what was decided: "decision", "answer"
    max_reason: int


def undo(
    store: Store,
    held: Held,
    target_id: str,
    *,
    expected_version: int,
    reason: str | None,
    request_id: str | None,
    source: str,
    after: Callable[[Tx, str, dict | None], T],
) -> T:
    """Undo the held decision on ``target_id`` in one transaction; ``after(tx, id, row)``
    reads what the caller returns (``row``: as now stored, None on a replay)."""
    store.require_operator()
    reason = (reason or "").strip() or None
    if reason:
        check_text(reason, "the reason", "reason", held.max_reason)
    request = {
        "op": f"{held.kind}.undo",
        "id": target_id,
        "reason": reason,
        "expected_version": expected_version,
        "source": source,
    }

    def op(tx: Tx) -> dict | None:
        if tx.replayed(request_id, request):
            return None
        row = tx.row_with_run(held.table, id=target_id)
        if row is None:
            raise errors.NotFound(f"{held.noun} {target_id} does not exist")
        _check_undoable(tx, held, row, expected_version)
        run = tx.live_run(row.run_id)
        return _reopen(tx, held, row, reason, source, request_id, request, run)

    return store.write_then(op, lambda tx, row: after(tx, target_id, row))


def _check_undoable(tx: Tx, held: Held, row: Any, expected_version: int) -> None:
    what = f"{held.noun} {row.id}"
    decided_by = getattr(row, held.by)
    if row.status not in held.decided:
        raise errors.NotUndoable(f"{what} is {row.status}: there is no {held.what} to undo")
    if decided_by != tx.actor.label:
        raise errors.NotUndoable(
            f"{what} was {row.status} by {decided_by}; only {decided_by} may undo it",
            hint=f"Ask {decided_by}, or decide anew once the {held.what} can be changed.",
            status=row.status,
            decided_by=decided_by,
        )
    if getattr(row, held.used) is not None:
        used_for = getattr(row, held.used_for, None) if held.used_for else None
        raise errors.NotUndoable(
            f"the agent already used the {held.what} on {what}"
            + (f" ({used_for})" if used_for else "")
            + "; it stands",
            status=row.status,
        )
    if row.hold_until is None:
        raise errors.NotUndoable(
            f"{what} was {row.status} by {decided_by} without a hold; it cannot be undone"
        )
    if tx.now >= row.hold_until:
        raise errors.NotUndoable(
            f"the hold on {what} ended {tx.now - row.hold_until:.1f} s ago; the agent may "
            f"already act on it ({row.status})",
            hold_until=row.hold_until,
        )
    if row.version != expected_version:
        raise errors.StaleVersion(f"{what} is at version {row.version}, you saw {expected_version}")


def _reopen(
    tx: Tx,
    held: Held,
    row: Any,
    reason: str | None,
    source: str,
    request_id: str | None,
    request: dict,
    run: Any,
) -> dict:
    was, decided_by = row.status, getattr(row, held.by)
    values: dict[str, Any] = dict(status=held.reopened, version=row.version + 1)
    values.update(dict.fromkeys(held.cleared))
    done = update_where(
        tx.conn,
        held.table,
        values,
        id=row.id,
        version=row.version,
        status=was,
        **{held.used: None},
    )
    if done != 1:
        raise errors.StaleVersion(f"{held.noun} {row.id} changed meanwhile")
    tx.changed(held.change, row.id, row.run_id)
    record_decision(
        tx,
        held.kind,
        row.id,
        row.run_id,
        {"undone": True, "was": was, "by": decided_by},
        source=source,
        reason=reason,
        request_id=request_id,
        request=request,
        audit=(
            f"{held.kind}.undone",
            {"status": was, "version": row.version, held.by: decided_by},
            {"status": held.reopened},
        ),
    )
    tx.append_event(
        tx.run_row(row.run_id),
        f"{held.kind}.undone",
        {f"{held.kind}_id": row.id, "was": was, "by": tx.actor.label, "reason": reason},
        status=status_when_opening(run),
    )
    return written_row(row, values)
