"""Human interactions: every kind has a default schema; answers are validated in core and an
invalid answer names its field (DESIGN §2 invariants 2-4, 10, 11; issue 2 interactions)."""

from __future__ import annotations

import pytest

from proctor.core import Actor, QuestionKind, errors

from .helpers import delta, row_counts, snapshot

CHOICES = ["small", {"value": "large", "label": "Large (slow)"}]

# kind -> (options, a valid answer, an invalid answer, the field the error must name)
CASES = {
    "question": ([], {"text": "use the staging DB"}, {"text": ""}, "text"),
    "choice": (CHOICES, {"choice": "large", "note": "ok"}, {"choice": "medium"}, "choice"),
    "form": (
        ["name", "email"],
        {"name": "Ada", "email": "ada@example.org"},
        {"name": "Ada"},
        "email",
    ),
    "confirmation": ([], {"confirmed": False}, {"confirmed": "yes"}, "confirmed"),
    "diff_review": (
        [],
        {"verdict": "request_changes", "comment": "nit"},
        {"verdict": "lgtm"},
        "verdict",
    ),
    "merge_conflict": ([], {"resolution": "merged", "merged": "a\nb"}, {}, "resolution"),
    "credential_binding": (
        [],
        {"credential_ref": "vault:deploy-key"},
        {"credential_ref": ""},
        "credential_ref",
    ),
    "memory_change_review": (
        [],
        {"verdict": "edit", "content": "new"},
        {"verdict": "maybe"},
        "verdict",
    ),
}


def test_every_kind_is_covered():
    assert set(CASES) == {k.value for k in QuestionKind}


def answer(operator, item, response, **kw):
    return operator.questions.answer(item.id, response, expected_version=item.version, **kw)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_kind_has_a_default_schema_that_validates(agent, operator, run, journal_path, kind):
    options, good, bad, field = CASES[kind]
    item = agent.questions.ask(run.id, kind, f"please answer a {kind}", options=options)
    assert item.response_schema["type"] == "object"
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        answer(operator, item, bad)
    assert info.value.field == field
    assert field in str(info.value)
    assert snapshot(journal_path) == before
    done = answer(operator, item, good)
    assert done.status == "resolved" and done.response == good


def test_form_without_fields_takes_named_text_values(agent, operator, run):
    item = agent.questions.ask(run.id, "form", "tell me anything")
    with pytest.raises(errors.ValidationError) as info:
        answer(operator, item, {"port": 8080})
    assert info.value.field == "port"
    with pytest.raises(errors.ValidationError):
        answer(operator, item, {})
    assert answer(operator, item, {"port": "8080"}).status == "resolved"


def test_unexpected_field_is_named(agent, operator, run):
    item = agent.questions.ask(run.id, "confirmation", "deploy?")
    with pytest.raises(errors.ValidationError) as info:
        answer(operator, item, {"confirmed": True, "sneaky": 1})
    assert info.value.field == "sneaky"


def test_custom_schema_names_nested_field(agent, operator, run):
    schema = {
        "type": "object",
        "required": ["limits"],
        "properties": {
            "limits": {"type": "object", "properties": {"max": {"type": "integer", "minimum": 1}}}
        },
    }
    item = agent.questions.ask(run.id, "form", "limits?", response_schema=schema)
    with pytest.raises(errors.ValidationError) as info:
        answer(operator, item, {"limits": {"max": 0}})
    assert info.value.field == "limits/max"
    assert answer(operator, item, {"limits": {"max": 3}}).response == {"limits": {"max": 3}}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "choice", "prompt": "pick"}, "options"),
        ({"kind": "question", "prompt": "  "}, "prompt"),
        (
            {"kind": "form", "prompt": "x", "response_schema": {"type": "no-such-type"}},
            "response_schema",
        ),
    ],
)
def test_ask_refuses_malformed_questions(agent, run, journal_path, kwargs, field):
    kwargs = dict(kwargs)  # parametrized once, run on each backend: never mutate it
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        agent.questions.ask(run.id, kwargs.pop("kind"), kwargs.pop("prompt"), **kwargs)
    assert info.value.field == field
    assert row_counts(journal_path) == before


def test_answer_writes_one_decision_one_audit_one_event(agent, operator, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    assert agent.runs.get(run.id).status == "waiting_for_user"
    before = row_counts(journal_path)
    done = answer(operator, item, {"text": "staging"}, reason="safer")
    changed = delta(before, row_counts(journal_path))
    assert set(changed) == {"decisions", "audit", "events", "changes"}
    assert (changed["decisions"], changed["audit"], changed["events"]) == (1, 1, 1)
    assert done.resolved_by == "operator:alice" and done.version == item.version + 1
    [decision] = operator.approvals.decisions(item.id)
    assert decision.decision == {"answer": {"text": "staging"}, "hold_until": None}
    assert decision.reason == "safer"
    assert [a.action for a in operator.audit.for_entity(item.id)] == ["interaction.answered"]
    assert agent.runs.get(run.id).status == "running"
    assert agent.questions.wait(item.id, timeout=0).response == {"text": "staging"}


def test_answered_at_most_once(agent, operator, open_journal, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    done = answer(operator, item, {"text": "staging"})
    bob = open_journal(Actor.operator("bob"))
    before = snapshot(journal_path)
    with pytest.raises(errors.AlreadyDecided) as info:
        answer(bob, done, {"text": "prod"})
    assert "alice" in str(info.value)
    assert snapshot(journal_path) == before


def test_answer_replay_and_conflict_by_request_id(agent, operator, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    first = answer(operator, item, {"text": "staging"}, request_id="rq-1")
    before = snapshot(journal_path)
    assert answer(operator, item, {"text": "staging"}, request_id="rq-1") == first
    with pytest.raises(errors.IdempotencyConflict):
        answer(operator, item, {"text": "prod"}, request_id="rq-1")
    assert snapshot(journal_path) == before


def test_answer_with_stale_version_writes_nothing(agent, operator, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    operator.inbox.snooze("question", item.id, 10.0**10, expected_version=item.version)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        answer(operator, item, {"text": "x"})
    assert snapshot(journal_path) == before


def test_asking_agent_cannot_answer_itself(agent, open_journal, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        answer(agent, item, {"text": "me"})
    with pytest.raises(errors.NotAllowed):
        answer(open_journal(Actor.operator("agent-1")), item, {"text": "me"})
    assert snapshot(journal_path) == before


def test_expired_question_refuses_the_answer_and_keeps_expiry(
    agent, operator, run, clock, journal_path
):
    item = agent.questions.ask(run.id, "question", "quick?", expires_in=30)
    clock.advance(31)
    with pytest.raises(errors.Expired):
        answer(operator, item, {"text": "late"})
    expired = operator.questions.get(item.id)
    assert expired.status == "expired" and expired.resolved_by == "system:expiry"
    assert [a.action for a in operator.audit.for_entity(item.id)] == ["interaction.expired"]
    before = snapshot(journal_path)
    with pytest.raises(errors.Expired):
        answer(operator, expired, {"text": "later"})
    assert snapshot(journal_path) == before
    assert agent.runs.get(run.id).status == "running"


def test_expire_due_and_wait(agent, run, clock):
    item = agent.questions.ask(run.id, "question", "quick?", expires_in=30)
    assert agent.questions.wait(item.id, timeout=0).status == "requested"
    clock.advance(31)
    assert agent.questions.wait(item.id, timeout=0).status == "expired"
    assert agent.questions.expire_due() == 0


def test_ask_is_idempotent_by_request_key(agent, run, journal_path):
    first = agent.questions.ask(run.id, "question", "which DB?", request_key="q-1")
    before = snapshot(journal_path)
    assert agent.questions.ask(run.id, "question", "which DB?", request_key="q-1") == first
    with pytest.raises(errors.IdempotencyConflict):
        agent.questions.ask(run.id, "question", "which host?", request_key="q-1")
    assert snapshot(journal_path) == before


def test_withdraw_closes_the_question(agent, operator, run, journal_path):
    item = agent.questions.ask(run.id, "question", "which DB?")
    gone = agent.questions.withdraw(item.id, "found it")
    assert gone.status == "cancelled" and agent.runs.get(run.id).status == "running"
    with pytest.raises(errors.InvalidTransition):
        agent.questions.withdraw(item.id, "again")
    with pytest.raises(errors.AlreadyDecided):
        answer(operator, gone, {"text": "x"})
    assert [i.id for i in agent.questions.for_run(run.id)] == [item.id]


def test_a_choice_answer_must_be_an_option_even_under_the_agents_own_schema(
    journal_path, operator, agent, run
):
    loose = {
        "type": "object",
        "properties": {"choice": {"type": ["string", "array"]}},
        "required": ["choice"],
    }
    item = agent.questions.ask(
        run.id,
        "choice",
        "Which region?",
        options=["eu-west", {"value": "us-east", "label": "US"}],
        response_schema=loose,
    )
    before = snapshot(journal_path)
    for bad in ({"choice": "ap-south"}, {"choice": ["eu-west", "mars"]}):
        with pytest.raises(errors.ValidationError) as refused:
            answer(operator, item, bad)
        assert refused.value.field == "choice"
    assert snapshot(journal_path) == before
    assert answer(operator, item, {"choice": ["us-east", "eu-west"]}).status == "resolved"


# ---------------------------------------------------------------- presented


def test_mark_presented_moves_requested_to_presented_once_with_an_event(
    agent, operator, run, journal_path
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    before = row_counts(journal_path)
    seen = operator.questions.mark_presented(item.id)
    assert seen.status == "presented" and seen.version == item.version  # no version bump
    # changes: the interaction's and the event's (the event's row also stands for its run's
    # head: no separate 'run' row, store issue 24)
    assert delta(before, row_counts(journal_path)) == {"events": 1, "changes": 2}
    [event] = operator.runs.events(run.id, types=["interaction.presented"])
    assert event.payload == {"interaction_id": item.id, "by": "operator:alice"}
    assert event.actor == "operator:alice"
    assert operator.questions.seen(item.id) == ("operator:alice", event.created_at)
    assert operator.audit.for_entity(item.id) == []  # nothing was decided
    assert agent.runs.get(run.id).status == "waiting_for_user"  # still waiting for a person
    again = snapshot(journal_path)
    assert operator.questions.mark_presented(item.id) == seen  # idempotent
    assert snapshot(journal_path) == again
    assert agent.questions.wait(item.id, timeout=0).status == "presented"  # still open
    assert [i.id for i in operator.inbox.list().items] == [item.id]


def test_answer_after_presented_works_for_the_viewer_and_an_earlier_loader(
    agent, operator, open_journal, run
):
    first = agent.questions.ask(run.id, "question", "which DB?")
    second = agent.questions.ask(run.id, "question", "which host?")
    bob = open_journal(Actor.operator("bob"))
    loaded_by_bob = bob.questions.get(second.id)  # bob's desk loaded it before alice looked
    shown = operator.questions.mark_presented(first.id)
    assert answer(operator, shown, {"text": "staging"}).status == "resolved"
    operator.questions.mark_presented(second.id)
    done = answer(bob, loaded_by_bob, {"text": "db-2"})
    assert done.status == "resolved" and done.resolved_by == "operator:bob"
    assert operator.questions.seen(second.id)[0] == "operator:alice"
    assert operator.questions.mark_presented(second.id).status == "resolved"  # stays closed


def test_mark_presented_refuses_agents_and_read_only_journals(
    agent, open_journal, run, journal_path
):
    item = agent.questions.ask(run.id, "question", "which DB?")
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.questions.mark_presented(item.id)
    viewer = open_journal(Actor.operator("carol"), read_only=True)
    with pytest.raises(errors.StoreReadOnly):
        viewer.questions.mark_presented(item.id)
    assert snapshot(journal_path) == before
    assert viewer.questions.seen(item.id) is None


def test_a_question_past_its_expiry_is_not_marked_presented(agent, operator, run, clock):
    item = agent.questions.ask(run.id, "question", "quick?", expires_in=30)
    clock.advance(31)
    assert operator.questions.mark_presented(item.id).status == "requested"
    assert agent.questions.wait(item.id, timeout=0).status == "expired"


@pytest.mark.parametrize(
    ("fmt", "bad", "good"),
    [
        ("date-time", "next tuesday-ish", "2026-12-01T10:00:00Z"),
        ("date", "2026-13-01", "2026-12-01"),
        ("uri", "not a uri", "https://example.org/x"),
        ("email", "nobody", "ada@example.org"),
    ],
)
def test_json_schema_formats_are_checked_in_core(
    agent, operator, run, journal_path, fmt, bad, good
):
    schema = {
        "type": "object",
        "properties": {"when": {"type": "string", "format": fmt}},
        "required": ["when"],
    }
    item = agent.questions.ask(run.id, "form", "when?", response_schema=schema)
    before = snapshot(journal_path)
    with pytest.raises(errors.ValidationError) as info:
        answer(operator, item, {"when": bad})
    assert info.value.field == "when"
    assert snapshot(journal_path) == before
    assert answer(operator, item, {"when": good}).response == {"when": good}


def test_an_oversized_text_is_refused_as_too_long_with_the_limit(agent, run, journal_path):
    """A 5 MB prompt (or memory content, or reason) is too long, not "empty"; a blank one
    is empty; neither writes anything."""
    from proctor.core.questions.service import MAX_PROMPT

    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError) as too_long:
        agent.questions.ask(run.id, "question", "x" * 5_000_000)
    assert too_long.value.field == "prompt"
    assert "too long" in too_long.value.message and f"{MAX_PROMPT:,}" in too_long.value.message
    assert "5,000,000" in too_long.value.message and "empty" not in too_long.value.message
    with pytest.raises(errors.ValidationError, match="must not be empty"):
        agent.questions.ask(run.id, "question", "   ")
    with pytest.raises(errors.ValidationError, match="must be text, not int"):
        agent.questions.ask(run.id, "question", 5)
    assert delta(before, row_counts(journal_path)) == {}
    entry = agent.memory.add("project", "shop", "db host", "db1")
    before = row_counts(journal_path)
    with pytest.raises(errors.ValidationError, match="too long: 5,000,000 characters"):
        agent.memory.record_conflict(entry.id, "y" * 5_000_000, incoming_source="bot")
    with pytest.raises(errors.ValidationError, match="too long: 5,000,000 characters"):
        agent.approvals.request(run.id, {"tool": "deploy"}, reason="z" * 5_000_000)
    assert delta(before, row_counts(journal_path)) == {}
