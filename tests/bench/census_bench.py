"""What schema 0009b's census triggers cost a write: the approval's and the effect's whole life
(request, decide, consume and reserve, begin, commit), on a journal with the census triggers
and on one where they are dropped, side by side.

    uv run python tests/bench/census_bench.py [--items 200] [--rounds 3]

One process, two real journal files in a temp folder (WAL, synchronous=FULL), every call its
own transaction. The two variants alternate in rounds (each round in the other order) so a change in machine
load hits both.
Prints the median per life, the ratio and the load average; not run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.storage import db


def drop_census(journal: Journal) -> None:
    journal.write(lambda tx: db.drop_census_triggers(tx.conn))


def lives(agent: Journal, operator: Journal, run_id: str, n: int, tag: str) -> float:
    """Seconds per approval-and-effect life, over ``n`` of them."""
    start = time.perf_counter()
    for i in range(n):
        asked = agent.approvals.request(
            run_id, {"tool": "t", "args": {"n": i, "t": tag}}, reason="b"
        )
        operator.approvals.decide(asked.id, True, expected_version=1)
        key = f"fx-{tag}-{i}"
        agent.approvals.consume_and_reserve(asked.id, asked.action_digest, key, owner="w")
        agent.effects.begin(key, owner="w")
        agent.effects.commit(key, {"ok": True}, owner="w")
    return (time.perf_counter() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        journals = {}
        for name in ("census triggers", "without them"):
            path = Path(tmp) / f"{name.replace(' ', '-')}.db"
            agent = Journal.open(path, actor=Actor.agent("bench-agent"))
            operator = Journal.open(path, actor=Actor.operator("alice"))
            if name == "without them":
                drop_census(operator)
            journals[name] = (agent, operator, agent.runs.start("bench", name).id)
        times: dict[str, list[float]] = {name: [] for name in journals}
        try:
            for r in range(args.rounds):
                order = list(journals.items())
                for name, (agent, operator, run_id) in order if r % 2 else order[::-1]:
                    times[name].append(lives(agent, operator, run_id, args.items, f"{r}"))
        finally:
            for agent, operator, _ in journals.values():
                agent.close()
                operator.close()
    base = statistics.median(times["without them"])
    print(f"{'variant':<18} {'ms per life':>12} {'ratio':>7}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<18} {median * 1000:>12.2f} {median / base:>7.2f}")
    print(f"load average: {os.getloadavg()[0]:.2f}; {args.items} lives x {args.rounds} rounds")


if __name__ == "__main__":
    main()
