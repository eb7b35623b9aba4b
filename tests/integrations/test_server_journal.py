"""A journal on a PostgreSQL server, end to end: agents in other processes connect over TCP
(as agents on other hosts do) through MCP, the Claude Code hook and LangGraph; the operator
decides through proctor.core and the CLI; each agent sees exactly the decision made.

The server is the session's real PostgreSQL (tests/pg_server.py), never a mock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from proctor.core import Actor, Journal

HOST = Implementation(name="remote-host", version="1.0")
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langgraph_refund_agent.py"


def test_an_mcp_agent_process_is_decided_on_a_server_journal(pg_url, server_desk):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proctor", "mcp", pg_url, "--project", "remote"]
    )
    action = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}

    async def desk_side():
        [item] = await anyio.to_thread.run_sync(server_desk.wait_pending, "approval")
        await anyio.to_thread.run_sync(server_desk.deny, item.id, "not on a Friday")

    async def main():
        async with Client(params, client_info=HOST) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            result = await c.call_tool(
                "request_approval", {"action": action, "reason": "customer asked"}
            )
            assert not result.is_error, result.content
            return result.structured_content

    denied = anyio.run(main)
    assert denied["status"] == "denied" and denied["approved"] is False
    assert denied["reason"] == "not on a Friday"
    stored = server_desk.journal.approvals.get(denied["id"])
    assert stored.action == action and stored.status.value == "denied"
    assert server_desk.journal.runs.get(denied["run_id"]).project == "remote"


def test_a_claude_code_hook_is_allowed_by_the_cli_on_a_server_journal(pg_url, server_desk):
    event = {
        "session_id": "sess-remote",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make test"},
        "tool_use_id": "toolu_remote",
    }
    hook = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proctor",
            "hook",
            "claude-code",
            "--journal",
            pg_url,
            "--timeout",
            "60",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PROCTOR_JOURNAL": ""},
    )
    try:
        assert hook.stdin is not None
        hook.stdin.write(json.dumps(event))
        hook.stdin.close()
        [item] = server_desk.wait_pending("approval", timeout=60)
        approved = subprocess.run(
            [
                sys.executable,
                "-m",
                "proctor",
                "approve",
                item.id,
                "--yes",
                "--journal",
                pg_url,
                "--as",
                "carol",
                "--reason",
                "tests only",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert approved.returncode == 0, approved.stderr
        out = hook.stdout.read() if hook.stdout else ""
        err = hook.stderr.read() if hook.stderr else ""
        assert hook.wait(timeout=60) == 0, err
    finally:
        hook.kill()
    spec = json.loads(out)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "allow", spec
    stored = server_desk.journal.approvals.get(item.id)
    assert stored.status.value == "approved"
    assert stored.action["args"] == {"command": "make test"}


def test_the_langgraph_example_proceeds_on_a_server_journal(pg_url, server_desk, tmp_path):
    state = tmp_path / "refund-agent"
    agent = subprocess.Popen(
        [sys.executable, str(EXAMPLE), pg_url, "--state", str(state), "--timeout", "90"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        [approval] = server_desk.wait_pending("approval", timeout=60)
        server_desk.approve(approval.id)
        [question] = server_desk.wait_pending("question", timeout=60)
        server_desk.answer(question.id, {"env": "staging"})
        out, err = agent.communicate(timeout=90)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    final = json.loads(out.strip().splitlines()[-1])
    assert final["done"] is True and final["values"]["env"] == "staging"
    assert Path(f"{state}.refunds.log").read_text().splitlines() == ["REFUND 4200 EUR acct-9"]


def test_the_langgraph_example_on_a_server_journal_needs_a_state_prefix(pg_url):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), pg_url, "--step", "start"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "--state PREFIX" in done.stderr


def test_an_agent_journal_over_tcp_sees_the_operators_decision(pg_url):
    """The core API itself, two connections as two hosts would hold them."""
    with (
        Journal.open(pg_url, actor=Actor.agent("remote-bot")) as agent,
        Journal.open(pg_url, actor=Actor.operator("alice")) as operator,
    ):
        run = agent.runs.start("remote", "Rotate keys", agent="remote-bot")
        asked = agent.approvals.request(
            run.id, {"tool": "kms.rotate", "args": {"key": "k1"}}, reason="quarterly"
        )
        operator.approvals.decide(asked.id, True, expected_version=asked.version)
        seen = agent.approvals.get(asked.id)
        assert seen.status.value == "approved"


def test_mcp_over_http_on_a_server_journal_needs_a_named_token_file(pg_url, tmp_path):
    """Beside a file the token is JOURNAL.mcp-token; a URL is no folder (and may carry a
    password): the token file must be named."""
    import pytest

    from proctor.core.integrations.mcp.http import default_token_file

    with pytest.raises(ValueError, match="--token-file"):
        default_token_file(pg_url)
    assert default_token_file(tmp_path / "j.db") == tmp_path / "j.db.mcp-token"
