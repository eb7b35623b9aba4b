"""An effect whose agent was killed mid-effect waits for a person, not for nobody (issue 32,
item 13): with a real agent process killed while it holds the lease, the lapsed lease becomes
ambiguous by itself when any agent next reserves an effect, and reaches `proctor inbox`;
`proctor resolve-effect` marks a lapsed lease ambiguous and resolves it, as the desk does,
instead of answering that it was decided already; a live lease is refused as the agent's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal

AGENT = Path(__file__).parents[1] / "agents" / "effects_agent.py"
KEY = "pay:INV-7731"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "j.db"
    Journal.open(path, actor=Actor.agent("payer")).close()
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", "tester")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    return path


def kill_mid_effect(path: Path, lease_s: float) -> None:
    """A real agent process begins KEY and is killed with SIGKILL while it holds the lease."""
    proc = subprocess.Popen(
        [sys.executable, str(AGENT), str(path), "begin", KEY],
        env={**os.environ, "EFFECTS_AGENT_LEASE_S": str(lease_s)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("BEGUN"), proc.stderr.read() if proc.stderr else line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)


@pytest.fixture
def killed(fresh: Path) -> Path:
    """KEY's agent was killed mid-effect holding a 1 s lease."""
    kill_mid_effect(fresh, 1.0)
    return fresh


def wait_for_lapse(path: Path) -> None:
    """Until the dead agent's lease ran out by the journal's clock (a poll, no assertion)."""
    with Journal.open(path, read_only=True) as j:
        expires = j.effects.get(KEY).lease_expires_at
        assert expires is not None
        while j.now() <= expires:
            time.sleep(0.05)


def proctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args], capture_output=True, text=True, check=False
    )


def inbox_effects() -> list[str]:
    done = proctor("inbox", "--kind", "effect", "--json")
    assert done.returncode == 0, done.stderr
    return [item["id"] for item in json.loads(done.stdout)["items"]]


def status(path: Path) -> str:
    with Journal.open(path, read_only=True) as j:
        return j.effects.get(KEY).status.value


def test_another_agents_reservation_sends_the_lapsed_lease_to_the_inbox(killed: Path) -> None:
    assert KEY not in inbox_effects()
    wait_for_lapse(killed)
    other = subprocess.run(
        [sys.executable, str(AGENT), str(killed), "other", "pay:INV-0002"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert other.returncode == 0 and "COMMITTED pay:INV-0002" in other.stdout, other.stderr
    assert inbox_effects() == [KEY]
    with Journal.open(killed, read_only=True) as j:
        effect = j.effects.get(KEY)
        assert effect.status.value == "ambiguous"
        assert effect.ambiguous_reason == "lease expired before the outcome was recorded"
        audit = [a for a in j.audit.list(limit=100).items if a.action == "effect.ambiguous"]
        assert [a.actor for a in audit] == ["system:recovery"]
    done = proctor("resolve-effect", KEY, "failed", "--reason", "the bank has no such payment")
    assert done.returncode == 0, done.stderr
    assert status(killed) == "failed" and inbox_effects() == []


def test_a_live_lease_is_refused_as_the_agents(fresh: Path) -> None:
    kill_mid_effect(fresh, 3600.0)  # its lease runs for an hour yet
    live = proctor("resolve-effect", KEY, "committed", "--reason", "too early")
    assert live.returncode == 1 and "holds its lease until" in live.stderr
    assert "decided" not in live.stderr and status(fresh) == "executing"


def test_resolve_effect_marks_a_lapsed_lease_and_resolves_it(killed: Path) -> None:
    wait_for_lapse(killed)
    assert KEY not in inbox_effects()  # nobody reserved since: not swept yet
    done = proctor("resolve-effect", KEY, "committed", "--reason", "the bank shows it paid")
    assert done.returncode == 0, done.stderr
    assert "lapsed" in done.stderr and "marked it ambiguous first" in done.stderr
    assert status(killed) == "committed"
    with Journal.open(killed, read_only=True) as j:
        [decision] = j.approvals.decisions(KEY)
        assert decision.source == "cli" and decision.actor == "operator:tester"
