"""The audit log (hash-chained, keyset-paged) and the change feed views refresh from."""

from __future__ import annotations

from proctor.core import canonical_json
from proctor.core.kernel.canonical import chain_digest

from .helpers import ACTION


def _operator_actions(agent, operator, run, n=3):
    ids = []
    for i in range(n):
        approval = agent.approvals.request(run.id, {**ACTION, "n": i}, reason="r")
        operator.approvals.decide(
            approval.id, i % 2 == 0, expected_version=1, reason=None if i % 2 == 0 else "no"
        )
        ids.append(approval.id)
    return ids


def test_audit_rows_form_one_hash_chain(agent, operator, run):
    _operator_actions(agent, operator, run, n=4)
    agent.runs.complete(run.id)
    rows = list(reversed(operator.audit.list(limit=100).items))
    assert [r.sequence for r in rows] == list(range(1, len(rows) + 1))
    prev = "0" * 64
    for row in rows:
        assert row.prev_digest == prev
        body = {
            "sequence": row.sequence,
            "id": row.id,
            "actor": row.actor,
            "action": row.action,
            "entity_kind": row.entity_kind,
            "entity_id": row.entity_id,
            "run_id": row.run_id,
            "before": canonical_json(row.before),
            "after": canonical_json(row.after),
            "reason": row.reason,
            "created_at": row.created_at,
        }
        assert row.digest == chain_digest(prev, body)
        prev = row.digest
    assert operator.audit.count() == len(rows)


def test_audit_list_pages_and_filters(agent, operator, run, start_run):
    ids = _operator_actions(agent, operator, run, n=5)
    other = start_run()
    operator.runs.request_cancel(other.id, "stop", expected_version=1)
    seen, cursor = [], None
    while True:
        page = operator.audit.list(limit=2, before=int(cursor) if cursor else None)
        seen += [r.sequence for r in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == list(range(6, 0, -1))
    assert {r.entity_id for r in operator.audit.list(entity_kind="approval").items} == set(ids)
    assert [r.action for r in operator.audit.list(run_id=other.id).items] == [
        "run.cancel_requested"
    ]
    denied = operator.audit.list(action_prefix="approval.denied").items
    assert {r.entity_id for r in denied} == {ids[1], ids[3]}
    assert len(operator.audit.list(actor="operator:alice").items) == 6
    assert operator.audit.list(actor="operator:nobody").items == []


def test_change_feed_names_what_changed(agent, operator, run):
    approval = agent.approvals.request(run.id, ACTION, reason="r")
    mark = operator.changes.latest()
    operator.approvals.decide(approval.id, True, expected_version=1)
    changes = operator.changes.since(mark)
    assert changes.since == mark and changes.until == operator.changes.latest() > mark
    # the decision moved the run's status: its 'run' row says so, no 'event' row beside it
    assert changes.kinds() == {"approval", "decision", "audit", "run"}
    assert changes.ids("approval") == {approval.id}
    assert changes.run_ids() == {run.id}
    assert operator.changes.since(changes.until).changes == []
    assert [c.seq for c in changes.changes] == sorted(c.seq for c in changes.changes)


def test_change_feed_is_monotone_across_journals_and_limited(agent, operator, run):
    for i in range(5):
        (agent if i % 2 else operator).runs.append_event(run.id, "tick", {"i": i})
    feed = operator.changes.since(0)
    seqs = [c.seq for c in feed.changes]
    assert seqs == sorted(set(seqs))
    first = operator.changes.since(0, limit=3)
    assert len(first.changes) == 3 and first.until == first.changes[-1].seq
    rest = operator.changes.since(first.until)
    assert [c.seq for c in first.changes + rest.changes] == seqs


def test_data_version_moves_only_when_someone_commits(agent, operator, run):
    start = operator.changes.data_version()
    operator.runs.list()
    assert operator.changes.data_version() == start
    agent.runs.append_event(run.id, "tick", {})
    moved = operator.changes.data_version()
    assert moved != start
    assert operator.changes.data_version() == moved


def test_audit_entries_say_where_their_decision_was_made(agent, operator, run, clock):
    from proctor.core.audit import timeline as tl
    from proctor.core.audit.verify import verify

    by_mcp = agent.approvals.request(run.id, {**ACTION, "n": 1}, reason="r")
    operator.approvals.decide(by_mcp.id, True, expected_version=1, source="mcp")
    at_desk = agent.approvals.request(run.id, {**ACTION, "n": 2}, reason="r")
    operator.approvals.decide(at_desk.id, False, expected_version=1, reason="no")
    lapsing = agent.approvals.request(run.id, {**ACTION, "n": 3}, reason="r", expires_in=5)
    clock.advance(10)
    assert operator.approvals.expire_due() == 1
    operator.runs.request_cancel(run.id, "stop", expected_version=operator.runs.get(run.id).version)
    entries = {
        e.entity_id if e.entity_kind == "approval" else e.action: e
        for e in tl.list_audit(operator).items
    }
    assert entries[by_mcp.id].source == "mcp" and entries[at_desk.id].source == "desk"
    assert entries[lapsing.id].action == "approval.expired"
    assert entries[lapsing.id].source == "expiry"
    assert entries["run.cancel_requested"].source == "desk"  # its decision row's source
    only_mcp = tl.list_audit(operator, source="mcp").items
    assert [e.entity_id for e in only_mcp] == [by_mcp.id]
    assert [e.action for e in operator.audit.list(source="desk").items] == [
        "run.cancel_requested",
        "approval.denied",
    ]
    assert tl.audit_facets(operator)["source"] == ["desk", "expiry", "mcp"]
    assert verify(operator).ok  # the source is read beside the entry, not written into it


def test_every_effect_write_is_in_the_change_feed(agent, operator, run):
    """The Effects page refreshes from the feed alone: a new reservation (in a run or none),
    its start and its outcome each name the effect."""
    for run_id, key in ((run.id, "fx-in-run"), (None, "fx-alone")):
        mark = operator.changes.latest()
        agent.effects.reserve(key, tool="email.send", action={"to": "a@example.org"}, run_id=run_id)
        assert key in operator.changes.since(mark).ids("effect"), run_id
        mark = operator.changes.latest()
        agent.effects.begin(key)
        agent.effects.commit(key, {"sent": True})
        assert key in operator.changes.since(mark).ids("effect")


def test_change_kinds_are_one_enum(agent, operator, run):
    """Every row the feed hands out names its kind as a ChangeKind (one spelling, in
    core/models.py); a kind outside it is refused rather than passed along to the views."""
    import pytest
    from pydantic import ValidationError

    from proctor.core.models import Change, ChangeKind

    _operator_actions(agent, operator, run, n=1)
    cs = operator.changes.since(0)
    assert cs.changes and all(type(c.entity_kind) is ChangeKind for c in cs.changes)
    assert {ChangeKind.APPROVAL, ChangeKind.AUDIT, ChangeKind.RUN} <= cs.kinds()
    with pytest.raises(ValidationError):
        Change(seq=1, entity_kind="aproval", entity_id="apr_1", run_id=None, created_at=0.0)


def test_a_closed_journals_wait_returns_at_once_and_opens_nothing(agent, operator, run):
    """The desk's listener thread may call ``changes.wait`` after its journal was closed:
    it must not build a new probe / LISTEN connection on the closed journal (leaked)."""
    changes = operator.changes
    changes.wait(0.01)  # the probe (file) or the listener (server) is open now
    operator.reconnect()  # a reconnect only drops the connections: wait opens them again
    changes.wait(0.01)
    assert not changes.closed
    assert changes._probe is not None or changes._listener is not None
    listener = changes._listener
    operator.close()
    agent.runs.append_event(run.id, "tick", {})  # a write the closed journal must not wait for
    assert changes.closed
    assert changes.wait(0.1) is False
    assert changes._probe is None and changes._listener is None
    if listener is not None:  # a thread still holding the old listener connects no more
        assert listener.wait(0.1) is False
        assert listener._conn is None
