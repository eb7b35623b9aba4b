"""How late a write sees another process's write lock freed (not run by pytest):

    uv run python tests/bench/desk_lock_bench.py [--rounds 200]

An "agent" process holds the journal's write lock for 1-20 ms at a time (BEGIN IMMEDIATE,
sleep, COMMIT, print the release time), as agents do while they fsync their commits; the
desk-side waiter, in this process, starts a write while the lock is held and notes when
its BEGIN IMMEDIATE returned. Lag = acquired - released. Measured side by side, round by
round alternately: SQLite's busy handler (``busy_timeout``: sleeps 1, 2, 5, 10, 15, 20,
25 ... ms) and core's ``lock_poll`` (the desk's LOCK_POLL_S). Prints the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOLD_MS = (1.0, 20.0)


def agent(path: str) -> int:
    """Hold the write lock when told (a line on stdin), for the ms given; print release."""
    conn = sqlite3.connect(path, isolation_level=None)
    for line in sys.stdin:
        hold = float(line)
        conn.execute("BEGIN IMMEDIATE")
        print("HELD", flush=True)
        time.sleep(hold / 1000)
        released = time.time()
        conn.execute("COMMIT")
        print(f"{released:.6f}", flush=True)
    return 0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--role", help=argparse.SUPPRESS)
    p.add_argument("--journal", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.role == "agent":
        return agent(a.journal)
    from proctor.core import Actor, Journal
    from proctor.gui.shell.app import LOCK_POLL_S

    folder = Path(tempfile.mkdtemp(prefix="lock-bench-"))
    path = folder / "j.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    child = subprocess.Popen(
        [sys.executable, __file__, "--role", "agent", "--journal", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    journals = {
        "sqlite busy handler": Journal.open(path, actor=Actor.operator("a"), lock_poll=None),
        "core default (0.1 s in the handler, then a poll)": Journal.open(
            path, actor=Actor.operator("c")
        ),
        f"desk: lock_poll {LOCK_POLL_S * 1000:g} ms": Journal.open(
            path, actor=Actor.operator("b"), lock_poll=LOCK_POLL_S, lock_patience=0.0
        ),
    }
    lags: dict[str, list[float]] = {name: [] for name in journals}
    rng = random.Random(1)
    load0 = os.getloadavg()[0]
    for _ in range(a.rounds):
        for name in sorted(journals, key=lambda _: rng.random()):  # side by side, mixed order
            child.stdin.write(f"{rng.uniform(*HOLD_MS):.3f}\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "HELD"
            acquired = journals[name].write(lambda tx: time.time())  # right after its BEGIN
            released = float(child.stdout.readline())
            lags[name].append((acquired - released) * 1000)
    child.stdin.close()
    child.wait()
    for j in journals.values():
        j.close()
    print(
        f"write lock freed → the waiting write's BEGIN returned, {a.rounds} rounds each, "
        f"lock held {HOLD_MS[0]:g}-{HOLD_MS[1]:g} ms; load {load0:.1f} → {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    for name, values in lags.items():
        print(
            f"  {name:22} lag p50 {pct(values, 50):6.2f}  p95 {pct(values, 95):6.2f}  "
            f"p99 {pct(values, 99):6.2f}  max {max(values):6.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
