"""`proctor mcp` refuses arguments a tool does not declare, with an error naming them: a
misspelt ``idempotencyKey`` is never silently dropped (the operator would be asked twice)."""

from __future__ import annotations

import anyio
from mcp import Client
from mcp_types import Implementation

from proctor.core import Actor, Journal
from proctor.core.integrations.mcp_server import ProctorMCP

HOST = Implementation(name="test-host", version="1.0")
REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}


def test_unknown_arguments_are_refused_and_file_nothing(journal_path):
    async def main():
        server = ProctorMCP(journal_path, poll_s=0.02, progress_every_s=0.1).server
        async with Client(server, client_info=HOST) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            camel = await c.call_tool("submit_approval", {"action": REFUND, "reason": "r",
                                                          "idempotencyKey": "k-1"})
            extra = await c.call_tool("await_decision", {"id": "apr_x", "wait": 1})
            return tools, camel, extra

    tools, camel, extra = anyio.run(main)
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
    assert camel.is_error and "idempotencyKey" in camel.content[0].text
    assert extra.is_error and "'wait'" in extra.content[0].text
    with Journal.open(journal_path, actor=Actor.operator("check")) as j:
        assert [a for r in j.runs.list().items for a in j.approvals.for_run(r.id)] == []


def test_deciding_a_withdrawn_request_says_withdrawn_not_decided(journal_path, desk):
    from proctor.core import errors

    with Journal.open(journal_path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("mcp", "t")
        a = agent.approvals.request(run.id, REFUND, reason="r")
        q = agent.interactions.ask(run.id, "question", "Name?")
        agent.approvals.withdraw(a.id, "the MCP client timed out")
        agent.interactions.withdraw(q.id, "the MCP client timed out")
    for call, why in ((lambda: desk.approve(a.id), "the MCP client timed out"),
                      (lambda: desk.answer(q.id, {"text": "Ada"}), "")):
        try:
            call()
        except errors.Withdrawn as err:
            text = f"{err} {err.hint}"
        else:
            raise AssertionError("a withdrawn request was decided")
        assert "withdrawn" in text and why in text
        assert "decided already" not in text
