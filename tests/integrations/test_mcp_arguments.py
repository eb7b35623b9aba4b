"""`proctor mcp` refuses arguments a tool does not declare, with an error naming them: a
misspelt ``idempotencyKey`` is never silently dropped (the operator would be asked twice)."""

from __future__ import annotations

import anyio
from mcp import Client
from mcp_types import Implementation

from proctor.core import Actor, Journal
from proctor.core.integrations.mcp.server import ProctorMCP

HOST = Implementation(name="test-host", version="1.0")
REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}


def test_unknown_arguments_are_refused_and_file_nothing(journal_path):
    async def main():
        server = ProctorMCP(journal_path, poll_s=0.02, progress_every_s=0.1).server
        async with Client(server, client_info=HOST) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            camel = await c.call_tool(
                "submit_approval", {"action": REFUND, "reason": "r", "idempotencyKey": "k-1"}
            )
            extra = await c.call_tool("await_decision", {"id": "apr_x", "wait": 1})
            return tools, camel, extra

    tools, camel, extra = anyio.run(main)
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
    assert camel.is_error and "idempotencyKey" in camel.content[0].text
    assert extra.is_error and "'wait'" in extra.content[0].text
    with Journal.open(journal_path, actor=Actor.operator("check")) as j:
        assert [a for r in j.runs.list().items for a in j.approvals.for_run(r.id)] == []


def test_deciding_a_withdrawn_request_says_withdrawn_not_decided(journal_path, desk):
    from proctor.core import errors

    with Journal.open(journal_path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("mcp", "t")
        a = agent.approvals.request(run.id, REFUND, reason="r")
        q = agent.questions.ask(run.id, "question", "Name?")
        agent.approvals.withdraw(a.id, "the MCP client timed out")
        agent.questions.withdraw(q.id, "the MCP client timed out")
    for call, why in (
        (lambda: desk.approve(a.id), "the MCP client timed out"),
        (lambda: desk.answer(q.id, {"text": "Ada"}), ""),
    ):
        try:
            call()
        except errors.Withdrawn as err:
            text = f"{err} {err.hint}"
        else:
            raise AssertionError("a withdrawn request was decided")
        assert "withdrawn" in text and why in text
        assert "decided already" not in text


def test_the_host_going_away_mid_wait_ends_the_server_quietly(journal_path, desk, tmp_path):
    import subprocess
    import sys
    import time
    from pathlib import Path

    errlog = tmp_path / "server.err"
    host = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("mcp_host_vanishes.py")),
            str(journal_path),
            str(errlog),
        ]
    )
    [item] = desk.wait_pending("approval")
    Path(str(journal_path) + ".filed").touch()
    assert host.wait(timeout=60) == 0
    deadline = time.monotonic() + 60
    while desk.journal.approvals.get(item.id).status == "pending":
        assert time.monotonic() < deadline, "the orphaned request stayed pending"
        time.sleep(0.05)
    run_id = desk.journal.approvals.get(item.id).run_id
    while not desk.journal.runs.get(run_id).status.terminal:  # the server closed its session
        assert time.monotonic() < deadline, "the server did not end the session"
        time.sleep(0.05)
    text = errlog.read_text()
    assert "Traceback" not in text and "BrokenPipe" not in text, text
    assert desk.journal.approvals.get(item.id).status == "cancelled"


def test_a_host_that_does_not_name_itself_is_recorded_by_its_own_name(journal_path, desk):
    import subprocess
    import sys
    from pathlib import Path

    host = Path(__file__).with_name("refund_agent_host.py")
    subprocess.run([sys.executable, str(host), str(journal_path)], check=True, timeout=60)
    [a] = [a for r in desk.journal.runs.list().items for a in desk.journal.approvals.for_run(r.id)]
    assert a.agent == "refund_agent_host"  # not "mcp", the library's default client name
    assert desk.journal.runs.get(a.run_id).agent == "refund_agent_host"
