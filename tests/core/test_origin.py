"""Where a request came from (``origin``, schema 0006o): recorded when an approval, question,
effect or memory conflict is filed, shown as the agent's word, never part of what the operator
approves, and fixed once filed: raw SQL cannot rewrite it."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core.kernel import origin as origins
from proctor.core.kernel import safe_text
from proctor.core.kernel.canonical import digest_of
from proctor.core.models import Origin
from proctor.core.storage import db as core_db
from proctor.core.storage.schema import ORIGIN_TABLES

from .helpers import drop_trigger, raw

ACTION = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}
MCP = Origin(
    runtime="mcp",
    process="refund_agent",
    pid=4242,
    host="host-a",
    tool="request_approval",
    client="refund-bot 1.0",
)


def file_all(agent, run) -> dict[str, tuple[str, str, str]]:
    """One row of each kind, each with an origin: table -> (key column, key, origin's tool)."""
    a = agent.approvals.request(run.id, ACTION, reason="charged twice", origin=MCP)
    q = agent.questions.ask(
        run.id, "question", "Which account?", origin=MCP.model_copy(update={"tool": "ask_human"})
    )
    e = agent.effects.reserve(
        "fx-1",
        tool="bank.refund",
        run_id=run.id,
        owner="w",
        origin={"runtime": "langgraph", "tool": "refund"},
    )
    entry = agent.memory.add("project", "alpha", "region", "eu-west")
    m = agent.memory.record_conflict(
        entry.id,
        "us-east",
        incoming_source="sync",
        run_id=run.id,
        origin={"runtime": "pydantic-ai"},
    )
    return {
        "approvals": ("id", a.id),
        "interactions": ("id", q.id),
        "effects": ("key", e.key),
        "memory_reconciliations": ("id", m.id),
    }


def test_each_kind_records_and_reads_back_its_origin(agent, operator, run):
    rows = file_all(agent, run)
    assert operator.approvals.get(rows["approvals"][1]).origin == MCP
    assert operator.questions.get(rows["interactions"][1]).origin.tool == "ask_human"
    assert operator.effects.get("fx-1").origin == Origin(runtime="langgraph", tool="refund")
    assert (
        operator.memory.conflict(rows["memory_reconciliations"][1]).origin.runtime == "pydantic-ai"
    )
    by_kind = {i.kind.value: i.origin for i in operator.inbox.list().items}
    assert by_kind["approval"] == MCP and by_kind["question"].runtime == "mcp"
    assert by_kind["conflict"].runtime == "pydantic-ai"


def test_an_agent_that_says_nothing_is_recorded_as_this_python_process(agent, run):
    a = agent.approvals.request(run.id, ACTION, reason="r")
    assert a.origin is not None and a.origin.runtime == "python"
    assert a.origin.pid is not None and a.origin.host


@pytest.mark.parametrize("table", ORIGIN_TABLES)
def test_raw_sql_cannot_rewrite_an_origin(agent, run, journal_path, table):
    key_column, key = file_all(agent, run)[table]
    forged = '{"runtime":"claude-code","process":"trusted-ops-console"}'
    with raw(journal_path) as conn:
        for value in (forged, None):
            with pytest.raises(sqlite3.IntegrityError, match="origin is immutable"):
                conn.execute(f"UPDATE {table} SET origin = ? WHERE {key_column} = ?", (value, key))
        # the row's other changes still go through the rest of the schema's rules
        stored = conn.execute(
            f"SELECT origin FROM {table} WHERE {key_column} = ?", (key,)
        ).fetchone()[0]
    assert stored is not None and "trusted-ops-console" not in stored


def test_a_journal_without_the_trigger_is_reported(journal_path, agent, run):
    file_all(agent, run)
    with raw(journal_path) as conn:
        drop_trigger(conn, "trg_approvals_origin", "approvals")
    assert "trg_approvals_origin" in agent.missing_triggers()


def test_the_origin_is_no_part_of_what_is_approved(agent, open_journal, run):
    """A retry from another process (another pid, another runtime's word) rejoins the same
    request; the action digest is the action's alone."""
    first = agent.approvals.request(run.id, ACTION, reason="r", request_key="k-1", origin=MCP)
    again = agent.approvals.request(
        run.id, ACTION, reason="r", request_key="k-1", origin=MCP.model_copy(update={"pid": 7})
    )
    assert again.id == first.id and again.origin == MCP  # the first filing's stands
    assert first.action_digest == digest_of(ACTION)


def test_hostile_or_oversized_origin_fields_are_cut_not_refused(agent, run):
    a = agent.approvals.request(
        run.id,
        ACTION,
        reason="r",
        origin={"runtime": "mcp\x1b[2J", "process": "p" * 5000, "pid": "not-a-pid", "host": None},
    )
    assert a.origin.runtime == "mcp\x1b[2J"  # stored as said; every display escapes it
    assert len(a.origin.process) == origins.TEXT_MAX and a.origin.pid is None
    shown = safe_text.visible(origins.describe(a.origin))
    assert "\x1b" not in shown and "mcp\\x1b[2J" in shown


def test_an_unreadable_stored_origin_does_not_hide_the_request(agent, operator, run, journal_path):
    """A row written with a broken origin by another writer still reads (as unreadable)."""
    a = agent.approvals.request(run.id, ACTION, reason="r", origin=MCP)
    with raw(journal_path) as conn:
        drop_trigger(conn, "trg_approvals_origin", "approvals")
        conn.execute("UPDATE approvals SET origin = '{not json' WHERE id = ?", (a.id,))
    assert operator.approvals.get(a.id).origin == origins.UNREADABLE
    assert [i.origin for i in operator.inbox.list().items] == [origins.UNREADABLE]


def test_origin_triggers_belong_to_0006o_only():
    assert core_db.origin_trigger_sql().keys() <= core_db.expected_trigger_names()
    assert not core_db.origin_trigger_sql().keys() & core_db.expected_trigger_names("0005b")
