"""A write the journal's own triggers refuse (because a same-user process changed a row by
hand so that the next legitimate write breaks one of the journal's rules) is one sentence
naming the rule and what to do, exit code 1: never the driver's IntegrityError, never "a bug
in Proctor".

Each case runs `proctor` in a separate process, as a user would."""

from __future__ import annotations

import pytest
from adversary import squat_next_event

from proctor.core import Actor, Journal, errors

from .test_errors import proctor


@pytest.fixture
def pending(tmp_path):
    """A journal with a run and a pending approval in it."""
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "a run")
        asked = agent.approvals.request(run.id, {"tool": "pay", "args": {"to": "x"}}, reason="p")
    return path, run.id, asked.id


def test_a_write_the_triggers_refuse_is_a_sentence(pending):
    path, run_id, approval_id = pending
    squat_next_event(path, run_id)
    result = proctor("approve", approval_id, "--journal", path, "--yes")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "unexpected error" not in result.stderr and "IntegrityError" not in result.stderr
    assert "the journal refused this write: events rows are immutable" in result.stderr
    assert "proctor verify" in result.stderr  # the hint: find what was changed by hand
    with Journal.open(path, actor=Actor.operator("tester")) as operator:
        assert operator.approvals.get(approval_id).status == "pending"  # nothing was written


def test_the_core_raises_refused_with_the_triggers_words(pending):
    path, run_id, approval_id = pending
    squat_next_event(path, run_id)
    with Journal.open(path, actor=Actor.operator("tester")) as operator:
        asked = operator.approvals.get(approval_id)
        with pytest.raises(errors.Refused) as caught:
            operator.approvals.decide(approval_id, True, expected_version=asked.version)
    assert caught.value.rule == "events rows are immutable: that key exists"
