"""`proctor mcp URL` and `proctor hook claude-code --journal URL` on a team journal (pg-core's real server, roles from `proctor team
init`): the MCP server runs as its own process with an agent login, connected over TCP; an
MCP host asks for approval and a question through it, an operator login decides and
answers; the host gets the decision and the answer, recorded as the operator's login.
Offline, no LLM."""

from __future__ import annotations

import sys
import time

import anyio
import team_fixtures
from mcp import Client, StdioServerParameters
from test_mcp import HOST, REFUND, desk_do, structured

from proctor.core import Actor, InboxFilter, InboxKind, Journal

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures


class Desk:
    """The operator login deciding through core, as tests/integrations' desk does."""

    def __init__(self, url: str, name: str) -> None:
        self.journal = Journal.open(url, actor=Actor.operator(name))

    def wait_pending(self, kind: str, timeout: float = 60.0) -> list:
        flt = InboxFilter(kinds=frozenset({InboxKind(kind)}), newest_first=False)
        deadline = time.monotonic() + timeout
        while not (items := self.journal.inbox.list(flt).items):
            if time.monotonic() > deadline:
                raise AssertionError(f"no pending {kind} after {timeout} s")
            self.journal.changes.wait(0.5)  # the server's notification, the poll behind it
        return items

    def approve(self, approval_id: str, reason: str) -> None:
        a = self.journal.approvals.get(approval_id)
        self.journal.approvals.decide(approval_id, True, expected_version=a.version, reason=reason)

    def answer(self, interaction_id: str, response: object) -> None:
        q = self.journal.questions.get(interaction_id)
        self.journal.questions.answer(interaction_id, response, expected_version=q.version)


def test_an_mcp_server_with_an_agent_login_gets_an_operator_logins_decision(team):
    desk = Desk(team.url("op_dana"), name="op_dana")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "proctor", "mcp", team.url("agent_a"), "--project", "team-mcp"],
    )

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        await desk_do(desk.approve, item.id, "fine")
        [question] = await desk_do(desk.wait_pending, "question")
        await desk_do(desk.answer, question.id, {"text": "staging"})

    async def main():
        async with Client(params, client_info=HOST) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            approved = structured(
                await c.call_tool(
                    "request_approval", {"action": REFUND, "reason": "on the team server"}
                )
            )
            answered = structured(
                await c.call_tool("ask_human", {"question": "Which environment?"})
            )
            return approved, answered

    try:
        approved, answered = anyio.run(main)
    finally:
        desk.journal.close()
    assert approved["status"] == "approved" and approved["decided_by"] == "operator:op_dana"
    assert answered["status"] == "answered" and answered["answer"] == {"text": "staging"}
    with team.owner() as conn:
        [(requested_by,)] = conn.execute("SELECT requested_by FROM approvals").fetchall()
    assert requested_by == "agent_a"  # the MCP server's login filed it


def test_a_server_journal_is_never_turned_into_a_file_or_a_token_file_name():
    import pytest

    from proctor.core.integrations.mcp.http import default_token_file
    from proctor.core.integrations.mcp.server import ProctorMCP

    url = "postgresql+psycopg://agent_a:s3cret@db.example.org:5432/proctor"
    assert ProctorMCP(url).journal_path == url  # not Path(url): a file named after it
    with pytest.raises(ValueError, match="--token-file") as err:
        default_token_file(url)
    assert "s3cret" not in str(err.value)


def test_a_claude_code_hook_with_an_agent_login_gets_an_operator_logins_decision(team):
    """`proctor hook claude-code --journal URL` as its own process (an agent login) files the
    tool call on the server; the operator login approves; the hook allows."""
    from test_claude_code_hook import EVENT, decision, result, start_hook

    desk = Desk(team.url("op_dana"), name="op_dana")
    try:
        hook = start_hook(team.url("agent_a"), EVENT)
        [item] = desk.wait_pending("approval")
        desk.approve(item.id, "build dir only")
        verdict, reason = decision(result(hook))
    finally:
        desk.journal.close()
    assert verdict == "allow" and "op_dana" in reason
