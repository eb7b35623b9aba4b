"""What an operator experiences while an agent login misbehaves on a team server: the
latency of one decision (`approvals.decide`, one transaction as the desk makes it) with no
adversary, and with an agent login that keeps grabbing what every write needs, side by side
in one run:

- `calm`: nobody else on the server;
- `agent holds the write lock`: an agent login takes the write lock (pg_advisory_xact_lock)
  and leaves its transaction idle; whenever the server ends its session it reconnects and
  takes the lock again at once;
- `agent locks the rows`: the same, with `SELECT ... FOR UPDATE` on every pending approval
  outside the write lock;
- `before: plain lock`: the write lock as main took it (no `proctor_write_lock` on the
  server: the operator's Proctor falls back to pg_advisory_xact_lock) with the agent
  holding it: every decision waits its whole busy timeout, then StoreBusy.

    uv run python tests/bench/team_hostage_bench.py [--decisions 8] [--rounds 2]

A private PostgreSQL server (tests/pg_server.py) on 127.0.0.1; the variants alternate in
rounds so a change in machine load hits each. Prints medians and maxima per decision, how
many ended in StoreBusy, the ratio to `calm`, and the load average; not run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: pg_server

import pg_server
import psycopg

from proctor.core import Actor, Journal, errors
from proctor.core.ops.team import HOLD_S, add_user, init
from proctor.core.storage import pg

PASSWORD = "bench-pw"
ACTION = {"tool": "shell", "args": {"command": "make"}}
BUSY_TIMEOUT_S = 5.0  # the store's default (core/storage/db.py BUSY_TIMEOUT_S)

HOLDS: dict[str, list[str]] = {
    "agent holds the write lock": [
        "SET idle_in_transaction_session_timeout = 0",
        "BEGIN",
        pg.LOCK_SQL,
    ],
    "agent locks the rows": [
        "SET idle_in_transaction_session_timeout = 0",
        "BEGIN",
        "SELECT id FROM approvals WHERE status = 'pending' FOR UPDATE",
    ],
}


class Hostage:
    """An agent login that holds ``statements``' locks, and takes them again each time the
    server ends its session."""

    def __init__(self, server: Any, database: str, statements: list[str]) -> None:
        self.server, self.database, self.statements = server, database, statements
        self.stop = threading.Event()
        self.taken = 0
        self.holding = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1",
            port=self.server.port,
            dbname=self.database,
            user="bench_agent",
            password=PASSWORD,
            autocommit=True,
        )

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                with self.connect() as conn:
                    for statement in self.statements:
                        conn.execute(statement)
                    self.taken += 1
                    self.holding.set()
                    while not self.stop.wait(0.02):
                        conn.execute("SELECT 1")  # still alive (in its transaction)?
            except psycopg.Error:
                continue

    def __enter__(self) -> Hostage:
        self.thread.start()
        self.holding.wait(20)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(20)


def decide_all(operator: Journal, ids: list[str]) -> tuple[list[float], int]:
    times, busy = [], 0
    for approval_id in ids:
        start = time.perf_counter()
        try:
            operator.approvals.decide(approval_id, True, expected_version=1)
        except errors.StoreBusy:
            busy += 1
        times.append(time.perf_counter() - start)
    return times, busy


def bench(decisions: int, rounds: int) -> dict[str, tuple[list[float], int]]:
    bindir = pg_server.find_bin()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries on this machine")
    server = pg_server.PgServer(bindir).start()
    try:
        database = server.fresh_database()
        owner_url = server.url(database)
        init(owner_url)
        add_user(owner_url, "bench_agent", "agent", PASSWORD)
        add_user(owner_url, "bench_op", "operator", PASSWORD)
        agent_url = server.url(database, user="bench_agent", password=PASSWORD)
        op_url = server.url(database, user="bench_op", password=PASSWORD)
        results: dict[str, tuple[list[float], int]] = {}

        def add(name: str, times: list[float], busy: int) -> None:
            old_times, old_busy = results.get(name, ([], 0))
            results[name] = (old_times + times, old_busy + busy)

        with Journal.open(agent_url, actor=Actor.agent("bench"), create=False) as agent:
            run = agent.runs.start("bench", "hostage")

            def filed(n: int) -> list[str]:
                return [
                    agent.approvals.request(run.id, {**ACTION, "n": i}, reason="b").id
                    for i in range(n)
                ]

            for _ in range(rounds):
                with Journal.open(op_url, actor=Actor.operator("bench_op"), create=False) as op:
                    add("calm", *decide_all(op, filed(decisions)))
                    for name, statements in HOLDS.items():
                        ids = filed(decisions)
                        with Hostage(server, database, statements):
                            add(name, *decide_all(op, ids))
                # main's lock: the function gone, a fresh operator connection falls back
                ids = filed(2)
                with psycopg.connect(server.dsn(database), autocommit=True) as owner:
                    owner.execute("DROP FUNCTION proctor_write_lock(integer)")
                try:
                    with (
                        Journal.open(op_url, actor=Actor.operator("bench_op"), create=False) as op,
                        Hostage(server, database, HOLDS["agent holds the write lock"]),
                    ):
                        add("before: plain lock", *decide_all(op, ids))
                finally:
                    init(owner_url)
        return results
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    results = bench(args.decisions, args.rounds)
    calm = statistics.median(results["calm"][0])
    print(f"team server, operator decide latency (HOLD_S = {HOLD_S:g} s, busy timeout "
          f"{BUSY_TIMEOUT_S:g} s), load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(
        f"{'variant':<28} {'n':>3} {'median ms':>10} {'max ms':>9} {'StoreBusy':>9} {'x calm':>8}"
    )
    for name, (times, busy) in results.items():
        median = statistics.median(times)
        print(
            f"{name:<28} {len(times):>3} {median * 1000:>10.1f} {max(times) * 1000:>9.1f} "
            f"{busy:>9} {median / calm:>8.1f}"
        )


if __name__ == "__main__":
    main()
