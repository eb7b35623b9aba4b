"""`proctor mcp` under a short client timeout: the OpenAI Agents SDK's own MCP client
(``agents.mcp.MCPServerStdio``, default client_session_timeout_seconds=5; 1 s here) against the
real `proctor mcp` process, with a scripted model (no network, no LLM). The operator decides
through proctor.core while the agent polls."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import Any

import pytest

agents = pytest.importorskip("agents")

from agents import Agent, ModelResponse, Runner, Usage, set_tracing_disabled  # noqa: E402
from agents.mcp import MCPServerStdio  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}
KEY = "refund-acct-9-march"


def tool_call(n: int, name: str, args: dict) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        id=f"fc_{n}",
        call_id=f"call_{n}",
        name=name,
        arguments=json.dumps(args),
        status="completed",
    )


def say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id="msg_1",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class PollingModel(Model):
    """What a model following the server's instructions does: ask with a key; on a timeout
    ask again with the same key; while pending, poll await_decision with short waits."""

    def __init__(self, first_wait: float | None) -> None:
        self.first_wait = first_wait
        self.seen: list[str] = []

    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        **kw: Any,
    ) -> ModelResponse:
        outputs = (
            [
                i.get("output")
                for i in input
                if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            if isinstance(input, list)
            else []
        )
        n = len(outputs) + 1
        ask = {"action": REFUND, "reason": "charged twice", "idempotency_key": KEY}
        if not outputs:
            first = ask if self.first_wait is None else {**ask, "wait_s": self.first_wait}
            return self.respond(tool_call(n, "request_approval", first))
        last = str(outputs[-1])
        self.seen.append(last)
        try:
            outcome = json.loads(last)
        except ValueError:  # the tool call failed (timed out): ask again, same key
            return self.respond(tool_call(n, "request_approval", {**ask, "wait_s": 0.5}))
        if outcome.get("status") == "pending":
            return self.respond(
                tool_call(n, "await_decision", {"id": outcome["id"], "wait_s": 0.5})
            )
        return self.respond(say(f"{outcome['status']}: {outcome.get('reason')}"))

    @staticmethod
    def respond(item: Any) -> ModelResponse:
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    async def stream_response(self, *a: Any, **kw: Any):  # pragma: no cover - not used
        raise NotImplementedError
        yield


def run_agent(journal_path, model: PollingModel) -> str:
    set_tracing_disabled(True)

    async def main() -> str:
        server = MCPServerStdio(
            params={
                "command": sys.executable,
                "args": ["-m", "proctor", "mcp", str(journal_path), "--agent", "refund-bot"],
            },
            client_session_timeout_seconds=1,
            use_structured_content=True,
        )
        async with server:
            agent = Agent(
                name="refund-bot",
                instructions="Refund when approved.",
                mcp_servers=[server],
                model=model,
            )
            result = await Runner.run(agent, "Refund acct-9 the 42.00 charged twice", max_turns=60)
            return str(result.final_output)

    return asyncio.run(main())


def decide_when(desk, ready, decide) -> threading.Thread:
    def side() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            items = desk.wait_pending("approval", timeout=60)
            if ready(items[0]):
                decide(items[0].id)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=side, daemon=True)
    thread.start()
    return thread


def test_a_blocking_call_that_times_out_keeps_the_request_and_the_retry_gets_it(journal_path, desk):
    def timed_out(item) -> bool:  # the SDK gave up on the first call (the server saw it)
        return any(t.status == "failed" for t in desk.journal.runs.tool_calls(item.run_id))

    side = decide_when(desk, timed_out, lambda aid: desk.approve(aid, "checked"))
    model = PollingModel(first_wait=None)
    final = run_agent(journal_path, model)
    side.join(10)
    assert final == "approved: checked"
    assert not model.seen[0].startswith("{")  # the first call really timed out
    runs = desk.journal.runs.list().items
    approvals = [a for r in runs for a in desk.journal.approvals.for_run(r.id)]
    assert [(a.status, a.action) for a in approvals] == [("approved", REFUND)]  # asked once


def test_file_then_poll_with_short_waits(journal_path, desk):
    polls: list[int] = []

    def polled_a_while(item) -> bool:
        calls = desk.journal.runs.tool_calls(item.run_id)
        polls.append(sum(t.tool == "mcp.await_decision" for t in calls))
        return polls[-1] >= 2

    side = decide_when(desk, polled_a_while, lambda aid: desk.deny(aid, "refunded by phone"))
    model = PollingModel(first_wait=0.2)
    final = run_agent(journal_path, model)
    side.join(10)
    assert final == "denied: refunded by phone"
    assert all(s.startswith("{") for s in model.seen)  # no call timed out
    [run] = desk.journal.runs.list().items
    calls = desk.journal.runs.tool_calls(run.id)
    assert calls[0].tool == "mcp.request_approval"
    assert {t.tool for t in calls[1:]} == {"mcp.await_decision"}
    assert all(t.status == "succeeded" for t in calls)
