"""Several desk processes log into one desk.log and rotate it: no line is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WRITER = r"""
import logging, sys
from pathlib import Path
from proctor.gui.shell import logging_setup
logging_setup.MAX_BYTES = 3000
logging_setup.BACKUPS = 400
logging_setup.setup_logging(folder=Path(sys.argv[1]), console_level=logging.CRITICAL)
log = logging.getLogger("proctor.gui.writer")
for n in range(int(sys.argv[3])):
    log.info("line %s-%05d", sys.argv[2], n)
logging_setup.stop_logging()
"""


def logged_lines(folder: Path) -> list[str]:
    return [
        line
        for f in folder.glob("desk.log*")
        for line in f.read_text(encoding="utf-8").splitlines()
        if " line " in line
    ]


def test_three_processes_rotating_one_log_lose_no_line(tmp_path):
    per_process = 600  # about 60 rotations of a 3 kB log, shared by three writers
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), name, str(per_process)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b", "c")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    lines = logged_lines(tmp_path)
    for name in ("a", "b", "c"):
        mine = {line.rsplit(" line ", 1)[1] for line in lines if f" line {name}-" in line}
        assert mine == {f"{name}-{n:05d}" for n in range(per_process)}
    assert len(lines) == 3 * per_process  # and none written twice
    assert len(list(tmp_path.glob("desk.log.*"))) > 10  # it did rotate
