"""Edit, then approve: the operator approves an edited action; it has its own digest,
consume_and_reserve requires that digest and refuses the requested one, the requested
action stays as evidence (DESIGN §2 "What is decided is what runs")."""

from __future__ import annotations

import pytest

from proctor.core import digest_of, errors

from .helpers import delta, drop_immutability_triggers, events_of, raw, row_counts, snapshot

REQUESTED = {"tool": "payments.refund", "args": {"amount": 900, "account": "acct-7"}}
EDITED = {"tool": "payments.refund", "args": {"amount": 90, "account": "acct-7"}}
SCHEMA = {
    "type": "object",
    "required": ["amount", "account"],
    "properties": {"amount": {"type": "number", "maximum": 500}, "account": {"type": "string"}},
    "additionalProperties": False,
}


@pytest.fixture
def pending(agent, run):
    return agent.approvals.request(run.id, REQUESTED, reason="refund", input_schema=SCHEMA)


def edit(operator, approval, action=EDITED, **kw):
    return operator.approvals.approve_edited(
        approval.id, action, expected_version=approval.version, **kw
    )


def test_an_edit_is_one_decision_with_its_own_digest(operator, agent, run, pending, journal_path):
    before = row_counts(journal_path)
    decided = edit(operator, pending, reason="refund 90, not 900")
    changed = delta(before, row_counts(journal_path))
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert decided.status == "approved" and decided.edited
    assert decided.action == REQUESTED and decided.action_digest == pending.action_digest
    assert decided.approved_action == EDITED and decided.approved_digest == digest_of(EDITED)
    assert decided.effective_digest == digest_of(EDITED)
    [decision] = operator.approvals.decisions(pending.id)
    assert decision.decision["original_digest"] == pending.action_digest
    assert decision.decision["approved_digest"] == digest_of(EDITED)
    assert decision.decision["approved_action"] == EDITED
    [audit] = operator.audit.for_entity(pending.id)
    assert audit.action == "approval.approved_edited"
    assert audit.after["changes"] == [{"path": "args.amount", "before": 900, "after": 90}]
    event = agent.runs.events(run.id)[-1]
    assert event.type == "approval.approved" and event.payload["edited"] is True
    assert event.payload["changes"] == audit.after["changes"]
    assert agent.runs.get(run.id).status == "running"


def test_the_agent_gets_the_edited_action_and_only_its_digest_runs(
    operator, agent, pending, journal_path
):
    edit(operator, pending)
    waited = agent.approvals.wait(pending.id, timeout=1)
    assert waited.effective_action == EDITED
    before = snapshot(journal_path)
    with pytest.raises(errors.DigestMismatch) as info:
        agent.approvals.consume_and_reserve(pending.id, pending.action_digest, "fx-1")
    assert "edited" in str(info.value)
    assert snapshot(journal_path) == before
    effect = agent.approvals.consume_and_reserve(pending.id, digest_of(EDITED), "fx-1")
    assert effect.action == EDITED


def test_an_altered_edited_action_is_refused_at_consume(operator, agent, pending, journal_path):
    edit(operator, pending)
    evil = {"tool": "payments.refund", "args": {"amount": 9000, "account": "acct-666"}}
    with raw(journal_path) as conn:  # refused by 0009b's trigger; so dropped first
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE approvals SET approved_action = ? WHERE id = ?",
            (__import__("json").dumps(evil), pending.id),
        )
    with pytest.raises(errors.Tampered):
        agent.approvals.consume_and_reserve(pending.id, digest_of(EDITED), "fx-1")
    with raw(journal_path) as conn:  # and the digest moved to the altered text too
        conn.execute(
            "UPDATE approvals SET approved_digest = ? WHERE id = ?", (digest_of(evil), pending.id)
        )
    with pytest.raises(errors.Tampered):  # the immutable decision row names the real edit
        agent.approvals.consume_and_reserve(pending.id, digest_of(evil), "fx-1")
    with raw(journal_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM effects").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ({"tool": "payments.charge", "args": {"amount": 90, "account": "acct-7"}}, "action.tool"),
        (REQUESTED, "action"),  # unchanged
        (
            {"tool": "payments.refund", "args": {"amount": 600, "account": "acct-7"}},
            "action.args.amount",
        ),  # over the schema's maximum
        ({"tool": "payments.refund", "args": {"amount": 90}}, "action.args"),  # required
        ({"tool": "payments.refund", "args": {"amount": 9, "account": "a", "x": 1}}, "action.args"),
    ],
)
def test_edits_that_change_the_tool_or_break_the_schema_are_refused(
    operator, pending, journal_path, action, field
):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        edit(operator, pending, action)
    assert info.value.field == field
    assert snapshot(journal_path) == before


def test_an_edit_is_a_decision_like_any_other(operator, agent, pending, journal_path, run):
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.approvals.approve_edited(pending.id, EDITED, expected_version=2)
    with pytest.raises(errors.NotAllowed):
        agent.approvals.approve_edited(pending.id, EDITED, expected_version=1)
    assert snapshot(journal_path) == before
    edit(operator, pending, request_id="r-1")
    after = snapshot(journal_path)
    assert edit(operator, pending, request_id="r-1").approved_digest == digest_of(EDITED)
    assert snapshot(journal_path) == after
    other = {"tool": "payments.refund", "args": {"amount": 91, "account": "acct-7"}}
    with pytest.raises(errors.IdempotencyConflict):
        edit(operator, pending, other, request_id="r-1")
    with pytest.raises(errors.AlreadyDecided):
        edit(operator, pending, other)
    assert [t for _s, t in events_of(journal_path, run.id)][-1] == "approval.approved"


def test_a_request_refuses_an_invalid_input_schema(agent, run, journal_path):
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        agent.approvals.request(run.id, REQUESTED, reason="r", input_schema={"type": "nonsense"})
    assert info.value.field == "input_schema"
    assert snapshot(journal_path) == before


def test_without_a_schema_any_arguments_may_be_edited(operator, agent, run):
    plain = agent.approvals.request(run.id, REQUESTED, reason="r")
    decided = edit(operator, plain, {"tool": "payments.refund", "args": {"amount": "ninety"}})
    assert decided.approved_action["args"] == {"amount": "ninety"}


def test_a_tampered_request_is_neither_edited_nor_ruled(operator, agent, pending, journal_path):
    """The requested action was rewritten under the API (triggers dropped): neither an edit
    nor a rule made from it may decide it."""
    from .helpers import drop_immutability_triggers

    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE approvals SET action = ? WHERE id = ?",
            ('{"args":{"amount":1,"account":"x"},"tool":"payments.refund"}', pending.id),
        )
    before = snapshot(journal_path)
    with pytest.raises(errors.Tampered):
        edit(operator, pending)
    draft = operator.approvals.rule_draft(pending.id, "run")
    with pytest.raises(errors.Tampered):
        operator.approvals.decide_with_rule(pending.id, draft, expected_version=1)
    assert snapshot(journal_path) == before
