"""Runs page per-page times for every sort and the slow filters on a synthetic journal.

    uv run python tests/bench/runs_sort_bench.py [--runs 100000] [--db PATH] [--repeat 7]

Builds (once, at --db) a journal of --runs runs with realistic spreads (5 % active, a
few hundred with a pending approval, many ties in events and titles), then times
``timeline.list_runs`` for the first page and the 10th page (keyset) of each query, 200
rows a page, median of --repeat. Prints one line per query. It uses whatever
``proctor`` is importable, so the same script measures an older checkout through
PYTHONPATH (the journal must then be built by that checkout: give it its own --db).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import time
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.audit import timeline
from proctor.core.audit.timeline import RunQuery

ACTIVE = ("pending", "running", "waiting_for_user", "interrupted")
ENDED = ("completed", "failed", "cancelled")
WORDS = (
    "deploy",
    "index",
    "billing",
    "report",
    "sync",
    "backup",
    "triage",
    "refund",
    "migrate",
    "audit",
    "scan",
    "export",
)
RUN_COLUMNS = """id project space agent title parent_run_id status version deadline created_at
    updated_at finished_at last_sequence last_digest current_attempt cancel_requested
    cancel_reason error"""
APPROVAL_COLUMNS = """id run_id attempt agent tool_call_id action action_name action_digest
    safety_class reason requested_scope status on_expiry expires_at request_key
    request_digest version created_at decided_at decided_by decision_reason decision_scope
    rule_id consumed_at consumed_effect_key snoozed_until"""
QUERIES = {
    "started (default)": RunQuery(),
    "title": RunQuery(sort="title", descending=False),
    "updated": RunQuery(sort="updated"),
    "events": RunQuery(sort="events"),
    "status": RunQuery(sort="status", descending=False),
    "agent": RunQuery(sort="agent", descending=False),
    "Active filter": RunQuery(status=ACTIVE),
    "Ended filter": RunQuery(status=ENDED),
    "has open items": RunQuery(has_open_items=True),
}


def run_rows(count: int, rng: random.Random) -> list[tuple]:
    rows, t0 = [], 1_700_000_000.0
    for i in range(count):
        created = t0 + i * 3.0
        status = rng.choice(ACTIVE) if rng.random() < 0.05 else rng.choice(ENDED)
        title = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i % 500}"
        rows.append(
            (
                f"run_{i:07d}",
                f"proj{i % 10}",
                "default",
                f"agent{i % 20}",
                title,
                None,
                status,
                3,
                None,
                created,
                created + rng.random() * 86_400,
                None,
                rng.randrange(1, 400),
                "0" * 64,
                1,
                0,
                None,
                None,
            )
        )
    return rows


def approval_rows(run_ids: list[str]) -> list[tuple]:
    return [
        (
            f"apr_{i}",
            rid,
            1,
            "agent0",
            None,
            "{}",
            "act",
            "0" * 64,
            "safe_read",
            "why",
            "once",
            "pending",
            "deny",
            None,
            f"key_{i}",
            "0" * 64,
            1,
            1_700_000_000.0,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )
        for i, rid in enumerate(run_ids)
    ]


def build(path: Path, count: int) -> None:
    with Journal.open(path, actor=Actor.agent("bench")):
        pass  # created at this checkout's schema head
    rng = random.Random(1)
    rows = run_rows(count, rng)
    waiting = [r[0] for r in rows if r[6] == "waiting_for_user"]
    with sqlite3.connect(path) as conn:
        conn.executemany(insert_sql("runs", RUN_COLUMNS), rows)
        conn.executemany(insert_sql("approvals", APPROVAL_COLUMNS), approval_rows(waiting))


def insert_sql(table: str, columns: str) -> str:
    names = columns.split()
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"


def page_times(j: Journal, q: RunQuery, repeat: int, depth: int) -> tuple[float, float]:
    first, deep = [], []
    for _ in range(repeat):
        cursor = None
        for n in range(depth):
            t = time.perf_counter()
            page = timeline.list_runs(j, q, cursor=cursor, limit=200)
            took = (time.perf_counter() - t) * 1000
            if n == 0:
                first.append(took)
            cursor = page.next_cursor
            if cursor is None:
                break
        deep.append(took)
    return statistics.median(first), statistics.median(deep)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--db", type=Path, default=Path("/tmp/runs-sort-bench.db"))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    if not args.db.exists():
        print(f"building {args.runs:,} runs at {args.db} …", flush=True)
        build(args.db, args.runs)
    with Journal.open(args.db, actor=Actor.operator("bench"), read_only=True) as j:
        print(
            f"{timeline.list_runs.__module__} schema {j.schema_revision}; ms per 200-row "
            f"page, median of {args.repeat}: first page / 10th page"
        )
        for name, q in QUERIES.items():
            first, deep = page_times(j, q, args.repeat, 10)
            print(f"  {name:18s} {first:8.1f} {deep:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
