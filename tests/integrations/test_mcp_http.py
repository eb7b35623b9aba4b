"""`proctor mcp --http`: the MCP SDK's streamable HTTP client against a real `proctor mcp --http`
subprocess; the operator decides through proctor.core. Offline, no LLM."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Implementation

HOST = Implementation(name="test-host", version="1.0")
REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}


class HttpServer:
    def __init__(
        self,
        journal: Path,
        token_file: Path,
        env: dict | None = None,
        extra: tuple[str, ...] = ("--session-idle", "0.5"),
    ) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "proctor",
                "mcp",
                str(journal),
                "--http",
                "--port",
                "0",
                "--token-file",
                str(token_file),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        line = self.proc.stderr.readline()
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", line)
        assert found, line + self.proc.stderr.read()
        self.url = found.group(1)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        finally:
            self.proc.kill()
            self.proc.stderr.close()
            self.proc.stdout.close()


@pytest.fixture
def http_server(journal_path, tmp_path):
    server = HttpServer(journal_path, tmp_path / "token")
    yield server
    server.stop()


def token_client(url: str, token: str | None, mode: str = "auto") -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return Client(
        streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)),
        client_info=HOST,
        mode=mode,
    )


def wait_ended(desk, run_id: str) -> str:
    deadline = time.monotonic() + 20
    while not desk.journal.runs.get(run_id).status.terminal:
        assert time.monotonic() < deadline, "the HTTP session's run was never closed"
        time.sleep(0.05)
    return desk.journal.runs.get(run_id).status


def structured(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_one_approval_end_to_end_over_http(http_server, tmp_path, desk, mode):
    """legacy (2025-11-25): a session per Mcp-Session-Id, ended by the client's DELETE;
    auto (2026-07-28): no session id, the agent's run ends once it is idle."""
    token_file = tmp_path / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()

    async def desk_side():
        [item] = await anyio.to_thread.run_sync(desk.wait_pending, "approval")
        await anyio.to_thread.run_sync(desk.approve, item.id, "fine over http")

    async def main():
        async with token_client(http_server.url, token, mode) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(
                await c.call_tool(
                    "request_approval", {"action": REFUND, "reason": "customer asked"}
                )
            )

    out = anyio.run(main)
    assert out["status"] == "approved" and out["reason"] == "fine over http"
    run = desk.journal.runs.get(out["run_id"])
    assert run.agent == "test-host"
    origin = desk.journal.approvals.get(out["id"]).origin
    assert (origin.runtime, origin.tool, origin.host) == ("mcp", "request_approval", "127.0.0.1")
    assert origin.client == "test-host 1.0" and origin.pid is None  # a remote peer
    assert wait_ended(desk, run.id) == "completed"


def test_no_token_or_a_wrong_one_is_401(http_server, tmp_path, desk):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    bare = httpx.post(http_server.url, json=body, headers=headers, timeout=10)
    wrong = httpx.post(
        http_server.url,
        json=body,
        timeout=10,
        headers={**headers, "Authorization": "Bearer not-the-token"},
    )
    assert (bare.status_code, wrong.status_code) == (401, 401)
    assert bare.headers["www-authenticate"].startswith("Bearer")

    async def sdk_without_token():
        async with token_client(http_server.url, None) as c:
            await c.call_tool("submit_approval", {"action": REFUND, "reason": "r"})

    with pytest.raises(Exception) as refused:  # noqa: PT011 - the SDK wraps the 401
        anyio.run(sdk_without_token)
    assert (
        refused.group_contains(MCPError, match="error response", depth=None)
        if isinstance(refused.value, BaseExceptionGroup)
        else True
    )
    assert desk.journal.runs.list().items == []  # nothing reached the journal


def test_a_kept_request_is_found_by_the_next_http_session(http_server, tmp_path, desk):
    token = (tmp_path / "token").read_text().strip()
    args = {"action": REFUND, "reason": "r", "idempotency_key": "refund-9"}

    async def once(tool: str, extra: dict | None = None):
        async with token_client(http_server.url, token) as c:
            return structured(await c.call_tool(tool, {**args, **(extra or {})}))

    filed = anyio.run(once, "request_approval", {"wait_s": 0.2})
    assert filed["status"] == "pending"
    desk.approve(filed["id"])
    again = anyio.run(once, "request_approval")
    assert again["id"] == filed["id"] and again["status"] == "approved"


def test_a_token_from_the_environment(journal_path, tmp_path, desk):
    token = "a-token-given-by-the-operator-0123456789"
    server = HttpServer(journal_path, tmp_path / "unused", env={"PROCTOR_MCP_TOKEN": token})
    try:
        assert not (tmp_path / "unused").exists()

        async def main():
            async with token_client(server.url, token) as c:
                return structured(
                    await c.call_tool("submit_question", {"question": "Which ticket?"})
                )

        assert anyio.run(main)["status"] == "pending"
    finally:
        assert server.stop() == 0


# ---- a cap on sessions, and idle ones closed: a local client cannot grow the server without
# bound (each session holds a journal handle and the SDK's state)

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "opener", "version": "1"},
    },
}


def open_session(http: httpx.Client, url: str) -> httpx.Response:
    """What an MCP 2025-11-25 client sends first: it opens a session (no Mcp-Session-Id)."""
    return http.post(url, json=INIT, headers={"Accept": "application/json, text/event-stream"})


def capped_server(journal_path, tmp_path, *, cap: int, idle: float) -> tuple[HttpServer, str]:
    server = HttpServer(
        journal_path,
        tmp_path / "token",
        extra=("--max-sessions", str(cap), "--session-idle", str(idle)),
    )
    return server, (tmp_path / "token").read_text().strip()


def test_a_session_past_the_cap_is_refused_with_503_and_a_message(journal_path, tmp_path):
    server, token = capped_server(journal_path, tmp_path, cap=3, idle=600)
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http:
            opened = [open_session(http, server.url) for _ in range(3)]
            assert [r.status_code for r in opened] == [200, 200, 200]
            ids = [r.headers["mcp-session-id"] for r in opened]
            for _ in range(5):  # a client retrying in a loop gets the same answer each time
                refused = open_session(http, server.url)
                assert refused.status_code == 503
                assert "mcp-session-id" not in refused.headers
                assert int(refused.headers["retry-after"]) >= 1
                message = refused.json()["error"]["message"]
                assert "3 sessions open" in message and "--max-sessions 3" in message
                assert "close one" in message
            # a session already open is unaffected by the cap
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            headers = {
                "Accept": "application/json, text/event-stream",
                "Mcp-Session-Id": ids[0],
                "Mcp-Protocol-Version": "2025-11-25",
            }
            assert http.post(server.url, json=ping, headers=headers).status_code == 200
            # the client's DELETE frees a place: the next one opens
            closed = http.delete(server.url, headers=headers)
            assert closed.status_code == 200
            assert open_session(http, server.url).status_code == 200
            assert open_session(http, server.url).status_code == 503
    finally:
        server.stop()


def texts(exc: BaseException) -> str:
    """Every message in an exception, its groups and causes (what a client could show)."""
    parts = [str(exc)]
    for inner in getattr(exc, "exceptions", ()):
        parts.append(texts(inner))
    if exc.__cause__ is not None:
        parts.append(texts(exc.__cause__))
    return " | ".join(parts)


def test_the_sdk_client_past_the_cap_shows_the_servers_message(journal_path, tmp_path):
    server, token = capped_server(journal_path, tmp_path, cap=1, idle=600)
    try:

        async def main() -> str:
            async with token_client(server.url, token, "legacy") as first:
                await first.list_tools()
                try:
                    async with token_client(server.url, token, "legacy") as second:
                        await second.list_tools()
                except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, its text
                    return texts(exc)
                return "opened"

        shown = anyio.run(main)
        assert "1 session open" in shown and "--max-sessions 1" in shown, shown
    finally:
        server.stop()


def test_idle_sessions_are_closed_and_free_their_place(journal_path, tmp_path):
    server, token = capped_server(journal_path, tmp_path, cap=2, idle=1)
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http:
            ids = [open_session(http, server.url).headers["mcp-session-id"] for _ in range(2)]
            assert open_session(http, server.url).status_code == 503
            deadline = time.monotonic() + 30  # idle 1 s: the SDK closes both, not in 30 min
            while (reply := open_session(http, server.url)).status_code == 503:
                assert time.monotonic() < deadline, "idle sessions were never closed"
                time.sleep(0.1)
            assert reply.status_code == 200
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            for sid in ids:  # the idle ones are gone: their ids answer 404
                answer = http.post(
                    server.url,
                    json=ping,
                    headers={
                        "Accept": "application/json, text/event-stream",
                        "Mcp-Session-Id": sid,
                        "Mcp-Protocol-Version": "2025-11-25",
                    },
                )
                assert answer.status_code == 404
    finally:
        server.stop()


def test_session_less_agents_past_the_cap_get_a_tool_error(journal_path, tmp_path, desk):
    """MCP 2026-07-28 clients send no session id: each agent name is a session with its run;
    a new name past the cap is refused with a tool error saying why."""
    server, token = capped_server(journal_path, tmp_path, cap=2, idle=600)
    try:

        async def call(name: str):
            headers = {"Authorization": f"Bearer {token}"}
            client = Client(
                streamable_http_client(
                    server.url, http_client=create_mcp_http_client(headers=headers)
                ),
                client_info=Implementation(name=name, version="1"),
                mode="auto",
            )
            async with client as c:
                return await c.call_tool("submit_approval", {"action": REFUND, "reason": "r"})

        async def main():
            return [await call(name) for name in ("agent-one", "agent-two", "agent-three")]

        one, two, three = anyio.run(main)
        assert not one.is_error and not two.is_error
        assert three.is_error
        text = three.content[0].text
        assert "TooManySessions" in text and "--max-sessions 2" in text
        runs = {r.agent for r in desk.journal.runs.list().items}
        assert runs == {"agent-one", "agent-two"}  # nothing was filed for the third
    finally:
        server.stop()
