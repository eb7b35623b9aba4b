"""The timeline's one-line summaries of the events agents and operators write, read back from
a real journal."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.gui.widgets.event_summary import event_summary


def test_attempts_receipts_and_presented_questions_read_as_one_line(journal_path):
    with Journal.open(journal_path, actor=Actor.agent("payer")) as a:
        run = a.runs.start("billing", "Pay invoice 7", agent="payer")
        a.runs.finish_attempt(run.id, "failed", "rate limited")
        a.runs.start_attempt(run.id, "retry after the rate limit")
        a.effects.reserve(
            "pay:7",
            tool="pay_invoice",
            run_id=run.id,
            action={"inv": 7},
            safety_class="financial",
            owner="payer@1",
        )
        a.effects.begin("pay:7", owner="payer@1")
        a.effects.record_receipt("pay:7", external_id="req-991", owner="payer@1")
        question = a.questions.ask(run.id, "question", "Which account?")
    with Journal.open(journal_path, actor=Actor.operator("alice")) as op:
        op.questions.mark_presented(question.id)
        events = {e.type: e for e in op.runs.events(run.id)}
    assert event_summary(events["attempt.finished"]) == "attempt 1 failed: rate limited"
    assert event_summary(events["effect.receipt"]) == "pay:7: receipt so far (req-991)"
    assert event_summary(events["interaction.presented"]) == "seen by operator:alice"
