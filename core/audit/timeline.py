"""Reads for run timelines and the audit log (the Runs and Audit pages, exports).

Plain functions over an open journal, each one short read transaction. Event reads are
keyset by ``sequence`` and use the ``(run_id, sequence)`` / ``(run_id, type, sequence)``
indexes, so they stay fast on a run with 100 000 events.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, or_, select

from proctor.core.kernel.canonical import loads
from proctor.core.models import (
    AuditEntry,
    Decision,
    Frozen,
    InboxItem,
    MemoryMutation,
    Page,
    Run,
    VerifyProblem,
    VerifyReport,
)
from proctor.core.runs.facts import children_of, decisions_of, memory_changes_of, open_items_of
from proctor.core.storage import schema as s
from proctor.core.storage.paging import RunQuery, RunSort, escape_like, run_conditions  # noqa: F401 - re-exported
from proctor.core.storage.sql import whole

from .service import decision_sources

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal

MAX_PAGE = 1000
_run_conditions = run_conditions  # the name tests knew it by


class Span(Frozen):
    """One bar of the visual timeline."""

    lane: str  # "attempt", "tool", "approval", "question", "effect"
    id: str
    label: str
    status: str
    start: float
    end: float | None  # None: still open
    detail: dict[str, Any]


class RunTimeline(Frozen):
    run_id: str
    start: float
    end: float  # finished_at, or the newest event of a live run
    live: bool
    spans: list[Span]


class ChainStatus(Frozen):
    """A run's digest chain, recomputed: where it first breaks, if it does."""

    ok: bool
    checked_events: int
    last_sequence: int
    broken_sequence: int | None
    problem: VerifyProblem | None
    missing_triggers: list[str]


# ---------------------------------------------------------------- runs


def list_runs(j: Journal, q: RunQuery, *, cursor: str | None = None, limit: int = 200) -> Page[Run]:
    """``j.runs.list(q)`` (kept for callers of the timeline module)."""
    return j.runs.list(q, cursor=cursor, limit=limit)


def child_runs(j: Journal, run_id: str) -> list[Run]:
    return j.read(lambda c: children_of(c, run_id))


# ---------------------------------------------------------------- events


def event_type_counts(j: Journal, run_id: str) -> dict[str, int]:
    """How many events of each type the run has (the type filter's menu)."""
    e = s.events.c
    stmt = select(e.type, func.count()).where(e.run_id == run_id).group_by(e.type).order_by(e.type)
    return j.read(lambda c: {t: int(n) for t, n in c.execute(stmt).all()})


def event_sequences(j: Journal, run_id: str, types: list[str]) -> list[int]:
    """Sequences of the run's events of ``types``, ascending (an index-only scan)."""
    e = s.events.c
    stmt = select(e.sequence).where(e.run_id == run_id, e.type.in_(types)).order_by(e.sequence)
    return j.read(lambda c: list(c.execute(stmt).scalars()))


def sequence_at(j: Journal, run_id: str, at: float) -> int | None:
    """The first event at or after time ``at`` (the last event if ``at`` is later)."""
    e = s.events.c
    first = select(func.min(e.sequence)).where(e.run_id == run_id, e.created_at >= at)
    last = select(func.max(e.sequence)).where(e.run_id == run_id)

    def q(conn: Any) -> int | None:
        found = conn.execute(first).scalar()
        return int(found) if found is not None else conn.execute(last).scalar()

    return j.read(q)


def find_event(
    j: Journal,
    run_id: str,
    text: str,
    *,
    after: int = 0,
    backwards: bool = False,
    types: list[str] | None = None,
) -> int | None:
    """The sequence of the next event (after ``after``; before it when ``backwards``) whose
    type or payload contains ``text`` (case-insensitive), or None."""
    e = s.events.c
    like = f"%{escape_like(text)}%"
    conds = [
        e.run_id == run_id,
        or_(e.payload.ilike(like, escape="\\"), e.type.ilike(like, escape="\\")),
    ]
    if types:
        conds.append(e.type.in_(types))
    if backwards:
        conds.append(e.sequence < after)
        stmt = select(e.sequence).where(*conds).order_by(e.sequence.desc()).limit(1)
    else:
        conds.append(e.sequence > after)
        stmt = select(e.sequence).where(*conds).order_by(e.sequence.asc()).limit(1)
    return j.read(lambda c: c.execute(stmt).scalar())


def event_density(j: Journal, run_id: str, start: float, end: float, buckets: int) -> list[int]:
    """Events per time bucket between ``start`` and ``end`` (the timeline's event lane)."""
    e = s.events.c
    buckets = max(1, buckets)
    width = max((end - start) / buckets, 1e-9)
    bucket = whole((e.created_at - start) / width).label("bucket")
    stmt = select(bucket, func.count()).where(e.run_id == run_id).group_by(bucket)
    counts = [0] * buckets
    for b, n in j.read(lambda c: c.execute(stmt).all()):
        counts[min(max(int(b), 0), buckets - 1)] += int(n)
    return counts


# ---------------------------------------------------------------- what the run did


def run_decisions(j: Journal, run_id: str) -> list[Decision]:
    return j.read(lambda c: decisions_of(c, run_id))


def memory_changes(j: Journal, run_id: str) -> list[MemoryMutation]:
    """Memory mutations made by (or for) the run, oldest first."""
    return j.read(lambda c: memory_changes_of(c, run_id))


def open_items(j: Journal, run_id: str) -> list[InboxItem]:
    """The run's items waiting for a person (snoozed ones too), as inbox rows."""
    return j.read(lambda c: open_items_of(c, run_id))


def timeline(j: Journal, run_id: str) -> RunTimeline:
    """Attempts, tool calls, approvals, questions and effects as spans in time."""

    def q(conn: Any) -> RunTimeline:
        run = conn.execute(select(s.runs).where(s.runs.c.id == run_id)).first()
        if run is None:
            from proctor.core.errors import NotFound

            raise NotFound(f"run {run_id} does not exist")
        newest = (
            conn.execute(
                select(func.max(s.events.c.created_at)).where(s.events.c.run_id == run_id)
            ).scalar()
            or run.updated_at
        )
        spans = (
            _attempt_spans(conn, run_id)
            + _tool_spans(conn, run_id)
            + _approval_spans(conn, run_id)
            + _question_spans(conn, run_id)
            + _effect_spans(conn, run_id)
        )
        if run.finished_at is not None:
            spans = [ended_with_run(sp, run.finished_at) for sp in spans]
        end = run.finished_at or max(
            [newest, run.updated_at] + [sp.end for sp in spans if sp.end is not None]
        )
        return RunTimeline(
            run_id=run_id,
            start=run.created_at,
            end=max(end, run.created_at),
            live=run.finished_at is None,
            spans=spans,
        )

    return j.read(q)


# Lanes whose open bars end with their run: nothing runs in a finished run (a pending
# approval or question of a failed run still waits in the inbox, so those stay open).
ENDS_WITH_RUN = ("attempt", "tool")


def ended_with_run(span: Span, finished_at: float) -> Span:
    """A tool call (or attempt) the run never finished: its bar ends where the run did and
    says so ("unfinished"), not "running" up to now with an open end."""
    if span.end is not None or span.lane not in ENDS_WITH_RUN:
        return span
    detail = {**span.detail, "status": "unfinished", "was": span.status}
    return span.model_copy(update={"status": "unfinished", "end": finished_at, "detail": detail})


def _run_rows(conn: Any, table: Any, run_id: str, *order: str) -> Any:
    """The rows of one run in a table, ordered by the named columns."""
    return conn.execute(
        select(table).where(table.c.run_id == run_id).order_by(*(table.c[name] for name in order))
    )


def _attempt_spans(conn: Any, run_id: str) -> list[Span]:
    rows = _run_rows(conn, s.attempts, run_id, "number")
    return [
        Span(
            lane="attempt",
            id=f"{run_id}#{r.number}",
            label=f"attempt {r.number}",
            status=r.status,
            start=r.started_at,
            end=r.finished_at,
            detail={"attempt": r.number, "status": r.status, "error": r.error},
        )
        for r in rows
    ]


def _tool_spans(conn: Any, run_id: str) -> list[Span]:
    rows = _run_rows(conn, s.tool_calls, run_id, "created_at", "id")
    open_ = ("running", "pending")
    return [
        Span(
            lane="tool",
            id=r.id,
            label=r.tool,
            status=r.status,
            start=r.created_at,
            end=None if r.status in open_ else r.updated_at,
            detail={
                "tool": r.tool,
                "safety_class": r.safety_class,
                "status": r.status,
                "attempt": r.attempt,
                "error": r.error,
            },
        )
        for r in rows
    ]


def _approval_spans(conn: Any, run_id: str) -> list[Span]:
    rows = _run_rows(conn, s.approvals, run_id, "created_at", "id")
    return [
        Span(
            lane="approval",
            id=r.id,
            label=r.action_name,
            status=r.status,
            start=r.created_at,
            end=r.decided_at if r.status != "pending" else None,
            detail={
                "action": r.action_name,
                "safety_class": r.safety_class,
                "status": r.status,
                "decided_by": r.decided_by,
                "reason": r.reason,
                "decision_reason": r.decision_reason,
            },
        )
        for r in rows
    ]


def _question_spans(conn: Any, run_id: str) -> list[Span]:
    rows = _run_rows(conn, s.questions, run_id, "created_at", "id")
    open_ = ("requested", "presented")
    return [
        Span(
            lane="question",
            id=r.id,
            label=r.prompt[:120],
            status=r.status,
            start=r.created_at,
            end=None if r.status in open_ else (r.resolved_at or r.created_at),
            detail={
                "kind": r.kind,
                "status": r.status,
                "resolved_by": r.resolved_by,
                "prompt": r.prompt[:500],
            },
        )
        for r in rows
    ]


def _effect_spans(conn: Any, run_id: str) -> list[Span]:
    rows = _run_rows(conn, s.effects, run_id, "created_at", "key")
    final = ("committed", "failed")
    return [
        Span(
            lane="effect",
            id=r.key,
            label=r.tool,
            status=r.status,
            start=r.created_at,
            end=r.updated_at if r.status in final else None,
            detail={
                "key": r.key,
                "tool": r.tool,
                "status": r.status,
                "safety_class": r.safety_class,
                "error": r.error,
                "ambiguous_reason": r.ambiguous_reason,
                "resolved_by": r.resolved_by,
                "result": loads(r.result) if r.result else None,
            },
        )
        for r in rows
    ]


# ---------------------------------------------------------------- integrity

_EVENT_WHERE = re.compile(r"event #(\d+)")


def chain_status(j: Journal, run_id: str) -> ChainStatus:
    """Recompute the run's event chain; name the first broken link by sequence."""
    from .verify import verify_run

    report = verify_run(j, run_id)
    problem = report.first_problem
    broken = None
    if problem is not None:
        match = _EVENT_WHERE.search(problem.where)
        broken = int(match.group(1)) if match else report.checked_events + 1
    last = (
        j.read(
            lambda c: c.execute(
                select(s.runs.c.last_sequence).where(s.runs.c.id == run_id)
            ).scalar()
        )
        or 0
    )
    return ChainStatus(
        ok=report.ok,
        checked_events=report.checked_events,
        last_sequence=int(last),
        broken_sequence=broken,
        problem=problem,
        missing_triggers=sorted(j.missing_triggers()),
    )


def verify_audit(j: Journal) -> VerifyReport:
    """The audit chain alone (and the evidence triggers), without every run's chain."""
    from .verify import _verify_audit

    problems = [
        VerifyProblem(
            what="trigger missing", where=name, detail="evidence rows are no longer protected"
        )
        for name in sorted(j.missing_triggers())
    ]
    checked = _verify_audit(j, problems)
    return VerifyReport(
        ok=not problems, checked_runs=0, checked_events=0, checked_audit=checked, problems=problems
    )


# ---------------------------------------------------------------- audit


def list_audit(
    j: Journal,
    *,
    before: int | None = None,
    limit: int = 200,
    actor: str | None = None,
    entity_kind: str | None = None,
    run_id: str | None = None,
    action_prefix: str | None = None,
    text: str | None = None,
    since: float | None = None,
    until: float | None = None,
    source: str | None = None,
) -> Page[AuditEntry]:
    """``j.audit.list`` (kept for callers of the timeline module)."""
    return j.audit.list(
        before=before,
        limit=limit,
        actor=actor,
        entity_kind=entity_kind,
        run_id=run_id,
        action_prefix=action_prefix,
        text=text,
        since=since,
        until=until,
        source=source,
    )


def audit_facets(j: Journal) -> dict[str, list[str]]:
    """Distinct actors, entity kinds and decision sources (the filter menus)."""
    a = s.audit.c

    def q(conn: Any) -> dict[str, list[str]]:
        return {
            "actor": list(conn.execute(select(a.actor).distinct().order_by(a.actor)).scalars()),
            "entity_kind": list(
                conn.execute(select(a.entity_kind).distinct().order_by(a.entity_kind)).scalars()
            ),
            "source": decision_sources(conn),
        }

    return j.read(q)


__all__ = [
    "ChainStatus",
    "RunQuery",
    "RunTimeline",
    "Span",
    "audit_facets",
    "chain_status",
    "child_runs",
    "event_density",
    "event_sequences",
    "event_type_counts",
    "find_event",
    "list_audit",
    "list_runs",
    "memory_changes",
    "open_items",
    "run_decisions",
    "sequence_at",
    "timeline",
    "verify_audit",
]
