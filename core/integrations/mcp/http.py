"""`proctor mcp --http JOURNAL`: the same MCP tools over MCP's streamable HTTP transport, for
agents in other processes and languages.

- Bound to 127.0.0.1 by default (the SDK's DNS-rebinding protection is on for localhost).
- Every HTTP request must carry ``Authorization: Bearer <token>``; without it, or with another
  token, the answer is 401 and nothing reaches the MCP server. The token comes from
  ``PROCTOR_MCP_TOKEN`` or is generated and written to a file only its owner can read (0600).
- Each MCP session (``Mcp-Session-Id``, protocol 2025-11-25) is one run, as one stdio process
  is; the session's end (the client's DELETE, the SDK's idle timeout) closes it under the same
  rule as stdio: what it filed without an idempotency key is withdrawn, what it kept stays for
  the next session. A 2026-07-28 client sends no session id (each request stands alone): its
  calls share one run per agent name, closed the same way once it made no call for
  ``session_idle_s`` (default 300 s).
- **Bounded.** The server keeps at most ``max_sessions`` sessions (default 64; each holds a
  journal handle and the SDK's session state): a request that would open one more gets HTTP
  503 with ``Retry-After`` and a JSON-RPC error whose message says why and what to do; a
  session-less agent name past the cap gets a tool error saying the same. A session with no
  request for ``session_idle_s`` is closed (the SDK's own idle timeout, set to it instead of
  its 30 minutes), which frees its place.
"""

from __future__ import annotations

import hmac
import logging
import math
import os
import secrets
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import anyio

from .server import ProctorMCP
from .sessions import too_many

log = logging.getLogger(__name__)

TOKEN_ENV = "PROCTOR_MCP_TOKEN"
MIN_TOKEN = 16
REAP_EVERY_S = 1.0
MAX_SESSIONS = 64


class BearerToken:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` (compared in
    constant time) gets 401 and never reaches the app; lifespan events pass."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            given = next((v for k, v in scope.get("headers", []) if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                await refuse(send)
                return
        await self.app(scope, receive, send)


async def refuse(send: Any) -> None:
    body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="proctor"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def resolve_token(token_file: Path) -> tuple[str, str]:
    """(token, where it came from): ``PROCTOR_MCP_TOKEN`` if set, else a new token written to
    ``token_file`` (mode 0600, replacing an older one)."""
    given = os.environ.get(TOKEN_ENV)
    if given is not None:
        if len(given) < MIN_TOKEN:
            raise ValueError(f"${TOKEN_ENV} is shorter than {MIN_TOKEN} characters")
        return given, f"${TOKEN_ENV}"
    token = secrets.token_urlsafe(32)
    token_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = token_file.with_name(token_file.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.replace(tmp, token_file)
    return token, str(token_file)


def default_token_file(journal_path: str | os.PathLike[str]) -> Path:
    """``JOURNAL.mcp-token`` beside a journal file; a server journal has no folder of its
    own (and its URL may carry a password): the token file must be named."""
    if "://" in str(journal_path) and not str(journal_path).startswith("sqlite:///"):
        raise ValueError(
            f"a server journal has no folder for the token: give --token-file FILE or ${TOKEN_ENV}"
        )
    return Path(str(journal_path).removeprefix("sqlite:///") + ".mcp-token")


class SessionCap:
    """ASGI middleware: a request that would open a session (no ``Mcp-Session-Id``, a
    2025-era or absent protocol version, as the SDK routes it) while ``limit`` are open gets
    503, ``Retry-After`` and a message a client can show; it never reaches the SDK. The SDK's
    own ``max_sessions`` (the same number) stays behind it for a race between two openers."""

    def __init__(self, app: Any, manager: Any, limit: int, idle_s: float) -> None:
        self.app, self.manager, self.limit, self.idle_s = app, manager, limit, idle_s

    def open_sessions(self) -> int:
        return len(getattr(self.manager, "_server_instances", {}))  # mcp 2.x

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        opening = scope["type"] == "http" and scope.get("method") == "POST"
        if opening and opens_session(scope) and self.open_sessions() >= self.limit:
            await too_many_sessions(send, self.limit, self.idle_s)
            return
        await self.app(scope, receive, send)


def opens_session(scope: dict) -> bool:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    headers = dict(scope.get("headers", []))
    version = headers.get(b"mcp-protocol-version")
    return b"mcp-session-id" not in headers and (
        version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
    )


async def too_many_sessions(send: Any, limit: int, idle_s: float) -> None:
    import json

    message = "Proctor: " + too_many(limit, idle_s)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", str(max(1, math.ceil(idle_s))).encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    proctor: ProctorMCP,
    token: str,
    host: str,
    *,
    max_sessions: int = MAX_SESSIONS,
    idle_s: float = 300.0,
) -> tuple[Any, Any]:
    """(the ASGI app behind the token check and the session cap, the SDK's session manager
    or None)."""
    app = proctor.server.streamable_http_app(
        host=host, max_sessions=max_sessions, session_idle_timeout=idle_s
    )
    manager = getattr(proctor.server._lowlevel_server, "_session_manager", None)  # mcp 2.x
    proctor.max_sessions, proctor.session_idle_s = max_sessions, idle_s
    return BearerToken(SessionCap(app, manager, max_sessions, idle_s), token), manager


async def reap_ended_sessions(proctor: ProctorMCP, manager: Any, idle_s: float) -> None:
    """Close the runs of HTTP sessions the SDK has discarded (DELETE, idle timeout, crash),
    and of session-less (2026-07-28) agents idle for ``idle_s``. The SDK gives no hook for
    the first; its session table (``_server_instances``, mcp 2.x) is read every second."""
    while True:
        await anyio.sleep(REAP_EVERY_S)
        sessions = proctor.sessions
        if sessions is None:
            continue
        await sessions.close_idle(
            idle_s, f"no call for {idle_s:g} s (MCP over HTTP without a session)"
        )
        live = getattr(manager, "_server_instances", None)
        if live is None:
            continue
        known = {f"http:{sid[:100]}" for sid in list(live)}
        gone = [k for k in list(sessions.by_client) if k.startswith("http:") and k not in known]
        if gone:
            await sessions.close(gone, "the MCP session ended")


def quiet_server_class() -> type:
    import contextlib

    import uvicorn

    class QuietServer(uvicorn.Server):
        """uvicorn without its own signal handling (it re-raises the signal after the
        shutdown); serve_http stops it on SIGTERM/SIGINT and exits 0."""

        def capture_signals(self) -> Any:
            return contextlib.nullcontext()

    return QuietServer


def serve_http(
    journal_path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    project: str = "mcp",
    agent: str | None = None,
    trust: Any = None,
    token_file: str | os.PathLike[str] | None = None,
    session_idle_s: float = 300.0,
    max_sessions: int = MAX_SESSIONS,
) -> None:
    """Serve until SIGTERM/SIGINT. Prints the URL (and where the token is) on stderr."""
    if max_sessions < 1 or not math.isfinite(session_idle_s) or session_idle_s <= 0:
        raise ValueError("--max-sessions must be at least 1 and --session-idle above 0")
    import uvicorn

    QuietServer = quiet_server_class()  # noqa: N806
    if token_file is None and os.environ.get(TOKEN_ENV) is not None:
        token, source = resolve_token(Path(os.devnull))  # the variable's; no file is written
    else:
        token, source = resolve_token(
            Path(token_file) if token_file else default_token_file(journal_path)
        )
    proctor = ProctorMCP(journal_path, project=project, agent=agent, trust=trust)
    app, manager = build_app(proctor, token, host, max_sessions=max_sessions, idle_s=session_idle_s)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"proctor mcp: serving http://{shown}:{bound}/mcp (bearer token: {source})",
        file=sys.stderr,
        flush=True,
    )
    server = QuietServer(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        server.should_exit = True
                        return

            async def serve() -> None:
                await server.serve(sockets=[sock])
                tg.cancel_scope.cancel()

            tg.start_soon(stop_on_signal)
            tg.start_soon(serve)
            tg.start_soon(reap_ended_sessions, proctor, manager, session_idle_s)

    try:
        anyio.run(main)
    finally:
        sock.close()


__all__ = ["BearerToken", "SessionCap", "serve_http"]
