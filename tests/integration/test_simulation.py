"""Simulated agent processes against a real journal, decided by a scripted operator process
that only uses the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from proctor.core import Journal, QuestionKind
from proctor.sim.agents import start_agents

OPERATOR_SCRIPT = Path(__file__).with_name("sim_operator.py")
OPERATOR = "operator:sim-operator"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def all_runs(j: Journal) -> list:
    runs, cursor = [], None
    while True:
        page = j.runs.list(limit=500, cursor=cursor)
        runs += page.items
        cursor = page.next_cursor
        if cursor is None:
            return runs


def event_payloads(j: Journal, run_id: str, type_: str) -> list[dict]:
    return [e.payload for e in j.runs.events(run_id, types=[type_], limit=5000)]


@pytest.mark.slow
def test_agents_and_a_cli_operator_finish_every_run(tmp_path: Path) -> None:
    journal, stop, log = tmp_path / "sim.db", tmp_path / "stop", tmp_path / "decisions.jsonl"
    handle = start_agents(journal, agents=3, rate=5.0, duration=8, seed=3, drain=300)
    operator = subprocess.Popen(
        [sys.executable, str(OPERATOR_SCRIPT), str(journal), str(stop), str(log)]
    )
    try:
        finished = handle.wait(timeout=400)  # the work, not the clock, ends it
    finally:
        stop.touch()
        try:
            operator.wait(timeout=60)
        except subprocess.TimeoutExpired:
            operator.kill()
        handle.stop(timeout=5)
    totals = handle.totals()
    print(
        f"\nsimulation: {totals['items']} items in {totals['elapsed']:.1f} s "
        f"= {totals['items'] / totals['elapsed'] * 60:.0f} items/min; {totals}"
    )
    assert finished, "the agents did not finish their runs"
    assert operator.returncode == 0
    assert not [pid for pid in handle.all_pids if pid_alive(pid)], "an agent was left behind"
    assert handle.restarts() >= 1, "the crashed agent was not restarted"

    decisions = [json.loads(line) for line in log.read_text().splitlines()]
    assert decisions and all(d["rc"] == 0 for d in decisions), [
        d for d in decisions if d["rc"] != 0
    ]
    assert {d["kind"] for d in decisions} == {"approval", "question", "conflict", "effect"}

    with Journal.open(journal, read_only=True) as j:
        runs = all_runs(j)
        assert runs and all(r.status.terminal for r in runs), Counter(r.status.value for r in runs)
        check_approvals(j, runs)
        check_questions(j, runs)
        check_effects(j, runs)
    done = subprocess.run(
        [sys.executable, "-m", "proctor", "verify", str(journal)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def check_approvals(j: Journal, runs: list) -> None:
    classes, by_rule = set(), 0
    for run in runs:
        approvals = j.approvals.for_run(run.id)
        seen = {p["approval_id"] for p in event_payloads(j, run.id, "agent.decision_seen")}
        for index, a in enumerate(approvals):
            classes.add(a.safety_class.value)
            assert a.id in seen, f"the agent never looked at the decision on {a.id}"
            if a.status.value == "approved":
                assert a.consumed_at is not None, f"{a.id} was approved but never consumed"
                by_rule += a.decided_by.startswith("rule:")
            if a.decided_by == OPERATOR and a.decision_scope and a.decision_scope.value == "run":
                follow = [b for b in approvals[index + 1 :] if b.action_name == a.action_name]
                assert not follow or follow[0].decided_by.startswith("rule:"), (
                    "the run rule did not decide the follow-up"
                )
    assert len(classes) >= 2, classes


def check_questions(j: Journal, runs: list) -> None:
    kinds = set()
    for run in runs:
        used = {p["interaction_id"] for p in event_payloads(j, run.id, "agent.answer_used")}
        for q in j.questions.for_run(run.id):
            kinds.add(q.kind)
            assert q.status.value == "resolved", (q.id, q.status)
            assert q.id in used, f"the agent never used the answer to {q.id}"
    assert kinds == set(QuestionKind), set(QuestionKind) - kinds


def check_effects(j: Journal, runs: list) -> None:
    """Every effect ended; both faults (a crash, a lapsed lease) made one ambiguous, and the
    agent saw each one resolved by the operator. Read from the runs' history, not the effect
    rows: an effect a person marked failed is retried, and its row holds the retry's."""
    effects = j.effects.list(limit=1000).items
    assert effects and all(e.status.value in ("committed", "failed") for e in effects)
    ambiguous: dict[str, str] = {}
    seen: set[str] = set()
    for run in runs:
        for payload in event_payloads(j, run.id, "effect.ambiguous"):
            ambiguous[payload["effect_key"]] = payload["reason"]
        resolutions = event_payloads(j, run.id, "agent.effect_resolution_seen")
        seen |= {p["effect_key"] for p in resolutions if p["by"] == OPERATOR}
    reasons = " | ".join(ambiguous.values())
    assert "restarted mid-effect" in reasons and "lease expired" in reasons, reasons
    assert set(ambiguous) <= seen, set(ambiguous) - seen


@pytest.mark.slow
def test_stop_ends_every_agent_cleanly(tmp_path: Path) -> None:
    journal = tmp_path / "sim.db"
    handle = start_agents(journal, agents=2, rate=8.0, seed=5)
    try:
        deadline = time.monotonic() + 30
        with Journal.open(journal, read_only=True) as j:
            while j.inbox.count() < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
        assert handle.alive() and len(handle.pids) == 2
    finally:
        handle.stop(timeout=5)
    assert not handle.alive()
    assert not [pid for pid in handle.all_pids if pid_alive(pid)]
    assert all(codes and codes[-1] == 0 for codes in handle.exit_codes.values()), handle.exit_codes
    with Journal.open(journal, read_only=True) as j:
        runs = all_runs(j)
        assert {r.status.value for r in runs} <= {"completed", "failed", "cancelled", "interrupted"}
        counts = j.inbox.counts()
        assert counts[next(k for k in counts if k.value == "approval")] == 0
        assert counts[next(k for k in counts if k.value == "question")] == 0
