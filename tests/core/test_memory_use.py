"""Memory use, incoming fields and change sources (issue 6 review): ``mark_used`` stamps
last use without a version or a mutation; the "used" sort pages by keyset on its own index;
a conflict keeps the incoming version's kind/priority/trust/sensitivity and taking it
applies them; each mutation names the run event it appended; a 0003 journal upgrades."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.memory.views import MemoryQuery, browse_statement

from .helpers import delta, row_counts, snapshot
from .test_journal_open import REAL_HEAD, index_names
from .test_run_sorts import plan


@pytest.fixture
def entries(agent, clock):
    made = []
    for n in range(7):
        clock.advance(1)
        made.append(agent.memory.add("project", "proj", f"t{n}", f"content {n}"))
    return made


# ---------------------------------------------------------------- mark_used


def test_mark_used_stamps_and_counts_without_a_change(agent, entries, clock, journal_path):
    first, second = entries[0], entries[1]
    assert (first.last_used_at, first.use_count) == (0.0, 0)
    before = row_counts(journal_path)
    now = clock.advance(60)
    assert agent.memory.mark_used([first.id, second.id, first.id]) == 2
    used = agent.memory.get(first.id)
    assert (used.last_used_at, used.use_count) == (now, 1)
    assert (used.version, used.updated_at) == (first.version, first.updated_at)
    assert delta(before, row_counts(journal_path)) == {"changes": 2}
    later = clock.advance(5)
    agent.memory.mark_used([first.id])
    again = agent.memory.get(first.id)
    assert (again.last_used_at, again.use_count) == (later, 2)
    assert agent.memory.get(entries[2].id).use_count == 0
    assert [m.operation for m in agent.memory.history(first.id)] == ["add"]


def test_mark_used_refuses_unknown_ids_whole(agent, entries, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.NotFound):
        agent.memory.mark_used([entries[0].id, "mem_missing"])
    assert snapshot(journal_path) == before
    assert agent.memory.mark_used([]) == 0
    assert snapshot(journal_path) == before


def test_a_use_does_not_make_an_edit_stale(agent, operator, entries):
    entry = entries[0]
    agent.memory.mark_used([entry.id])
    edited = operator.memory.replace(entry.id, "edited", expected_version=entry.version)
    assert edited.version == entry.version + 1 and edited.use_count == 1


# ---------------------------------------------------------------- "used" sort


def used_order(journal, descending: bool, limit: int) -> list[str]:
    seen, cursor = [], None
    while True:
        page = journal.memory.browse(
            MemoryQuery(sort="used", descending=descending), cursor=cursor, limit=limit
        )
        seen += [e.id for e in page.items]
        cursor = page.next_cursor
        if cursor is None:
            return seen


@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("limit", [1, 2, 3, 500])
def test_used_sort_pages_every_entry_once_in_order(agent, entries, clock, descending, limit):
    ids = [e.id for e in entries]
    clock.advance(10)
    agent.memory.mark_used([ids[4], ids[1]])  # a tie on last_used_at
    clock.advance(10)
    agent.memory.mark_used([ids[6]])
    rows = {e.id: e for e in agent.memory.browse(MemoryQuery(), limit=500).items}
    expected = sorted(ids, key=lambda i: (rows[i].last_used_at, i), reverse=descending)
    assert used_order(agent, descending, limit) == expected
    assert expected[0 if descending else -1] == ids[6]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("paged", [False, True])
def test_used_sort_reads_its_index_in_order(journal_path, descending, paged):
    from proctor.core.storage.rows import encode_cursor

    cursor = encode_cursor(5.0, "mem_x") if paged else None
    steps = plan(
        journal_path, browse_statement(MemoryQuery(sort="used", descending=descending), cursor, 200)
    )
    assert any("ix_memory_last_used" in s for s in steps), steps
    assert not any("TEMP B-TREE" in s for s in steps), steps


# ---------------------------------------------------------------- incoming fields


@pytest.fixture
def entry(agent):
    return agent.memory.add(
        "project", "proj", "DB host", "db1.internal", kind="fact", priority=1, sensitivity="normal"
    )


def test_conflict_keeps_the_incoming_fields(agent, entry):
    item = agent.memory.record_conflict(
        entry.id,
        "db9.internal",
        incoming_source="sync",
        incoming_kind="decision",
        incoming_priority=5,
        incoming_trust="user_confirmed",
        incoming_sensitivity="secret",
    )
    got = agent.memory.conflict(item.id)
    assert (
        got.incoming_kind,
        got.incoming_priority,
        got.incoming_trust,
        got.incoming_sensitivity,
    ) == ("decision", 5, "user_confirmed", "secret")
    other = agent.memory.add("project", "proj", "other", "db7.internal")
    bare = agent.memory.record_conflict(other.id, "db8.internal", incoming_source="sync")
    assert (
        bare.incoming_kind,
        bare.incoming_priority,
        bare.incoming_trust,
        bare.incoming_sensitivity,
    ) == (None, None, None, None)


@pytest.mark.parametrize(
    ("fields", "name"),
    [({"incoming_trust": "gospel"}, "incoming_trust"), ({"incoming_kind": " "}, "incoming_kind")],
)
def test_conflict_fields_are_validated(agent, entry, journal_path, fields, name):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        agent.memory.record_conflict(entry.id, "x", incoming_source="sync", **fields)
    assert info.value.field == name
    assert snapshot(journal_path) == before


def test_take_incoming_applies_its_fields_in_one_mutation(agent, operator, entry, journal_path):
    item = agent.memory.record_conflict(
        entry.id,
        "db1.internal",
        incoming_source="sync",
        incoming_kind="decision",
        incoming_priority=5,
        incoming_trust="user_confirmed",
        incoming_sensitivity="fact",
    )
    before = row_counts(journal_path)
    operator.memory.resolve(item.id, "accepted_incoming", expected_version=1, reason="ok")
    got = operator.memory.get(entry.id)
    assert (got.content, got.kind, got.priority, got.trust, got.sensitivity, got.confirmed) == (
        "db1.internal",
        "decision",
        5,
        "user_confirmed",
        "fact",
        True,
    )
    assert got.version == entry.version + 1
    assert delta(before, row_counts(journal_path))["memory_mutations"] == 1
    [audit] = operator.audit.for_entity(item.id)
    assert audit.after["fields"] == {
        "kind": "decision",
        "priority": 5,
        "trust": "user_confirmed",
        "sensitivity": "fact",
    }


def test_take_incoming_without_differences_writes_no_mutation(agent, operator, entry, journal_path):
    item = agent.memory.record_conflict(
        entry.id, "db1.internal", incoming_source="sync", incoming_kind="fact", incoming_priority=1
    )
    before = row_counts(journal_path)
    operator.memory.resolve(item.id, "accepted_incoming", expected_version=1, reason="checked")
    assert "memory_mutations" not in delta(before, row_counts(journal_path))
    assert operator.memory.get(entry.id).version == entry.version


@pytest.mark.parametrize(
    ("choice", "merged"), [("accepted_local", None), ("dismissed", None), ("merged", "db1 and db9")]
)
def test_other_choices_keep_the_local_fields(agent, operator, entry, choice, merged):
    item = agent.memory.record_conflict(
        entry.id,
        "db9.internal",
        incoming_source="sync",
        incoming_kind="decision",
        incoming_priority=5,
    )
    operator.memory.resolve(
        item.id, choice, expected_version=1, merged_content=merged, reason="checked"
    )
    got = operator.memory.get(entry.id)
    assert (got.kind, got.priority) == ("fact", 1)
    assert got.content == (merged or "db1.internal")


# ---------------------------------------------------------------- change sources


def test_each_mutation_names_the_run_event_it_appended(agent, operator, run):
    entry = agent.memory.add("project", "proj", "t", "c", run_id=run.id)
    replaced = agent.memory.replace(entry.id, "c2", expected_version=1, run_id=run.id)
    item = agent.memory.record_conflict(entry.id, "c3", incoming_source="x", run_id=run.id)
    operator.memory.resolve(item.id, "accepted_incoming", expected_version=1, reason="checked")
    operator.memory.pin(entry.id, expected_version=replaced.version + 1)
    events = {e.sequence: e for e in agent.runs.events(run.id, limit=100)}
    add, replace, resolved, pin = agent.memory.history(entry.id)
    assert events[add.event_sequence].type == "memory.changed"
    assert events[add.event_sequence].payload == {
        "entry_id": entry.id,
        "operation": "add",
        "version": 1,
    }
    assert events[replace.event_sequence].payload["version"] == 2
    assert events[resolved.event_sequence].type == "memory.conflict_resolved"
    assert pin.run_id is None and pin.event_sequence is None


def test_a_change_on_an_ended_run_names_no_event(agent, run):
    agent.runs.complete(run.id)
    entry = agent.memory.add("project", "proj", "t", "c", run_id=run.id)
    [add] = agent.memory.history(entry.id)
    assert add.run_id == run.id and add.event_sequence is None


# ---------------------------------------------------------------- migration 0004


def columns(path, table: str) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}


NEW = {
    "memory_entries": {"last_used_at", "use_count"},
    "memory_reconciliations": {
        "incoming_kind",
        "incoming_priority",
        "incoming_trust",
        "incoming_sensitivity",
    },
    "memory_mutations": {"event_sequence"},
}


@pytest.mark.sqlite_only
def test_a_0003_journal_upgrades_with_its_memory(journal_path, agent, operator, run, downgrade):
    entry = agent.memory.add("project", "proj", "t", "c", run_id=run.id)
    item = agent.memory.record_conflict(entry.id, "c2", incoming_source="sync")
    agent.close()
    operator.close()
    downgrade(journal_path, "0003")
    assert all(not NEW[t] & columns(journal_path, t) for t in NEW)
    assert "ix_memory_last_used" not in index_names(journal_path)
    with Journal.open(journal_path, actor=Actor.operator("alice")) as j:
        assert j.schema_revision == REAL_HEAD
        assert not j.missing_triggers()
        old = j.memory.get(entry.id)
        assert (old.content, old.last_used_at, old.use_count) == ("c", 0.0, 0)
        assert j.memory.history(entry.id)[0].event_sequence is None
        assert j.memory.conflict(item.id).incoming_kind is None
        j.memory.resolve(item.id, "accepted_incoming", expected_version=1, reason="checked")
        assert j.memory.get(entry.id).content == "c2"
    with Journal.open(journal_path, actor=Actor.agent("a")) as j:
        j.memory.mark_used([entry.id])
        assert j.memory.browse(MemoryQuery(sort="used")).items[0].use_count == 1
    assert all(NEW[t] <= columns(journal_path, t) for t in NEW)
    assert "ix_memory_last_used" in index_names(journal_path)


@pytest.mark.sqlite_only
def test_downgrade_keeps_the_mutation_triggers(journal_path, agent, downgrade):
    agent.memory.add("project", "proj", "t", "c")
    agent.close()
    downgrade(journal_path, "0003")
    with (
        contextlib.closing(sqlite3.connect(journal_path)) as conn,
        pytest.raises(sqlite3.IntegrityError),
    ):
        conn.execute("UPDATE memory_mutations SET reason = 'x'")


# ---------------------------------------------------------------- the demo journal


def test_the_demo_journal_has_used_entries_and_conflicts_that_differ_in_fields(tmp_path):
    from proctor.sim.demo import build_demo_journal

    path = tmp_path / "demo.db"
    build_demo_journal(path, "small", seed=3)
    with Journal.open(path, read_only=True) as j:
        pending = j.memory.conflicts("pending")
        differing = [
            r
            for r in pending
            if any(
                getattr(r, f"incoming_{f}") not in (None, getattr(j.memory.get(r.entry_id), f))
                for f in ("kind", "priority", "trust", "sensitivity")
            )
        ]
        assert pending and differing
        entries = j.memory.list(limit=500)
        assert any(e.use_count for e in entries) and any(not e.use_count for e in entries)
        top = j.memory.browse(MemoryQuery(sort="used"), limit=1).items[0]
        assert top.last_used_at == max(e.last_used_at for e in entries)
        sourced = [m for e in entries for m in j.memory.history(e.id) if m.event_sequence]
        assert sourced
        event = j.runs.events(sourced[0].run_id, limit=1, after=sourced[0].event_sequence - 1)[0]
        assert event.payload["entry_id"] == sourced[0].entry_id
