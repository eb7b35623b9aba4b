"""Every Runs page sort reads an index in order (EXPLAIN QUERY PLAN: no TEMP B-TREE) and
keyset paging over it visits every run exactly once, ties included; open items are
counted for the page's rows only; "has open items" probes the (run_id, status) indexes."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import get_args

import pytest
from sqlalchemy.dialects import sqlite as sqlite_dialect

from proctor.core.audit import timeline as tl
from proctor.core.audit.timeline import RunQuery, _run_conditions
from proctor.core.runs.service import RUN_SORTS, run_page_statement, run_page_with_open_items
from proctor.core.storage.rows import encode_cursor

from .helpers import ACTION
from .test_journal_open import REAL_HEAD, index_names

SORTS = get_args(tl.RunSort)
SORT_INDEXES = {
    "ix_runs_updated",
    "ix_runs_title",
    "ix_runs_events",
    "ix_runs_status_created_id",
    "ix_runs_agent_created_id",
    "ix_runs_project_created_id",
}


def plan(path, stmt) -> list[str]:
    sql = str(
        stmt.compile(dialect=sqlite_dialect.dialect(), compile_kwargs={"literal_binds": True})
    )
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]


def a_cursor(sort: str) -> str:
    values = {
        "created_at": 1.0,
        "updated_at": 1.0,
        "title": "m",
        "last_sequence": 3,
        "status": "running",
        "agent": "b",
        "project": "p",
        "id": "run_x",
    }
    return encode_cursor(*(values[c.name] for c in RUN_SORTS[sort]))


@pytest.mark.sqlite_only
@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("paged", [False, True])
def test_every_sort_reads_its_index_in_order(journal_path, agent, sort, descending, paged):
    stmt = run_page_statement([], sort, descending, a_cursor(sort) if paged else None, 200)
    steps = plan(journal_path, stmt)
    assert len(steps) == 1 and "USING INDEX ix_runs_" in steps[0], steps
    assert not any("TEMP B-TREE" in step for step in steps), steps
    assert ("SEARCH" if paged else "SCAN") in steps[0]  # a range seek past the cursor


@pytest.mark.sqlite_only
@pytest.mark.parametrize("sort", SORTS)
def test_open_items_are_counted_after_the_limit(journal_path, agent, sort):
    """The page is read first (a co-routine, in index order, limited); the three counts
    run while scanning its rows, never inside the page's own scan."""
    page = run_page_statement([], sort, True, None, 200)
    steps = plan(journal_path, run_page_with_open_items(page))
    assert steps[0].startswith("CO-ROUTINE") and "USING INDEX ix_runs_" in steps[1], steps
    assert steps[2] == "SCAN page", steps
    counts = " | ".join(steps[3:])
    assert counts.count("CORRELATED SCALAR SUBQUERY") == 3
    for index in ("ix_approvals_run_status", "ix_interactions_run_status", "ix_effects_run_status"):
        assert f"INDEX {index} (run_id=? AND status=?)" in counts, counts
    assert not any("TEMP B-TREE" in step for step in steps), steps


@pytest.mark.sqlite_only
def test_has_open_items_probes_the_run_status_indexes(journal_path, agent):
    stmt = run_page_statement(
        _run_conditions(RunQuery(has_open_items=True)), "started", True, None, 200
    )
    text = " | ".join(plan(journal_path, stmt))
    for index in ("ix_approvals_run_status", "ix_interactions_run_status", "ix_effects_run_status"):
        assert f"USING INDEX {index} (run_id=? AND status=?)" in text, text
    assert "TEMP B-TREE" not in text and "USING INDEX ix_runs_created" in text


@pytest.fixture
def tied_runs(agent, clock):
    """24 runs with many ties: 3 start times, 2 titles, 3 event counts, 2 agents."""
    ids = []
    for i in range(24):
        if i % 8 == 0:
            clock.advance(10)
        run = agent.runs.start(f"proj{i % 2}", ["deploy", "audit"][i % 3 == 0], agent=f"bot{i % 2}")
        for _ in range(i % 3):
            agent.runs.append_event(run.id, "note", {"i": i})
        if i % 5 == 0:
            agent.runs.complete(run.id)
        ids.append(run.id)
    return ids


def sort_value(run, sort: str) -> tuple:
    return tuple(
        getattr(getattr(run, c.name), "value", getattr(run, c.name)) for c in RUN_SORTS[sort]
    )


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("descending", [True, False])
def test_keyset_paging_visits_every_run_once_in_order(operator, tied_runs, sort, descending):
    q = RunQuery(sort=sort, descending=descending)
    seen, cursor, pages = [], None, 0
    while True:
        page = tl.list_runs(operator, q, cursor=cursor, limit=5)
        seen.extend(page.items)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 5
    assert sorted(r.id for r in seen) == sorted(tied_runs)  # each exactly once
    keys = [sort_value(r, sort) for r in seen]
    assert keys == sorted(keys, reverse=descending)


def test_keyset_paging_with_a_multi_status_filter(operator, tied_runs):
    q = RunQuery(status=("running", "completed"), sort="title", descending=False)
    seen, cursor = [], None
    while True:
        page = tl.list_runs(operator, q, cursor=cursor, limit=3)
        seen.extend(r.id for r in page.items)
        if (cursor := page.next_cursor) is None:
            break
    assert sorted(seen) == sorted(tied_runs)


def test_a_cursor_of_another_sort_is_refused(operator, tied_runs):
    from proctor.core import errors

    cursor = tl.list_runs(operator, RunQuery(sort="status"), limit=2).next_cursor
    with pytest.raises(errors.ValidationError):
        tl.list_runs(operator, RunQuery(sort="title"), cursor=cursor)


def test_open_items_are_counted_for_the_page(agent, operator, tied_runs):
    waiting = tied_runs[1]
    agent.approvals.request(waiting, ACTION, reason="needs a person")
    agent.questions.ask(waiting, "question", "which one?")
    rows = tl.list_runs(operator, RunQuery(has_open_items=True)).items
    assert [r.id for r in rows] == [waiting] and rows[0].open_items == 2
    counted = {r.id: r.open_items for r in tl.list_runs(operator, RunQuery(), limit=100).items}
    assert counted[waiting] == rows[0].open_items
    assert all(n == 0 for rid, n in counted.items() if rid != waiting)
    assert operator.runs.get(waiting).open_items == rows[0].open_items


@pytest.mark.sqlite_only
def test_a_0002_journal_gets_the_sort_indexes(journal_path, run, downgrade):
    downgrade(journal_path, "0002")
    assert not SORT_INDEXES & index_names(journal_path)
    assert "ix_runs_status_created" in index_names(journal_path)
    from proctor.core import Actor, Journal

    with Journal.open(journal_path, actor=Actor.agent("a")) as j:
        assert j.schema_revision == REAL_HEAD
        assert [r.id for r in tl.list_runs(j, RunQuery(sort="title")).items] == [run.id]
    assert index_names(journal_path) >= SORT_INDEXES
    assert "ix_runs_status_created" not in index_names(journal_path)
