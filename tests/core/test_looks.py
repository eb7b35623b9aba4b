"""Issue 37: an agent's look (its wait's ``waiter_seen_at`` stamp) writes no change row, so
the desk's feed read asks for the looks too: ``Changes.since(looks=True, looks_after=)``
returns the newest look and the requests looked at since ``looks_after``. Cheaply: each a
seek on the partial waiter index (0014u), never a scan of the table; on both stores."""

from __future__ import annotations

import pytest

from proctor.core.models import ChangeKind

from .helpers import ACTION, raw


def test_since_reports_the_looks_after_the_last_one_seen(agent, operator, run, clock):
    a = agent.approvals.request(run.id, ACTION, reason="tidy")
    q = agent.questions.ask(run.id, "question", "Which?")
    first = operator.changes.since(0, looks=True)
    assert (first.looked_at, first.looks) == (None, [])
    seq = first.until
    clock.advance(1)
    agent.approvals.wait(a.id, timeout=0)  # stamps at clock.t
    cs = operator.changes.since(seq, looks=True, looks_after=0.0)
    assert cs.changes == [] and cs.looked_at == clock.t  # no change row, but the look
    assert cs.looks == [(ChangeKind.APPROVAL, a.id)]
    seen = cs.looked_at
    assert operator.changes.since(seq, looks=True, looks_after=seen).looks == []
    clock.advance(10)
    agent.questions.wait(q.id, timeout=0)
    later = operator.changes.since(seq, looks=True, looks_after=seen)
    assert later.looked_at == clock.t and later.looks == [(ChangeKind.QUESTION, q.id)]
    plain = operator.changes.since(seq)
    assert (plain.looked_at, plain.looks) == (None, [])  # asked for only


@pytest.mark.sqlite_only
@pytest.mark.parametrize("table", ["approvals", "interactions"])
def test_the_look_probe_seeks_the_waiter_index(journal_path, table):
    with raw(journal_path) as conn:
        for sql in (
            f"SELECT max(waiter_seen_at) FROM {table} WHERE waiter_seen_at IS NOT NULL",
            f"SELECT id FROM {table} WHERE waiter_seen_at > 1 ORDER BY waiter_seen_at LIMIT 500",
        ):
            plan = " ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert f"ix_{table}_waiter" in plan and "SCAN " + table not in plan, plan


def test_the_data_version_moves_on_a_look_alone(agent, operator, run, clock):
    """The watcher's poll (on a server journal the newest change seq, as NOTIFY follows
    change rows) must move when an agent only looks: a look writes no change row."""
    a = agent.approvals.request(run.id, ACTION, reason="tidy")
    before, seq = operator.changes.data_version(), operator.changes.latest()
    clock.advance(1)
    agent.approvals.wait(a.id, timeout=0)  # a stamp, nothing else
    assert operator.changes.latest() == seq  # no change row...
    assert operator.changes.data_version() != before  # ...and yet the poll sees it
