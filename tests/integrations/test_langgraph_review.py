"""LangGraph's prebuilt HumanInterrupt and LangChain's HumanInTheLoopMiddleware, answered from
the desk: each reviewed tool call is a Proctor approval (or, answer-only, a question), and the
graph gets the decision in its own shape, never a free-text question."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from proctor.core import Actor, Journal
from proctor.core.integrations.langgraph import LangGraphBridge, open_checkpointer


class Bag(TypedDict, total=False):
    response: Any
    ran: list


def human_interrupt(allow: dict[str, bool]) -> dict:
    return {
        "action_request": {"action": "run_command", "args": {"command": "ls -l"}},
        "config": {
            "allow_accept": False,
            "allow_edit": False,
            "allow_respond": False,
            "allow_ignore": False,
            **allow,
        },
        "description": "Please review the command before execution",
    }


def prebuilt_bridge(journal_path, tmp_path, allow):
    def review(s: Bag) -> Bag:
        return {"response": interrupt([human_interrupt(allow)])[0]}

    g = StateGraph(Bag)
    g.add_node("review", review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    journal = Journal.open(journal_path, actor=Actor.agent("lg-bot"))
    graph = g.compile(checkpointer=open_checkpointer(tmp_path / "cp.db"))
    return LangGraphBridge(journal, graph), journal


ALL = {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True}


def test_prebuilt_human_interrupt_is_an_approval_of_the_action(journal_path, tmp_path, desk):
    bridge, journal = prebuilt_bridge(journal_path, tmp_path, ALL)
    outcome = bridge.start("t-accept", {})
    [p] = outcome.pending
    assert p.kind == "human_interrupt" and p.status == "pending"
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    assert a.action == {"tool": "run_command", "args": {"command": "ls -l"}}
    assert a.reason == "Please review the command before execution"
    assert desk.journal.inbox.list().items == [item]  # no free-text question beside it
    desk.approve(a.id)
    done = bridge.resume("t-accept")
    assert done.done and done.values["response"] == {"type": "accept", "args": None}
    journal.close()


@pytest.mark.parametrize(
    ("allow", "expected_type"),
    [
        (ALL, "response"),
        ({"allow_accept": True, "allow_ignore": True}, "ignore"),
    ],
)
def test_prebuilt_denial_passes_the_reason_back(journal_path, tmp_path, desk, allow, expected_type):
    bridge, journal = prebuilt_bridge(journal_path, tmp_path, allow)
    bridge.start("t-deny", {})
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "not on the prod box")
    done = bridge.resume("t-deny")
    assert done.done and done.values["response"]["type"] == expected_type
    if expected_type == "response":
        assert "not on the prod box" in done.values["response"]["args"]
    journal.close()


def test_prebuilt_respond_only_is_a_question(journal_path, tmp_path, desk):
    bridge, journal = prebuilt_bridge(journal_path, tmp_path, {"allow_respond": True})
    bridge.start("t-respond", {})
    [item] = desk.wait_pending("question")
    desk.answer(item.id, {"text": "use ls -la instead"})
    done = bridge.resume("t-respond")
    assert done.values["response"] == {"type": "response", "args": "use ls -la instead"}
    journal.close()


# ---------------------------------------------------------------- LangChain create_agent
class ScriptedModel(GenericFakeChatModel):
    """A scripted chat model: no network, no LLM. Tool binding is a no-op."""

    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedModel:
        return self


SENT: list[dict] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append({"to": to, "body": body})
    return f"sent to {to}"


def agent_bridge(journal_path, tmp_path, mode: str):
    SENT.clear()
    model = ScriptedModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "send_email",
                            "id": "call_1",
                            "args": {"to": "bob@example.com", "body": "hi"},
                        }
                    ],
                ),
                AIMessage(content="done"),
            ]
        )
    )
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={"send_email": {"allowed_decisions": ["approve", "edit", "reject"]}},
        interrupt_mode=mode,
    )
    graph = create_agent(
        model,
        tools=[send_email],
        middleware=[hitl],
        checkpointer=open_checkpointer(tmp_path / f"cp-{mode}.db"),
    )
    journal = Journal.open(journal_path, actor=Actor.agent("mail-agent"))
    return LangGraphBridge(journal, graph, project="langchain"), journal


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_middleware_approval_runs_the_tool_once(journal_path, tmp_path, desk, mode):
    bridge, journal = agent_bridge(journal_path, tmp_path, mode)
    outcome = bridge.start(f"t-ok-{mode}", {"messages": [{"role": "user", "content": "mail"}]})
    [p] = outcome.pending
    assert p.kind == ("hitl_request" if mode == "batched" else "tool_approval")
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    assert a.action == {"tool": "send_email", "args": {"to": "bob@example.com", "body": "hi"}}
    assert SENT == []
    desk.approve(a.id)
    done = bridge.run_until_done(f"t-ok-{mode}", poll_s=0.05, timeout=60)
    assert done.done and SENT == [{"to": "bob@example.com", "body": "hi"}]
    journal.close()


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_middleware_denial_rejects_with_the_reason(journal_path, tmp_path, desk, mode):
    bridge, journal = agent_bridge(journal_path, tmp_path, mode)
    bridge.start(f"t-no-{mode}", {"messages": [{"role": "user", "content": "mail"}]})
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "bob left the company")
    done = bridge.run_until_done(f"t-no-{mode}", poll_s=0.05, timeout=60)
    assert done.done and SENT == []
    texts = [
        str(m.get("content"))
        for m in done.values["messages"]
        if isinstance(m, dict) and m.get("type") == "tool"
    ]
    assert any("bob left the company" in t for t in texts), done.values["messages"]
    journal.close()


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_middleware_edit_runs_the_edited_call_only(journal_path, tmp_path, desk, mode):
    bridge, journal = agent_bridge(journal_path, tmp_path, mode)
    bridge.start(f"t-ed-{mode}", {"messages": [{"role": "user", "content": "mail"}]})
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    edited = {"tool": "send_email", "args": {"to": "alice@example.com", "body": "hi"}}
    desk.journal.approvals.approve_edited(a.id, edited, expected_version=a.version)
    done = bridge.run_until_done(f"t-ed-{mode}", poll_s=0.05, timeout=60)
    assert done.done and SENT == [{"to": "alice@example.com", "body": "hi"}]
    journal.close()
