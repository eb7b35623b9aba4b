"""Open items per run: what keeps a run in ``waiting_for_user``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, or_, select

from proctor.core.models import RunStatus

from . import schema as s
from .sql import Prepared

OPEN_QUESTION = ("requested", "presented")


def is_open_question(status: Any) -> Any:
    """``status IN OPEN_INTERACTION`` written as ORs: a fixed statement that can be prepared."""
    return or_(*(status == v for v in OPEN_QUESTION))


# Both counts in one statement (answered from the (run_id, status) indexes).
OPEN_ITEMS = Prepared(
    select(
        select(func.count())
        .where(s.approvals.c.run_id == bindparam("run_id"), s.approvals.c.status == "pending")
        .scalar_subquery()
        + select(func.count())
        .where(s.questions.c.run_id == bindparam("run_id"), is_open_question(s.questions.c.status))
        .scalar_subquery()
    )
)


def open_items_count(conn: Any, run_id: str) -> int:
    return int(OPEN_ITEMS.scalar(conn, run_id=run_id))


def status_when_opening(run: Any) -> RunStatus | None:
    """The run waits for a person once it has an open item."""
    if run.status in (RunStatus.RUNNING, RunStatus.PENDING):
        return RunStatus.WAITING_FOR_USER
    return None


def status_after_closing(conn: Any, run: Any) -> RunStatus | None:
    """Call after the item's own row is closed: the run runs again when nothing is left open."""
    if run.status == RunStatus.WAITING_FOR_USER and open_items_count(conn, run.id) == 0:
        return RunStatus.RUNNING
    return None


def open_items_by_run(run_ids: list[str]) -> Any:
    """A correlated count usable in run list queries."""
    a = (
        select(func.count())
        .where(s.approvals.c.run_id == s.runs.c.id, s.approvals.c.status == "pending")
        .correlate(s.runs)
        .scalar_subquery()
    )
    q = (
        select(func.count())
        .where(s.questions.c.run_id == s.runs.c.id, is_open_question(s.questions.c.status))
        .correlate(s.runs)
        .scalar_subquery()
    )
    e = (
        select(func.count())
        .where(s.effects.c.run_id == s.runs.c.id, s.effects.c.status == "ambiguous")
        .correlate(s.runs)
        .scalar_subquery()
    )
    return (a + q + e).label("open_items")
