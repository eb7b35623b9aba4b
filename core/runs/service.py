"""Runs, attempts, events and tool calls.

The service; its tool-call writes are core/runs/tool_calls.py, what a run's end closes
core/runs/ending.py, the resume gate core/runs/blockers.py."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

from proctor.core import errors
from proctor.core.decisions.checks import check_retry
from proctor.core.decisions.writer import MAX_REASON, record_decision
from proctor.core.kernel.canonical import ZERO_DIGEST, canonical_json, loads
from proctor.core.kernel.limits import check_text
from proctor.core.models import (
    Attempt,
    AttemptStatus,
    Page,
    Run,
    RunEvent,
    RunStatus,
    SafetyClass,
    ToolCall,
    ToolCallStatus,
)
from proctor.core.storage import schema as s
from proctor.core.storage.items import (
    status_after_closing,
)
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
    decode_cursor,
    fetch_prepared,
    to_model,
    to_models,
)
from proctor.core.storage.sql import insert_rows, row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import tool_calls
from .blockers import cancel_asked_already, check_resume, resume_blockers
from .ending import close_open_items, outcomes_now_unknown
from .facts import RUN_BY_ID, RunFacts, attempts_of, run_facts, tool_calls_of
from .tool_calls import tool_call_in  # noqa: F401 - re-exported (defined here before)

FINISHED_ATTEMPT = (AttemptStatus.COMPLETED, AttemptStatus.FAILED, AttemptStatus.INTERRUPTED)


def run_in(tx: Tx, run_id: str) -> Run:
    """The run as this transaction sees it (what a write returns)."""
    return fetch_prepared(tx.conn, Run, RUN_BY_ID, f"run {run_id}", key=run_id)


class Runs:
    def __init__(self, store: Store) -> None:
        self.j = store

    # ------------------------------------------------------------ agent side
    def start(
        self,
        project: str,
        title: str,
        *,
        space: str = "default",
        agent: str | None = None,
        parent_run_id: str | None = None,
        deadline: float | None = None,
        run_id: str | None = None,
        metadata: dict | None = None,
    ) -> Run:
        """Start a run (status running, attempt 1). Idempotent by ``run_id``."""
        agent = agent or self.j.actor.name
        request = {
            "project": project,
            "space": space,
            "title": title,
            "agent": agent,
            "parent_run_id": parent_run_id,
        }

        def op(tx: Tx) -> str:
            rid = run_id or tx.new_id("run")
            existing = row_where(tx.conn, s.runs, id=rid)
            if existing is not None:
                started = row_where(tx.conn, s.events, run_id=rid, sequence=1)
                asked = {**request, "deadline": deadline, "metadata": metadata or {}}
                if started is None or started.payload != canonical_json(asked):
                    raise errors.IdempotencyConflict(f"run {rid} exists with other content")
                return rid
            if parent_run_id:
                tx.run_row(parent_run_id)
            insert_rows(
                tx.conn,
                s.runs,
                [
                    dict(
                        id=rid,
                        project=project,
                        space=space,
                        agent=agent,
                        title=title,
                        parent_run_id=parent_run_id,
                        status=RunStatus.PENDING.value,
                        version=0,
                        deadline=deadline,
                        created_at=tx.now,
                        updated_at=tx.now,
                        finished_at=None,
                        last_sequence=0,
                        last_digest=ZERO_DIGEST,
                        current_attempt=1,
                        cancel_requested=False,
                        cancel_reason=None,
                        error=None,
                    )
                ],
            )
            insert_rows(
                tx.conn,
                s.attempts,
                [dict(run_id=rid, number=1, status=AttemptStatus.RUNNING.value, started_at=tx.now)],
            )
            tx.run_event(
                rid,
                "run.started",
                {**request, "deadline": deadline, "metadata": metadata or {}},
                status=RunStatus.RUNNING,
            )
            return rid

        return self.j.write_then(op, run_in)

    def start_attempt(self, run_id: str, reason: str = "") -> Attempt:
        """Close the current attempt and open the next one. An attempt still open is closed
        ``interrupted``; one the agent already closed (``finish_attempt``: "attempt 1 failed:
        X") keeps its status and error.

        The resume gate: refused with ``ResumeBlocked`` (nothing written), listing each
        blocker by id, while the run has a pending approval, an open question, an ambiguous
        effect, a tool call of unknown outcome, or a cancel request (``resume_blockers``)."""

        def op(tx: Tx) -> int:
            run = tx.live_run(run_id)
            check_resume(tx, run)
            number = run.current_attempt + 1
            update_where(
                tx.conn,
                s.attempts,
                dict(status=AttemptStatus.INTERRUPTED.value, finished_at=tx.now),
                run_id=run_id,
                number=run.current_attempt,
                finished_at=None,
            )
            insert_rows(
                tx.conn,
                s.attempts,
                [
                    dict(
                        run_id=run_id,
                        number=number,
                        status=AttemptStatus.RUNNING.value,
                        started_at=tx.now,
                    )
                ],
            )
            update_where(tx.conn, s.runs, {"current_attempt": number}, id=run_id)
            run = tx.run_row(run_id)
            status = RunStatus.RUNNING if run.status == RunStatus.INTERRUPTED else None
            tx.append_event(
                run, "attempt.started", {"attempt": number, "reason": reason}, status=status
            )
            return number

        number = self.j.write(op)
        return self.attempts(run_id)[number - 1]

    def finish_attempt(
        self, run_id: str, status: AttemptStatus | str, error: str | None = None
    ) -> Attempt:
        """The agent closes its current attempt as ``completed``, ``failed`` or
        ``interrupted`` (with an optional error: "attempt 1 failed: rate limited"), before
        ``start_attempt`` opens the next one or the run ends. The run's own status does not
        change (a run ends with complete/fail/cancel). One ``attempt.finished`` event, one
        transaction. Finishing an already finished attempt the same way again returns it
        unchanged; another way raises ``InvalidTransition``."""
        if status not in {x.value for x in FINISHED_ATTEMPT}:
            raise errors.ValidationError(
                "an attempt finishes completed, failed or interrupted", field="status"
            )
        status = AttemptStatus(status)

        def op(tx: Tx) -> int:
            run = tx.live_run(run_id)
            number = run.current_attempt
            row = row_where(tx.conn, s.attempts, run_id=run_id, number=number)
            if row.finished_at is not None:
                if (row.status, row.error) == (status.value, error):
                    return number
                raise errors.InvalidTransition(
                    f"attempt {number} of run {run_id} is already {row.status}"
                )
            update_where(
                tx.conn,
                s.attempts,
                dict(status=status.value, finished_at=tx.now, error=error),
                run_id=run_id,
                number=number,
            )
            tx.append_event(
                run, "attempt.finished", {"attempt": number, "status": status.value, "error": error}
            )
            return number

        return self.j.write_then(
            op,
            lambda tx, number: to_model(
                Attempt, row_where(tx.conn, s.attempts, run_id=run_id, number=number)
            ),
        )

    def append_event(
        self, run_id: str, type_: str, payload: Any = None, *, event_id: str | None = None
    ) -> RunEvent:
        """Append one event. Idempotent by ``event_id``."""
        return self.append_events(run_id, [(type_, payload, event_id)])[0]

    def append_events(
        self, run_id: str, batch: Sequence[tuple[str, Any] | tuple[str, Any, str | None]]
    ) -> builtins.list[RunEvent]:
        """Append several events in one transaction (the batched path)."""
        if not batch:
            return []
        texts = []  # each payload serialized (and checked) once, before the transaction
        for item in batch:
            if not isinstance(item[0], str) or not item[0] or len(item[0]) > 100:
                raise errors.ValidationError(
                    "event type must be a short non-empty string", field="type"
                )
            texts.append(canonical_json(item[1]))

        def op(tx: Tx) -> builtins.list[RunEvent]:
            ids: builtins.list[str] = []
            fresh: builtins.list[Any] = []
            seen: dict[str, tuple[str, str]] = {}
            found: dict[str, Any] = {}
            for item, text in zip(batch, texts, strict=True):
                type_, payload = item[0], item[1]
                event_id = item[2] if len(item) > 2 else None
                if event_id and event_id in seen:
                    if seen[event_id] != (type_, text):
                        raise errors.IdempotencyConflict(
                            f"event {event_id} appears twice with other content"
                        )
                    ids.append(event_id)
                    continue
                stored = (
                    self._replayed_event(tx, run_id, event_id, type_, text) if event_id else None
                )
                if stored is not None and event_id:  # stored: event_id named it
                    found[event_id] = stored
                    ids.append(event_id)
                    continue
                event_id = event_id or tx.new_id("evt")
                seen[event_id] = (type_, text)
                fresh.append((type_, payload, event_id, text))
                ids.append(event_id)
            if fresh:
                found.update((r["id"], r) for r in tx.append_events(tx.live_run(run_id), fresh))
            models = {i: to_model(RunEvent, row) for i, row in found.items()}
            return [models[i] for i in ids]  # built from the rows written (or found)

        return self.j.write(op)

    @staticmethod
    def _replayed_event(tx: Tx, run_id: str, event_id: str, type_: str, text: str) -> Any:
        """The stored event ``event_id`` if it is this one again (None if there is none);
        ``text`` is the payload's canonical JSON."""
        row = row_where(tx.conn, s.events, id=event_id)
        if row is None:
            return None
        if (row.run_id, row.type, row.payload) != (run_id, type_, text):
            raise errors.IdempotencyConflict(f"event {event_id} exists with other content")
        return row

    def record_tool_call(
        self,
        run_id: str,
        tool: str,
        request: Any,
        *,
        safety_class: SafetyClass | str = SafetyClass.SAFE_READ,
        idempotency_key: str | None = None,
        tool_call_id: str | None = None,
    ) -> ToolCall:
        return tool_calls.record(
            self.j,
            run_id,
            tool,
            request,
            safety_class=safety_class,
            idempotency_key=idempotency_key,
            tool_call_id=tool_call_id,
        )

    def finish_tool_call(
        self,
        tool_call_id: str,
        status: ToolCallStatus | str,
        *,
        result: Any = None,
        error: str | None = None,
    ) -> ToolCall:
        """Record a tool call's outcome. A call of unknown outcome (the agent said so, or
        a cancel completed while it ran) is settled by a person only, ``succeeded`` or
        ``failed`` (``resolve_tool_call``); finishing it here raises ``InvalidTransition``
        and writes nothing."""
        return tool_calls.finish(self.j, tool_call_id, status, result=result, error=error)

    def resolve_tool_call(
        self,
        tool_call_id: str,
        status: ToolCallStatus | str,
        *,
        reason: str,
        expected_version: int,
        request_id: str | None = None,
        source: str = "desk",
    ) -> ToolCall:
        """A person says what became of a tool call of unknown outcome: ``succeeded`` or
        ``failed``. A decision row, an audit row (and a run event if the run is live), one
        transaction; the requester rule applies (``core.deciders``)."""
        return tool_calls.resolve(
            self.j,
            tool_call_id,
            status,
            reason=reason,
            expected_version=expected_version,
            request_id=request_id,
            source=source,
        )

    def unknown_outcomes(
        self, *, run_id: str | None = None, limit: int = 200
    ) -> builtins.list[ToolCall]:
        """Tool calls whose outcome nobody knows (left by a cancel), oldest first: what a
        person resolves with ``resolve_tool_call``."""
        t = s.tool_calls.c
        stmt = select(s.tool_calls).where(t.status == ToolCallStatus.OUTCOME_UNKNOWN.value)
        if run_id:
            stmt = stmt.where(t.run_id == run_id)
        stmt = stmt.order_by(t.created_at, t.id).limit(max(1, min(limit, MAX_PAGE)))
        return self.j.read(lambda c: to_models(ToolCall, c.execute(stmt)))

    def wait_for_user(self, run_id: str) -> Run:
        return self._set_status(run_id, RunStatus.WAITING_FOR_USER, "run.waiting", {})

    def resume(self, run_id: str) -> Run:
        return self._set_status(run_id, RunStatus.RUNNING, "run.resumed", {})

    def interrupt(self, run_id: str, reason: str) -> Run:
        return self._set_status(
            run_id, RunStatus.INTERRUPTED, "run.interrupted", {"reason": reason}
        )

    def complete(self, run_id: str, result: Any = None) -> Run:
        return self._finish(run_id, RunStatus.COMPLETED, "run.completed", {"result": result})

    def fail(self, run_id: str, error: str) -> Run:
        return self._finish(run_id, RunStatus.FAILED, "run.failed", {"error": error}, error)

    def cancel(self, run_id: str, reason: str) -> Run:
        """Agent side: the run stops because cancellation was requested (or it gave up).
        Its open attempt is closed ``failed`` with the error "cancelled: <reason>"
        (AttemptStatus has no "cancelled": a new status would break older desks reading the
        journal); an attempt the agent already finished keeps its status."""
        return self._finish(
            run_id,
            RunStatus.CANCELLED,
            "run.cancelled",
            {"reason": reason},
            attempt_error=f"cancelled: {reason}",
        )

    def _set_status(self, run_id: str, status: RunStatus, type_: str, payload: Any) -> Run:
        def op(tx: Tx) -> None:
            run = tx.live_run(run_id)
            tx.append_event(run, type_, payload, status=status)

        return self.j.write_then(op, lambda tx, _: run_in(tx, run_id))

    def _finish(
        self,
        run_id: str,
        status: RunStatus,
        type_: str,
        payload: Any,
        error: str | None = None,
        attempt_error: str | None = None,
    ) -> Run:
        """End the run; its open attempt ends completed (run completed) or failed (run
        failed or cancelled) with ``attempt_error`` or the run's ``error``."""

        def op(tx: Tx) -> None:
            run = tx.live_run(run_id)
            close_open_items(tx, run_id, status)
            body = dict(payload)
            if status == RunStatus.CANCELLED:
                unknown = outcomes_now_unknown(tx, run_id)
                if unknown:
                    body["outcome_unknown"] = unknown
            attempt_status = (
                AttemptStatus.COMPLETED if status == RunStatus.COMPLETED else AttemptStatus.FAILED
            )
            update_where(
                tx.conn,
                s.attempts,
                dict(status=attempt_status.value, finished_at=tx.now, error=attempt_error or error),
                run_id=run_id,
                finished_at=None,
            )
            if error and run.error is None:  # set once: a retried run keeps its first
                update_where(tx.conn, s.runs, {"error": error}, id=run_id)
            tx.append_event(tx.run_row(run_id), type_, body, status=status)
            del run

        return self.j.write_then(op, lambda tx, _: run_in(tx, run_id))

    def retry(self, run_id: str) -> Attempt:
        """Agent side: start the retry an operator asked of this failed run
        (:meth:`request_retry`): attempt N opens and the run moves from ``failed`` to
        ``running`` in one UPDATE, with a ``run.retried`` event. The run's ``error`` keeps
        the first failure (it is set once); each attempt keeps its own. ``InvalidTransition``
        unless a retry is asked and not yet started; ``DecisionUnverified`` unless an
        operator's decision row asks it (signed by a trusted operator, for a trusting
        agent): ``retry_requested`` written by hand starts nothing."""

        def op(tx: Tx) -> int:
            run = tx.run_row(run_id)
            if run.status != RunStatus.FAILED or not (
                run.retry_requested is not None and run.retry_requested > run.current_attempt
            ):
                raise errors.InvalidTransition(
                    f"run {run_id} is {run.status} and no retry of it is waiting to start"
                )
            check_retry(tx.conn, self.j.trust, run)  # an operator's (a trusted one's) request
            check_resume(tx, run)  # a retry is a new attempt: the same gate
            number = run.retry_requested
            insert_rows(
                tx.conn,
                s.attempts,
                [
                    dict(
                        run_id=run_id,
                        number=number,
                        status=AttemptStatus.RUNNING.value,
                        started_at=tx.now,
                    )
                ],
            )
            tx.append_event(
                run,
                "run.retried",
                {"attempt": number, "reason": run.retry_reason},
                status=RunStatus.RUNNING,
                also={"current_attempt": number, "finished_at": None},
            )
            return number

        number = self.j.write(op)
        return self.attempts(run_id)[number - 1]

    # ------------------------------------------------------------ operator side
    def request_retry(
        self,
        run_id: str,
        reason: str,
        *,
        expected_version: int,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Run:
        """Operator asks the agent of a failed run to try again: the run records the attempt
        to start (``retry_requested`` = the current attempt + 1) and the reason; the agent's
        adapter sees it (``Run.retry_pending``) and starts it (:meth:`retry`). A decision row,
        an audit row and a ``run.retry_requested`` event record who asked, why and from
        where. Only a failed run is retried; a second request before the agent started the
        first is ``AlreadyDecided``."""
        self.j.require_operator()
        reason = reason.strip()
        if not reason:
            raise errors.ValidationError("a reason is required to retry a run", field="reason")
        check_text(reason, "the reason", "reason", MAX_REASON)
        request = {
            "op": "run.request_retry",
            "run_id": run_id,
            "reason": reason,
            "expected_version": expected_version,
            "source": source,
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            run = tx.run_row(run_id)
            if run.status != RunStatus.FAILED:
                raise errors.InvalidTransition(
                    f"run {run_id} is {run.status}; only a failed run is retried",
                    status=run.status,
                )
            if run.retry_requested is not None and run.retry_requested > run.current_attempt:
                raise errors.AlreadyDecided(
                    f"a retry of run {run_id} as attempt {run.retry_requested} was already "
                    f"requested: {run.retry_reason}",
                    hint="Nothing was changed: the agent starts it when it next looks.",
                    run_id=run_id,
                )
            if run.version != expected_version:
                raise errors.StaleVersion(
                    f"run {run_id} is at version {run.version}, you saw {expected_version}"
                )
            check_resume(tx, run)  # asked now, refused at the agent's start otherwise
            number = run.current_attempt + 1
            update_where(
                tx.conn,
                s.runs,
                dict(retry_requested=number, retry_reason=reason),
                id=run_id,
            )
            tx.append_event(run, "run.retry_requested", {"attempt": number, "reason": reason})
            record_decision(
                tx,
                "run",
                run_id,
                run_id,
                {"retry_requested": number},
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    "run.retry_requested",
                    {"status": "failed", "attempt": run.current_attempt},
                    {"retry_requested": number},
                ),
            )

        return self.j.write_then(op, lambda tx, _: run_in(tx, run_id))

    def request_cancel(
        self,
        run_id: str,
        reason: str,
        *,
        expected_version: int | None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Run:
        """Operator asks the agent to stop; the agent completes the cancel. A decision row
        (target "run") records who asked and from where (``source``: desk, cli…), as the
        other operator decisions do; the Audit page reads its source from it.
        ``expected_version=None``: whatever the agent appended since the operator looked
        (every event steps the run's version, so a reason typed beside a busy agent was
        always stale); the run must still be live and not asked already."""
        self.j.require_operator()
        if not reason.strip():
            raise errors.ValidationError("a reason is required to cancel a run", field="reason")
        request = {
            "op": "run.request_cancel",
            "run_id": run_id,
            "reason": reason,
            "expected_version": expected_version,
            "source": source,
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            run = tx.live_run(run_id)
            if expected_version is not None and run.version != expected_version:
                raise errors.StaleVersion(
                    f"run {run_id} is at version {run.version}, you saw {expected_version}"
                )
            if run.cancel_requested:  # the reason is set once (census): refused, not rewritten
                raise cancel_asked_already(tx, run)
            update_where(
                tx.conn, s.runs, dict(cancel_requested=True, cancel_reason=reason), id=run_id
            )
            tx.append_event(run, "run.cancel_requested", {"reason": reason})
            record_decision(
                tx,
                "run",
                run_id,
                run_id,
                {"cancel_requested": True},
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=(
                    "run.cancel_requested",
                    {"cancel_requested": False},
                    {"cancel_requested": True},
                ),
            )

        return self.j.write_then(op, lambda tx, _: run_in(tx, run_id))

    # ------------------------------------------------------------ reads
    def resume_blockers(self, run_id: str) -> builtins.list[tuple[str, str]]:
        """What keeps ``run_id`` from starting a new attempt, as (kind, id) pairs (empty:
        nothing): the resume gate of ``start_attempt``, for the desk and the CLI."""

        def q(conn: Any) -> builtins.list[tuple[str, str]]:
            run = row_where(conn, s.runs, id=run_id)
            if run is None:
                raise errors.NotFound(f"run {run_id} does not exist")
            return resume_blockers(conn, run)

        return self.j.read(q)

    def get(self, run_id: str) -> Run:
        return self.j.read(lambda c: fetch_prepared(c, Run, RUN_BY_ID, f"run {run_id}", key=run_id))

    def list(
        self,
        query: RunQuery | None = None,
        *,
        status: builtins.list[str] | None = None,
        project: str | None = None,
        agent: str | None = None,
        text: str | None = None,
        since: float | None = None,
        until: float | None = None,
        has_open_items: bool = False,
        newest_first: bool = True,
        cursor: str | None = None,
        limit: int = 200,
    ) -> Page[Run]:
        """Runs matching ``query`` (or the filters given one by one, newest started first
        unless ``newest_first=False``), keyset-paged in the sort's index order: the one run
        listing (the desk's Runs page, ``proctor runs``, the CSV export). ``text``: in the
        title, id, agent or project."""
        q = query or RunQuery(
            status=tuple(status or ()),
            project=project,
            agent=agent,
            text=text,
            since=since,
            until=until,
            has_open_items=has_open_items,
            descending=newest_first,
        )
        conds = run_conditions(q)
        return self.j.read(lambda c: run_page(c, conds, q.sort, q.descending, cursor, limit))

    def count(self, *, status: builtins.list[str] | None = None) -> int:

        stmt = select(func.count()).select_from(s.runs)
        if status:
            stmt = stmt.where(s.runs.c.status.in_(status))
        return self.j.read(lambda c: int(c.execute(stmt).scalar_one()))

    def events(
        self,
        run_id: str,
        *,
        after: int = 0,
        limit: int = 500,
        types: builtins.list[str] | None = None,
        descending: bool = False,
    ) -> builtins.list[RunEvent]:
        """Events by sequence, keyset-paged: pass the last sequence you have as ``after``."""
        e = s.events.c
        stmt = select(s.events).where(e.run_id == run_id)
        if descending:
            stmt = stmt.where(e.sequence < after) if after else stmt
            stmt = stmt.order_by(e.sequence.desc())
        else:
            stmt = stmt.where(e.sequence > after).order_by(e.sequence.asc())
        if types:
            stmt = stmt.where(e.type.in_(types))
        stmt = stmt.limit(min(limit, 10 * MAX_PAGE))
        return self.j.read(lambda c: to_models(RunEvent, c.execute(stmt)))

    def attempts(self, run_id: str) -> builtins.list[Attempt]:
        return self.j.read(lambda c: attempts_of(c, run_id))

    def tool_calls(self, run_id: str) -> builtins.list[ToolCall]:
        return self.j.read(lambda c: tool_calls_of(c, run_id))

    def facts(self, run_id: str) -> RunFacts:
        """Everything about ``run_id`` but its events (the desk's run detail), read in one
        transaction: one snapshot, whatever is written meanwhile (``run_facts.RunFacts``)."""
        return self.j.read(lambda c: run_facts(c, run_id, self.j.trust))

    def tool_call(self, tool_call_id: str) -> ToolCall:
        stmt = select(s.tool_calls).where(s.tool_calls.c.id == tool_call_id)

        def q(conn: Any) -> ToolCall:
            row = conn.execute(stmt).first()
            if row is None:
                raise errors.NotFound(f"tool call {tool_call_id} does not exist")
            return to_model(ToolCall, row)

        return self.j.read(q)

    def agents(self) -> builtins.list[str]:
        stmt = select(s.runs.c.agent).distinct().order_by(s.runs.c.agent)
        return self.j.read(lambda c: list(c.execute(stmt).scalars()))

    def projects(self) -> builtins.list[str]:
        stmt = select(s.runs.c.project).distinct().order_by(s.runs.c.project)
        return self.j.read(lambda c: list(c.execute(stmt).scalars()))


__all__ = ["Runs", "decode_cursor", "loads", "status_after_closing"]
