"""The process on the other side of a stdio MCP server: its name (the agent), and whether
an error only says it went away."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

# client names that name the MCP library, not the agent (the Python SDK's DEFAULT_CLIENT_INFO,
# which pydantic-ai's and the OpenAI Agents SDK's MCP clients send unless told otherwise)
LIBRARY_NAMES = {"mcp"}
LAUNCHERS = {
    "uv",
    "uvx",
    "sh",
    "bash",
    "dash",
    "zsh",
    "env",
    "npx",
    "node",
    "python",
    "python3",
    "timeout",
}


def host_process_name(pid: int | None = None, depth: int = 4) -> str | None:
    """The name of the program that started this stdio server (the agent), skipping
    launchers (uv run, sh -c, env): its script's stem (``refund_agent`` for
    ``python refund_agent.py``) or its executable's name. None where /proc is not there."""
    found = host_process(pid, depth)
    return found[0] if found else None


def host_process(pid: int | None = None, depth: int = 4) -> tuple[str, int] | None:
    """(name, pid) of the program that started this stdio server, as host_process_name."""
    pid = os.getppid() if pid is None else pid
    for _ in range(depth):
        try:
            argv = [
                a.decode(errors="replace")
                for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if a
            ]
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        names = [Path(a).name for a in argv if not a.startswith("-")]
        script = next((Path(n).stem for n in names[1:] if n.endswith(".py")), None)
        if script:
            return script[:200], pid
        if names and Path(names[0]).name.split(".")[0] not in LAUNCHERS:
            return Path(names[0]).name[:200], pid
        pid = parent
    return None


HOST_GONE = (
    BrokenPipeError,
    ConnectionResetError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


def host_gone(exc: BaseException) -> bool:
    """The error only says the host closed the pipe (every leaf of an exception group)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(host_gone(e) for e in exc.exceptions)
    return isinstance(exc, HOST_GONE)


def quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail loudly."""
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
