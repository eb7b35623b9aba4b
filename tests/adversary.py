"""What a same-user process does to a journal file with plain ``sqlite3``, shared by the
tests of every layer that must then answer for it (core, CLI, desk)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def squat_next_event(path: Path, run_id: str) -> None:
    """An event put in by hand at the sequence the run's next event takes (an INSERT the
    triggers let through; verify names the broken chain): the next legitimate write to that
    run hits ``trg_events_no_replace``."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        cursor = conn.execute(
            "SELECT * FROM events WHERE run_id = ? ORDER BY sequence DESC LIMIT 1", (run_id,)
        )
        row = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
        row.update(id=row["id"] + "-squat", sequence=row["sequence"] + 1)
        marks = ", ".join("?" for _ in row)
        conn.execute(f"INSERT INTO events ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))
    finally:
        conn.close()
