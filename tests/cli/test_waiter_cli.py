"""Issue 37, "is anyone waiting?": `proctor inbox` has a WAITER column and `proctor show` a
``waiter`` line, read from the request's ``waiter_seen_at``, while a real agent process
waits on its approval (and never on its question); once the agent is gone and its last
look is old, both say so."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from proctor.core import Actor, Journal

from .conftest import OPERATOR
from .test_dismiss_cli import env, proctor

AGENT = textwrap.dedent(
    """
    import sys
    from proctor.core import Actor, Journal
    from proctor.core.storage import waiter

    waiter.STAMP_S = 0.2
    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "asks twice")
        q = j.questions.ask(run.id, "question", "which DB?")
        a = j.approvals.request(run.id, {"tool": "shell", "args": {"command": "make"}}, reason="r")
        print(a.id, q.id, flush=True)
        j.approvals.wait(a.id, timeout=60)
    """
)


def waiter_cells(out: str) -> dict[str, str]:
    """KIND -> the WAITER cell of its row in `proctor inbox`'s table."""
    lines = out.splitlines()
    start, end = lines[0].index("WAITER"), lines[0].index("SUMMARY")
    rows = [line for line in lines[1:] if line.split()[0] in ("approval", "question")]
    return {line.split()[0]: line[start:end].strip() for line in rows}


def test_the_inbox_and_show_say_whether_an_agent_waits(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator(OPERATOR)).close()
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(path)], env=env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None
        aid, qid = agent.stdout.readline().split()
        time.sleep(0.5)
        listed = proctor("inbox", "--journal", path)
        assert listed.returncode == 0, listed.stderr
        assert waiter_cells(listed.stdout) == {"approval": "now", "question": "nobody waited"}
        waited = proctor("inbox", "--waited", "--journal", path)
        assert waiter_cells(waited.stdout) == {"approval": "now"}
        shown = proctor("show", aid, "--journal", path)
        assert "waiter      agent waiting now" in shown.stdout.splitlines()
        asked = proctor("show", qid, "--journal", path)
        assert "waiter      nobody waited" in asked.stdout.splitlines()
        items = json.loads(proctor("inbox", "--json", "--journal", path).stdout)["items"]
        seen = {i["kind"]: i["waiter_seen_at"] for i in items}
        assert seen["question"] is None and abs(seen["approval"] - time.time()) < 10
    finally:
        agent.kill()
        agent.wait()
    with sqlite3.connect(path) as conn:  # the agent's last look, 12 minutes ago
        conn.execute("UPDATE approvals SET waiter_seen_at = ?", (time.time() - 12 * 60 - 5,))
    shown = proctor("show", aid, "--journal", path)
    assert "waiter      no agent has looked for 12m" in shown.stdout.splitlines()
    assert waiter_cells(proctor("inbox", "--journal", path).stdout)["approval"] == "12m ago"
    assert "0 shown" in proctor("inbox", "--waited", "--journal", path).stdout
