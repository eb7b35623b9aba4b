"""Signed decisions, what they cost: decide with and without signing, side by side; and the
agent's check of a decision with and without trust configured.

    uv run python tests/bench/signing_bench.py [--approvals 400] [--rounds 3]

One process, a real journal file in a temp folder (WAL, synchronous=FULL), every call its
own transaction as the desk and an agent make it. The two variants alternate in rounds so a
change in machine load hits both. Prints a table of medians, the ratio and the load
average; not run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.decisions.keys import OperatorKey, trust_file


def approvals(agent: Journal, run_id: str, n: int, tag: str) -> list[str]:
    return [
        agent.approvals.request(
            run_id, {"tool": "shell", "args": {"n": i, "t": tag}}, reason="bench"
        ).id
        for i in range(n)
    ]


def per_call(fn, items: list[str]) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items)


def bench(folder: Path, n: int, rounds: int) -> dict[str, list[float]]:
    path = folder / "bench.db"
    key = OperatorKey.generate("alice")
    trust = trust_file([{"name": "alice", "public_key": key.public_key}])
    agent = Journal.open(path, actor=Actor.agent("bench-agent"))
    trusting = Journal.open(path, actor=Actor.agent("bench-agent"), trust=trust)
    plain = Journal.open(path, actor=Actor.operator("alice"))
    signing = Journal.open(path, actor=Actor.operator("alice"), signer=key)
    run = agent.runs.start("bench", "signing")
    times: dict[str, list[float]] = {
        k: []
        for k in ("decide unsigned", "decide signed", "agent wait, no trust", "agent wait, trust")
    }
    try:
        for r in range(rounds):
            for name, journal in (("unsigned", plain), ("signed", signing)):
                items = approvals(agent, run.id, n, f"{r}{name}")
                times[f"decide {name}"].append(
                    per_call(
                        lambda a, j=journal: j.approvals.decide(a, True, expected_version=1), items
                    )
                )
                if name == "signed":
                    times["agent wait, no trust"].append(
                        per_call(lambda a: agent.approvals.wait(a, 0), items)
                    )
                    times["agent wait, trust"].append(
                        per_call(lambda a: trusting.approvals.wait(a, 0), items)
                    )
    finally:
        for j in (agent, trusting, plain, signing):
            j.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--approvals", type=int, default=400, help="per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        times = bench(Path(tmp), args.approvals, args.rounds)
    load_after = os.getloadavg()
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(
        f"{args.approvals} approvals x {args.rounds} rounds per variant "
        f"(medians of the rounds, ms per call)"
    )
    print(f"{'':24} {'without':>10} {'with':>10} {'ratio':>7}")
    for label, without, with_ in (
        ("decide (operator)", "decide unsigned", "decide signed"),
        ("wait (agent)", "agent wait, no trust", "agent wait, trust"),
    ):
        print(
            f"{label:24} {med[without]:10.3f} {med[with_]:10.3f} {med[with_] / med[without]:7.2f}"
        )
    print(
        f"load average 1/5/15 min: before {load_before[0]:.2f}/{load_before[1]:.2f}/"
        f"{load_before[2]:.2f}, after {load_after[0]:.2f}/{load_after[1]:.2f}/"
        f"{load_after[2]:.2f} ({os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
