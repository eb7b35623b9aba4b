"""Open items per run: what keeps a run in ``waiting_for_user``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from . import schema as s
from .models import RunStatus

OPEN_INTERACTION = ("requested", "presented")


def open_items_count(conn: Any, run_id: str) -> int:
    a = conn.execute(select(func.count()).select_from(s.approvals).where(
        s.approvals.c.run_id == run_id, s.approvals.c.status == "pending")).scalar_one()
    q = conn.execute(select(func.count()).select_from(s.interactions).where(
        s.interactions.c.run_id == run_id,
        s.interactions.c.status.in_(OPEN_INTERACTION))).scalar_one()
    return int(a) + int(q)


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
    a = (select(func.count()).where(s.approvals.c.run_id == s.runs.c.id,
                                    s.approvals.c.status == "pending")
         .correlate(s.runs).scalar_subquery())
    q = (select(func.count()).where(s.interactions.c.run_id == s.runs.c.id,
                                    s.interactions.c.status.in_(OPEN_INTERACTION))
         .correlate(s.runs).scalar_subquery())
    e = (select(func.count()).where(s.effects.c.run_id == s.runs.c.id,
                                    s.effects.c.status == "ambiguous")
         .correlate(s.runs).scalar_subquery())
    return (a + q + e).label("open_items")
