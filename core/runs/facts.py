"""A run's whole detail, read in one snapshot: the run and its parent and children,
attempts, tool calls, approvals, questions, decisions (with their signature states),
effects with their receipts, memory changes and the items waiting for a person. Each
entity's run-scoped read is defined once here; the services' ``for_run``-style reads and
the timeline's use the same functions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, union_all

from proctor.core.decisions.checks import SignatureState, decision_status
from proctor.core.inbox.rows import PARTS, inbox_item
from proctor.core.models import (
    Approval,
    Attempt,
    Decision,
    Effect,
    Frozen,
    InboxItem,
    MemoryMutation,
    Question,
    Receipt,
    Run,
    ToolCall,
)
from proctor.core.storage import schema as s
from proctor.core.storage.items import open_items_by_run
from proctor.core.storage.rows import (
    approval_select,
    by_id,
    fetch_prepared,
    question_select,
    to_models,
)

RUN_BY_ID = by_id(select(s.runs, open_items_by_run([])), s.runs.c.id)
MAX_EFFECTS = 1000  # what the desk's run detail lists of one run's effects


class RunFacts(Frozen):
    """Everything about one run except its events, as of one snapshot."""

    run: Run
    parent: Run | None
    children: list[Run]
    attempts: list[Attempt]
    tool_calls: list[ToolCall]
    approvals: list[Approval]
    questions: list[Question]
    decisions: list[Decision]
    effects: list[Effect]
    receipts: dict[str, list[Receipt]]  # effect key -> its receipts, oldest first
    memory: list[MemoryMutation]
    open_items: list[InboxItem]
    signatures: dict[str, SignatureState]  # decision id -> its signature state


def run_facts(conn: Any, run_id: str, trust: Any) -> RunFacts:
    """``run_id``'s detail read on ``conn`` (one read transaction: one snapshot)."""
    run = run_of(conn, run_id)
    decided = conn.execute(decisions_statement(run_id)).all()
    effects = effects_of(conn, run_id)
    return RunFacts(
        run=run,
        parent=run_of(conn, run.parent_run_id) if run.parent_run_id else None,
        children=children_of(conn, run_id),
        attempts=attempts_of(conn, run_id),
        tool_calls=tool_calls_of(conn, run_id),
        approvals=approvals_of(conn, run_id),
        questions=questions_of(conn, run_id),
        decisions=to_models(Decision, decided),
        effects=effects,
        receipts=receipts_of(conn, [e.key for e in effects]),
        memory=memory_changes_of(conn, run_id),
        open_items=open_items_of(conn, run_id),
        signatures={d.id: decision_status(conn, trust, d) for d in decided},
    )


def run_of(conn: Any, run_id: str) -> Run:
    return fetch_prepared(conn, Run, RUN_BY_ID, f"run {run_id}", key=run_id)


def children_of(conn: Any, run_id: str) -> list[Run]:
    stmt = (
        select(s.runs, open_items_by_run([]))
        .where(s.runs.c.parent_run_id == run_id)
        .order_by(s.runs.c.created_at, s.runs.c.id)
    )
    return to_models(Run, conn.execute(stmt))


def attempts_of(conn: Any, run_id: str) -> list[Attempt]:
    stmt = select(s.attempts).where(s.attempts.c.run_id == run_id).order_by(s.attempts.c.number)
    return to_models(Attempt, conn.execute(stmt))


def tool_calls_of(conn: Any, run_id: str) -> list[ToolCall]:
    stmt = (
        select(s.tool_calls)
        .where(s.tool_calls.c.run_id == run_id)
        .order_by(s.tool_calls.c.created_at, s.tool_calls.c.id)
    )
    return to_models(ToolCall, conn.execute(stmt))


def approvals_of(conn: Any, run_id: str) -> list[Approval]:
    stmt = (
        approval_select()
        .where(s.approvals.c.run_id == run_id)
        .order_by(s.approvals.c.created_at, s.approvals.c.id)
    )
    return to_models(Approval, conn.execute(stmt))


def questions_of(conn: Any, run_id: str) -> list[Question]:
    stmt = (
        question_select()
        .where(s.questions.c.run_id == run_id)
        .order_by(s.questions.c.created_at, s.questions.c.id)
    )
    return to_models(Question, conn.execute(stmt))


def decisions_statement(run_id: str) -> Any:
    return (
        select(s.decisions)
        .where(s.decisions.c.run_id == run_id)
        .order_by(s.decisions.c.created_at, s.decisions.c.id)
    )


def decisions_of(conn: Any, run_id: str) -> list[Decision]:
    return to_models(Decision, conn.execute(decisions_statement(run_id)))


def effects_of(conn: Any, run_id: str, limit: int = MAX_EFFECTS) -> list[Effect]:
    """The run's effects, oldest first (as ``effects.list(run_id=…, newest_first=False)``)."""
    e = s.effects.c
    stmt = select(s.effects).where(e.run_id == run_id).order_by(e.created_at, e.key).limit(limit)
    return to_models(Effect, conn.execute(stmt))


def receipts_of(conn: Any, keys: list[str]) -> dict[str, list[Receipt]]:
    """Each effect's receipts, oldest first (every key given has an entry)."""
    found: dict[str, list[Receipt]] = {k: [] for k in keys}
    if not keys:
        return found
    r = s.receipts.c
    stmt = select(s.receipts).where(r.effect_key.in_(keys)).order_by(r.created_at, r.id)
    for receipt in to_models(Receipt, conn.execute(stmt)):
        found[receipt.effect_key].append(receipt)
    return found


def memory_changes_of(conn: Any, run_id: str) -> list[MemoryMutation]:
    """Memory mutations made by (or for) the run, oldest first."""
    m = s.memory_mutations.c
    stmt = select(s.memory_mutations).where(m.run_id == run_id).order_by(m.created_at, m.id)
    return to_models(MemoryMutation, conn.execute(stmt))


RUN_COLUMN = {
    "approval": s.approvals.c.run_id,
    "question": s.questions.c.run_id,
    "conflict": s.conflicts.c.run_id,
    "effect": s.effects.c.run_id,
}


def open_items_of(conn: Any, run_id: str) -> list[InboxItem]:
    """The run's items waiting for a person (snoozed ones too), as inbox rows."""
    parts = [part().where(RUN_COLUMN[kind.value] == run_id) for kind, part in PARTS.items()]
    u = union_all(*parts).subquery("open_items")
    stmt = select(u).order_by(u.c.created_at, u.c.id)
    return [inbox_item(r) for r in conn.execute(stmt).all()]


__all__ = [
    "RunFacts",
    "approvals_of",
    "attempts_of",
    "children_of",
    "decisions_of",
    "effects_of",
    "memory_changes_of",
    "open_items_of",
    "questions_of",
    "receipts_of",
    "run_facts",
    "run_of",
    "tool_calls_of",
]
