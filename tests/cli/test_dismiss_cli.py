"""Issue 37: `proctor dismiss ID --reason TEXT` closes a question without answering it, in a
separate process as a user runs it, while a real agent process waits on the question: the
agent sees it dismissed, with the reason, and not as an answer."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from proctor.core import Actor, Journal

from .conftest import OPERATOR

AGENT = textwrap.dedent(
    """
    import sys
    from proctor.core import Actor, Journal

    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "asks a question")
        q = j.questions.ask(run.id, "question", "which DB?", request_key="q-1")
        print(q.id, flush=True)
        got = j.questions.wait(q.id, timeout=60)
        print(got.status.value, got.dismiss_reason, got.response == {"text": ""}, flush=True)
    """
)


def env() -> dict[str, str]:
    out = {**os.environ, "PROCTOR_CONFIG": os.devnull, "PROCTOR_OPERATOR": OPERATOR}
    out.pop("PROCTOR_JOURNAL", None)
    out.update(PROCTOR_WARM="0", QT_QPA_PLATFORM="offscreen")
    return out


def proctor(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_a_waiting_agent_process_sees_the_clis_dismissal(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator(OPERATOR)).close()
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(path)], env=env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None
        qid = agent.stdout.readline().strip()
        assert qid.startswith("int_")
        no_reason = proctor("dismiss", qid, "--journal", path)
        assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
        done = proctor("dismiss", qid, "--reason", "we dropped the task", "--journal", path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"dismissed {qid}"
        out, _ = agent.communicate(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert out.strip() == "dismissed we dropped the task False"
    again = proctor("dismiss", qid, "--reason", "twice", "--journal", path)
    assert again.returncode != 0 and "already dismissed by operator:tester" in again.stderr
    answer = proctor("answer", qid, "--text", "late", "--journal", path)
    assert answer.returncode != 0 and "already dismissed" in answer.stderr
    shown = proctor("show", qid, "--journal", path)
    assert "we dropped the task" in shown.stdout and "answer\n" not in shown.stdout
    with Journal.open(path, read_only=True) as j:
        [decision] = j.approvals.decisions(qid)
    assert decision.source == "cli" and decision.actor == f"operator:{OPERATOR}"
