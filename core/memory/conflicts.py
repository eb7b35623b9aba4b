"""Memory conflicts' writes: recording an incoming version that disagrees with an entry, and
resolving it (the entry's new version, the conflict's status and its decision)."""

from __future__ import annotations

from typing import Any

from proctor.core import errors
from proctor.core.decisions.deciders import (
    agent_name,
    refuse_requester,
    requesters_of_conflict,
)
from proctor.core.decisions.writer import record_decision
from proctor.core.kernel.origin import default_for as default_origin
from proctor.core.models import (
    ChangeKind,
    ConflictStatus,
    Origin,
    Trust,
)
from proctor.core.storage import schema as s
from proctor.core.storage.sql import (
    insert_rows,
    row_where,
    update_where,
)
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from .chain import apply, check_content, content_values, entry_row, run_event

INCOMING_FIELDS = ("kind", "priority", "trust", "sensitivity")


def _resolution_values(
    choice: ConflictStatus, item: Any, entry: Any, merged: str | None
) -> dict[str, Any]:
    """What resolving with ``choice`` changes on the entry (empty: nothing). Taking incoming
    takes its content and every field it carries; trust decides ``confirmed`` with it."""
    if choice == ConflictStatus.MERGED:
        return content_values(merged, entry) if merged is not None else {}
    if choice != ConflictStatus.ACCEPTED_INCOMING:
        return {}
    values = content_values(item.incoming_content, entry)
    for name in INCOMING_FIELDS:
        value = getattr(item, f"incoming_{name}")
        if value is not None and value != getattr(entry, name):
            values[name] = value
    if "trust" in values:
        values["confirmed"] = values["trust"] == Trust.USER_CONFIRMED.value
    return values


def _incoming_trust(trust: Trust | str | None) -> str | None:
    if trust is None:
        return None
    try:
        return Trust(trust).value
    except ValueError:
        raise errors.ValidationError(
            f"unknown trust level {trust!r}", field="incoming_trust"
        ) from None


def record(
    store: Store,
    entry_id: str,
    incoming_content: str,
    *,
    incoming_source: str,
    run_id: str | None = None,
    local_version: int | None = None,
    incoming_kind: str | None = None,
    incoming_priority: int | None = None,
    incoming_trust: Trust | str | None = None,
    incoming_sensitivity: str | None = None,
    origin: Origin | dict | None = None,
) -> str:
    """Memory.record_conflict's write: the pending conflict's id."""
    origin_text = default_origin(store.actor.kind, origin)
    check_content(incoming_content)
    trust = _incoming_trust(incoming_trust)
    for name, value in (
        ("incoming_kind", incoming_kind),
        ("incoming_sensitivity", incoming_sensitivity),
    ):
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise errors.ValidationError(f"{name} must be non-empty text", field=name)

    def op(tx: Tx) -> str:
        row = entry_row(tx, entry_id)
        pending = row_where(tx.conn, s.conflicts, entry_id=entry_id, status="pending")
        waiting = pending.id if pending is not None else None
        if waiting is not None:
            raise errors.ConflictPending(
                f"memory entry {entry_id} already has a pending conflict ({waiting}); "
                "one waits for a person at a time",
                reconciliation_id=waiting,
            )
        rid = tx.new_id("rec")
        insert_rows(
            tx.conn,
            s.conflicts,
            [
                dict(
                    agent=agent_name(tx),
                    id=rid,
                    entry_id=entry_id,
                    local_content=row.content,
                    local_version=local_version or row.version,
                    incoming_content=incoming_content,
                    incoming_source=incoming_source,
                    incoming_kind=incoming_kind,
                    incoming_priority=incoming_priority,
                    incoming_trust=trust,
                    incoming_sensitivity=incoming_sensitivity,
                    run_id=run_id,
                    status="pending",
                    version=1,
                    created_at=tx.now,
                    origin=origin_text,
                )
            ],
        )
        tx.changed(ChangeKind.CONFLICT, rid, run_id)
        run_event(tx, run_id, "memory.conflict", {"reconciliation_id": rid, "entry_id": entry_id})
        return rid

    return store.write(op)


def resolve(
    store: Store,
    item_id: str,
    choice: ConflictStatus | str,
    *,
    expected_version: int,
    merged_content: str | None,
    reason: str | None,
    request_id: str | None,
    entry_version: int | None,
    source: str,
) -> None:
    """Memory.resolve's and resolve_seen's write (Memory then reads the conflict back)."""
    store.require_operator()
    choice = ConflictStatus(choice)
    if choice == ConflictStatus.PENDING:
        raise errors.ValidationError("choose how to resolve the conflict", field="choice")
    reason = (reason or "").strip() or None
    if reason is None:  # the desk and the CLI both ask for one: the rule lives here
        raise errors.ValidationError(
            "a reason is required to resolve a memory conflict", field="reason"
        )
    if choice == ConflictStatus.MERGED:
        if not merged_content:
            raise errors.ValidationError("merged content is required", field="merged")
        check_content(merged_content)
    request = {
        "op": "memory.resolve",
        "id": item_id,
        "choice": choice.value,
        "merged": merged_content,
        "expected_version": expected_version,
        "reason": reason,
        "source": source,
    }
    if entry_version is not None:
        request["entry_version"] = entry_version

    def op(tx: Tx) -> None:
        if tx.replayed(request_id, request):
            return
        item = row_where(tx.conn, s.conflicts, id=item_id)
        if item is None:
            raise errors.NotFound(f"memory conflict {item_id} does not exist")
        if item.status != "pending":
            raise errors.AlreadyDecided(
                f"memory conflict {item_id} is already {item.status} by {item.resolved_by}",
                status=item.status,
                decided_by=item.resolved_by,
            )
        if item.version != expected_version:
            raise errors.StaleVersion(f"memory conflict {item_id} changed since you looked")
        refuse_requester(
            tx,
            requesters_of_conflict(tx.conn, item),
            verb="resolve",
            what=f"memory conflict {item_id}",
        )
        entry = entry_row(tx, item.entry_id)
        if entry_version is not None and entry.version != entry_version:
            raise errors.StaleVersion(
                f"memory entry {entry.id} is now at version {entry.version}; you reviewed "
                f"this conflict against version {entry_version}",
                entry_version=entry.version,
            )
        sequence = run_event(
            tx,
            item.run_id,
            "memory.conflict_resolved",
            {"reconciliation_id": item_id, "choice": choice.value, "entry_id": item.entry_id},
        )
        values = _resolution_values(choice, item, entry, merged_content)
        if values:
            apply(
                tx,
                entry,
                f"reconcile_{choice.value}",
                values,
                reason,
                item.run_id,
                None,
                request,
                event=False,
                event_sequence=sequence,
            )
        update_where(
            tx.conn,
            s.conflicts,
            dict(
                status=choice.value,
                version=item.version + 1,
                resolved_at=tx.now,
                resolved_by=tx.actor.label,
                resolution_reason=reason,
            ),
            id=item_id,
        )
        tx.changed(ChangeKind.CONFLICT, item_id, item.run_id)
        fields = {k: v for k, v in values.items() if k in INCOMING_FIELDS}
        record_decision(
            tx,
            "reconciliation",
            item_id,
            item.run_id,
            {"choice": choice.value},
            source=source,
            reason=reason,
            request_id=request_id,
            request=request,
            audit=(
                f"memory.conflict_{choice.value}",
                {"status": "pending"},
                {
                    "status": choice.value,
                    "entry_id": item.entry_id,
                    **({"fields": fields} if fields else {}),
                },
            ),
        )

    store.write(op)
