"""The demo journal reads like a real morning: people take minutes to decide, not the
14 ms of the writer's clock tick (the Overview's "Time to decision"), and a desk started
now shows the newest items a little in the past, never in the future."""

from __future__ import annotations

import sqlite3
import statistics

from proctor.sim.demo import build_demo_journal, recent_start


def test_people_take_minutes_and_nothing_is_in_the_future(tmp_path):
    now = 1_800_000_000.0
    build_demo_journal(tmp_path / "demo.db", start_time=recent_start(now))
    with sqlite3.connect(tmp_path / "demo.db") as conn:
        waits = [
            decided - created
            for created, decided in conn.execute(
                "SELECT created_at, decided_at FROM approvals WHERE decided_at IS NOT NULL "
                "AND decided_by NOT LIKE 'rule:%' AND decided_by NOT LIKE 'system:%'"
            )
        ]
        answered = [
            resolved - created
            for created, resolved in conn.execute(
                "SELECT created_at, resolved_at FROM interactions WHERE resolved_at IS NOT NULL"
            )
        ]
        (newest,) = conn.execute("SELECT max(created_at) FROM events").fetchone()
    assert waits and statistics.median(waits) >= 10.0
    assert answered and statistics.median(answered) >= 10.0
    assert now - 4 * 3600 <= newest <= now
