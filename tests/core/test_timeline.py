"""proctor.core.audit.timeline: the reads behind the Runs and Audit pages."""

from __future__ import annotations

import pytest

from proctor.core.audit import timeline as tl
from proctor.core.models import InboxKind

from .helpers import drop_immutability_triggers, raw


@pytest.fixture
def busy_run(agent, operator, clock):
    """One run with every kind of span and a few hundred events."""
    run = agent.runs.start("shop", "Fix the cart", agent="coder")
    for n in range(30):
        agent.runs.append_events(run.id, [("step", {"n": n * 10 + i}) for i in range(10)])
        clock.advance(1)
    call = agent.runs.record_tool_call(run.id, "fs.read", {"path": "cart.py"})
    agent.runs.finish_tool_call(call.id, "succeeded", result={"bytes": 10})
    agent.runs.record_tool_call(run.id, "shell", {"cmd": "make"})  # still running
    clock.advance(5)
    approval = agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship it")
    question = agent.questions.ask(run.id, "question", "Which region?")
    agent.runs.append_event(run.id, "note", {"text": "needle in the haystack"})
    return run, call, approval, question


def test_list_runs_sorts_filters_and_pages(agent, operator, clock):
    ids = []
    for n, title in enumerate(["b-run", "a-run", "c-run", "a-other"]):
        ids.append(agent.runs.start("p" if n % 2 else "q", title, agent=f"ag{n % 2}").id)
        clock.advance(1)
    q = tl.RunQuery(sort="title", descending=False)
    first = tl.list_runs(operator, q, limit=2)
    rest = tl.list_runs(operator, q, cursor=first.next_cursor, limit=2)
    assert [r.title for r in first.items + rest.items] == ["a-other", "a-run", "b-run", "c-run"]
    assert rest.next_cursor is None
    newest = tl.list_runs(operator, tl.RunQuery())
    assert [r.id for r in newest.items] == ids[::-1]
    assert [r.title for r in tl.list_runs(operator, tl.RunQuery(text="A-")).items] == [
        "a-other",
        "a-run",
    ]
    by_id = tl.list_runs(operator, tl.RunQuery(text=ids[2][-8:])).items
    assert [r.id for r in by_id] == [ids[2]]
    assert {r.project for r in tl.list_runs(operator, tl.RunQuery(project="p")).items} == {"p"}


def test_list_runs_with_open_items(busy_run, agent, operator):
    agent.runs.start("x", "idle run")
    rows = tl.list_runs(operator, tl.RunQuery(has_open_items=True)).items
    assert [r.id for r in rows] == [busy_run[0].id] and rows[0].open_items == 2


def test_event_reads(busy_run, operator, clock):
    run = busy_run[0]
    counts = tl.event_type_counts(operator, run.id)
    assert counts["step"] == 300 and counts["run.started"] == 1
    assert sum(counts.values()) == operator.runs.get(run.id).last_sequence
    seqs = tl.event_sequences(operator, run.id, ["tool.called", "note"])
    assert len(seqs) == 3 and seqs == sorted(seqs)
    assert tl.sequence_at(operator, run.id, 0) == 1
    assert (
        tl.sequence_at(operator, run.id, clock.t + 100) == operator.runs.get(run.id).last_sequence
    )
    middle = tl.sequence_at(operator, run.id, run.created_at + 10)
    event = operator.runs.events(run.id, after=middle - 1, limit=1)[0]
    before = operator.runs.events(run.id, after=middle - 2, limit=1)[0]
    assert event.created_at >= run.created_at + 10 > before.created_at


def test_find_event_forwards_backwards_and_by_type(busy_run, operator):
    run = busy_run[0]
    found = tl.find_event(operator, run.id, "HAYSTACK")
    assert operator.runs.events(run.id, after=found - 1, limit=1)[0].type == "note"
    assert tl.find_event(operator, run.id, "haystack", after=found) is None
    assert tl.find_event(operator, run.id, '"n":15}', after=1000, backwards=True) == 17
    assert tl.find_event(operator, run.id, "haystack", types=["step"]) is None
    assert tl.find_event(operator, run.id, "100%") is None  # LIKE wildcards are escaped


def test_event_density_counts_every_event(busy_run, operator):
    run = operator.runs.get(busy_run[0].id)
    buckets = tl.event_density(operator, run.id, run.created_at, run.updated_at, 7)
    assert len(buckets) == 7 and sum(buckets) == run.last_sequence


def test_open_items_are_the_runs_inbox_rows(busy_run, operator):
    run, _call, approval, question = busy_run
    items = tl.open_items(operator, run.id)
    assert [(i.kind, i.id) for i in items] == [
        (InboxKind.APPROVAL, approval.id),
        (InboxKind.QUESTION, question.id),
    ]
    assert all(i.run_id == run.id for i in items)


def test_timeline_spans(busy_run, operator):
    run, call, approval, question = busy_run
    spans = tl.timeline(operator, run.id)
    by_lane = {}
    for span in spans.spans:
        by_lane.setdefault(span.lane, []).append(span)
    tools = {s.label: s for s in by_lane["tool"]}
    assert set(tools) == {"fs.read", "shell"} and tools["fs.read"].id == call.id
    assert tools["fs.read"].end is not None and tools["shell"].end is None
    assert by_lane["approval"][0].id == approval.id and by_lane["approval"][0].end is None
    assert by_lane["question"][0].id == question.id
    assert by_lane["attempt"][0].label == "attempt 1" and spans.live
    assert spans.start == run.created_at <= spans.end


def test_children_decisions_and_memory_changes(agent, operator, clock):
    parent = agent.runs.start("p", "parent")
    kids = []
    for n in range(2):
        clock.advance(1)
        kids.append(agent.runs.start("p", f"child {n}", parent_run_id=parent.id))
    assert [r.id for r in tl.child_runs(operator, parent.id)] == [k.id for k in kids]
    entry = agent.memory.add("project", "p", "db", "db1", run_id=parent.id)
    clock.advance(1)
    agent.memory.replace(entry.id, "db2", expected_version=entry.version, run_id=parent.id)
    changes = tl.memory_changes(operator, parent.id)
    assert [m.after_content for m in changes] == ["db1", "db2"]
    approval = agent.approvals.request(parent.id, {"tool": "x"}, reason="r")
    operator.approvals.decide(approval.id, False, expected_version=1, reason="no")
    assert [d.target_id for d in tl.run_decisions(operator, parent.id)] == [approval.id]


def test_chain_status_names_the_tampered_sequence(busy_run, operator, journal_path):
    run = busy_run[0]
    assert tl.chain_status(operator, run.id).ok
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE events SET payload = '{\"n\":999}' WHERE run_id = ? AND sequence = 42",
            (run.id,),
        )
    status = tl.chain_status(operator, run.id)
    assert not status.ok and status.broken_sequence == 42
    assert status.checked_events == 41 and status.missing_triggers


def test_audit_search_filters_and_facets(busy_run, operator):
    run, _call, approval, _q = busy_run
    operator.approvals.decide(approval.id, True, expected_version=1, reason="looks fine")
    operator.runs.request_cancel(
        run.id, "taking too long", expected_version=operator.runs.get(run.id).version
    )
    assert [a.action for a in tl.list_audit(operator, text="TOO LONG").items] == [
        "run.cancel_requested"
    ]
    assert [a.action for a in tl.list_audit(operator, action_prefix="approval.").items] == [
        "approval.approved"
    ]
    page = tl.list_audit(operator, limit=1)
    older = tl.list_audit(operator, before=int(page.next_cursor), limit=5)
    assert older.items[0].sequence == page.items[0].sequence - 1
    facets = tl.audit_facets(operator)
    assert "operator:alice" in facets["actor"] and "run" in facets["entity_kind"]
    assert tl.verify_audit(operator).ok


def test_a_finished_runs_unfinished_tool_call_ends_with_it_and_says_so(
    busy_run, agent, operator, clock
):
    """A failed run whose tool call never finished: the bar ends where the run did, as
    "unfinished", not "running" with an open end up to now (which stretched a 219 ms run's
    timeline over hours in the demo)."""
    run = busy_run[0]
    clock.advance(3)
    agent.runs.fail(run.id, "tests failed")
    clock.advance(3600)
    line = tl.timeline(operator, run.id)
    finished = agent.runs.get(run.id).finished_at
    [shell] = [sp for sp in line.spans if sp.lane == "tool" and sp.label == "shell"]
    assert shell.end == finished and shell.status == "unfinished"
    assert shell.detail["was"] == "running"
    assert all(sp.end is not None for sp in line.spans)  # failing it closed its requests
    assert line.end == finished and not line.live
