"""`proctor simulate` as a user runs it: Ctrl+C or the duration ends it, nothing stays behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Journal, errors


def agent_pids(journal: Path) -> list[int]:
    """Processes still running an agent on ``journal`` (from /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().split()[2]
        except OSError:
            continue
        if (
            b"proctor.sim.agent_process" in cmdline
            and str(journal).encode() in cmdline
            and state != "Z"
        ):
            found.append(int(proc.name))
    return found


def waiting_items(journal: Path) -> int:
    try:
        with Journal.open(journal, read_only=True) as j:
            return j.inbox.count()
    except errors.ProctorError:
        return 0  # not created yet


def simulate(journal: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "proctor", "simulate", str(journal), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_ctrl_c_stops_every_agent(tmp_path: Path) -> None:
    journal = tmp_path / "sim.db"
    proc = simulate(journal, "--agents", "2", "--rate", "8", "--seed", "2")
    try:
        deadline = time.monotonic() + 40
        while waiting_items(journal) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(agent_pids(journal)) == 2
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl+C
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert "sim-agent-1: " in out and "sim-agent-2: " in out
    assert "simulation: 2 agents" in out and "items for a person" in out
    assert agent_pids(journal) == []
    with Journal.open(journal, read_only=True) as j:
        statuses = {r.status.value for r in j.runs.list(limit=100).items}
    assert statuses <= {"completed", "failed", "cancelled", "interrupted"}


@pytest.mark.slow
def test_simulate_ends_after_its_duration(tmp_path: Path) -> None:
    journal = tmp_path / "sim.db"
    proc = simulate(journal, "--agents", "1", "--duration", "5", "--drain", "1", "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "simulating 1 agents" in err
    summary = [line for line in out.splitlines() if line.startswith("sim-agent-1: ")]
    assert len(summary) == 1 and "1 interrupted" in summary[0]  # nobody answered it
    assert '"runs": 1' in out.splitlines()[-1]


def wait_for_agents(
    journal: Path, count: int, but_not: set[int] = frozenset(), timeout: float = 60
) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [p for p in agent_pids(journal) if p not in but_not]
        if len(pids) >= count:
            return pids
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} agents on {journal}")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_agents_killed_from_outside_are_restarted(tmp_path: Path) -> None:
    journal = tmp_path / "sim.db"
    proc = simulate(journal, "--agents", "2", "--rate", "4", "--seed", "3")
    try:
        first = wait_for_agents(journal, 2)
        for pid in first:
            os.kill(pid, signal.SIGKILL)  # both at once, from outside
        wait_for_agents(journal, 2, but_not=set(first))
        assert proc.poll() is None  # it did not stop early
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert "2 restarts" in out
    assert agent_pids(journal) == []


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_agents_that_cannot_be_restarted_fail_the_simulation_loudly(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("PROCTOR_SIM_MAX_RESTARTS", "0")
    journal = tmp_path / "sim.db"
    proc = simulate(journal, "--agents", "1", "--rate", "4")
    try:
        [pid] = wait_for_agents(journal, 1)
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, (out, err)
    assert "stopped early" in err and "sim-agent-1 (exit -9)" in err
