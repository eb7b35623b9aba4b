"""The desk killed mid-click (SIGKILL while its worker thread is inside the decide
transaction, just after it committed, or at a random moment): the decision is either
fully there (decision, audit row, run event, status) or fully absent; a restarted desk
shows the truth; clicking again with the same client request id applies it once.

The desk runs as its own process (kill_desk.py); the restarted desk is in this one.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.audit.verify import verify

WAIT_MS = 20_000
DESK = Path(__file__).with_name("kill_desk.py")
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
RANDOM_KILLS = 6 if os.environ.get("PROCTOR_LONG", "") not in ("", "0") else 2


def counts(path: Path, approval_id: str) -> dict[str, object]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        one = conn.execute
        return {
            "status": one("SELECT status FROM approvals WHERE id = ?", (approval_id,)).fetchone()[
                0
            ],
            "decisions": one(
                "SELECT COUNT(*) FROM decisions WHERE target_id = ?", (approval_id,)
            ).fetchone()[0],
            "audit": one(
                "SELECT COUNT(*) FROM audit WHERE entity_id = ? AND action = 'approval.approved'",
                (approval_id,),
            ).fetchone()[0],
            "events": one(
                "SELECT COUNT(*) FROM events WHERE type = 'approval.approved' AND payload LIKE ?",
                (f"%{approval_id}%",),
            ).fetchone()[0],
        }
    finally:
        conn.close()


FULLY_THERE = {"status": "approved", "decisions": 1, "audit": 1, "events": 1}
FULLY_ABSENT = {"status": "pending", "decisions": 0, "audit": 0, "events": 0}


def kill_the_desk(
    path: Path, approval_id: str, mode: str, tmp_path: Path, rng: random.Random
) -> str:
    """Run the desk, kill it where ``mode`` says; return the click's request id."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(DESK),
            str(path),
            approval_id,
            mode,
            str(tmp_path / f"desk-{mode}.ini"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    marker = {"inside": "inside", "after": "committed", "free": "clicked"}[mode]
    rid = None
    try:
        while True:
            line = proc.stdout.readline()
            assert line, "the desk died on its own: " + proc.stderr.read()[-2000:]
            words = line.split()
            if words[0] == "rid":
                rid = words[1]
            if words[0] == marker:
                break
        if mode == "free":
            time.sleep(rng.random() * 0.05)  # the kill lands anywhere in the click
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert rid is not None
    return rid


@pytest.fixture
def pending(tmp_path) -> tuple[Path, str]:
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "killed desk")
        approval = agent.approvals.request(
            run.id, {"tool": "deploy"}, reason="ship", safety_class="idempotent_write"
        )
    return path, approval.id


def restart_and_check(qtbot, desk, path: Path, approval_id: str, rid: str) -> dict:
    """The truth after the kill, then the same click again (same request id)."""
    state = counts(path, approval_id)
    assert state in (FULLY_THERE, FULLY_ABSENT), state  # never half
    with Journal.open(path, actor=Actor.operator("checker")) as j:
        assert j.integrity_check() == ["ok"] and verify(j).ok
    window = desk(path)
    key = f"approval:{approval_id}"
    shown = window.inbox.model.row_of(key) >= 0
    assert shown == (state == FULLY_ABSENT)  # the restarted desk shows the truth
    with Journal.open(path, actor=Actor.operator("alice")) as alice:
        again = alice.approvals.decide(approval_id, True, expected_version=1, request_id=rid)
    assert again.status.value == "approved"
    assert counts(path, approval_id) == FULLY_THERE  # applied exactly once
    qtbot.waitUntil(lambda: window.inbox.model.row_of(key) < 0, timeout=WAIT_MS)
    return state


@pytest.mark.parametrize(("mode", "expected"), [("inside", FULLY_ABSENT), ("after", FULLY_THERE)])
def test_a_desk_killed_mid_click_leaves_all_or_nothing(
    qtbot, desk, pending, tmp_path, mode, expected
):
    path, approval_id = pending
    rid = kill_the_desk(path, approval_id, mode, tmp_path, random.Random(1))
    assert counts(path, approval_id) == expected
    restart_and_check(qtbot, desk, path, approval_id, rid)


def test_a_desk_killed_at_random_moments_of_a_click(qtbot, desk, tmp_path):
    rng = random.Random(20261129)
    outcomes = []
    for n in range(RANDOM_KILLS):
        folder = tmp_path / f"kill-{n}"
        folder.mkdir()
        path = folder / "journal.db"
        with Journal.open(path, actor=Actor.agent("bot")) as agent:
            run = agent.runs.start("shop", "killed desk")
            approval_id = agent.approvals.request(
                run.id, {"tool": "deploy"}, reason="ship", safety_class="idempotent_write"
            ).id
        rid = kill_the_desk(path, approval_id, "free", folder, rng)
        outcomes.append(restart_and_check(qtbot, desk, path, approval_id, rid)["status"])
    print(f"\nFIGURE desk_kills {len(outcomes)} outcomes {outcomes}")
