"""0008x (store issue 24): three indexes hold only the rows their reads ask for, and those
reads still seek them, with the statements and parameters the core sends: an undecided
approval is not in ``ix_approvals_action``, one that never expires not in
``ix_approvals_expiry``, a run without a parent not in ``ix_runs_parent``."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

import pytest
from sqlalchemy import event

from proctor.core import Actor, Journal
from proctor.core.models import RuleDraft

from .helpers import ACTION
from .test_journal_open import REAL_HEAD

NARROWED = {"ix_approvals_action": "decided_at IS NOT NULL",
            "ix_approvals_expiry": "expires_at IS NOT NULL",
            "ix_runs_parent": "parent_run_id IS NOT NULL"}


def entries(path, index: str) -> int:
    """The entries of ``index`` (its leaf cells, read with ``dbstat``)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = ? "
                            "AND pagetype = 'leaf'", (index,)).fetchone()[0]


def definitions(path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE name IN "
                                 f"({', '.join('?' * len(NARROWED))})", tuple(NARROWED)))


@contextlib.contextmanager
def sent(journal: Journal):
    """The statements (with their parameters) ``journal`` sends meanwhile."""
    seen: list[tuple[str, Any]] = []

    def note(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    engines = {journal._reader, journal._writer}
    for engine in engines:
        event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", note)


def plans(path, statements: list[tuple[str, Any]]) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [" | ".join(r[-1] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
                for sql, params in statements]


def seeks(path, statements: list[tuple[str, Any]], index: str) -> bool:
    return any(f"USING INDEX {index} (" in p for p in plans(path, statements))


@pytest.mark.sqlite_only
def test_an_undecided_unexpiring_approval_and_a_parentless_run_enter_none_of_them(
        journal_path, agent, operator, run):
    before = {name: entries(journal_path, name) for name in NARROWED}
    pending = agent.approvals.request(run.id, ACTION, reason="r")  # no expiry, undecided
    agent.runs.start("proj", "no parent")
    assert {name: entries(journal_path, name) for name in NARROWED} == before
    operator.approvals.decide(pending.id, True, expected_version=pending.version)
    agent.approvals.request(run.id, ACTION, reason="r", expires_in=60)
    agent.runs.start("proj", "child", parent_run_id=run.id)
    assert {name: entries(journal_path, name) - before[name] for name in NARROWED} == {
        "ix_approvals_action": 1, "ix_approvals_expiry": 1, "ix_runs_parent": 1}


@pytest.mark.sqlite_only
def test_the_reads_of_each_narrowed_index_still_seek_it(journal_path, agent, operator, clock,
                                                         run):
    decided = agent.approvals.request(run.id, ACTION, reason="r")
    operator.approvals.decide(decided.id, True, expected_version=decided.version)
    later = agent.approvals.request(run.id, ACTION, reason="r", expires_in=5)
    child = agent.runs.start("proj", "child", parent_run_id=run.id)
    with sent(operator) as similar:
        assert [a.id for a in operator.approvals.similar(later.id)] == [decided.id]
    assert seeks(journal_path, similar, "ix_approvals_action"), plans(journal_path, similar)
    draft = RuleDraft(effect="allow", action_pattern=ACTION["tool"], resource_pattern="*",
                      scope="project", project="proj")
    with sent(operator) as preview:
        found = operator.approvals.preview_rule(draft)
    assert [h.id for h in found.past] == [decided.id] and [h.id for h in found.pending] == [
        later.id]
    assert seeks(journal_path, preview, "ix_approvals_action"), plans(journal_path, preview)
    clock.advance(10)
    with sent(operator) as sweep:
        assert operator.approvals.expire_due() == 1
    assert seeks(journal_path, sweep, "ix_approvals_expiry"), plans(journal_path, sweep)
    with sent(operator) as facts:
        assert [c.id for c in operator.runs.facts(run.id).children] == [child.id]
    assert seeks(journal_path, facts, "ix_runs_parent"), plans(journal_path, facts)


@pytest.mark.sqlite_only
def test_a_0007j_journal_gets_the_narrowed_indexes_and_gives_them_back(journal_path, run,
                                                                       downgrade):
    downgrade(journal_path, "0007j")
    assert not any("WHERE" in sql for sql in definitions(journal_path).values())
    with Journal.open(journal_path, actor=Actor.agent("a")) as j:
        assert j.schema_revision == REAL_HEAD
    made = definitions(journal_path)
    assert set(made) == set(NARROWED)
    for name, where in NARROWED.items():
        assert made[name].endswith(f"WHERE {where}"), made[name]


def test_a_server_journal_has_the_same_narrowed_indexes(pg_url):
    from sqlalchemy import create_engine, text

    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            made = dict(conn.execute(text(
                "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:names)"),
                {"names": list(NARROWED)}).all())
    finally:
        engine.dispose()
    assert set(made) == set(NARROWED)
    for name, where in NARROWED.items():
        assert made[name].endswith(f"WHERE ({where})"), made[name]
