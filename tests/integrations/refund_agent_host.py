"""An MCP host that does not name itself (the SDK's default client info, name "mcp"), as
pydantic-ai's and the OpenAI Agents SDK's MCP clients do: submits one approval and exits."""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters


async def main(journal: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "proctor", "mcp", journal])
    async with Client(params) as c:
        await c.call_tool(
            "submit_approval", {"action": {"tool": "refund", "args": {}}, "reason": "r"}
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
