"""Agent memory: versioned entries, a mutation row for every change, tombstones, and
conflicts resolved by a person in one transaction (DESIGN §2 invariants 1-3, 10)."""

from __future__ import annotations

import hashlib

import pytest

from proctor.core import errors
from proctor.core.journal import Tx

from .helpers import Boom, assert_no_open_transaction, boom, delta, row_counts, snapshot


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def entry(agent):
    return agent.memory.add("project", "proj", "DB host", "db1.internal", kind="fact")


def test_every_change_is_a_mutation_with_hashes(agent, operator, entry):
    assert (entry.version, entry.deleted, entry.trust) == (1, False, "agent_observed")
    changed = agent.memory.replace(entry.id, "db2.internal", expected_version=1, reason="moved")
    pinned = agent.memory.pin(entry.id, expected_version=changed.version)
    confirmed = operator.memory.confirm(entry.id, expected_version=pinned.version)
    assert confirmed.pinned and confirmed.confirmed and confirmed.trust == "user_confirmed"
    history = agent.memory.history(entry.id)
    assert [(m.operation, m.version) for m in history] == [
        ("add", 1),
        ("replace", 2),
        ("pin", 3),
        ("confirm", 4),
    ]
    add, replace = history[0], history[1]
    assert add.before_hash is None and add.after_hash == sha("db1.internal")
    assert (replace.before_hash, replace.after_hash) == (sha("db1.internal"), sha("db2.internal"))
    assert (replace.before_content, replace.after_content) == ("db1.internal", "db2.internal")
    assert replace.reason == "moved" and replace.actor == "agent:agent-1"


def test_remove_is_a_tombstone_and_restore_brings_it_back(agent, entry, journal_path):
    removed = agent.memory.remove(entry.id, expected_version=1, reason="obsolete")
    assert removed.deleted and row_counts(journal_path)["memory_entries"] == 1
    assert agent.memory.list() == [] and agent.memory.count() == 0
    assert [e.id for e in agent.memory.list(include_deleted=True)] == [entry.id]
    with pytest.raises(errors.InvalidTransition):
        agent.memory.remove(entry.id, expected_version=removed.version)
    restored = agent.memory.restore(entry.id, expected_version=removed.version)
    assert not restored.deleted and restored.content == "db1.internal"
    with pytest.raises(errors.InvalidTransition):
        agent.memory.restore(entry.id, expected_version=restored.version)


def test_operator_edits_are_audited_and_marked(operator, entry):
    edited = operator.memory.replace(entry.id, "db3.internal", expected_version=1, reason="fix")
    assert edited.trust == "operator_edited"
    [audit] = operator.audit.for_entity(entry.id)
    assert audit.action == "memory.replace" and audit.actor == "operator:alice"


def test_stale_version_is_refused(agent, entry, journal_path):
    agent.memory.replace(entry.id, "v2", expected_version=1)
    before = snapshot(journal_path)
    for call in (
        lambda: agent.memory.replace(entry.id, "v3", expected_version=1),
        lambda: agent.memory.remove(entry.id, expected_version=1),
        lambda: agent.memory.pin(entry.id, expected_version=1),
    ):
        with pytest.raises(errors.StaleVersion):
            call()
    assert snapshot(journal_path) == before


def test_idempotency_keys_replay_or_conflict(agent, journal_path):
    first = agent.memory.add("user", "ada", "tz", "UTC+1", idempotency_key="m-1")
    before = snapshot(journal_path)
    assert agent.memory.add("user", "ada", "tz", "UTC+1", idempotency_key="m-1") == first
    with pytest.raises(errors.IdempotencyConflict):
        agent.memory.add("user", "ada", "tz", "UTC+2", idempotency_key="m-1")
    assert snapshot(journal_path) == before
    second = agent.memory.replace(first.id, "UTC+2", expected_version=1, idempotency_key="m-2")
    before = snapshot(journal_path)
    assert (
        agent.memory.replace(first.id, "UTC+2", expected_version=1, idempotency_key="m-2") == second
    )
    with pytest.raises(errors.IdempotencyConflict):
        agent.memory.replace(first.id, "UTC+3", expected_version=1, idempotency_key="m-2")
    assert snapshot(journal_path) == before


@pytest.mark.parametrize("content", ["", "   ", "x" * 200_001, None])
def test_content_must_be_bounded_text(agent, journal_path, content):
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        agent.memory.add("project", "p", "t", content)
    assert info.value.field == "content"
    assert row_counts(journal_path) == before


def test_run_linked_change_appends_one_run_event(agent, run, journal_path):
    before = row_counts(journal_path)
    agent.memory.add("project", "proj", "t", "c", run_id=run.id)
    assert delta(before, row_counts(journal_path))["events"] == 1
    assert agent.runs.events(run.id, descending=True, limit=1)[0].type == "memory.changed"


def test_list_filters(agent, entry):
    agent.memory.add("user", "ada", "editor", "vim")
    assert [e.id for e in agent.memory.list(scope="project")] == [entry.id]
    assert [e.title for e in agent.memory.list(scope_key="ada")] == ["editor"]
    assert [e.id for e in agent.memory.list(text="db1")] == [entry.id]
    assert agent.memory.count() == 2


# ---------------------------------------------------------------- reconciliation


@pytest.fixture
def conflict(agent, entry, run):
    return agent.memory.record_conflict(
        entry.id, "db9.internal", incoming_source="sync:laptop", run_id=run.id
    )


def test_conflict_is_parked_for_a_person(agent, conflict, entry):
    assert conflict.status == "pending" and conflict.local_content == "db1.internal"
    assert conflict.incoming_content == "db9.internal" and conflict.title == "DB host"
    assert [r.id for r in agent.memory.conflicts()] == [conflict.id]
    assert agent.memory.get(entry.id).content == "db1.internal"


@pytest.mark.parametrize(
    ("choice", "merged", "content", "mutations"),
    [
        ("accepted_local", None, "db1.internal", 1),
        ("accepted_incoming", None, "db9.internal", 2),
        ("merged", "db1.internal,db9.internal", "db1.internal,db9.internal", 2),
        ("dismissed", None, "db1.internal", 1),
    ],
)
def test_resolve_applies_choice_with_one_decision_audit_event(
    operator, conflict, entry, journal_path, choice, merged, content, mutations
):
    before = row_counts(journal_path)
    done = operator.memory.resolve(
        conflict.id,
        choice,
        expected_version=conflict.version,
        merged_content=merged,
        reason="checked",
    )
    assert done.status == choice and done.resolved_by == "operator:alice"
    assert operator.memory.get(entry.id).content == content
    assert len(operator.memory.history(entry.id)) == mutations
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert changed.get("memory_mutations", 0) == mutations - 1
    [decision] = operator.approvals.decisions(conflict.id)
    assert decision.decision == {"choice": choice}


def test_resolve_twice_stale_and_replay(operator, open_journal, conflict, journal_path):
    operator.memory.resolve(
        conflict.id, "accepted_incoming", expected_version=1, request_id="rq-1", reason="checked"
    )
    before = snapshot(journal_path)
    operator.memory.resolve(
        conflict.id, "accepted_incoming", expected_version=1, request_id="rq-1", reason="checked"
    )
    with pytest.raises(errors.IdempotencyConflict):
        operator.memory.resolve(
            conflict.id, "dismissed", expected_version=1, request_id="rq-1", reason="checked"
        )
    with pytest.raises(errors.AlreadyDecided):
        operator.memory.resolve(conflict.id, "dismissed", expected_version=2, reason="checked")
    assert snapshot(journal_path) == before


def test_resolve_with_stale_version_writes_nothing(operator, conflict, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.memory.resolve(
            conflict.id, "dismissed", expected_version=conflict.version + 1, reason="checked"
        )
    assert snapshot(journal_path) == before


@pytest.mark.parametrize(
    ("choice", "merged", "field"),
    [("merged", None, "merged"), ("merged", "   ", "content"), ("pending", None, "choice")],
)
def test_resolve_validates_the_choice(operator, conflict, journal_path, choice, merged, field):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        operator.memory.resolve(
            conflict.id, choice, expected_version=1, merged_content=merged, reason="checked"
        )
    assert info.value.field == field
    assert snapshot(journal_path) == before


def test_agent_cannot_resolve_conflicts(agent, conflict, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.memory.resolve(conflict.id, "dismissed", expected_version=1, reason="checked")
    assert snapshot(journal_path) == before


def test_resolution_and_mutation_commit_together(operator, conflict, journal_path, monkeypatch):
    before = snapshot(journal_path)
    monkeypatch.setattr(Tx, "audit", boom)  # after the mutation and the item update
    with pytest.raises(Boom):
        operator.memory.resolve(
            conflict.id, "accepted_incoming", expected_version=1, reason="checked"
        )
    monkeypatch.undo()
    assert snapshot(journal_path) == before
    assert_no_open_transaction(operator)


def test_conflict_of_an_ended_run_is_still_resolvable(agent, operator, conflict, run):
    agent.runs.complete(run.id)
    ended = agent.runs.get(run.id)
    done = operator.memory.resolve(
        conflict.id, "accepted_incoming", expected_version=1, reason="checked"
    )
    assert done.status == "accepted_incoming"
    assert agent.runs.get(run.id) == ended
