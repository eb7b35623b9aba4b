"""Core write throughput on this machine: events appended/s and approvals decided/s.

    uv run python tests/bench/core_throughput.py [--events 3000] [--approvals 600]

One process, a real journal file in a temp folder (WAL, synchronous=FULL), every call its own
transaction exactly as an agent or the desk makes it. Prints a table; not run by pytest.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from proctor.core import Actor, Journal


def timed(n: int, step: Callable[[int], object]) -> tuple[float, float]:
    """Wall seconds and CPU seconds of ``n`` steps (the gap is mostly fsync at commit)."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        step(i)
    return time.perf_counter() - start, time.process_time() - cpu


def bench(folder: Path, events: int, approvals: int) -> list[tuple[str, int, tuple]]:
    path = folder / "bench.db"
    agent = Journal.open(path, actor=Actor.agent("bench-agent"))
    operator = Journal.open(path, actor=Actor.operator("bench-operator"))
    try:
        run = agent.runs.start("bench", "throughput")
        rows = [
            (
                "append_event (1 event / call)",
                events,
                timed(
                    events,
                    lambda i: agent.runs.append_event(run.id, "step", {"i": i, "note": "x" * 64}),
                ),
            )
        ]
        batch = 50
        rows.append(
            (
                f"append_events ({batch} events / call)",
                events,
                timed(
                    events // batch,
                    lambda i: agent.runs.append_events(
                        run.id, [("step", {"i": i, "k": k}) for k in range(batch)]
                    ),
                ),
            )
        )
        decide_run = agent.runs.start("bench", "decisions")

        def request_and_decide(i: int) -> None:
            approval = agent.approvals.request(
                decide_run.id, {"tool": "deploy", "n": i}, reason="bench"
            )
            operator.approvals.decide(approval.id, True, expected_version=approval.version)

        rows.append(("approval request + decide", approvals, timed(approvals, request_and_decide)))
        pending = [
            agent.approvals.request(decide_run.id, {"tool": "ship", "n": i}, reason="b")
            for i in range(approvals)
        ]
        rows.append(
            (
                "decide only",
                approvals,
                timed(
                    approvals,
                    lambda i: operator.approvals.decide(
                        pending[i].id, True, expected_version=pending[i].version
                    ),
                ),
            )
        )
    finally:
        agent.close()
        operator.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--approvals", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-bench-") as tmp:
        rows = bench(Path(tmp), args.events, args.approvals)
    base = rows[0][1] / rows[0][2][0]
    print(
        f"{'operation':<34} {'items':>7} {'seconds':>8} {'items/s':>9} {'ms/item':>8} "
        f"{'cpu ms/item':>11} {'vs append':>9}"
    )
    for name, n, (secs, cpu) in rows:
        rate = n / secs
        print(
            f"{name:<34} {n:>7} {secs:>8.2f} {rate:>9.0f} {1000 / rate:>8.3f} "
            f"{1000 * cpu / n:>11.3f} {rate / base:>8.2f}x"
        )


if __name__ == "__main__":
    main()
