"""The README's resume loop (``while not outcome.done: outcome = await gate.resume(...,
outcome.state)``) run by two real worker processes on the same saved state (issue 32,
item 8), for each runtime whose adapter claims resumes (the OpenAI Agents SDK with a scripted
``Model``, pydantic-ai with a ``FunctionModel``: the published packages, offline).

One worker wins the claim and runs the refund (held inside the tool until the other has been
refused); the loser's outcome (``claimed_elsewhere``, then ``already_resumed``) keeps a state
its loop can go on with, and once the winner finished it is ``done`` with the winner's final
output. Exactly one refund; both loops end with the same output. Before, the loser's outcome
had no state and the loop crashed (``UserError: Failed to parse run state JSON`` /
``TypeError``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
APPS = {"openai-agents": HERE / "oa_app.py", "pydantic-ai": HERE / "pa_app.py"}
OUTPUT = {"openai-agents": "final_output", "pydantic-ai": "output"}
TIMEOUT_S = 120


class Worker:
    def __init__(self, app: Path, journal: Path, thread: str, state: Path, env: dict) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(app), str(journal), "loop", thread, str(state)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def statuses(self) -> list[str]:
        return [line.split()[1] for line in list(self.lines) if line.startswith("STATUS ")]

    def finish(self) -> tuple[int, list[str], dict, str]:
        self.proc.wait(timeout=TIMEOUT_S)
        self.reader.join(timeout=10)
        err = self.proc.stderr.read() if self.proc.stderr else ""
        last = json.loads(self.lines[-1]) if self.lines and self.lines[-1].startswith("{") else {}
        return self.proc.returncode, self.statuses(), last, err


def run_app(
    app: Path, journal: Path, command: str, thread: str, state: Path, env: dict | None = None
) -> dict:
    out = subprocess.run(
        [sys.executable, str(app), str(journal), command, thread, str(state)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def refunds(journal: Path) -> list[str]:
    log = Path(str(journal) + ".refunds.log")
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("runtime", sorted(APPS))
def test_two_workers_resume_one_state_and_both_end_done(journal_path, tmp_path, desk, runtime):
    app, state, release = APPS[runtime], tmp_path / "state.json", tmp_path / "release"
    first = run_app(app, journal_path, "start", "t-race", state)
    assert first["status"] == "waiting"
    [item] = desk.wait_pending("approval")
    desk.approve(item.id, reason="charged twice, checked")
    env = {**os.environ, "RELEASE": str(release)}
    workers = [Worker(app, journal_path, "t-race", state, env) for _ in range(2)]
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any("claimed_elsewhere" in w.statuses() for w in workers):
            assert time.monotonic() < deadline, [w.lines for w in workers]
            assert all(w.proc.poll() is None for w in workers), [w.finish() for w in workers]
            time.sleep(0.02)
        release.touch()  # the loser was refused while the winner held the claim: let it finish
        results = [w.finish() for w in workers]
    finally:
        release.touch()
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    for rc, _statuses, last, err in results:
        assert rc == 0, err
        assert last["done"] is True, (last, err)
        assert "refunded 4200 to acct-9" in str(last[OUTPUT[runtime]])
    assert refunds(journal_path) == ["acct-9 4200"]  # exactly once
    [loser] = [r for r in results if "claimed_elsewhere" in r[1]]
    assert loser[1][-1] == "already_resumed"  # then the winner's result, and done
    assert desk.journal.runs.get(first["run_id"]).status == "completed"


@pytest.mark.parametrize("runtime", sorted(APPS))
def test_the_loser_goes_on_from_where_the_winner_stopped(journal_path, tmp_path, desk, runtime):
    """The winner's resume stops at a second approval: the loser gets the winner's next
    state (not the spent one), both loops wait on the second approval, and once it is
    approved one of them runs the second refund and both end done with the same output."""
    app, state, release = APPS[runtime], tmp_path / "state.json", tmp_path / "release"
    env = {**os.environ, "TWO_REFUNDS": "1", "RELEASE": str(release)}
    first = run_app(app, journal_path, "start", "t-two", state, env)
    [item] = desk.wait_pending("approval")
    desk.approve(item.id)
    workers = [Worker(app, journal_path, "t-two", state, env) for _ in range(2)]
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any("claimed_elsewhere" in w.statuses() for w in workers):
            assert time.monotonic() < deadline, [w.lines for w in workers]
            assert all(w.proc.poll() is None for w in workers), [w.finish() for w in workers]
            time.sleep(0.02)
        release.touch()
        second = None
        while second is None:  # the winner stopped at the second refund's approval
            assert time.monotonic() < deadline, [w.lines for w in workers]
            second = next(
                (a for a in desk.journal.approvals.for_run(first["run_id"]) if a.id != item.id),
                None,
            )
            time.sleep(0.02)
        while not all(w.statuses().count("waiting") >= 1 for w in workers):
            assert time.monotonic() < deadline, [w.lines for w in workers]
            assert all(w.proc.poll() is None for w in workers), [w.finish() for w in workers]
            time.sleep(0.02)
        desk.approve(second.id)
        results = [w.finish() for w in workers]
    finally:
        release.touch()
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    outputs = set()
    for rc, _statuses, last, err in results:
        assert rc == 0, err
        assert last["done"] is True, (last, err)
        outputs.add(str(last[OUTPUT[runtime]]))
    assert len(outputs) == 1 and "refunded 4200 to acct-10" in outputs.pop()
    assert refunds(journal_path) == ["acct-9 4200", "acct-10 4200"]  # each exactly once
    [loser] = [r for r in results if r[1][0] == "claimed_elsewhere"]  # lost the first race
    went_on = loser[1].index("already_resumed")  # handed the winner's next state:
    assert "waiting" in loser[1][went_on + 1 :]  # it waited on the second approval
