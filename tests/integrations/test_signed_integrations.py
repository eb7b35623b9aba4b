"""The integrations verify before they hand a decision to the agent: `proctor mcp --trust`
(ProctorMCP(trust=...)) and the LangGraph bridge on a journal opened with ``trust=``.
A decision signed by the trusted operator goes through; an unsigned one (an operator
without a key, or rows written by hand) never reaches the host or the graph."""

from __future__ import annotations

import anyio
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from mcp import Client
from mcp_types import Implementation

from proctor.core import Actor, InboxFilter, InboxKind, Journal, errors
from proctor.core.decisions.keys import OperatorKey, trust_file
from proctor.core.integrations.langgraph import GraphEffects, LangGraphBridge, open_checkpointer
from proctor.core.integrations.mcp.server import ProctorMCP


class Desk:
    """The operator deciding each pending approval (with ``signer`` or without a key)."""

    def __init__(self, path, signer=None) -> None:
        self.journal = Journal.open(path, actor=Actor.operator("alice"), signer=signer)

    def wait_pending(self, kind: str) -> list:
        import time

        flt = InboxFilter(kinds=frozenset({InboxKind(kind)}))
        deadline = time.monotonic() + 30
        while not (items := self.journal.inbox.list(flt).items):
            assert time.monotonic() < deadline, "nothing arrived"
            time.sleep(0.02)
        return items

    def approve(self, approval_id: str) -> None:
        self.journal.approvals.decide(approval_id, True, expected_version=1)


HOST = Implementation(name="test-host", version="1.0")


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate("alice")


@pytest.fixture
def trust(key) -> dict:
    return trust_file([{"name": "alice", "public_key": key.public_key}])


@pytest.fixture
def signing_desk(journal_path, key):
    d = Desk(journal_path, key)
    yield d
    d.journal.close()


def mcp_round(journal_path, trust, desk) -> object:
    server = ProctorMCP(journal_path, poll_s=0.02, progress_every_s=0.1, trust=trust).server

    async def main():
        async with Client(server, client_info=HOST) as c, anyio.create_task_group() as tg:

            async def desk_side():
                [item] = await anyio.to_thread.run_sync(desk.wait_pending, "approval")
                await anyio.to_thread.run_sync(desk.approve, item.id)

            tg.start_soon(desk_side)
            return await c.call_tool(
                "request_approval",
                {"action": {"tool": "refund", "args": {"amount": 5}}, "reason": "asked"},
            )

    return anyio.run(main)


def test_mcp_with_trust_hands_over_a_signed_approval(journal_path, trust, signing_desk):
    result = mcp_round(journal_path, trust, signing_desk)
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "approved"


def test_mcp_with_trust_refuses_an_unsigned_approval(journal_path, trust, desk):
    result = mcp_round(journal_path, trust, desk)  # `desk` has no key: its decision is unsigned
    assert result.is_error
    assert "DecisionUnverified" in result.content[0].text
    assert "not signed" in result.content[0].text


def _graph(tmp_path, journal):
    def act(state: dict) -> dict:
        return {
            "ok": interrupt(
                {"action": {"tool": "deploy", "args": {"env": "prod"}}, "reason": "ship"}
            )
        }

    g = StateGraph(dict)
    g.add_node("act", act)
    g.add_edge(START, "act")
    g.add_edge("act", END)
    GraphEffects(journal)
    return g.compile(checkpointer=open_checkpointer(tmp_path / "cp.db"))


@pytest.mark.parametrize("signed", [True, False])
def test_langgraph_with_trust_resumes_only_on_a_signed_decision(
    journal_path, tmp_path, trust, key, signed
):
    operator = Journal.open(
        journal_path, actor=Actor.operator("alice"), signer=key if signed else None
    )
    journal = Journal.open(journal_path, actor=Actor.agent("bot"), trust=trust)
    try:
        bridge = LangGraphBridge(journal, _graph(tmp_path, journal))
        [pending] = bridge.start("t1", {}).pending
        operator.approvals.decide(pending.item_id, True, expected_version=1)
        if signed:
            outcome = bridge.resume("t1")
            assert outcome.done and outcome.values["ok"]["approved"] is True
        else:
            with pytest.raises(errors.DecisionUnverified) as refused:
                bridge.resume("t1")
            assert refused.value.why == "unsigned"
    finally:
        journal.close()
        operator.close()
