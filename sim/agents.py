"""Start N simulated agent processes and supervise them (restart the ones that crash).

Children are started with ``subprocess`` and ``sys.executable -m proctor.sim.agent_process``
(never fork: the desk may have Qt loaded). ``SimulationHandle.stop()`` leaves no process
behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from proctor.core import Journal

from .steps import CRASH_EXIT

# restarts per agent (crashes, or an agent killed from outside before its time)
MAX_RESTARTS = int(os.environ.get("PROCTOR_SIM_MAX_RESTARTS", "10"))
COUNTED = ("approvals", "questions", "conflicts", "ambiguous")


class SimulationHandle:
    """N agent processes writing to one journal. Thread-safe."""

    def __init__(
        self,
        journal_path: str | os.PathLike[str],
        agents: int,
        rate: float,
        duration: float | None,
        seed: int,
        *,
        drain: float = 10.0,
        fault_rate: float = 0.08,
        name_prefix: str = "sim-agent",
        trust: str | os.PathLike[str] | None = None,
    ) -> None:
        self.journal_path = os.fspath(journal_path)
        # trust: the agents' PROCTOR_TRUSTED_OPERATORS (they refuse unsigned decisions)
        self.env = (
            None if trust is None else {**os.environ, "PROCTOR_TRUSTED_OPERATORS": os.fspath(trust)}
        )
        self.rate, self.seed, self.drain, self.fault_rate = rate, seed, drain, fault_rate
        self.started_at = time.time()
        self.until = self.started_at + duration if duration is not None else None
        self.names = [f"{name_prefix}-{i + 1}" for i in range(agents)]
        self.stats_dir = Path(tempfile.mkdtemp(prefix="proctor-sim-"))
        self.exit_codes: dict[str, list[int]] = {name: [] for name in self.names}
        self.all_pids: list[int] = []
        self._procs: dict[int, subprocess.Popen] = {}
        self._restarts: Counter[int] = Counter()
        self._reaped: set[int] = set()
        self._failed: list[tuple[str, int]] = []  # agents that ended early for good
        self._final: dict[str, dict] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        for index in range(agents):
            self._spawn(index)
        self._thread = threading.Thread(
            target=self._supervise, name="proctor-sim-supervisor", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------ public
    @property
    def pids(self) -> list[int]:
        """Pids of the agent processes alive now."""
        with self._lock:
            return [p.pid for p in self._procs.values() if p.poll() is None]

    def alive(self) -> bool:
        with self._lock:
            return any(p.poll() is None for p in self._procs.values())

    def restarts(self) -> int:
        with self._lock:
            return sum(self._restarts.values())

    def failures(self) -> list[tuple[str, int]]:
        """(agent, exit code) of each agent that ended before its time (a crash, or killed
        from outside) and could not be restarted: the simulation did not run as asked."""
        with self._lock:
            return list(self._failed)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every agent has ended on its own; True if they all did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float = 5) -> dict[str, dict]:
        """Ask every agent to stop (SIGTERM), kill the ones still alive after ``timeout``,
        and return the per-agent totals."""
        self._stopping.set()
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._thread.join(timeout=2)
        self._final = self.stats()
        self.cleanup()
        return self._final

    def stats(self) -> dict[str, dict]:
        """Per-agent totals so far (from each agent's stats file; kept after stop)."""
        if self._final is not None:
            return self._final
        result = {}
        for name in self.names:
            path = self.stats_dir / f"{name}.json"
            try:
                result[name] = json.loads(path.read_text())
            except (OSError, ValueError):
                result[name] = {}
        return result

    def totals(self) -> dict:
        total: Counter[str] = Counter()
        for stats in self.stats().values():
            total.update({k: v for k, v in stats.items() if isinstance(v, (int, float))})
        total["items"] = sum(total[k] for k in COUNTED)
        result: dict[str, float] = dict(total)
        result["elapsed"] = round(time.time() - self.started_at, 3)
        return result

    def cleanup(self) -> None:
        """Remove the stats folder (stop() does it; safe to call again)."""
        shutil.rmtree(self.stats_dir, ignore_errors=True)

    # ------------------------------------------------------------ internals
    def _command(self, index: int, restart: int) -> list[str]:
        name = self.names[index]
        cmd = [
            sys.executable,
            "-m",
            "proctor.sim.agent_process",
            "--journal",
            self.journal_path,
            "--name",
            name,
            "--index",
            str(index),
            "--seed",
            str(self.seed),
            "--rate",
            str(self.rate),
            "--drain",
            str(self.drain),
            "--fault-rate",
            str(self.fault_rate),
            "--restart",
            str(restart),
            "--parent-pid",
            str(os.getpid()),
            "--stats",
            str(self.stats_dir / f"{name}.json"),
        ]
        if self.until is not None:
            cmd += ["--until", repr(self.until)]
        return cmd

    def _spawn(self, index: int, restart: int = 0) -> None:
        proc = subprocess.Popen(
            self._command(index, restart), stdin=subprocess.DEVNULL, close_fds=True, env=self.env
        )
        self._procs[index] = proc
        self.all_pids.append(proc.pid)

    def _supervise(self) -> None:
        while True:
            with self._lock:
                running = False
                for index, proc in list(self._procs.items()):
                    code = proc.poll()
                    if code is None:
                        running = True
                        continue
                    if proc.pid in self._reaped:
                        continue
                    self._reaped.add(proc.pid)
                    self.exit_codes[self.names[index]].append(code)
                    if self._stopping.is_set():
                        continue
                    early = self.until is None or time.time() < self.until
                    if code == CRASH_EXIT or (early or code != 0):
                        if self._restarts[index] < MAX_RESTARTS:
                            self._restarts[index] += 1
                            self._spawn(index, self._restarts[index])
                            running = True
                        else:
                            self._failed.append((self.names[index], code))
            if not running:
                return
            time.sleep(0.1)


def start_agents(
    journal_path: str | os.PathLike[str],
    agents: int = 3,
    rate: float = 1.0,
    duration: float | None = None,
    seed: int = 0,
    *,
    drain: float = 10.0,
    fault_rate: float = 0.08,
    trust: str | os.PathLike[str] | None = None,
) -> SimulationHandle:
    """Spawn ``agents`` agent processes on ``journal_path`` (created if missing).

    ``rate`` is steps per second per agent; after ``duration`` seconds no new run starts
    and a run still waiting gives up after ``drain`` more seconds. Crashed agents are
    restarted. Call ``.stop()`` to end them all.
    """
    if agents < 1:
        raise ValueError("at least one agent")
    Journal.open(journal_path).close()  # create/migrate once, before the children race
    return SimulationHandle(
        journal_path, agents, rate, duration, seed, drain=drain, trust=trust, fault_rate=fault_rate
    )
