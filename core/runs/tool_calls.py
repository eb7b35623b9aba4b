"""A run's tool calls, written: recorded, finished, and an unknown outcome resolved by a person
(Runs.record_tool_call, finish_tool_call, resolve_tool_call call these)."""

from __future__ import annotations

from typing import Any

from proctor.core import errors
from proctor.core.decisions.deciders import refuse_requester, run_agent
from proctor.core.decisions.writer import insert_decision_row
from proctor.core.kernel.canonical import canonical_json
from proctor.core.models import (
    ChangeKind,
    RunStatus,
    SafetyClass,
    ToolCall,
    ToolCallStatus,
)
from proctor.core.storage import schema as s
from proctor.core.storage.paging import (  # noqa: F401 - re-exported: the run sorts were defined here
    MAX_PAGE,
    RUN_PAGE,
    RUN_SORTS,
    RunQuery,
    escape_like,
    has_open_items_clause,
    run_conditions,
    run_page,
    run_page_statement,
    run_page_with_open_items,
    sort_fields,
)
from proctor.core.storage.rows import (
    one_where,
)
from proctor.core.storage.sql import insert_rows, row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx


def record(
    store: Store,
    run_id: str,
    tool: str,
    request: Any,
    *,
    safety_class: SafetyClass | str = SafetyClass.SAFE_READ,
    idempotency_key: str | None = None,
    tool_call_id: str | None = None,
) -> ToolCall:
    safety = SafetyClass(safety_class)
    body = canonical_json(request)

    def op(tx: Tx) -> str:
        tid = tool_call_id or tx.new_id("tc")
        row = row_where(tx.conn, s.tool_calls, id=tid)
        if row is not None:
            if (row.run_id, row.tool, row.request, row.safety_class, row.idempotency_key) != (
                run_id,
                tool,
                body,
                safety.value,
                idempotency_key,
            ):
                raise errors.IdempotencyConflict(f"tool call {tid} exists with other content")
            return tid
        run = tx.live_run(run_id)
        insert_rows(
            tx.conn,
            s.tool_calls,
            [
                dict(
                    id=tid,
                    run_id=run_id,
                    attempt=run.current_attempt,
                    tool=tool,
                    safety_class=safety.value,
                    idempotency_key=idempotency_key,
                    request=body,
                    result=None,
                    error=None,
                    status=ToolCallStatus.RUNNING.value,
                    version=1,
                    created_at=tx.now,
                    updated_at=tx.now,
                )
            ],
        )
        tx.append_event(
            run,
            "tool.called",
            {
                "tool_call_id": tid,
                "tool": tool,
                "safety_class": safety.value,
                "request": request,
            },
        )
        tx.changed(ChangeKind.TOOL_CALL, tid, run_id)
        return tid

    return store.write_then(op, tool_call_in)


def finish(
    store: Store,
    tool_call_id: str,
    status: ToolCallStatus | str,
    *,
    result: Any = None,
    error: str | None = None,
) -> ToolCall:
    """Runs.finish_tool_call's write."""
    status = ToolCallStatus(status)

    def op(tx: Tx) -> None:
        row = row_where(tx.conn, s.tool_calls, id=tool_call_id)
        if row is None:
            raise errors.NotFound(f"tool call {tool_call_id} does not exist")
        if row.status == ToolCallStatus.OUTCOME_UNKNOWN:
            raise errors.InvalidTransition(
                f"tool call {tool_call_id} is outcome_unknown; a person resolves it "
                "(succeeded or failed), with what you know as their evidence"
            )
        if row.status not in (ToolCallStatus.RUNNING, ToolCallStatus.PENDING):
            raise errors.InvalidTransition(f"tool call {tool_call_id} is already {row.status}")
        run = tx.live_run(row.run_id)
        update_where(
            tx.conn,
            s.tool_calls,
            dict(
                status=status.value,
                result=canonical_json(result),
                error=error,
                version=row.version + 1,
                updated_at=tx.now,
            ),
            id=tool_call_id,
        )
        tx.append_event(
            run,
            "tool.finished",
            {
                "tool_call_id": tool_call_id,
                "status": status.value,
                "result": result,
                "error": error,
            },
        )
        tx.changed(ChangeKind.TOOL_CALL, tool_call_id, row.run_id)

    return store.write_then(op, lambda tx, _: tool_call_in(tx, tool_call_id))


def resolve(
    store: Store,
    tool_call_id: str,
    status: ToolCallStatus | str,
    *,
    reason: str,
    expected_version: int,
    request_id: str | None = None,
    source: str = "desk",
) -> ToolCall:
    """Runs.resolve_tool_call's write."""
    store.require_operator()
    status = ToolCallStatus(status)
    if not reason or not reason.strip():
        raise errors.ValidationError("a reason is required to resolve an outcome", field="reason")
    request = {
        "op": "tool_call.resolve",
        "id": tool_call_id,
        "status": status.value,
        "reason": reason,
        "expected_version": expected_version,
        "source": source,
    }

    def op(tx: Tx) -> None:
        if tx.replayed(request_id, request):
            return
        row = row_where(tx.conn, s.tool_calls, id=tool_call_id)
        if row is None:
            raise errors.NotFound(f"tool call {tool_call_id} does not exist")
        if row.status != ToolCallStatus.OUTCOME_UNKNOWN:
            raise errors.AlreadyDecided(
                f"tool call {tool_call_id} is {row.status}", status=row.status
            )
        if row.version != expected_version:
            raise errors.StaleVersion(f"tool call {tool_call_id} changed since you looked")
        refuse_requester(
            tx,
            (run_agent(tx.conn, row.run_id),),
            verb="resolve",
            what=f"tool call {tool_call_id}",
        )
        settle_unknown(
            tx, row, status, None, None, reason=reason, request_id=request_id, request=request
        )
        insert_decision_row(
            tx,
            "tool_call",
            tool_call_id,
            row.run_id,
            {"status": status.value},
            actor=tx.actor.label,
            source=source,
            reason=reason,
            request_id=request_id,
        )

    return store.write_then(op, lambda tx, _: tool_call_in(tx, tool_call_id))


def settle_unknown(
    tx: Tx,
    row: Any,
    status: ToolCallStatus,
    result: Any,
    error: str | None,
    *,
    reason: str,
    request_id: str | None,
    request: Any,
) -> None:
    if status not in (ToolCallStatus.SUCCEEDED, ToolCallStatus.FAILED):
        raise errors.InvalidTransition(
            f"tool call {row.id} is outcome_unknown; it can only become succeeded or failed"
        )
    done = update_where(
        tx.conn,
        s.tool_calls,
        dict(
            status=status.value,
            result=canonical_json(result),
            error=error,
            version=row.version + 1,
            updated_at=tx.now,
        ),
        id=row.id,
        version=row.version,
    )
    if done != 1:
        raise errors.StaleVersion(f"tool call {row.id} changed meanwhile")
    tx.audit(
        "tool_call.outcome_settled",
        "tool_call",
        row.id,
        run_id=row.run_id,
        before={"status": row.status},
        after={"status": status.value, "error": error},
        reason=reason,
        request_id=request_id,
        request=request,
    )
    run = tx.run_row(row.run_id)
    if not RunStatus(run.status).terminal:
        tx.append_event(
            run,
            "tool.finished",
            {
                "tool_call_id": row.id,
                "status": status.value,
                "result": result,
                "error": error,
                "was": "outcome_unknown",
            },
        )
    tx.changed(ChangeKind.TOOL_CALL, row.id, row.run_id)


def tool_call_in(tx: Tx, tool_call_id: str) -> ToolCall:
    return one_where(tx.conn, ToolCall, s.tool_calls, f"tool call {tool_call_id}", id=tool_call_id)
