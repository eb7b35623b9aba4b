"""Where a request came from (``Origin``): built by the integration that files it, stored on
the row as canonical JSON, read back leniently (a stored origin that is not one reads as
"unreadable", never as an error that hides the request)."""

from __future__ import annotations

import functools
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from proctor.core.models import Origin

from .canonical import canonical_json

TEXT_MAX = 200  # each field is cut to this many characters (it is the agent's word)
UNREADABLE = Origin(runtime="(unreadable origin)")


def program_name() -> str:
    """This process's program: its script's stem, or its executable's name."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else sys.executable
    name = Path(argv0).name
    if name in ("-c", "-m", "") or name.startswith("__main__"):
        name = Path(sys.executable).name
    return Path(name).stem if name.endswith(".py") else name


def here(
    runtime: str,
    *,
    tool: str | None = None,
    client: str | None = None,
    process: str | None = None,
    pid: int | None = None,
) -> Origin:
    """An origin in this process: its program name, pid and host name unless given."""
    return make(
        runtime=runtime,
        tool=tool,
        client=client,
        process=process or program_name(),
        pid=os.getpid() if pid is None else pid,
        host=socket.gethostname(),
    )


def make(**fields: Any) -> Origin:
    """An Origin from agent-reported fields, each text cut to ``TEXT_MAX`` characters; a pid
    that is not a non-negative int is dropped."""

    def cut(value: Any) -> str | None:
        return None if value is None else str(value)[:TEXT_MAX]

    pid = fields.get("pid")
    return Origin(
        runtime=cut(fields.get("runtime")) or "unknown",
        process=cut(fields.get("process")),
        host=cut(fields.get("host")),
        tool=cut(fields.get("tool")),
        client=cut(fields.get("client")),
        pid=pid
        if isinstance(pid, int) and not isinstance(pid, bool) and 0 <= pid < 2**63
        else None,
    )


def to_text(origin: Origin | dict | None) -> str | None:
    """The column value: canonical JSON of the origin, None for none."""
    if origin is None:
        return None
    value = origin if isinstance(origin, Origin) else make(**origin)
    return canonical_json(value.model_dump(exclude_none=True))


def default_for(actor_kind: str, origin: Origin | dict | None) -> str | None:
    """What a filing stores: the origin given; an agent that gives none filed through the
    Python API of this process ("python"); an operator's own filing has none."""
    if origin is not None:
        return to_text(origin)
    if actor_kind != "agent":
        return None
    argv0 = sys.argv[0] if sys.argv else None
    return _python_here(os.getpid(), argv0, sys.executable, socket.gethostname())


@functools.lru_cache(maxsize=8)
def _python_here(pid: int, argv0: str | None, executable: str, host: str) -> str | None:
    """``to_text(here("python"))`` for this process as it is now (what it depends on is the
    key: a forked child, a changed argv or host name makes it anew)."""
    return to_text(here("python"))


def from_text(text: str | None) -> Origin | None:
    if text is None:
        return None
    return _from_text(text) if len(text) <= _CACHED_TEXT else _from_text.__wrapped__(text)


_CACHED_TEXT = 4096  # a longer (tampered) text is parsed each time, never kept


@functools.lru_cache(maxsize=256)
def _from_text(text: str) -> Origin:
    """An origin's column text read (Origin is frozen: one model serves every read of the
    same text)."""
    try:
        data = json.loads(text)
        return make(**data) if isinstance(data, dict) else UNREADABLE
    except (ValueError, TypeError, ValidationError):
        return UNREADABLE


def describe(origin: Origin | None) -> str:
    """One line for people: "mcp · refund_agent (pid 4242 on host-a) · tool request_approval ·
    client refund-bot 1.0". Agent text: escape it for display (``safe_text.visible``)."""
    if origin is None:
        return "not reported"
    where = " on ".join(
        p for p in (f"pid {origin.pid}" if origin.pid is not None else None, origin.host) if p
    )
    proc = " ".join(p for p in (origin.process, f"({where})" if where else None) if p)
    parts = [
        origin.runtime,
        proc or None,
        f"tool {origin.tool}" if origin.tool else None,
        f"client {origin.client}" if origin.client else None,
    ]
    return " · ".join(p for p in parts if p)


def short(origin: Origin | None) -> str:
    """The compact form for a row: "via mcp/refund_agent"."""
    if origin is None:
        return ""
    return "via " + "/".join(p for p in (origin.runtime, origin.process) if p)
