"""The demo's simulated agents implement every outcome the desk can produce (issue 32,
item 7): real ``proctor.sim`` agent processes on a real journal, decided with the very core
calls the desk's buttons make, each run ending as the desk said it would.

- "Edit, then approve…" (``approvals.approve_edited``): the agent runs the edited action
  (consumed by its own digest), not a DigestMismatch.
- "Mark failed, allow a retry" (``effects.resolve(…, "failed")``) after a crash or a lapsed
  lease: the agent's next attempt of the effect runs it again and the run completes.
- "Accept the change" on a memory change review whose entry a person confirmed meanwhile:
  the agent does what the store's refusal says (records a conflict), the run completes.
- "Deny…": the agent takes its alternative and the run completes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import pytest

from proctor.core import Actor, Journal
from proctor.core.models import ApprovalStatus, EffectStatus, QuestionStatus

STEP = Path(__file__).with_name("sim_step.py")
TIMEOUT_S = 120.0
OPERATOR = "dana"


class SimAgent:
    """``sim_step.py``: one proctor.sim agent process running one step."""

    def __init__(
        self,
        journal: Path,
        name: str,
        index: int,
        restart: int,
        step: str,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, str(STEP), str(journal), name, str(index), str(restart), step],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def finish(self) -> tuple[int, dict[str, str], str]:
        out, err = self.proc.communicate(timeout=TIMEOUT_S)
        runs = dict(line.split()[1:3] for line in out.splitlines() if line.startswith("RUN "))
        return self.proc.returncode, runs, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def journal(tmp_path: Path):
    path = tmp_path / "demo.db"
    Journal.open(path).close()
    started: list[SimAgent] = []

    def start(name: str, index: int, restart: int, step: str) -> SimAgent:
        agent = SimAgent(path, name, index, restart, step)
        started.append(agent)
        return agent

    with Journal.open(path, actor=Actor.operator(OPERATOR)) as op:
        yield op, start
    for agent in started:
        agent.kill()


def until(found, what: str):
    """Poll the journal (a separate process writes it) until ``found()`` returns something."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def run_of(op: Journal, agent: str):
    return until(lambda: next(iter(op.runs.list(agent=agent, limit=5).items), None), "a run")


def pending_approval(op: Journal, run_id: str):
    return until(
        lambda: next(
            (a for a in op.approvals.for_run(run_id) if a.status == ApprovalStatus.PENDING), None
        ),
        "an approval",
    )


def approve_rest(op: Journal, agent: SimAgent, run_id: str) -> None:
    """Approve (once) whatever else the run asks until the agent process ends (a follow-up
    of an approval requested "for the run")."""
    while agent.proc.poll() is None:
        for a in op.approvals.for_run(run_id):
            if a.status == ApprovalStatus.PENDING:
                op.approvals.decide(a.id, True, expected_version=a.version)
        time.sleep(0.05)


def edited(action: dict) -> dict:
    """The operator's edit: the first text argument changed (the editor's JSON)."""
    args = dict(action["args"])
    name = next(k for k, v in args.items() if isinstance(v, str))
    args[name] = args[name] + " # checked by dana"
    return {**action, "args": args}


def mark_failed(op: Journal, run_id: str) -> str:
    """The desk's "Mark failed, allow a retry" (resolve_effect.resolve_call): the one
    ambiguous effect of the run resolved failed, with a reason."""
    effect = until(
        lambda: next(
            (
                e
                for e in op.effects.list(status=["ambiguous"], limit=50).items
                if e.run_id == run_id
            ),
            None,
        ),
        "an ambiguous effect",
    )
    op.effects.resolve(
        effect.key,
        "failed",
        reason="the provider has no record of it",
        expected_version=effect.version,
        request_id=f"req-{effect.key}",
    )
    return effect.key


def test_edit_then_approve_runs_the_edited_action(journal) -> None:
    op, start = journal
    agent = start("sim-edit", 0, 1, "approval")  # a restarted agent: no fault on its effect
    run = run_of(op, agent.name)
    approval = pending_approval(op, run.id)
    action = edited(approval.action)
    decided = op.approvals.approve_edited(  # the desk's EditActionDialog → approve_edited
        approval.id, action, expected_version=approval.version, request_id="req-edit"
    )
    assert decided.edited
    approve_rest(op, agent, run.id)
    rc, runs, err = agent.finish()
    assert rc == 0, err
    assert runs == {run.id: "completed"}, err
    [effect] = [e for e in op.effects.list(limit=50).items if e.approval_id == approval.id]
    assert effect.status == EffectStatus.COMMITTED
    assert effect.action == action and effect.action_digest == decided.approved_digest
    ran = [e.payload for e in op.runs.events(run.id, types=["agent.ran_edited"], limit=10)]
    assert ran and ran[0]["args"] == action["args"]


@pytest.mark.parametrize(("index", "fault"), [(0, "crash"), (1, "lease")])
def test_mark_failed_allow_a_retry_is_retried(journal, index: int, fault: str) -> None:
    op, start = journal
    name = f"sim-{fault}"
    first = start(name, index, 0, "approval")  # a fresh agent: its first effect has the fault
    run = run_of(op, name)
    approval = pending_approval(op, run.id)
    op.approvals.decide(approval.id, True, expected_version=approval.version)
    agent = first
    if fault == "crash":
        rc, _runs, err = first.finish()
        assert rc == 75, err  # crashed mid-effect; the supervisor starts it again:
        agent = start(name, index, 1, "recover")
    key = mark_failed(op, run.id)
    approve_rest(op, agent, run.id)
    rc, runs, err = agent.finish()
    assert rc == 0, err
    assert runs.get(run.id) == "completed", (runs, err)
    effect = op.effects.get(key)
    assert (effect.status, effect.attempt) == (EffectStatus.COMMITTED, 2), err
    retried = [e.payload for e in op.runs.events(run.id, types=["agent.retried"], limit=10)]
    assert retried and retried[0]["attempt"] == 2


def test_an_accepted_change_to_an_entry_confirmed_meanwhile_completes(journal) -> None:
    op, start = journal
    agent = start("sim-memory", 0, 1, "question")
    run = run_of(op, agent.name)
    question = until(
        lambda: next(
            (q for q in op.questions.for_run(run.id) if q.status == QuestionStatus.REQUESTED),
            None,
        ),
        "the memory change review",
    )
    entry = op.memory.get(question.request["entry_id"])
    op.memory.confirm(entry.id, expected_version=entry.version, reason="checked")
    op.questions.answer(  # answered as the agent asked, before the desk knew of the confirm
        question.id, {"verdict": "accept"}, expected_version=question.version, request_id="rq"
    )
    rc, runs, err = agent.finish()
    assert rc == 0, err
    assert runs == {run.id: "completed"}, err
    [conflict] = [c for c in op.memory.conflicts() if c.entry_id == entry.id]
    assert conflict.incoming_content == question.request["after"]


def test_a_denied_action_is_adapted_to_and_the_run_completes(journal) -> None:
    """Deny (the desk's Deny…, with a reason) twelve requests of one run: the agent takes its
    alternative each time and completes the run (a denial is a choice it lives with)."""
    op, start = journal
    agent = start("sim-deny", 0, 1, "approvals")
    run = run_of(op, agent.name)
    denied: set[str] = set()
    while agent.proc.poll() is None:
        for a in op.approvals.for_run(run.id):
            if a.status == ApprovalStatus.PENDING:
                op.approvals.decide(
                    a.id, False, expected_version=a.version, reason="not with this account"
                )
                denied.add(a.id)
        time.sleep(0.05)
    rc, runs, err = agent.finish()
    assert rc == 0, err
    assert len(denied) == 12 and runs == {run.id: "completed"}, (runs, err)
    adapted = {e.payload["approval_id"] for e in op.runs.events(run.id, types=["agent.adapted"])}
    assert adapted == denied


def test_a_dismissed_question_is_adapted_to_and_the_run_completes(journal) -> None:
    """Dismiss (the desk's "Dismiss question…", with a reason) the agent's question: it goes
    on without an answer, says why in its run (the operator's words), and completes."""
    op, start = journal
    agent = start("sim-dismiss", 0, 1, "question")
    run = run_of(op, agent.name)
    question = until(
        lambda: next(
            (q for q in op.questions.for_run(run.id) if q.status == QuestionStatus.REQUESTED),
            None,
        ),
        "the agent's question",
    )
    op.questions.dismiss(question.id, "no review this week", expected_version=question.version)
    rc, runs, err = agent.finish()
    assert rc == 0, err
    assert runs == {run.id: "completed"}, err
    [adapted] = op.runs.events(run.id, types=["agent.adapted"])
    assert adapted.payload["interaction_id"] == question.id
    assert adapted.payload["because"] == "dismissed by the operator: no review this week"
    assert not op.runs.events(run.id, types=["agent.answer_used"])


def test_a_failed_run_retried_by_the_operator_is_run_again_and_completes(journal) -> None:
    """ "Retry run…" (``runs.request_retry``) on a failed run: the demo agent that owns it
    starts the attempt asked for, before any new run of its own, and completes the run."""
    op, start = journal
    with Journal.open(cast(Path, op.path), actor=Actor.agent("sim-retry")) as own:
        run = own.runs.start("shop", "a run that failed")
        own.runs.fail(run.id, "agent error: the API was down")
    failed = op.runs.get(run.id)
    op.runs.request_retry(run.id, "the API is back", expected_version=failed.version)
    code, runs, err = start("sim-retry", 0, 1, "retry").finish()
    assert code == 0, err
    assert runs == {run.id: "completed"}
    done = op.runs.get(run.id)
    assert (done.current_attempt, done.retry_pending) == (2, False)
    types = [e.type for e in op.runs.events(run.id)]
    assert types.index("run.retry_requested") < types.index("run.retried")
    assert types.index("agent.retrying") < types.index("run.completed")


def test_a_rule_no_trusted_operator_signed_fails_no_run(tmp_path: Path) -> None:
    """``proctor demo``'s agents trust only the operator's key, and the demo journal's
    history holds rules its seeded operators made unsigned: an action such a rule approves
    is not acted on (the decision cannot be verified), as a denial is not, and the run goes
    on to complete instead of failing with DecisionUnverified (seen in the scripted
    operator session: a run failed right after a rule of the demo's approved its request)."""
    import os

    from proctor.cmd_desk import demo_trust

    path = tmp_path / "demo.db"
    trust = demo_trust(tmp_path, OPERATOR)  # the operator's key, as proctor demo writes it
    with Journal.open(path, actor=Actor.operator("alice")) as j:  # no key: an unsigned rule
        rule = j.approvals.add_rule("allow", "*", scope="space", project="*")
    env = {**os.environ, "PROCTOR_TRUSTED_OPERATORS": str(trust["path"])}
    agent = SimAgent(path, "sim-agent-1", 0, 1, "approval", env=env)
    try:
        code, runs, err = agent.finish()
    finally:
        agent.kill()
    assert code == 0, err
    [(run_id, status)] = runs.items()
    with Journal.open(path, read_only=True) as j:
        events = j.runs.events(run_id, limit=500)
    assert status == "completed", [(e.type, e.payload) for e in events if "fail" in e.type]
    applied = [e.payload for e in events if e.type == "agent.rule_applied"]
    assert applied and applied[0]["rule_id"] == rule.id
    assert [e for e in events if e.type == "agent.decision_unverified"]
    assert not [e for e in events if e.type.startswith("effect.")]  # nothing was done
