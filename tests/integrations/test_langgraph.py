"""LangGraph adapter: a deterministic graph (no LLM) driven through Proctor, with start / answer /
resume as separate processes on tmp_path, racing resumers, refused answers and a crashed claim."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from proctor.core import Actor, Journal, errors
from proctor.core.integrations.langgraph import (
    EffectNotExecuted,
    GraphEffects,
    LangGraphBridge,
    open_checkpointer,
    run_id_for,
)

APP = Path(__file__).with_name("lg_app.py")


class Files:
    def __init__(self, tmp_path: Path, journal_path: Path) -> None:
        self.journal = journal_path
        self.outbox = Path(f"{journal_path}.refunds.log")  # the example's "bank"
        self.tmp = tmp_path

    def argv(self, command: str, thread: str, *extra: str) -> list[str]:
        return [sys.executable, str(APP), str(self.journal), command, thread, *extra]

    def run(self, command: str, thread: str, *extra: str) -> dict:
        done = subprocess.run(
            self.argv(command, thread, *extra), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    def bridge(self) -> tuple[LangGraphBridge, Journal]:
        """The same agent, in this process (for steps whose timing a new process would blur)."""
        from lg_app import load_example

        return load_example().make_bridge(self.journal, lease=2.0)

    def refunds(self) -> list[str]:
        return self.outbox.read_text().splitlines() if self.outbox.exists() else []


@pytest.fixture
def files(tmp_path, journal_path) -> Files:
    return Files(tmp_path, journal_path)


def race_resumers(files: Files, thread: str, n: int) -> list[dict]:
    """Start n resume processes, let them all import and open, then release them at once."""
    go = files.tmp / "go"
    procs = [
        subprocess.Popen(
            files.argv("resume", thread, "--go", str(go)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    go.touch()
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    return outcomes


def test_graph_across_processes_races_and_refused_answers(files, desk):
    thread = "refund-acct-9"
    started = files.run("start", thread)
    assert started["action"] == "started"
    [pending] = started["pending"]
    assert pending["kind"] == "approval" and pending["status"] == "pending"
    j = desk.journal
    run = j.runs.get(run_id_for(thread))
    assert (run.agent, run.project, run.title) == ("refund-bot", "refunds", "Refund for acct-9")
    assert run.status == "waiting_for_user"
    here, agent_journal = files.bridge()
    assert here.resume(thread).action == "waiting"  # nothing answered yet

    desk.approve(pending["item_id"], "charged twice, confirmed")
    outcomes = race_resumers(files, thread, 4)
    actions = sorted(o["action"] for o in outcomes)
    assert actions.count("resumed") == 1, actions
    assert set(actions) <= {"resumed", "claimed_elsewhere", "already_resumed", "waiting"}
    assert len(files.refunds()) == 1  # LangGraph alone refunds once per resumer
    refund = j.effects.get(f"langgraph:{thread}:effect:refund")
    assert refund.status == "committed" and refund.result == {"refund_id": "rf-1"}
    assert j.approvals.get(pending["item_id"]).consumed_effect_key == refund.key

    [question] = desk.wait_pending("question")
    with pytest.raises(errors.ValidationError):  # the desk refuses what fails the schema
        desk.answer(question.id, {"env": "qa"})
    desk.answer(question.id, {"env": "prod"})  # passes the schema, refused by the graph
    refused = here.resume(thread)
    assert refused.action == "refused" and "prod is frozen" in refused.detail
    [again] = refused.pending
    assert again.attempt == 2 and again.status == "requested" and again.item_id != question.id
    item = j.questions.get(again.item_id)
    assert "prod is frozen" in item.prompt and item.request["refused_answer"] == {"env": "prod"}
    assert j.questions.get(question.id).status == "resolved"  # the answer stays on record

    desk.answer(again.item_id, {"env": "staging"})
    final = here.resume(thread)
    assert final.action == "resumed" and final.done is True
    assert final.values["env"] == "staging" and final.values["refund"] == {"refund_id": "rf-1"}
    assert j.runs.get(run.id).status == "completed"
    assert len(files.refunds()) == 1
    assert here.resume(thread).action == "done"
    agent_journal.close()


def test_crash_after_claim_is_reclaimed(files, desk):
    thread = "refund-crash"
    here, agent_journal = files.bridge()
    started = here.start(thread, {})
    desk.approve(started.pending[0].item_id)
    crashed = subprocess.run(
        files.argv("crash-after-claim", thread, "--lease", "3"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crashed.returncode == 17, crashed.stderr

    j = desk.journal
    [claim] = [
        e for e in j.effects.list(status=["executing"]).items if e.tool == "langgraph.resume"
    ]
    assert files.outbox.exists() is False
    if j.now() < claim.lease_expires_at - 0.5:  # within the lease nobody else may resume
        assert here.resume(thread).action == "claimed_elsewhere"
    while j.effects.get(claim.key).lease_expires_at > j.now():
        time.sleep(0.05)
    recovered = here.resume(thread)
    assert recovered.action == "resumed"
    # The crashed claim stays for a person: the adapter cannot prove its outcome (a node may
    # have done an outside side effect before a checkpoint; a stalled claimer may still run;
    # an agent never resolves an ambiguous effect) - docs/integrations.md explains.
    assert j.effects.get(claim.key).status == "ambiguous"
    assert [i.id for i in j.inbox.list().items if i.kind == "effect"] == [claim.key]
    assert j.effects.get(f"{claim.key}#2").status == "committed"
    events = j.runs.events(run_id_for(thread), types=["langgraph.claim_recovered"])
    assert [e.payload["ambiguous_claim"] for e in events] == [claim.key]
    assert len(files.refunds()) == 1
    agent_journal.close()


def test_the_example_agent_proceeds_on_the_operators_clicks(files, desk):
    example = APP.parents[2] / "examples" / "langgraph_refund_agent.py"
    agent = subprocess.Popen(
        [sys.executable, str(example), str(files.journal), "--timeout", "90"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        [approval] = desk.wait_pending("approval", timeout=60)
        desk.approve(approval.id)
        [question] = desk.wait_pending("question")
        desk.answer(question.id, {"env": "prod"})  # refused by the graph: asked again
        for _ in range(200):
            items = desk.wait_pending("question")
            if items[0].id != question.id:
                break
        [again] = items
        assert "prod is frozen" in desk.journal.questions.get(again.id).prompt
        desk.answer(again.id, {"env": "staging"})
        out, err = agent.communicate(timeout=90)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    final = json.loads(out.strip().splitlines()[-1])
    assert final["done"] is True and final["values"]["env"] == "staging"
    assert files.refunds() == ["REFUND 4200 EUR acct-9"]


# ---------------------------------------------------------------- in-process cases


class Bag(TypedDict, total=False):
    name: str
    colour: str
    sure: bool
    calls: int
    result: Any


def bridge_for(journal_path: Path, tmp_path: Path, build) -> tuple[LangGraphBridge, Journal]:
    journal = Journal.open(journal_path, actor=Actor.agent("bot"))
    effects = GraphEffects(journal)
    graph = build(effects).compile(checkpointer=open_checkpointer(tmp_path / "cp.db"))
    return LangGraphBridge(journal, graph), journal


def chain(*nodes) -> StateGraph:
    g = StateGraph(Bag)
    names = [fn.__name__ for fn in nodes]
    for fn in nodes:
        g.add_node(fn.__name__, fn)
    for a, b in zip([START, *names], [*names, END], strict=True):
        g.add_edge(a, b)
    return g


def test_interrupt_shapes_become_questions_and_resume_plain_values(journal_path, tmp_path, desk):
    def name(s: Bag) -> Bag:
        return {"name": interrupt("What is the customer's name?")}

    def colour(s: Bag) -> Bag:
        return {"colour": interrupt({"question": "Colour?", "options": ["red", "blue"]})}

    def sure(s: Bag) -> Bag:
        return {"sure": interrupt({"kind": "confirmation", "prompt": "Ship it?"})}

    bridge, journal = bridge_for(journal_path, tmp_path, lambda fx: chain(name, colour, sure))
    answers = [
        ("question", {"text": "Ada"}),
        ("choice", {"choice": "blue"}),
        ("confirmation", {"confirmed": True}),
    ]
    outcome = bridge.start("t-shapes", {})
    for kind, response in answers:
        [p] = outcome.pending
        item = journal.questions.get(p.item_id)
        assert item.kind == kind
        desk.answer(p.item_id, response)
        outcome = bridge.resume("t-shapes")
    assert outcome.done and outcome.values == {"name": "Ada", "colour": "blue", "sure": True}
    journal.close()


def test_a_dismissed_question_resumes_the_graph_with_a_dismissal_not_an_answer(
    journal_path, tmp_path, desk
):
    def name(s: Bag) -> Bag:
        got = interrupt("What is the customer's name?")
        if isinstance(got, dict) and got.get("dismissed"):
            return {"name": "(unknown)", "result": got["message"]}
        return {"name": got}

    bridge, journal = bridge_for(journal_path, tmp_path, lambda fx: chain(name))
    [p] = bridge.start("t-dismiss", {}).pending
    q = desk.journal.questions.get(p.item_id)
    desk.journal.questions.dismiss(q.id, "ask the CRM instead", expected_version=q.version)
    outcome = bridge.resume("t-dismiss")
    assert outcome.done and outcome.values == {
        "name": "(unknown)",
        "result": "dismissed by the operator: ask the CRM instead",
    }
    journal.close()


def test_effect_helper_runs_once_and_tells_failed_from_ambiguous(journal_path, tmp_path, desk):
    calls = {"pay": 0, "mail": 0}
    mail_fails = {"times": 1}

    def build(fx: GraphEffects) -> StateGraph:
        def pay(s: Bag) -> Bag:
            def charge() -> dict:
                calls["pay"] += 1
                return {"charge": "ch-1"}

            result = fx.run("pay", charge, tool="payments.charge", action={"amount": 5})
            interrupt("Paid. Continue?")  # the node re-runs on resume; the charge does not
            return {"result": result}

        def mail(s: Bag) -> Bag:
            def send() -> str:
                calls["mail"] += 1
                if mail_fails["times"]:
                    mail_fails["times"] -= 1
                    raise EffectNotExecuted("smtp refused the connection")
                return "sent"

            fx.run("mail", send)
            return {}

        return chain(pay, mail)

    bridge, journal = bridge_for(journal_path, tmp_path, build)
    outcome = bridge.start("t-effects", {})
    desk.answer(outcome.pending[0].item_id, {"text": "yes"})
    with pytest.raises(EffectNotExecuted):
        bridge.resume("t-effects")
    assert journal.effects.get("langgraph:t-effects:effect:mail").status == "failed"
    outcome = bridge.resume("t-effects")  # re-runs the failed node: the mail is retried
    assert outcome.action == "resumed" and outcome.done
    assert outcome.values["result"] == {"charge": "ch-1"}
    assert calls == {"pay": 1, "mail": 2}
    assert journal.effects.get("langgraph:t-effects:effect:mail").attempt == 2
    journal.close()


@pytest.mark.parametrize("resolution", ["committed", "failed"])
def test_crash_inside_an_effect_waits_for_a_person_then_goes_on(
    journal_path, tmp_path, desk, resolution
):
    calls = {"pay": 0}

    def build(fx: GraphEffects) -> StateGraph:
        def pay(s: Bag) -> Bag:
            def charge() -> dict:
                calls["pay"] += 1
                if calls["pay"] == 1:
                    raise TimeoutError("the bank did not answer")
                return {"charge": "ch-2"}

            return {"result": fx.run("pay", charge)}

        return chain(pay)

    bridge, journal = bridge_for(journal_path, tmp_path, build)
    key = "langgraph:t-ambiguous:effect:pay"
    outcome = bridge.start("t-ambiguous", {})  # no traceback: a pollable outcome
    assert outcome.action == "waiting" and not outcome.done
    assert [(p.kind, p.item_id, p.status) for p in outcome.pending] == [
        ("effect", key, "ambiguous")
    ]
    assert "resolve" in outcome.detail
    effect = journal.effects.get(key)
    assert effect.status == "ambiguous" and "did not answer" in effect.ambiguous_reason
    for _ in range(2):  # polling runs nothing until a person resolves it
        assert bridge.resume("t-ambiguous").action == "waiting"
        assert bridge.status("t-ambiguous").action == "waiting"
    assert calls["pay"] == 1
    with pytest.raises(errors.EffectAmbiguous):  # the helper itself still refuses to guess
        journal.effects.reserve(
            key, tool="pay", run_id=outcome.run_id, action=None, lease_seconds=5, owner="x"
        )
    desk.journal.effects.resolve(
        key,
        resolution,
        reason="checked the bank statement",
        expected_version=desk.journal.effects.get(key).version,
    )
    done = bridge.run_until_done("t-ambiguous", poll_s=0.05, timeout=60)
    assert done.done
    # committed: the charge happened, the node goes on without charging again;
    # failed: it certainly did not happen, so the node retries it
    assert calls["pay"] == (1 if resolution == "committed" else 2)
    journal.close()


def test_operator_cancel_stops_the_thread(journal_path, tmp_path, desk):
    def ask(s: Bag) -> Bag:
        return {"name": interrupt("Name?")}

    bridge, journal = bridge_for(journal_path, tmp_path, lambda fx: chain(ask))
    outcome = bridge.start("t-cancel", {})
    run = desk.journal.runs.get(outcome.run_id)
    desk.journal.runs.request_cancel(run.id, "wrong customer", expected_version=run.version)
    assert bridge.resume("t-cancel").action == "cancelled"
    assert desk.journal.runs.get(run.id).status == "cancelled"
    assert desk.journal.questions.get(outcome.pending[0].item_id).status == "cancelled"
    journal.close()


def test_checkpointer_must_not_share_the_journal_file(journal_path):
    journal = Journal.open(journal_path, actor=Actor.agent("bot"))

    def noop(s: Bag) -> Bag:
        return {}

    saver = SqliteSaver(sqlite3.connect(journal_path, check_same_thread=False))
    graph = chain(noop).compile(checkpointer=saver)
    with pytest.raises(ValueError, match="its own file"):
        LangGraphBridge(journal, graph)
    journal.close()


def test_an_edited_approval_resumes_the_graph_with_the_edited_arguments(
    journal_path, tmp_path, desk
):
    """Issue 19: the operator edits the refund's amount and approves; the graph resumes with
    the edited arguments and consumes the approval for the edited action's digest."""
    paid: list[dict] = []

    def build(fx: GraphEffects) -> StateGraph:
        def refund(s: Bag) -> Bag:
            asked = {"tool": "payments.refund", "args": {"account": "acct-9", "amount": 4200}}
            decision = interrupt({"kind": "approval", "action": asked, "reason": "refund"})
            if not decision["approved"]:
                return {"result": "denied"}
            args = decision["args"]
            fx.run("refund", lambda: paid.append(args) or {"ok": True}, approval=decision)
            return {"result": decision}

        return chain(refund)

    bridge, journal = bridge_for(journal_path, tmp_path, build)
    outcome = bridge.start("t-edit", {})
    approval_id = outcome.pending[0].item_id
    edited = {"tool": "payments.refund", "args": {"account": "acct-9", "amount": 420}}
    a = desk.journal.approvals.get(approval_id)
    desk.journal.approvals.approve_edited(approval_id, edited, expected_version=a.version)
    outcome = bridge.resume("t-edit")
    assert outcome.done
    decision = outcome.values["result"]
    assert decision["edited"] is True and decision["args"] == edited["args"]
    assert decision["action"] == edited and decision["requested_digest"] == a.action_digest
    assert paid == [edited["args"]]
    effect = journal.effects.get("langgraph:t-edit:effect:refund")
    assert effect.action == edited and effect.approval_id == approval_id
    journal.close()
