"""A scripted MCP host that asks a person through `proctor mcp` (what an AI host does for real).

    pip install 'proctor[mcp]'
    python examples/mcp_agent.py ~/proctor-demo.db      # the "agent" waits...
    proctor-desk ~/proctor-demo.db                      # ...you decide here

It starts `proctor mcp JOURNAL` over stdio (as any MCP host would from its config), asks for
approval of a shell command (blocking, with progress), then files a question without blocking
and polls it with await_decision, as a host with short tool timeouts does.
"""

from __future__ import annotations

import argparse
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

CLEAN = {"tool": "shell", "args": {"command": "rm -rf build/"}}


async def show_progress(progress: float, total: float | None, message: str | None) -> None:
    print(f"  ... {message} ({progress:.0f} s)", flush=True)


async def run(journal: str) -> dict:
    server = StdioServerParameters(command=sys.executable, args=["-m", "proctor", "mcp", journal])
    async with Client(server, client_info=Implementation(name="demo-host", version="1.0")) as c:
        print("asking for approval to clean the build folder", flush=True)
        result = await c.call_tool(
            "request_approval",
            {
                "action": CLEAN,
                "reason": "clean build before the release",
                "safety_class": "destructive",
                "idempotency_key": "clean-build-1",
            },
            progress_callback=show_progress,
        )
        approval = result.structured_content
        print(f"approval: {approval['status']} ({approval['reason'] or 'no reason given'})")

        result = await c.call_tool(
            "submit_question",
            {
                "question": "Which branch should I release?",
                "options": ["main", "release-1.2"],
                "idempotency_key": "branch-1",
            },
        )
        question = result.structured_content
        while question["status"] == "pending":  # short calls, as hosts with short timeouts do
            result = await c.call_tool("await_decision", {"id": question["id"], "wait_s": 20})
            question = result.structured_content
        print(f"answer: {question['answer']}")
        return {"approval": approval, "question": question}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("journal")
    args = p.parse_args()
    anyio.run(run, args.journal)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
