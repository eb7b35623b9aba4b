"""A LangGraph agent that asks a person through Proctor before it refunds money.

The graph is deterministic (no LLM, no network): plan -> approve -> act -> ask -> end.
``approve`` and ``ask`` call LangGraph's ``interrupt()``; the adapter files them on the Proctor
desk (an approval and a form) and resumes the graph when the operator has decided.

    pip install 'proctor[langgraph]'
    python examples/langgraph_refund_agent.py ~/proctor-demo.db      # the agent waits...
    proctor-desk ~/proctor-demo.db                                   # ...you decide here

Each step can also run as its own process (``--step start`` now, ``--step resume`` later,
from any machine that sees both files): the checkpoints live in their own SQLite file next to
the journal (``<journal>.langgraph.db``). The "bank" is a text file, ``<journal>.refunds.log``.
A journal on a server (``postgresql+psycopg://…``, docs/team.md) has no folder to put them
in: ``--state PREFIX`` names them (``PREFIX.langgraph.db``, ``PREFIX.refunds.log``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, field_validator

from proctor.core import Actor, Journal
from proctor.core.integrations.langgraph import GraphEffects, LangGraphBridge, open_checkpointer

REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200, "currency": "EUR"}}


class Env(BaseModel):
    """The form the operator fills in. The desk validates the JSON Schema (staging or prod);
    the validator below runs only in the graph: an answer it refuses is asked again."""

    env: Literal["staging", "prod"]

    @field_validator("env")
    @classmethod
    def prod_is_frozen(cls, value: str) -> str:
        if value == "prod":
            raise ValueError("prod is frozen this week")
        return value


class State(TypedDict, total=False):
    plan: str
    approval: dict
    refund: Any
    env: str


def build_graph(effects: GraphEffects, checkpoints: Path, bank: Path) -> Any:
    def plan(state: State) -> State:
        return {"plan": "refund 4200 EUR to acct-9 (charged twice)"}

    def approve(state: State) -> State:
        # approval-shaped interrupt: filed as a Proctor approval of exactly this action
        return {
            "approval": interrupt(
                {"kind": "approval", "action": REFUND, "reason": "the customer was charged twice"}
            )
        }

    def act(state: State) -> State:
        if not state["approval"]["approved"]:
            return {"refund": None}

        def pay() -> dict:  # the side effect: runs at most once, whatever re-runs the node
            with bank.open("a") as f:
                f.write("REFUND 4200 EUR acct-9\n")
            return {"refund_id": "rf-1"}

        return {"refund": effects.run("refund", pay, approval=state["approval"])}

    def ask(state: State) -> State:
        answer = interrupt({"question": "Which environment gets the fix?"}, response_schema=Env)
        return {"env": answer.env}

    graph = StateGraph(State)
    for name, fn in (("plan", plan), ("approve", approve), ("act", act), ("ask", ask)):
        graph.add_node(name, fn)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "approve")
    graph.add_edge("approve", "act")
    graph.add_edge("act", "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=open_checkpointer(checkpoints))


def make_bridge(
    journal_path: Path | str,
    *,
    lease: float = 30.0,
    bridge_cls: type[LangGraphBridge] = LangGraphBridge,
    state: Path | None = None,
) -> tuple[LangGraphBridge, Journal]:
    """``state``: the prefix of the graph's own files (default: the journal file's path)."""
    if state is None and "://" in str(journal_path):
        raise SystemExit(
            "a journal on a server has no folder for the graph's own files: pass --state PREFIX"
        )
    prefix = state or journal_path
    journal = Journal.open(journal_path, actor=Actor.agent("refund-bot"))
    effects = GraphEffects(journal)
    graph = build_graph(effects, Path(f"{prefix}.langgraph.db"), Path(f"{prefix}.refunds.log"))
    return bridge_cls(journal, graph, project="refunds", lease_seconds=lease), journal


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("journal", help="journal file, or a server journal's URL")
    p.add_argument(
        "--state",
        type=Path,
        default=None,
        help="prefix of the graph's own files (default: the journal file's path)",
    )
    p.add_argument("--thread", default="refund-acct-9")
    p.add_argument(
        "--step",
        choices=["run", "start", "resume"],
        default="run",
        help="run: start, then resume whenever the desk answers (default)",
    )
    p.add_argument("--timeout", type=float, default=None, help="give up after N seconds")
    args = p.parse_args()
    bridge, journal = make_bridge(args.journal, state=args.state)
    try:
        if args.step == "start":
            outcome = bridge.start(args.thread, {}, title="Refund for acct-9")
        elif args.step == "resume":
            outcome = bridge.resume(args.thread)
        else:
            print(f"waiting for the operator on {args.journal} (thread {args.thread})", flush=True)
            outcome = bridge.run_until_done(
                args.thread, {}, poll_s=0.2, timeout=args.timeout, title="Refund for acct-9"
            )
        print(outcome.model_dump_json(), flush=True)
    finally:
        journal.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
