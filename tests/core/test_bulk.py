"""Bulk operator writes live in core (the desk and the CLI both use them): snooze and memory
resolution, each item its own transaction at the version the operator saw."""

from __future__ import annotations

import pytest

from proctor.core import errors

from .helpers import raw


def test_bulk_snooze_each_item_at_its_version(agent, operator, run):
    a = agent.approvals.request(run.id, {"tool": "t", "args": {"n": 1}}, reason="r").id
    b = agent.approvals.request(run.id, {"tool": "t", "args": {"n": 2}}, reason="r").id
    results = operator.inbox.bulk_snooze(
        [("approval", a, 1), ("approval", b, 7)], 9e9, request_id="rq"
    )
    assert [(r.id, r.ok, r.error_type) for r in results] == [
        (a, True, None),
        (b, False, "StaleVersion"),
    ]
    assert operator.approvals.get(a).snoozed_until == 9e9
    assert operator.approvals.get(b).snoozed_until is None
    again = operator.inbox.bulk_snooze([("approval", a, 1)], 9e9, request_id="rq")
    assert again[0].ok  # the same request id replays, it does not conflict


def test_bulk_snooze_needs_an_operator(agent, run):
    a = agent.approvals.request(run.id, {"tool": "t"}, reason="r").id
    with pytest.raises(errors.NotAllowed):
        agent.inbox.bulk_snooze([("approval", a, 1)], 9e9)


def conflict(agent, run, sensitivity="normal"):
    entry = agent.memory.add(
        "project", "proj", "Host", "db1", run_id=run.id, sensitivity=sensitivity
    )
    return agent.memory.record_conflict(entry.id, "db2", incoming_source="sync", run_id=run.id)


def test_bulk_resolve_takes_incoming_and_refuses_the_hidden(agent, operator, run):
    plain, secret = conflict(agent, run), conflict(agent, run, sensitivity="secret")
    results = operator.memory.bulk_resolve(
        [(plain.id, plain.version), (secret.id, secret.version)],
        "accepted_incoming",
        reason="sync is right",
    )
    assert [(r.ok, r.error_type) for r in results] == [(True, None), (False, "NotAllowed")]
    assert operator.memory.get(plain.entry_id).content == "db2"
    assert operator.memory.get(secret.entry_id).content == "db1"
    assert operator.memory.conflict(secret.id).status.value == "pending"


def test_bulk_resolve_refuses_an_entry_that_moved_on(agent, operator, run):
    item = conflict(agent, run)
    entry = operator.memory.get(item.entry_id)
    operator.memory.replace(entry.id, "db3", expected_version=entry.version, reason="moved")
    [result] = operator.memory.bulk_resolve(
        [(item.id, item.version)], "accepted_incoming", reason="take it"
    )
    assert not result.ok and result.error_type == "StaleVersion"
    assert operator.memory.get(entry.id).content == "db3"


def test_bulk_resolve_refuses_merge(agent, operator, run):
    item = conflict(agent, run)
    with pytest.raises(errors.ValidationError):
        operator.memory.bulk_resolve([(item.id, item.version)], "merged", reason="x")


def test_bulk_resolve_stale_version_writes_nothing(agent, operator, run, journal_path):
    item = conflict(agent, run)
    with raw(journal_path) as conn:
        before = conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0]
    [result] = operator.memory.bulk_resolve([(item.id, item.version + 1)], "dismissed", reason="no")
    assert result.error_type == "StaleVersion"
    with raw(journal_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0] == before


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_resolving_a_conflict_needs_a_reason(agent, operator, run, journal_path, reason):
    item = conflict(agent, run)
    with raw(journal_path) as conn:
        before = conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0]
    with pytest.raises(errors.ValidationError) as err:
        operator.memory.resolve(
            item.id, "accepted_local", expected_version=item.version, reason=reason
        )
    assert err.value.field == "reason"
    assert operator.memory.conflict(item.id).status.value == "pending"
    with raw(journal_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0] == before


@pytest.mark.parametrize(
    "ref",
    [
        "sk_live_51HxYzAbC123dEfGhIjKlMnOp",
        "my stripe key",
        "vault:sk_live_51HxYzAbC123dEfGhIjKlMnOp",
        "https://bot:hunter2@vault.example/stripe",
        "vault://a\nb",
    ],
)
def test_a_credential_answer_must_be_a_reference(agent, operator, run, ref):
    q = agent.questions.ask(run.id, "credential_binding", "Which stripe key?")
    with pytest.raises(errors.ValidationError) as err:
        operator.questions.answer(q.id, {"credential_ref": ref}, expected_version=q.version)
    assert err.value.field == "credential_ref"
    assert operator.questions.get(q.id).status.value == "requested"


@pytest.mark.parametrize(
    "ref",
    [
        "vault://team/stripe",
        "keyring://proctor/stripe-live",
        "vault:deploy-key",
        "op://Shared/GitHub/token",
        "env:GITHUB_TOKEN",
    ],
)
def test_a_credential_reference_is_accepted(agent, operator, run, ref):
    q = agent.questions.ask(run.id, "credential_binding", "Which key?")
    done = operator.questions.answer(q.id, {"credential_ref": ref}, expected_version=q.version)
    assert done.response == {"credential_ref": ref}
