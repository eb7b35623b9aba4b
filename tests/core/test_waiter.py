"""Issue 37, "is anyone waiting?": the requesting agent's ``wait`` stamps its request's
``waiter_seen_at`` (schema 0012w) at most every ``waiter.STAMP_S`` seconds, one UPDATE of
that one column (no version step, no change row, no event); a reader calls the request
waited for while the stamp is fresh. A real agent process stamps while it waits and stops
when it exits; on a team server an agent login stamps only what its own login filed, and
cannot change another column through the stamp."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import team_fixtures

from proctor.core import Actor
from proctor.core.kernel import waiting

from .helpers import delta, row_counts

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

ACTION = {"tool": "shell", "args": {"command": "make build"}}

WAITING_AGENT = """
import sys
from proctor.core import Actor, Journal
from proctor.core.kernel import waiting
from proctor.core.storage import waiter
waiter.STAMP_S = 0.1
with Journal.open(sys.argv[1], actor=Actor.agent("builder")) as j:
    waits = {"approval": j.approvals.wait, "question": j.questions.wait}[sys.argv[2]]
    waits(sys.argv[3], timeout=float(sys.argv[4]))
"""


def agent_process(path, kind: str, item_id: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WAITING_AGENT, str(path), kind, item_id, str(seconds)],
        stderr=subprocess.PIPE,
        text=True,
    )


def stamps_seen(read, process: subprocess.Popen) -> set[float]:
    seen: set[float] = set()
    while process.poll() is None:
        stamp = read().waiter_seen_at
        if stamp is not None:
            seen.add(stamp)
        time.sleep(0.05)
    return seen


@pytest.mark.parametrize("kind", ["approval", "question"])
def test_a_waiting_agent_process_stamps_and_stops_when_it_exits(
    agent, operator, run, journal_path, kind
):
    if kind == "approval":
        item = agent.approvals.request(run.id, ACTION, reason="build it")
        read = lambda: operator.approvals.get(item.id)  # noqa: E731
    else:
        item = agent.questions.ask(run.id, "question", "which DB?")
        read = lambda: operator.questions.get(item.id)  # noqa: E731
    assert read().waiter_seen_at is None
    assert waiting.waiter_words(None, time.time()) == "nobody waited"
    process = agent_process(journal_path, kind, item.id, 1.5)
    seen = stamps_seen(read, process)
    assert process.returncode == 0, process.stderr.read()
    assert len(seen) >= 3  # it stamped again and again while it waited
    last = read().waiter_seen_at
    assert last == max(seen) and abs(last - time.time()) < 5
    assert waiting.waiter_words(last, last + 1) == "agent waiting now"
    time.sleep(0.4)  # the process is gone: nothing stamps any more
    assert read().waiter_seen_at == last and read().version == item.version
    later = last + waiting.FRESH_S + 12 * 60
    assert not waiting.waiting_now(last, later)
    assert waiting.waiter_words(last, later) == "no agent has looked for 12m"


def test_a_stamp_is_one_column_and_at_most_one_per_interval(
    agent, operator, run, journal_path, clock
):
    item = agent.approvals.request(run.id, ACTION, reason="build it")
    before = row_counts(journal_path)
    agent.approvals.wait(item.id, timeout=0)
    first = operator.approvals.get(item.id)
    assert first.waiter_seen_at == clock() and first.version == item.version
    assert not any(delta(before, row_counts(journal_path)).values())  # no event, no change row
    assert operator.inbox.list().items[0].waiter_seen_at == clock()
    clock.advance(waiting.FRESH_S + 1)
    assert not waiting.waiting_now(first.waiter_seen_at, clock())
    decided = operator.approvals.decide(item.id, True, expected_version=item.version)
    agent.approvals.wait(item.id, timeout=0)  # a closed request is not stamped
    assert operator.approvals.get(item.id).waiter_seen_at == first.waiter_seen_at
    assert decided.status == "approved"


def test_a_read_only_journal_or_an_operator_waits_without_stamping(
    agent, operator, open_journal, run
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    reader = open_journal(Actor.agent("builder"), read_only=True)
    assert reader.questions.wait(item.id, timeout=0).waiter_seen_at is None
    assert operator.questions.wait(item.id, timeout=0).waiter_seen_at is None


# ---------------------------------------------------------------- a team server


def test_an_agent_login_stamps_only_its_own_requests_and_only_that_column(team):
    import psycopg

    with team.journal("agent_a", Actor.agent("builder")) as a:
        run = a.runs.start("proj", "team run")
        approval = a.approvals.request(run.id, ACTION, reason="build it")
        question = a.questions.ask(run.id, "question", "which DB?")
        a.approvals.wait(approval.id, timeout=0)
        a.questions.wait(question.id, timeout=0)
    with team.journal("agent_b", Actor.agent("builder")) as b:
        b.approvals.wait(approval.id, timeout=0)  # another login's request: left as it was
        b.questions.wait(question.id, timeout=0)
        stamped = (b.approvals.get(approval.id), b.questions.get(question.id))
    assert all(x.waiter_seen_at is not None for x in stamped)
    with team.owner() as conn:
        stamps = conn.execute(
            "SELECT waiter_seen_at FROM approvals UNION ALL SELECT waiter_seen_at FROM interactions"
        ).fetchall()
    assert sorted(stamps) == sorted((x.waiter_seen_at,) for x in stamped)
    with team.raw("agent_b") as conn:
        for table, item_id in (("approvals", approval.id), ("interactions", question.id)):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"UPDATE {table} SET waiter_seen_at = 99 WHERE id = %s", (item_id,))
    with team.raw("agent_a") as conn:
        for table, item_id in (("approvals", approval.id), ("interactions", question.id)):
            for sets in ("snoozed_until = 99", "status = 'approved', decided_by = 'x'"):
                with pytest.raises(psycopg.errors.Error):
                    conn.execute(
                        f"UPDATE {table} SET waiter_seen_at = 99, {sets} WHERE id = %s",
                        (item_id,),
                    )
            conn.execute(f"UPDATE {table} SET waiter_seen_at = 98 WHERE id = %s", (item_id,))
    with team.owner() as conn:
        rows = conn.execute(
            "SELECT status, snoozed_until, waiter_seen_at FROM approvals UNION ALL "
            "SELECT status, snoozed_until, waiter_seen_at FROM interactions"
        ).fetchall()
    assert sorted(rows) == [("pending", None, 98.0), ("requested", None, 98.0)]


def test_the_inbox_filters_the_requests_an_agent_waits_for(agent, operator, run, clock):
    from proctor.core.models import InboxFilter

    waited = agent.approvals.request(run.id, ACTION, reason="build it")
    agent.approvals.request(run.id, {"tool": "deploy"}, reason="nobody waits")
    agent.questions.ask(run.id, "question", "which DB?")
    agent.approvals.wait(waited.id, timeout=0)
    only = InboxFilter(waited=True)
    assert [i.id for i in operator.inbox.list(only).items] == [waited.id]
    assert operator.inbox.count(only) == 1 and operator.inbox.count() == 3
    clock.advance(waiting.FRESH_S + 1)
    assert operator.inbox.list(only).items == [] and operator.inbox.count(only) == 0
