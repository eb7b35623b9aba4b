"""A pydantic-ai agent with a scripted FunctionModel (no network, no LLM) as a test process.

    python pa_app.py JOURNAL start|resume|loop THREAD STATEFILE

``loop`` is the README's worker loop on the saved state (``while not outcome.done:``
resume); it prints ``STATUS <status>`` for each outcome, then the last outcome's JSON. With
``RELEASE=FILE`` the refund waits until FILE exists (a test holds the winner there).

The refund tool requires approval; each refund really made is a line in JOURNAL.refunds.log.
The last stdout line is the DeferredOutcome JSON (its state is also written to STATEFILE).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from proctor.core import Actor, Journal
from proctor.core.integrations.pydanticai import DeferredGate


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Call refund once (twice with TWO_REFUNDS, acct-9 then acct-10); after its result (or
    its denial) say what came back."""
    returned = [
        p
        for m in messages
        for p in getattr(m, "parts", [])
        if p.part_kind in ("tool-return", "retry-prompt")
    ]
    calls = 2 if os.environ.get("TWO_REFUNDS") else 1  # a second refund after the first
    if len(returned) < calls:
        n = len(returned) + 1
        return ModelResponse(
            parts=[
                ToolCallPart(
                    "refund",
                    {"account": f"acct-{8 + n}", "amount": 4200},
                    tool_call_id=f"call_refund_{n}",
                )
            ]
        )
    return ModelResponse(parts=[TextPart(f"tool said: {returned[-1].content}")])


def make_agent(log: Path) -> Agent:
    agent = Agent(
        FunctionModel(scripted), name="refund-bot", output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
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

    return agent


async def main() -> int:
    journal_path, command, thread, state_file = sys.argv[1:5]
    agent = make_agent(Path(journal_path + ".refunds.log"))
    with Journal.open(journal_path, actor=Actor.agent("refund-bot")) as journal:
        gate = DeferredGate(journal, lease_seconds=float(os.environ.get("LEASE", "300")))
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
