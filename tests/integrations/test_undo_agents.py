"""Issue 37: an approval decided with a hold is, to every waiting agent, still pending until
the hold passes, so an undo within it reaches no agent as a decision. Through real agent
processes: ``proctor hook claude-code`` and ``proctor mcp`` (stdio) each keep waiting over a
held approval (the desk sees them look at it after the decision), the operator undoes it and
denies, and the agent is told the denial, never the approval; a hold that passes lets the
agent go on with the approval."""

from __future__ import annotations

import sys
import time

import anyio
from mcp import Client, StdioServerParameters
from test_claude_code_hook import EVENT, decision, result, start_hook
from test_mcp import HOST, REFUND, desk_do, structured


def decide_held(desk, approval_id: str, hold: float) -> float:
    a = desk.journal.approvals.get(approval_id)
    done = desk.journal.approvals.decide(approval_id, True, expected_version=a.version, hold=hold)
    assert done.hold_until is not None
    return done.decided_at


def looked_after(desk, approval_id: str, decided_at: float, timeout: float = 30.0) -> None:
    """Block until the waiting agent has stamped that it looks, after the decision."""
    deadline = time.monotonic() + timeout
    while True:
        seen = desk.journal.approvals.get(approval_id).waiter_seen_at
        if seen is not None and seen > decided_at:
            return
        assert time.monotonic() < deadline, "the agent did not look again after the decision"
        time.sleep(0.05)


def undo_then_deny(desk, approval_id: str) -> None:
    a = desk.journal.approvals.get(approval_id)
    back = desk.journal.approvals.undo(approval_id, expected_version=a.version, reason="misclick")
    desk.journal.approvals.decide(
        approval_id, False, expected_version=back.version, reason="not on Fridays"
    )


def test_the_hook_waits_over_a_held_approval_and_tells_the_denial_made_after_undo(
    journal_path, desk
):
    hook = start_hook(journal_path, EVENT, timeout=90)
    [item] = desk.wait_pending("approval")
    decided = decide_held(desk, item.id, 60)
    looked_after(desk, item.id, decided)  # the hook saw the approval and did not take it
    assert hook.poll() is None
    undo_then_deny(desk, item.id)
    verdict, why = decision(result(hook))
    assert verdict == "deny" and "not on Fridays" in why


def test_the_hook_allows_once_the_hold_passes(journal_path, desk):
    hook = start_hook(journal_path, EVENT, timeout=90)
    [item] = desk.wait_pending("approval")
    decide_held(desk, item.id, 0.5)
    verdict, _ = decision(result(hook))
    assert verdict == "allow"
    assert not desk.journal.approvals.get(item.id).held(desk.journal.now())


def test_the_mcp_server_process_waits_over_a_held_approval(journal_path, desk):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proctor", "mcp", str(journal_path)]
    )

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        decided = await desk_do(decide_held, desk, item.id, 60)
        await desk_do(looked_after, desk, item.id, decided)
        await desk_do(undo_then_deny, desk, item.id)

    async def main():
        async with Client(params, client_info=HOST) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(
                await c.call_tool("request_approval", {"action": REFUND, "reason": "held"})
            )

    out = anyio.run(main)
    assert out["status"] == "denied" and out["reason"] == "not on Fridays"
    assert out["action"] is None


def test_the_mcp_server_process_waits_over_a_held_answer_and_tells_the_later_one(
    journal_path, desk
):
    """A question's answer given with a hold: the ``proctor mcp`` process's ``ask_human``
    keeps waiting over it (its wait looks at it after the answer), the operator undoes it
    and answers anew, and the host is told the later answer only."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proctor", "mcp", str(journal_path)]
    )
    questions = desk.journal.questions

    def answer_held() -> tuple[str, float]:
        [item] = desk.wait_pending("question")
        done = questions.answer(item.id, {"text": "blue"}, expected_version=item.version, hold=60)
        return item.id, done.resolved_at

    def looked(qid: str, at: float) -> None:
        deadline = time.monotonic() + 30
        while (questions.get(qid).waiter_seen_at or 0) <= at:
            assert time.monotonic() < deadline, "the agent did not look after the answer"
            time.sleep(0.05)

    def undo_then_answer(qid: str) -> None:
        back = questions.undo(qid, expected_version=questions.get(qid).version, reason="misclick")
        questions.answer(qid, {"text": "green"}, expected_version=back.version)

    async def desk_side():
        qid, at = await desk_do(answer_held)
        await desk_do(looked, qid, at)
        await desk_do(undo_then_answer, qid)

    async def main():
        async with Client(params, client_info=HOST) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(await c.call_tool("ask_human", {"question": "Which color?"}))

    out = anyio.run(main)
    assert out["status"] == "answered" and out["answer"] == {"text": "green"}
