"""The overview: a few aggregate facts about a journal, read in one snapshot.

Everything is counted in SQL (grouped, bucketed with CASE) over indexed columns; no event
row is read, so the cost follows the number of approvals, questions and runs in the window,
not the size of the journal. The desk's Overview page draws these as charts.

- ``pending``: what waits for a person now (as the inbox lists it: snoozed items left out, by
  kind and by age bucket of ``created_at``; ``age_window`` gives a bucket's times).
- ``per_hour``: decisions in each of the last ``hours`` hours: by a person, by a rule,
  by expiry (approvals), and answers (questions).
- ``by_agent`` / ``by_tool``: manual approval decisions in the window: how many, and the
  mean and longest time from request to decision.
- ``runs_per_hour``: runs started in each of the last ``hours`` hours, by how they stand.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float, and_, case, cast, func, literal, or_, select

from proctor.core.models import Frozen
from proctor.core.storage import schema as s
from proctor.core.storage.sql import whole
from proctor.core.storage.store import Store

AGE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<5m", 300),
    ("5–30m", 1800),
    ("30m–2h", 7200),
    ("2–8h", 28_800),
    (">8h", float("inf")),
)
PENDING_KINDS = ("approval", "question", "conflict", "effect")
HOUR_SERIES = ("manual", "rule", "expired", "answer")
RUN_SERIES = ("active", "completed", "failed", "cancelled")
RUN_STATUS_SERIES = {"completed": "completed", "failed": "failed", "cancelled": "cancelled"}
TOP = 8


def age_window(index: int, now: float) -> tuple[float | None, float]:
    """The times of age bucket ``index`` as counted at ``now``: created after the first
    (None: any time before) and at or before the second (an ``InboxFilter``'s
    ``created_after`` and ``created_until``: the inbox then lists exactly that bar)."""
    youngest = AGE_BUCKETS[index - 1][1] if index > 0 else 0.0
    oldest = AGE_BUCKETS[index][1]
    return (None if oldest == float("inf") else now - oldest), now - youngest


class Bucket(Frozen):
    """One bar: a label and a count per series."""

    label: str
    counts: dict[str, int]
    start: float | None = None  # the bucket's start time (hour buckets)


class DecisionTime(Frozen):
    """Manual decisions for one agent or tool: how many, mean and longest wait (seconds)."""

    name: str
    decisions: int
    mean_s: float
    max_s: float


class OverviewFacts(Frozen):
    now: float
    hours: int
    project: str | None = None
    agent: str | None = None
    pending: list[Bucket]
    per_hour: list[Bucket]
    by_agent: list[DecisionTime]
    by_tool: list[DecisionTime]
    runs_per_hour: list[Bucket]
    automatic: int  # approvals decided by a rule in the window
    manual: int  # approvals decided by a person in the window
    projects: list[str]
    agents: list[str]


class Overview:
    def __init__(self, store: Store) -> None:
        self.j = store

    def facts(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        hours: int = 24,
        now: float | None = None,
    ) -> OverviewFacts:
        """Every figure of the overview, from one read transaction."""
        at = self.j.clock() if now is None else now
        query = Query(project, agent, hours, at)
        return self.j.read(query.read)


class Query:
    """The overview's statements for one filter and window."""

    def __init__(self, project: str | None, agent: str | None, hours: int, now: float) -> None:
        self.project, self.agent, self.hours, self.now = project, agent, max(1, hours), now
        self.since = now - self.hours * 3600

    def read(self, conn: Any) -> OverviewFacts:
        manual, automatic = self._rule_split(conn)
        return OverviewFacts(
            now=self.now,
            hours=self.hours,
            project=self.project,
            agent=self.agent,
            pending=self._pending(conn),
            per_hour=self._per_hour(conn),
            by_agent=self._decision_times(conn, s.approvals.c.agent),
            by_tool=self._decision_times(conn, s.approvals.c.action_name),
            runs_per_hour=self._runs_per_hour(conn),
            automatic=automatic,
            manual=manual,
            projects=self._distinct(conn, s.runs.c.project),
            agents=self._distinct(conn, s.runs.c.agent),
        )

    # ------------------------------------------------------------ filters
    def _scoped(self, stmt: Any, table: Any) -> Any:
        """``stmt`` over ``table`` limited to the chosen project and agent."""
        if self.project is not None:
            stmt = stmt.where(
                table.c.run_id.in_(select(s.runs.c.id).where(s.runs.c.project == self.project))
            )
        if self.agent is not None:
            agent_col = table.c.agent if "agent" in table.c else None
            if agent_col is not None:
                stmt = stmt.where(agent_col == self.agent)
            else:
                stmt = stmt.where(
                    table.c.run_id.in_(select(s.runs.c.id).where(s.runs.c.agent == self.agent))
                )
        return stmt

    # ------------------------------------------------------------ pending by age
    def _age_bucket(self, created: Any) -> Any:
        age = literal(self.now) - created
        whens = [(age < limit, index) for index, (_label, limit) in enumerate(AGE_BUCKETS[:-1])]
        return case(*whens, else_=len(AGE_BUCKETS) - 1)

    def _pending(self, conn: Any) -> list[Bucket]:
        counts = {i: dict.fromkeys(PENDING_KINDS, 0) for i in range(len(AGE_BUCKETS))}
        sources = (
            ("approval", s.approvals, s.approvals.c.status == "pending", s.approvals.c.created_at),
            (
                "question",
                s.questions,
                s.questions.c.status.in_(("requested", "presented")),
                s.questions.c.created_at,
            ),
            ("conflict", s.conflicts, s.conflicts.c.status == "pending", s.conflicts.c.created_at),
            ("effect", s.effects, s.effects.c.status == "ambiguous", s.effects.c.created_at),
        )
        for kind, table, open_now, created in sources:  # counted as the inbox lists them:
            bucket = self._age_bucket(created).label("bucket")  # by created_at, not snoozed
            awake = or_(table.c.snoozed_until.is_(None), table.c.snoozed_until <= self.now)
            stmt = self._scoped(select(bucket, func.count()).where(open_now, awake), table)
            for index, n in conn.execute(stmt.group_by(bucket)):
                counts[int(index)][kind] = int(n)
        return [
            Bucket(label=label, counts=counts[i]) for i, (label, _limit) in enumerate(AGE_BUCKETS)
        ]

    # ------------------------------------------------------------ per hour
    def _hour(self, at: Any) -> Any:
        """The hour bucket (0 = the oldest) of a time column."""
        return whole(cast(at - literal(self.since), Float) / 3600.0).label("hour")

    def _per_hour(self, conn: Any) -> list[Bucket]:
        rows = {h: dict.fromkeys(HOUR_SERIES, 0) for h in range(self.hours)}
        a = s.approvals.c
        series = case(
            (a.status == "expired", "expired"), (a.rule_id.is_not(None), "rule"), else_="manual"
        ).label("series")
        hour = self._hour(a.decided_at)
        stmt = self._scoped(
            select(hour, series, func.count()).where(
                a.decided_at >= self.since, a.decided_at <= self.now
            ),
            s.approvals,
        )
        for h, name, n in conn.execute(stmt.group_by(hour, series)):
            rows[self._index(h)][name] += int(n)
        i = s.questions.c
        ihour = self._hour(i.resolved_at)
        stmt = self._scoped(
            select(ihour, func.count()).where(
                i.resolved_at >= self.since, i.resolved_at <= self.now, i.status == "resolved"
            ),
            s.questions,
        )
        for h, n in conn.execute(stmt.group_by(ihour)):
            rows[self._index(h)]["answer"] += int(n)
        return self._hour_buckets(rows)

    def _index(self, hour: Any) -> int:
        """The bucket of an hour number: the window's last instant (``now``) is in the last."""
        return min(max(int(hour), 0), self.hours - 1)

    def _hour_buckets(self, rows: dict[int, dict[str, int]]) -> list[Bucket]:
        return [
            Bucket(label=f"-{self.hours - h}h", counts=rows[h], start=self.since + h * 3600)
            for h in range(self.hours)
        ]

    def _runs_per_hour(self, conn: Any) -> list[Bucket]:
        rows = {h: dict.fromkeys(RUN_SERIES, 0) for h in range(self.hours)}
        r = s.runs.c
        hour = self._hour(r.created_at)
        stmt = select(hour, r.status, func.count()).where(
            r.created_at >= self.since, r.created_at <= self.now
        )
        if self.project is not None:
            stmt = stmt.where(r.project == self.project)
        if self.agent is not None:
            stmt = stmt.where(r.agent == self.agent)
        for h, status, n in conn.execute(stmt.group_by(hour, r.status)):
            rows[self._index(h)][RUN_STATUS_SERIES.get(status, "active")] += int(n)
        return self._hour_buckets(rows)

    # ------------------------------------------------------------ time to decision
    def _manual_decided(self) -> Any:
        a = s.approvals.c
        return and_(
            a.decided_at >= self.since,
            a.decided_at <= self.now,
            a.rule_id.is_(None),
            a.status.in_(("approved", "denied")),
        )

    def _decision_times(self, conn: Any, key: Any) -> list[DecisionTime]:
        a = s.approvals.c
        wait = a.decided_at - a.created_at
        n = func.count().label("n")
        stmt = self._scoped(
            select(key, n, func.avg(wait), func.max(wait)).where(self._manual_decided()),
            s.approvals,
        )
        stmt = stmt.group_by(key).order_by(n.desc(), key).limit(TOP)
        return [
            DecisionTime(
                name=str(name),
                decisions=int(count),
                mean_s=float(mean or 0),
                max_s=float(longest or 0),
            )
            for name, count, mean, longest in conn.execute(stmt)
        ]

    def _rule_split(self, conn: Any) -> tuple[int, int]:
        a = s.approvals.c
        by_rule = func.sum(case((a.rule_id.is_not(None), 1), else_=0))
        by_person = func.sum(case((a.rule_id.is_(None), 1), else_=0))
        stmt = self._scoped(
            select(by_person, by_rule).where(
                a.decided_at >= self.since,
                a.decided_at <= self.now,
                a.status.in_(("approved", "denied")),
            ),
            s.approvals,
        )
        manual, automatic = conn.execute(stmt).one()
        return int(manual or 0), int(automatic or 0)

    @staticmethod
    def _distinct(conn: Any, column: Any) -> list[str]:
        """The values to filter by (runs' indexes make this a short index walk)."""
        stmt = select(column).distinct().order_by(column).limit(200)
        return [str(v) for (v,) in conn.execute(stmt)]
