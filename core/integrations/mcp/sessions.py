"""The client sessions of one Proctor MCP server: one per stdio process or in-memory client,
one per ``Mcp-Session-Id`` over HTTP (or per agent name until idle), each with its run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import Context

from proctor.core import errors
from proctor.core.journal import Journal

from .tools import tool_error

if TYPE_CHECKING:
    from .server import ProctorMCP


@dataclass
class Session:
    """One MCP client session: its own journal handle (as that agent) and its run."""

    journal: Journal
    run_id: str
    agent: str
    key: str = ""  # its key in Sessions.by_client
    origin: dict[str, Any] = field(default_factory=dict)  # Origin fields but the tool
    in_flight: int = 0  # tool calls running now
    last_seen: float = 0.0  # anyio clock: when its last call ended


@dataclass
class Sessions:
    """The sessions of one server lifespan (stdio: one process; in-memory: one client)."""

    server: ProctorMCP
    by_client: dict[str, Session] = field(default_factory=dict)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    # how many sessions it keeps at once (None: no cap); a new one past it is refused
    limit: int | None = None
    idle_s: float | None = None  # after how long without a call one is closed (for the refusal)

    @asynccontextmanager
    async def using(self, ctx: Context) -> AsyncIterator[Session]:
        """The caller's session (opened on its first call) for the length of one call; a
        session is never closed for idleness while a call of it runs."""
        agent, meta = self.server.client_identity(ctx)
        # stdio and in memory: one session per lifespan; HTTP: one per Mcp-Session-Id, or
        # (MCP 2026-07-28 sends none) one per agent name until it is idle
        key = http_session_id(ctx) or agent
        async with self.lock:
            session = self.by_client.get(key)
            if session is None:
                self.refuse_past_limit()
                session = await anyio.to_thread.run_sync(self.server.open_session, agent, meta)
                session.key = key
                self.by_client[key] = session
            session.in_flight += 1
        try:
            yield session
        finally:
            session.in_flight -= 1
            session.last_seen = anyio.current_time()

    def refuse_past_limit(self) -> None:
        if self.limit is not None and len(self.by_client) >= self.limit:
            raise tool_error(errors.TooManySessions(too_many(self.limit, self.idle_s)))

    async def close_idle(self, idle_s: float, reason: str) -> None:
        """Close the sessions without a session id that made no call for ``idle_s``."""
        now = anyio.current_time()
        async with self.lock:
            idle = [
                k
                for k, s in self.by_client.items()
                if not k.startswith("http:") and s.in_flight == 0 and now - s.last_seen >= idle_s
            ]
        await self.close(idle, reason, only_idle=True)

    async def close(self, keys: list[str], reason: str, *, only_idle: bool = False) -> None:
        """Close the sessions under ``keys`` (their connection is gone); ``only_idle``: those
        with no call running now."""
        with anyio.CancelScope(shield=True):
            async with self.lock:
                closing = [
                    self.by_client.pop(k)
                    for k in keys
                    if k in self.by_client and not (only_idle and self.by_client[k].in_flight)
                ]
            for session in closing:
                await anyio.to_thread.run_sync(self.server.close_session, session, reason)

    async def close_all(self, reason: str) -> None:
        await self.close(list(self.by_client), reason)


def http_session_id(ctx: Context) -> str | None:
    """The MCP session id of a streamable-HTTP request (None over stdio and in memory)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{sid[:100]}" if sid else None


def too_many(limit: int, idle_s: float | None) -> str:
    """The refusal a client shows when the server keeps ``limit`` sessions already."""
    wait = f"; an idle one is closed after {idle_s:g} s without a call" if idle_s else ""
    return (
        f"the Proctor MCP server has {limit} session{'s' if limit != 1 else ''} open, as "
        "many as it keeps "
        f"(--max-sessions {limit}): close one (HTTP DELETE) or retry later{wait}"
    )
