"""`proctor mcp`: a request filed with an idempotency key outlives its connection. A reconnecting
or one-shot client gets the same request back (pending, or its decision), never a withdrawal;
one filed without a key is withdrawn when its caller goes away. Offline, no LLM."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

from proctor.core.integrations.mcp.runs import DETACHED
from proctor.core.integrations.mcp.server import ProctorMCP

HOST = Implementation(name="refund-bot", version="1.0")
REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}
KEYED = {"action": REFUND, "reason": "charged twice", "idempotency_key": "refund-acct-9"}


def client(path, name: str = "refund-bot") -> Client:
    """A fresh server and a fresh client session: what a one-shot process has."""
    server = ProctorMCP(path, poll_s=0.02, progress_every_s=0.1).server
    return Client(server, client_info=Implementation(name=name, version="1.0"))


def structured(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


async def call(path, tool: str, args: dict, name: str = "refund-bot") -> dict:
    async with client(path, name) as c:
        return structured(await c.call_tool(tool, args))


def test_a_one_shot_client_gets_its_request_back_across_connections(journal_path, desk):
    filed = anyio.run(call, journal_path, "submit_approval", KEYED)
    # its connection is gone: the request still waits for the operator, and so does its run
    assert desk.journal.approvals.get(filed["id"]).status == "pending"
    run = desk.journal.runs.get(filed["run_id"])
    assert not run.status.terminal
    [ended] = desk.journal.runs.events(run.id, types=[DETACHED])
    assert ended.payload["kept"] == [filed["id"]]

    # the next one-shot process polls: the same request, still pending
    again = anyio.run(call, journal_path, "request_approval", {**KEYED, "wait_s": 0.1})
    assert (again["id"], again["status"]) == (filed["id"], "pending")
    desk.approve(filed["id"], "checked the statement")
    done = anyio.run(call, journal_path, "request_approval", KEYED)
    assert done["id"] == filed["id"] and done["status"] == "approved"
    assert done["reason"] == "checked the statement" and done["action"] == REFUND
    # asked once; the run that kept it is completed once its request was collected
    assert (
        sum(len(desk.journal.approvals.for_run(r.id)) for r in desk.journal.runs.list().items) == 1
    )
    assert desk.journal.runs.get(filed["run_id"]).status == "completed"
    assert desk.journal.inbox.count() == 0


def test_a_question_outlives_its_connection_too(journal_path, desk):
    args = {
        "question": "Which environment?",
        "options": ["staging", "prod"],
        "idempotency_key": "env-1",
    }
    filed = anyio.run(call, journal_path, "submit_question", args)
    desk.answer(filed["id"], {"choice": "staging"}, "prod is frozen")
    out = anyio.run(call, journal_path, "ask_human", args)
    assert out["id"] == filed["id"] and out["answer"] == {"choice": "staging"}
    assert out["reason"] == "prod is frozen"


def test_without_a_key_the_session_end_withdraws_it_with_a_key_it_stays(journal_path, desk):
    async def main():
        async with client(journal_path) as c:
            unkeyed = structured(
                await c.call_tool(
                    "submit_approval", {"action": {"tool": "deploy"}, "reason": "release"}
                )
            )
            keyed = structured(await c.call_tool("submit_approval", KEYED))
            return unkeyed, keyed

    unkeyed, keyed = anyio.run(main)
    j = desk.journal
    assert j.approvals.get(unkeyed["id"]).status == "cancelled"
    assert [e.action for e in j.audit.for_entity(unkeyed["id"])] == ["approval.withdrawn"]
    assert j.approvals.get(keyed["id"]).status == "pending"
    assert [i.id for i in j.inbox.list().items] == [keyed["id"]]


def test_another_agent_with_the_same_key_is_another_request(journal_path, desk):
    mine = anyio.run(call, journal_path, "submit_approval", KEYED)
    theirs = anyio.run(call, journal_path, "submit_approval", KEYED, "billing-bot")
    assert mine["id"] != theirs["id"]


def test_the_same_key_with_other_content_from_a_new_connection_is_refused(journal_path, desk):
    anyio.run(call, journal_path, "submit_approval", KEYED)

    async def main():
        async with client(journal_path) as c:
            return await c.call_tool("submit_approval", {**KEYED, "reason": "another one"})

    refused = anyio.run(main)
    assert refused.is_error and "IdempotencyConflict" in refused.content[0].text
    assert desk.journal.inbox.count() == 1


def test_a_short_wait_returns_pending_promptly_then_polls(journal_path, desk):
    async def main():
        async with client(journal_path) as c:
            first = structured(await c.call_tool("request_approval", {**KEYED, "wait_s": 0}))
            polled = structured(
                await c.call_tool("await_decision", {"id": first["id"], "wait_s": 0.1})
            )
            await anyio.to_thread.run_sync(desk.approve, first["id"])
            decided = structured(
                await c.call_tool("await_decision", {"id": first["id"], "wait_s": 5})
            )
            return first, polled, decided

    first, polled, decided = anyio.run(main)
    assert first["status"] == "pending" and polled["status"] == "pending"
    assert decided["status"] == "approved" and decided["id"] == first["id"]


def test_a_timed_out_blocking_call_keeps_a_keyed_request(journal_path, desk):
    """The client's own timeout (over JSON-RPC, as the Agents SDK's read timeout) cancels the
    call: the keyed request stays pending and the retry gets it back."""

    async def main():
        server = ProctorMCP(journal_path, poll_s=0.02, progress_every_s=0.1).server
        async with Client(server, mode="legacy", client_info=HOST) as c:
            # the session (its journal, its run) is opened by a first call, so the timed call's
            # time goes to filing the request, not to opening the journal on a loaded machine:
            # filed, then timed out (its premise), never timed out before it was filed
            structured(await c.call_tool("submit_question", {"question": "warm up"}))
            with pytest.raises(MCPError, match=r"[Tt]imed out"):
                await c.call_tool("request_approval", KEYED, read_timeout_seconds=2.0)
            [item] = await anyio.to_thread.run_sync(desk.wait_pending, "approval")
            with anyio.fail_after(10):  # the server has seen the cancel
                while not [
                    t for t in desk.journal.runs.tool_calls(item.run_id) if t.status == "failed"
                ]:
                    await anyio.sleep(0.02)
            assert desk.journal.approvals.get(item.id).status == "pending"
            await anyio.to_thread.run_sync(desk.deny, item.id, "refunded by phone")
            return item.id, structured(await c.call_tool("request_approval", KEYED))

    kept_id, out = anyio.run(main)
    assert out["id"] == kept_id and out["status"] == "denied"
    assert out["reason"] == "refunded by phone"


def test_a_killed_server_leaves_its_kept_request_open_for_the_next_one(journal_path, desk):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proctor", "mcp", str(journal_path)]
    )
    submitted: dict[str, Any] = {}

    async def killed_server():
        with pytest.RaisesGroup(
            pytest.RaisesExc(MCPError, match="Connection closed"), flatten_subgroups=True
        ):
            async with Client(params, client_info=HOST) as c:
                submitted.update(structured(await c.call_tool("submit_approval", KEYED)))
                submitted["unkeyed"] = structured(
                    await c.call_tool("submit_question", {"question": "anyone?"})
                )["id"]
                [started] = desk.journal.runs.events(submitted["run_id"], limit=1)
                os.kill(started.payload["metadata"]["server_pid"], signal.SIGKILL)
                await c.call_tool("submit_question", {"question": "still?"})

    anyio.run(killed_server)

    # the next server sweeps the dead one's run: the unkeyed question is withdrawn, the kept
    # approval stays, and the next client collects it
    async def next_server():
        async with client(journal_path) as c:
            await c.list_tools()

    anyio.run(next_server)
    j = desk.journal
    assert j.questions.get(submitted["unkeyed"]).status == "cancelled"
    assert j.approvals.get(submitted["id"]).status == "pending"
    assert not j.runs.get(submitted["run_id"]).status.terminal
    desk.approve(submitted["id"])
    out = anyio.run(call, journal_path, "request_approval", KEYED)
    assert out["id"] == submitted["id"] and out["status"] == "approved"
    assert j.runs.get(submitted["run_id"]).status == "completed"


def test_the_operator_stopping_a_detached_run_withdraws_its_kept_request(journal_path, desk):
    filed = anyio.run(call, journal_path, "submit_approval", KEYED)
    run = desk.journal.runs.get(filed["run_id"])
    desk.journal.runs.request_cancel(run.id, "wrong customer", expected_version=run.version)
    out = anyio.run(call, journal_path, "await_decision", {"id": filed["id"], "wait_s": 0})
    assert out["status"] == "withdrawn" and "wrong customer" in out["reason"]
    assert desk.journal.runs.get(run.id).status == "cancelled"


def test_the_origin_names_the_runtime_the_client_and_the_tool(journal_path, desk):
    filed = anyio.run(call, journal_path, "submit_approval", KEYED)
    asked = anyio.run(call, journal_path, "submit_question", {"question": "Which one?"})
    origin = desk.journal.approvals.get(filed["id"]).origin
    assert (origin.runtime, origin.tool, origin.client) == (
        "mcp",
        "submit_approval",
        "refund-bot 1.0",
    )
    assert origin.host  # this machine (stdio and in memory)
    assert desk.journal.questions.get(asked["id"]).origin.tool == "submit_question"
