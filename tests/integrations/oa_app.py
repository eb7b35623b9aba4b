"""An OpenAI Agents SDK agent with a scripted model (no network, no LLM) as a test process.

    python oa_app.py JOURNAL start|resume|loop THREAD STATEFILE

``loop`` is the README's worker loop on the saved state (``while not outcome.done:``
resume); it prints ``STATUS <status>`` for each outcome, then the last outcome's JSON. With
``RELEASE=FILE`` the refund waits until FILE exists (a test holds the winner there).

The refund tool needs approval; each refund really made is a line in JOURNAL.refunds.log.
The last stdout line is the AgentsOutcome JSON (its state is also written to STATEFILE).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from agents import Agent, ModelResponse, Usage, function_tool, set_tracing_disabled
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from proctor.core import Actor, Journal
from proctor.core.integrations.openai_agents import AgentsGate


class ScriptedModel(Model):
    """Calls refund once (twice with TWO_REFUNDS, acct-9 then acct-10); after the tool's
    output (or its rejection) it says what happened."""

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
            [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
            if isinstance(input, list)
            else []
        )
        calls = 2 if os.environ.get("TWO_REFUNDS") else 1  # a second refund after the first
        if len(outputs) < calls:
            n = len(outputs) + 1
            out = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{n}",
                    call_id=f"call_refund_{n}",
                    name="refund",
                    arguments=json.dumps({"account": f"acct-{8 + n}", "amount": 4200}),
                    status="completed",
                )
            ]
        else:
            text = f"tool said: {outputs[-1].get('output')}"
            out = [
                ResponseOutputMessage(
                    type="message",
                    id="msg_1",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    async def stream_response(self, *a: Any, **kw: Any):  # pragma: no cover - not used
        raise NotImplementedError
        yield


def make_agent(log: Path) -> Agent:
    @function_tool(needs_approval=True)
    def refund(account: str, amount: int) -> str:
        """Refund an amount (cents) to an account."""
        if os.environ.get("CRASH_IN_TOOL"):
            os._exit(17)  # the process dies inside the side effect (did it happen?)
        release = os.environ.get("RELEASE")
        while release and not Path(release).exists():
            time.sleep(0.02)  # held inside the tool: its resume claim stays live
        with log.open("a") as f:
            f.write(f"{account} {amount}\n")
        return f"refunded {amount} to {account}"

    return Agent(
        name="refund-bot", instructions="Refund when asked.", tools=[refund], model=ScriptedModel()
    )


async def main() -> int:
    journal_path, command, thread, state_file = sys.argv[1:5]
    set_tracing_disabled(True)
    agent = make_agent(Path(journal_path + ".refunds.log"))
    with Journal.open(journal_path, actor=Actor.agent("refund-bot")) as journal:
        gate = AgentsGate(journal, lease_seconds=float(os.environ.get("LEASE", "300")))
        if command == "start":
            outcome = await gate.start(agent, thread, "Refund acct-9 the 42.00 charged twice")
        elif command == "loop":  # the README's loop, as a second worker would run it
            outcome = await gate.resume(agent, thread, Path(state_file).read_text())
            print(f"STATUS {outcome.status}", flush=True)
            while not outcome.done:
                await asyncio.sleep(0.05)
                outcome = await gate.resume(agent, thread, outcome.state)
                print(f"STATUS {outcome.status}", flush=True)
        else:
            outcome = await gate.resume(agent, thread, Path(state_file).read_text())
        if outcome.state is not None:
            Path(state_file).write_text(outcome.state)
        print(outcome.model_dump_json(exclude={"state"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
