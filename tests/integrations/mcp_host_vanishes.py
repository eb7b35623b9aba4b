"""A host that starts `proctor mcp JOURNAL` over stdio, calls request_approval and dies
(os._exit) while the call waits: the server's stdin hits EOF and its stdout has no reader."""

from __future__ import annotations

import os
import shlex
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import Implementation


async def main(journal: str, errlog: str) -> None:
    server = " ".join(map(shlex.quote, [sys.executable, "-m", "proctor", "mcp", journal]))
    params = StdioServerParameters(
        command="sh", args=["-c", f"exec {server} 2>{shlex.quote(errlog)}"]
    )
    host = Implementation(name="vanishing-host", version="1")
    async with Client(params, client_info=host) as c, anyio.create_task_group() as tg:
        tg.start_soon(
            c.call_tool,
            "request_approval",
            {"action": {"tool": "refund", "args": {"amount": 1}}, "reason": "r"},
        )
        while not os.path.exists(journal + ".filed"):
            await anyio.sleep(0.02)
        os._exit(0)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
