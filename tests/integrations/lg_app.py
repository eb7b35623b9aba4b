"""A deterministic LangGraph agent for the tests (no LLM): plan -> approve -> act -> ask -> END.

Run as its own process: python lg_app.py JOURNAL CHECKPOINTS OUTBOX COMMAND THREAD [options]
COMMAND is start, resume or crash-after-claim. The last stdout line is the GraphOutcome JSON.
The ``act`` node appends one line to OUTBOX per refund really made.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from proctor.core import Actor, Journal
from proctor.core.integrations.langgraph import (
    GraphEffects,
    LangGraphBridge,
    open_checkpointer,
)
from pydantic import BaseModel, field_validator

REFUND = {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}


class Env(BaseModel):
    env: Literal["staging", "prod"]

    @field_validator("env")
    @classmethod
    def prod_is_frozen(cls, value: str) -> str:
        if value == "prod":  # passes the JSON Schema (enum), refused only at resume
            raise ValueError("prod is frozen this week")
        return value


class State(TypedDict, total=False):
    plan: str
    approval: dict
    refund: Any
    env: str


def build_graph(effects: GraphEffects, checkpoints: Path, outbox: Path) -> Any:
    def plan(state: State) -> State:
        return {"plan": "refund 4200 to acct-9"}

    def approve(state: State) -> State:
        return {"approval": interrupt({"kind": "approval", "action": REFUND,
                                       "reason": "the customer was charged twice"})}

    def act(state: State) -> State:
        if not state["approval"]["approved"]:
            return {"refund": None}

        def refund() -> dict:
            with outbox.open("a") as f:
                f.write(f"REFUND 4200 by {os.getpid()}\n")
            return {"refund_id": "rf-1"}

        return {"refund": effects.run("refund", refund, approval=state["approval"])}

    def ask(state: State) -> State:
        answer = interrupt({"question": "Which environment gets the fix?"},
                           response_schema=Env)
        return {"env": answer.env}

    g = StateGraph(State)
    for name, fn in (("plan", plan), ("approve", approve), ("act", act), ("ask", ask)):
        g.add_node(name, fn)
    g.add_edge(START, "plan")
    g.add_edge("plan", "approve")
    g.add_edge("approve", "act")
    g.add_edge("act", "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=open_checkpointer(checkpoints))


class CrashAfterClaim(LangGraphBridge):
    def _invoke(self, command: Any, thread_id: str) -> Any:
        os._exit(17)  # the claim is won and begun; the process dies before the graph runs


def make_bridge(journal_path: Path, checkpoints: Path, outbox: Path, *, crash: bool = False,
                lease: float = 30.0) -> tuple[LangGraphBridge, Journal]:
    journal = Journal.open(journal_path, actor=Actor.agent("refund-bot"))
    effects = GraphEffects(journal)
    graph = build_graph(effects, checkpoints, outbox)
    bridge_cls = CrashAfterClaim if crash else LangGraphBridge
    return bridge_cls(journal, graph, project="refunds", lease_seconds=lease), journal


def main() -> int:
    p = argparse.ArgumentParser()
    for name in ("journal", "checkpoints", "outbox", "command", "thread"):
        p.add_argument(name)
    p.add_argument("--lease", type=float, default=30.0)
    p.add_argument("--go", help="wait for this file to exist before acting (a start line)")
    args = p.parse_args()
    bridge, journal = make_bridge(Path(args.journal), Path(args.checkpoints), Path(args.outbox),
                                  crash=args.command == "crash-after-claim", lease=args.lease)
    if args.go:
        print("ready", flush=True)
        while not os.path.exists(args.go):
            time.sleep(0.005)
    if args.command == "start":
        outcome = bridge.start(args.thread, {}, title="Refund for acct-9")
    else:
        outcome = bridge.resume(args.thread)
    print(outcome.model_dump_json(), flush=True)
    journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
