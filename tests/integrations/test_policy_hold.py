"""A request halfway through its policy's quorum is never handed to an agent (issue 35):
through MCP (the SDK's own Client against the server) and the Claude Code hook (a real
subprocess), the first of two required approvals leaves the request pending; the second
hands the decision over, named as the second approver's."""

from __future__ import annotations

import anyio
from test_claude_code_hook import EVENT, decision, result, start_hook
from test_mcp import REFUND, client, desk_do, structured

from proctor.core import Actor, Journal
from proctor.core.policies.models import PolicyDraft, PolicyStage


def two_of_ops(path, tool: str) -> tuple[Journal, Journal]:
    alice, bob = (Journal.open(path, actor=Actor.operator(n)) for n in ("alice", "bob"))
    alice.policies.add_member("ops", "alice")
    alice.policies.add_member("ops", "bob")
    alice.policies.add(
        PolicyDraft(name="two", action_pattern=tool, stages=[PolicyStage(groups=["ops"], need=2)])
    )
    return alice, bob


def approve(journal: Journal, approval_id: str) -> None:
    current = journal.approvals.get(approval_id)
    journal.approvals.decide(approval_id, True, expected_version=current.version)


def test_mcp_sees_pending_until_the_second_approval(journal_path):
    alice, bob = two_of_ops(journal_path, "refund")

    async def main():
        async with client(journal_path) as c:
            filed = structured(
                await c.call_tool("submit_approval", {"action": REFUND, "reason": "refund"})
            )
            await desk_do(approve, alice, filed["id"])
            half = structured(
                await c.call_tool("await_decision", {"id": filed["id"], "wait_s": 0.2})
            )
            await desk_do(approve, bob, filed["id"])
            done = structured(await c.call_tool("await_decision", {"id": filed["id"]}))
            return half, done

    try:
        half, done = anyio.run(main)
    finally:
        alice.close()
        bob.close()
    assert half["status"] == "pending" and not half.get("approved")
    assert done["status"] == "approved" and done["decided_by"] == "operator:bob"


def test_the_claude_code_hook_does_not_allow_on_one_of_two(journal_path, desk):
    alice, bob = two_of_ops(journal_path, "Bash")
    try:
        hook = start_hook(journal_path, EVENT, timeout=30)
        [item] = desk.wait_pending("approval")
        approve(alice, item.id)
        assert hook.poll() is None  # still waiting after the first approval
        approve(bob, item.id)
        verdict, reason = decision(result(hook))
        assert verdict == "allow" and "bob" in reason

        short = start_hook(journal_path, {**EVENT, "tool_use_id": "toolu_02"}, timeout=1)
        [item] = desk.wait_pending("approval")
        approve(alice, item.id)
        verdict, reason = decision(result(short))
        assert verdict == "ask" and "no decision" in reason
    finally:
        alice.close()
        bob.close()
