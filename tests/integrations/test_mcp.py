"""`proctor mcp`: the SDK's own Client (in memory and over stdio) against the server, with the
operator deciding through proctor.core in a worker thread. Offline, no LLM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

from proctor.core import errors
from proctor.core.integrations.mcp.server import ProctorMCP

HOST = Implementation(name="test-host", version="1.0")
REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}
ENV_SCHEMA = {
    "type": "object",
    "properties": {"env": {"enum": ["staging", "prod"]}},
    "required": ["env"],
    "additionalProperties": False,
}


def client(path, mode: str = "auto", **kw: Any) -> Client:
    server = ProctorMCP(path, poll_s=0.02, progress_every_s=0.1).server
    return Client(server, mode=mode, client_info=HOST, **kw)


async def desk_do(fn, *args) -> Any:
    return await anyio.to_thread.run_sync(fn, *args)


async def give_up(c: Client, tool: str, args: dict, *, once: Callable[[], object]) -> None:
    """Call ``tool`` and abandon the call, as a client timeout does, once ``once()`` (run in a
    thread) returns: the server sees the cancellation at a known point, however slow the
    machine is."""
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await c.call_tool(tool, args)
            raise AssertionError(f"{tool} returned before it was abandoned")

        tg.start_soon(call)
        await anyio.to_thread.run_sync(once)
        tg.cancel_scope.cancel()


def structured(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_approve_and_deny_with_reason(journal_path, desk, mode):
    progress: list[float] = []

    async def on_progress(value, total, message):
        progress.append(value)

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        await anyio.sleep(0.25)  # the caller waits meanwhile, with progress notifications
        await desk_do(desk.approve, item.id)
        [item] = await desk_do(desk.wait_pending, "approval")
        await desk_do(desk.deny, item.id, "not on a Friday")

    async def main():
        async with client(journal_path, mode) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            first = structured(
                await c.call_tool(
                    "request_approval",
                    {"action": REFUND, "reason": "customer asked"},
                    progress_callback=on_progress,
                )
            )
            second = structured(
                await c.call_tool(
                    "request_approval", {"action": {"tool": "deploy"}, "reason": "release"}
                )
            )
            return first, second

    first, second = anyio.run(main)
    assert first["status"] == "approved" and first["approved"] is True
    assert first["decided_by"] == "operator:alice"
    assert second["status"] == "denied" and second["approved"] is False
    assert second["reason"] == "not on a Friday"
    assert progress and progress == sorted(progress)

    j = desk.journal
    run = j.runs.get(first["run_id"])
    assert run.agent == "test-host" and run.project == "mcp"
    assert second["run_id"] == run.id  # one session, one run
    assert run.status == "completed"  # the session ended
    calls = j.runs.tool_calls(run.id)
    assert [(c.tool, c.status) for c in calls] == [("mcp.request_approval", "succeeded")] * 2
    assert j.approvals.get(first["id"]).tool_call_id == calls[0].id


def test_schema_question_invalid_answer_refused_then_answered(journal_path, desk):
    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "question")
        with pytest.raises(errors.ValidationError) as refused:
            await desk_do(desk.answer, item.id, {"env": "qa"})
        assert refused.value.field == "env"
        assert desk.journal.questions.get(item.id).status == "requested"  # still open
        await desk_do(desk.answer, item.id, {"env": "staging"}, "staging is free today")

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(
                await c.call_tool(
                    "ask_human", {"question": "Which environment?", "response_schema": ENV_SCHEMA}
                )
            )

    out = anyio.run(main)
    assert out["status"] == "answered"
    assert out["answer"] == {"env": "staging"}
    assert out["reason"] == "staging is free today"
    assert desk.journal.questions.get(out["id"]).kind == "form"


def test_a_dismissed_question_is_told_as_such_never_as_an_empty_answer(journal_path, desk):
    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "question")
        await desk_do(
            lambda: desk.journal.questions.dismiss(
                item.id, "out of scope", expected_version=item.version
            )
        )

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(await c.call_tool("ask_human", {"question": "Which color?"}))

    out = anyio.run(main)
    assert out["status"] == "dismissed" and out["answer"] is None
    assert out["reason"] == "dismissed by the operator: out of scope"
    assert out["decided_by"] == desk.journal.actor.label


def test_bad_requests_are_tool_errors(journal_path):
    async def main():
        async with client(journal_path) as c:
            no_tool = await c.call_tool("request_approval", {"action": {"x": 1}, "reason": "r"})
            bad_schema = await c.call_tool(
                "submit_question", {"question": "q", "response_schema": {"type": "nope"}}
            )
            unknown = await c.call_tool("await_decision", {"id": "xyz", "wait_s": 0})
            too_long = await c.call_tool("await_decision", {"id": "apr_1", "wait_s": 51})
            return no_tool, bad_schema, unknown, too_long

    results = anyio.run(main)
    assert all(r.is_error for r in results)
    assert "'tool' name" in results[0].content[0].text
    assert "response_schema" in results[1].content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_giving_up_withdraws_the_request(journal_path, desk, mode):
    async def main():
        async with client(journal_path, mode) as c:
            await give_up(
                c,
                "request_approval",
                {"action": REFUND, "reason": "r"},
                once=lambda: desk.wait_pending("approval"),
            )
            await give_up(
                c,
                "ask_human",
                {"question": "Still there?"},
                once=lambda: desk.wait_pending("question"),
            )
            # the withdrawal is written before the session goes on
            with anyio.fail_after(10):
                while desk.journal.inbox.count() != 0:
                    await anyio.sleep(0.02)
            return desk.journal.runs.list().items[0].id

    run_id = anyio.run(main)
    j = desk.journal
    [approval] = j.approvals.for_run(run_id)
    [question] = j.questions.for_run(run_id)
    assert approval.status == "cancelled" and question.status == "cancelled"
    assert [e.action for e in j.audit.for_entity(approval.id)] == ["approval.withdrawn"]
    assert [e.action for e in j.audit.for_entity(question.id)] == ["interaction.withdrawn"]
    with pytest.raises(errors.AlreadyDecided):
        desk.approve(approval.id)
    calls = j.runs.tool_calls(run_id)
    assert [c.status for c in calls] == ["failed", "failed"]
    assert all("cancelled" in c.error for c in calls)


class SlowFiling(ProctorMCP):
    """Filing blocks until the test lets it go: the client times out while the request is
    still being written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.filing = threading.Event()
        self.go_on = threading.Event()

    def file_approval(self, *args: Any, **kwargs: Any):
        self.filing.set()
        self.go_on.wait(30)
        return super().file_approval(*args, **kwargs)


def test_a_request_filed_after_the_client_timed_out_is_withdrawn(journal_path, desk):
    mcp = SlowFiling(journal_path, poll_s=0.02, progress_every_s=0.1)

    async def main():  # over JSON-RPC: the client's timeout does not wait for the server
        async with Client(mcp.server, mode="legacy", client_info=HOST) as c:
            with pytest.raises(MCPError, match=r"[Tt]imed out"):
                await c.call_tool(
                    "request_approval", {"action": REFUND, "reason": "r"}, read_timeout_seconds=3
                )
            assert mcp.filing.is_set(), "the call timed out before it began filing"
            mcp.go_on.set()
            with anyio.fail_after(20):
                while not [
                    a
                    for r in desk.journal.runs.list().items
                    for a in desk.journal.approvals.for_run(r.id)
                    if a.status == "cancelled"
                ]:
                    await anyio.sleep(0.02)

    anyio.run(main)
    [run] = desk.journal.runs.list().items
    [call] = desk.journal.runs.tool_calls(run.id)
    assert call.status == "failed" and "cancelled" in call.error


def test_three_concurrent_blocked_calls_on_one_session(journal_path, desk):
    results: dict[str, dict] = {}

    async def call(c, name, args):
        results[name] = structured(await c.call_tool(name.split(":")[0], args))

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(call, c, "request_approval:a", {"action": REFUND, "reason": "a"})
            tg.start_soon(
                call, c, "request_approval:b", {"action": {"tool": "deploy"}, "reason": "b"}
            )
            tg.start_soon(
                call, c, "ask_human:c", {"question": "Colour?", "options": ["red", "blue"]}
            )
            approvals = await desk_do(desk.wait_pending, "approval", 2)
            [question] = await desk_do(desk.wait_pending, "question", 1)
            by_action = {desk.journal.approvals.get(a.id).action_name: a.id for a in approvals}
            await desk_do(desk.answer, question.id, {"choice": "blue"})
            await desk_do(desk.deny, by_action["deploy"], "freeze")
            await desk_do(desk.approve, by_action["refund"])

    anyio.run(main)
    assert results["request_approval:a"]["status"] == "approved"
    assert results["request_approval:b"]["status"] == "denied"
    assert results["ask_human:c"]["answer"] == {"choice": "blue"}
    assert len({r["run_id"] for r in results.values()}) == 1


def test_retried_call_with_the_same_key_rejoins_the_same_request(journal_path, desk):
    args = {"action": REFUND, "reason": "customer asked", "idempotency_key": "refund-acct-9"}

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            submitted = structured(await c.call_tool("submit_approval", args))
            again = structured(await c.call_tool("submit_approval", args))
            assert again["id"] == submitted["id"] and again["status"] == "pending"
            other = await c.call_tool("submit_approval", {**args, "reason": "something else"})
            assert other.is_error and "IdempotencyConflict" in other.content[0].text

            async def approve_later():
                await anyio.sleep(0.2)
                await desk_do(desk.approve, submitted["id"])

            tg.start_soon(approve_later)
            blocked = structured(await c.call_tool("request_approval", args))
            assert blocked["id"] == submitted["id"] and blocked["status"] == "approved"
            # after the decision the same key returns the decision at once
            return submitted, structured(await c.call_tool("request_approval", args))

    submitted, replay = anyio.run(main)
    assert replay["id"] == submitted["id"] and replay["approved"] is True
    assert len(desk.journal.approvals.for_run(submitted["run_id"])) == 1


def test_retry_after_a_timeout_gets_the_same_request_back(journal_path, desk):
    """A keyed request outlives its caller's timeout: the retry rejoins it (asked once)."""
    args = {"question": "Proceed?", "kind": "confirmation", "idempotency_key": "proceed-1"}

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            await give_up(c, "ask_human", args, once=lambda: desk.wait_pending("question"))
            [kept] = await desk_do(desk.wait_pending, "question")

            async def answer_later():
                await desk_do(desk.answer, kept.id, {"confirmed": True})

            tg.start_soon(answer_later)
            return kept.id, structured(await c.call_tool("ask_human", args))

    kept_id, out = anyio.run(main)
    assert out["id"] == kept_id
    assert out["status"] == "answered" and out["answer"] == {"confirmed": True}
    statuses = [q.status for q in desk.journal.questions.for_run(out["run_id"])]
    assert statuses == ["resolved"]
    assert desk.journal.audit.for_entity(kept_id)[0].action != "interaction.withdrawn"


def test_a_kept_request_withdrawn_with_its_run_is_not_rejoined(journal_path, desk):
    """The operator stops the run that holds a kept request: the key files a fresh one in the
    next session (the withdrawn one is never handed back as if it were open)."""
    args = {"action": REFUND, "reason": "r", "idempotency_key": "shared"}

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        run = desk.journal.runs.get(item.run_id)
        desk.journal.runs.request_cancel(run.id, "wrong ticket", expected_version=run.version)

    async def first():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(await c.call_tool("request_approval", args))

    async def second():
        async with client(journal_path) as c:
            return structured(await c.call_tool("submit_approval", args))

    stopped = anyio.run(first)
    assert stopped["status"] == "withdrawn"
    fresh = anyio.run(second)
    assert fresh["id"] != stopped["id"] and fresh["status"] == "pending"


def test_submit_then_await_decision_polls_and_a_cancelled_poll_withdraws_nothing(
    journal_path, desk
):
    async def main():
        async with client(journal_path) as c:
            q = structured(await c.call_tool("submit_question", {"question": "Ticket id?"}))
            assert q["status"] == "pending"
            waited = structured(await c.call_tool("await_decision", {"id": q["id"], "wait_s": 0.2}))
            assert waited["status"] == "pending"
            with pytest.raises(MCPError):
                await c.call_tool(
                    "await_decision", {"id": q["id"], "wait_s": 30}, read_timeout_seconds=0.3
                )
            assert desk.journal.questions.get(q["id"]).status == "requested"
            await desk_do(desk.answer, q["id"], {"text": "OPS-42"})
            return structured(await c.call_tool("await_decision", {"id": q["id"]}))

    out = anyio.run(main)
    assert out["status"] == "answered" and out["answer"] == {"text": "OPS-42"}


def test_an_expired_request_is_a_denial(journal_path, desk):
    async def main():
        async with client(journal_path) as c:
            submitted = structured(
                await c.call_tool(
                    "submit_approval", {"action": REFUND, "reason": "r", "expires_in": 0.3}
                )
            )
            return structured(
                await c.call_tool("await_decision", {"id": submitted["id"], "wait_s": 10})
            )

    out = anyio.run(main)
    assert out["status"] == "expired" and out["approved"] is False
    assert desk.journal.approvals.get(out["id"]).status == "expired"


def test_session_end_withdraws_what_nobody_awaits(journal_path, desk):
    async def main():
        async with client(journal_path) as c:
            return structured(
                await c.call_tool("submit_approval", {"action": REFUND, "reason": "later"})
            )

    out = anyio.run(main)
    assert desk.journal.approvals.get(out["id"]).status == "cancelled"
    assert desk.journal.runs.get(out["run_id"]).status == "completed"


def test_operator_cancelling_the_run_releases_the_waiting_call(journal_path, desk):
    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        run = desk.journal.runs.get(item.run_id)
        desk.journal.runs.request_cancel(run.id, "wrong ticket", expected_version=run.version)

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            return structured(
                await c.call_tool("request_approval", {"action": REFUND, "reason": "r"})
            )

    out = anyio.run(main)
    assert out["status"] == "withdrawn" and "wrong ticket" in out["reason"]
    assert desk.journal.runs.get(out["run_id"]).status == "cancelled"


def test_stdio_server_process(journal_path, desk):
    """`python -m proctor mcp JOURNAL` as a real subprocess, over the SDK's stdio client."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "proctor", "mcp", str(journal_path), "--project", "stdio-test"],
    )

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        await desk_do(desk.approve, item.id, "fine")

    async def main():
        async with Client(params, client_info=HOST) as c:
            async with anyio.create_task_group() as tg:
                tg.start_soon(desk_side)
                approved = structured(
                    await c.call_tool("request_approval", {"action": REFUND, "reason": "stdio"})
                )
            await give_up(
                c, "ask_human", {"question": "Timeout?"}, once=lambda: desk.wait_pending("question")
            )
            with anyio.fail_after(10):
                while desk.journal.inbox.count() != 0:
                    await anyio.sleep(0.02)
            return approved

    approved = anyio.run(main)
    assert approved["status"] == "approved" and approved["reason"] == "fine"
    run = desk.journal.runs.get(approved["run_id"])
    assert (run.agent, run.project) == ("test-host", "stdio-test")
    [question] = desk.journal.questions.for_run(run.id)
    assert question.status == "cancelled"


def test_the_example_host_proceeds_on_the_operators_clicks(journal_path, desk):
    example = Path(__file__).resolve().parents[2] / "examples" / "mcp_agent.py"
    host = subprocess.Popen(
        [sys.executable, str(example), str(journal_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        [approval] = desk.wait_pending("approval", timeout=60)
        assert desk.journal.approvals.get(approval.id).safety_class == "destructive"
        desk.approve(approval.id, "build/ is generated")
        [question] = desk.wait_pending("question")
        desk.answer(question.id, {"choice": "release-1.2"})
        out, err = host.communicate(timeout=60)
    finally:
        host.kill()
    assert host.returncode == 0, err
    assert "approval: approved (build/ is generated)" in out
    assert "answer: {'choice': 'release-1.2'}" in out
    [run] = desk.journal.runs.list().items
    assert run.agent == "demo-host" and run.status == "completed"


def test_runs_left_open_by_a_killed_server_are_failed_by_the_next_one(journal_path, desk):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proctor", "mcp", str(journal_path)]
    )
    submitted: dict[str, Any] = {}

    async def killed_server():
        with pytest.RaisesGroup(
            pytest.RaisesExc(MCPError, match="Connection closed"), flatten_subgroups=True
        ):
            async with Client(params, client_info=HOST) as c:
                submitted.update(
                    structured(
                        await c.call_tool(
                            "submit_approval", {"action": REFUND, "reason": "then the host died"}
                        )
                    )
                )
                [started] = desk.journal.runs.events(submitted["run_id"], limit=1)
                os.kill(started.payload["metadata"]["server_pid"], signal.SIGKILL)
                await c.call_tool("submit_question", {"question": "anyone?"})

    anyio.run(killed_server)
    elsewhere = desk.journal.runs.start(
        "mcp",
        "MCP session on another host",
        metadata={"via": "mcp", "server_host": "another-host", "server_pid": 1},
    )
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    container = desk.journal.runs.start(
        "mcp",
        "MCP session in another pid namespace",
        metadata={
            "via": "mcp",
            "server_host": socket.gethostname(),
            "server_pid": int(dead.stdout),
            "server_pid_scope": "another-boot/pid:[4026531836]",
        },
    )
    assert not desk.journal.runs.get(submitted["run_id"]).status.terminal  # left open

    async def next_server():
        async with client(journal_path) as c:
            await c.list_tools()

    anyio.run(next_server)
    run = desk.journal.runs.get(submitted["run_id"])
    assert run.status == "failed" and "ended without closing the session" in run.error
    assert desk.journal.approvals.get(submitted["id"]).status == "cancelled"
    assert desk.journal.inbox.count() == 0
    assert desk.journal.runs.get(elsewhere.id).status == "running"
    assert desk.journal.runs.get(container.id).status == "running"  # its pid means nothing here


def test_an_edited_approval_hands_the_edited_arguments_back(journal_path, desk):
    """Issue 19: the operator edits the action, approves it; the MCP caller gets the edited
    action and its digest, and the journal only reserves that digest."""
    edited = {"tool": "refund", "args": {"account": "acct-9", "amount": 420}}

    async def desk_side():
        [item] = await desk_do(desk.wait_pending, "approval")
        a = await desk_do(desk.journal.approvals.get, item.id)
        await desk_do(
            lambda: desk.journal.approvals.approve_edited(
                item.id, edited, expected_version=a.version, reason="a tenth of it"
            )
        )

    from proctor.core import Actor, Journal, digest_of

    def run_it(out):  # the agent runs what it got back, while its run is live
        with Journal.open(journal_path, actor=Actor.agent("test-host")) as agent:
            with pytest.raises(errors.DigestMismatch):
                agent.approvals.consume_and_reserve(out["id"], out["requested_digest"], "fx")
            return agent.approvals.consume_and_reserve(out["id"], out["action_digest"], "fx")

    async def main():
        async with client(journal_path) as c, anyio.create_task_group() as tg:
            tg.start_soon(desk_side)
            out = structured(
                await c.call_tool(
                    "request_approval", {"action": REFUND, "reason": "customer asked"}
                )
            )
            return out, await anyio.to_thread.run_sync(run_it, out)

    out, effect = anyio.run(main)
    assert out["status"] == "approved" and out["edited"] is True
    assert out["action"] == edited and out["reason"] == "a tenth of it"
    assert out["action_digest"] == digest_of(edited)
    assert out["requested_digest"] == digest_of(REFUND)
    assert effect.action == edited
