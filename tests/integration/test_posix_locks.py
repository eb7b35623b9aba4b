"""Opening a second journal in a process that already has the file open must not drop the
first one's locks: POSIX (fcntl) locks are per process, so closing any descriptor of the
database file releases all of them, and another process may then delete the -wal under the
first connection, which goes on reading a stale snapshot (the desk stopped seeing arrivals
after a same-process read-only open read the file's header)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proctor.core import Actor, Journal

AGENT = """
import sys
from proctor.core import Actor, Journal
with Journal.open(sys.argv[1], actor=Actor.agent("a")) as j:
    j.runs.start("p", "from another process")
"""


def write_from_another_process(path: Path) -> None:
    subprocess.run([sys.executable, "-c", AGENT, str(path)], check=True, timeout=120)


def test_a_second_open_in_this_process_keeps_the_first_ones_wal(tmp_path):
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.operator("alice")) as desk:
        seen = desk.changes.latest()
        write_from_another_process(path)
        for read_only in (True, False):
            with Journal.open(path, actor=Actor.operator("check"), read_only=read_only) as j:
                j.runs.count()
            write_from_another_process(path)  # its close must not remove our -wal
            assert path.with_name(path.name + "-wal").exists()
        later = desk.changes.since(seen)
        assert sum(c.entity_kind == "run" for c in later.changes) >= 3
