"""The inbox's rows: one SELECT per kind of waiting item (the parts of the inbox's UNION),
and the InboxItem each row becomes. Shared by the inbox and a run's open items."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, case, cast, func, literal, select

from proctor.core.kernel.origin import from_text as origin_from_text
from proctor.core.models import InboxItem, InboxKind
from proctor.core.storage import schema as s
from proctor.core.storage.items import OPEN_QUESTION

SUMMARY_LEN = 240

TABLE_OF = {
    InboxKind.APPROVAL: (s.approvals, s.approvals.c.id),
    InboxKind.QUESTION: (s.questions, s.questions.c.id),
    InboxKind.CONFLICT: (s.conflicts, s.conflicts.c.id),
    InboxKind.EFFECT: (s.effects, s.effects.c.key),
}


def _approvals() -> Any:
    a, r = s.approvals.c, s.runs.c
    return (
        select(
            literal("approval").label("kind"),
            a.id.label("id"),
            a.run_id.label("run_id"),
            r.agent.label("agent"),
            r.project.label("project"),
            r.space.label("space"),
            r.title.label("run_title"),
            a.action_name.label("s1"),
            a.reason.label("s2"),
            a.safety_class.label("safety_class"),
            a.created_at.label("created_at"),
            a.expires_at.label("expires_at"),
            a.snoozed_until.label("snoozed_until"),
            a.version.label("version"),
            a.origin.label("origin"),
            a.waiter_seen_at.label("waiter_seen_at"),
        )
        .join(s.runs, r.id == a.run_id)
        .where(a.status == "pending")
    )


COLUMNS = (
    "kind",
    "id",
    "run_id",
    "agent",
    "project",
    "space",
    "run_title",
    "s1",
    "s2",
    "safety_class",
    "created_at",
    "expires_at",
    "snoozed_until",
    "version",
    "origin",
    "waiter_seen_at",
)


def _labelled(*cols: Any) -> list[Any]:
    """Every part names its columns: a union takes its names from its first part, and a
    kind filter may leave any part first."""
    return [c.label(n) for c, n in zip(cols, COLUMNS, strict=True)]


def _questions() -> Any:
    i, r = s.questions.c, s.runs.c
    return (
        select(
            *_labelled(
                literal("question"),
                i.id,
                i.run_id,
                r.agent,
                r.project,
                r.space,
                r.title,
                i.kind,
                i.prompt,
                cast(literal(None), String),
                i.created_at,
                i.expires_at,
                i.snoozed_until,
                i.version,
                i.origin,
                i.waiter_seen_at,
            )
        )
        .join(s.runs, r.id == i.run_id)
        .where(i.status.in_(OPEN_QUESTION))
    )


def _memory() -> Any:
    m, e, r = s.conflicts.c, s.memory_entries.c, s.runs.c
    return (
        select(
            *_labelled(
                literal("conflict"),
                m.id,
                m.run_id,
                func.coalesce(r.agent, m.incoming_source),
                func.coalesce(r.project, e.scope_key),
                func.coalesce(r.space, e.scope),
                func.coalesce(r.title, ""),
                e.title,
                m.incoming_source,
                cast(literal(None), String),
                m.created_at,
                cast(literal(None), s.conflicts.c.created_at.type),
                m.snoozed_until,
                m.version,
                m.origin,
                cast(literal(None), s.questions.c.waiter_seen_at.type),
            )
        )
        .join(s.memory_entries, e.id == m.entry_id)
        .outerjoin(s.runs, r.id == m.run_id)
        .where(m.status == "pending")
    )


def _effects() -> Any:
    f, r = s.effects.c, s.runs.c
    return (
        select(
            *_labelled(
                literal("effect"),
                f.key,
                f.run_id,
                func.coalesce(r.agent, f.lease_owner, ""),
                func.coalesce(r.project, ""),
                func.coalesce(r.space, ""),
                func.coalesce(r.title, ""),
                f.tool,
                f.ambiguous_reason,
                f.safety_class,
                f.created_at,
                cast(literal(None), s.effects.c.created_at.type),
                f.snoozed_until,
                f.version,
                f.origin,
                cast(literal(None), s.questions.c.waiter_seen_at.type),
            )
        )
        .outerjoin(s.runs, r.id == f.run_id)
        .where(f.status == "ambiguous")
    )


PARTS = {
    InboxKind.APPROVAL: _approvals,
    InboxKind.QUESTION: _questions,
    InboxKind.CONFLICT: _memory,
    InboxKind.EFFECT: _effects,
}


# A row's summary by kind: (before s1, between s1 and s2, after s2). The list shows it and
# the search box matches it (summary_sql), so what a row says is what finds it.
SUMMARY_WORDS = {
    "approval": ("", ": ", ""),
    "question": ("[", "] ", ""),
    "conflict": ("conflict in “", "” from ", ""),
    "effect": ("", ": outcome unknown (", ")"),
}


def summary(kind: str, s1: str | None, s2: str | None) -> str:
    s1, s2 = (s1 or "").strip(), " ".join((s2 or "").split())
    before, between, after = SUMMARY_WORDS[kind]
    text = f"{before}{s1}{between}{s2}{after}"
    return text if len(text) <= SUMMARY_LEN else text[: SUMMARY_LEN - 1] + "…"


def summary_sql(c: Any) -> Any:
    """The row's summary (``summary``, uncut) as SQL over a part's columns."""

    def words(before: str, between: str, after: str) -> Any:
        s1, s2 = func.coalesce(c.s1, ""), func.coalesce(c.s2, "")
        return literal(before) + s1 + literal(between) + s2 + literal(after)

    return case(
        *((c.kind == kind, words(*parts)) for kind, parts in SUMMARY_WORDS.items()),
        else_=func.coalesce(c.s1, ""),
    )


def inbox_item(r: Any) -> InboxItem:
    """One row of a part (or of their union) as an inbox item."""
    return InboxItem(
        kind=InboxKind(r.kind),
        id=r.id,
        run_id=r.run_id,
        agent=r.agent or "",
        project=r.project or "",
        space=r.space or "",
        run_title=r.run_title or "",
        summary=summary(r.kind, r.s1, r.s2),
        safety_class=r.safety_class,
        created_at=r.created_at,
        expires_at=r.expires_at,
        snoozed_until=r.snoozed_until,
        version=r.version,
        origin=origin_from_text(r.origin),
        waiter_seen_at=r.waiter_seen_at,
    )
