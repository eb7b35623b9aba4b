"""Issue 37: `proctor approve ID --hold S` and `proctor undo ID`, `proctor retry RUN --reason`,
each in a separate process as a user runs it. A real agent process waiting on the approval
sees the denial made after the undo, never the held approval; an undo without a hold is
refused with the reason; a retry is asked once per failure."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from proctor.core import Actor, Journal

from .conftest import OPERATOR
from .test_dismiss_cli import env, proctor

AGENT = textwrap.dedent(
    """
    import sys
    from proctor.core import Actor, Journal

    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "asks first")
        a = j.approvals.request(run.id, {"tool": "shell", "args": {"command": "make"}},
                                reason="build")
        print(a.id, flush=True)
        got = j.approvals.wait(a.id, timeout=90)
        print(got.status.value, got.decision_reason, flush=True)
    """
)


def test_a_waiting_agent_sees_the_denial_made_after_a_cli_undo(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator(OPERATOR)).close()
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(path)], env=env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None
        aid = agent.stdout.readline().strip()
        assert aid.startswith("apr_")
        held = proctor("approve", aid, "--hold", "60", "--journal", path)
        assert held.returncode == 0, held.stderr
        assert f"proctor undo {aid}" in held.stdout
        undone = proctor("undo", aid, "--reason", "wrong item", "--journal", path)
        assert undone.returncode == 0, undone.stderr
        assert undone.stdout.strip() == f"undid the decision on {aid}; it is pending again"
        denied = proctor("deny", aid, "--reason", "not today", "--journal", path)
        assert denied.returncode == 0, denied.stderr
        out, _ = agent.communicate(timeout=90)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert out.strip() == "denied not today"
    late = proctor("undo", aid, "--journal", path)
    assert late.returncode != 0 and "without a hold" in late.stderr
    too_long = proctor("approve", aid, "--hold", "-1", "--journal", path)
    assert too_long.returncode == 2
    with Journal.open(path, read_only=True) as j:
        decisions = j.approvals.decisions(aid)
    assert [d.decision.get("undone", False) for d in decisions] == [False, True, False]
    assert {d.source for d in decisions} == {"cli"}


def test_retry_asks_a_failed_run_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "fails")
        live = j.runs.start("shop", "still running")
        j.runs.fail(run.id, "the API was down")
    no_reason = proctor("retry", run.id, "--journal", path)
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    asked = proctor("retry", run.id, "--reason", "the API is back", "--journal", path)
    assert asked.returncode == 0, asked.stderr
    assert "attempt 2" in asked.stdout
    again = proctor("retry", run.id, "--reason", "twice", "--journal", path)
    assert again.returncode != 0 and "already requested" in again.stderr
    running = proctor("retry", live.id, "--reason", "why", "--journal", path)
    assert running.returncode != 0 and "only a failed run" in running.stderr
    with Journal.open(path, read_only=True) as j:
        seen = j.runs.get(run.id)
        [decision] = j.approvals.decisions(run.id)
    assert seen.retry_pending and seen.retry_reason == "the API is back"
    assert decision.source == "cli" and decision.actor == f"operator:{OPERATOR}"


ASKER = textwrap.dedent(
    """
    import json, sys
    from proctor.core import Actor, Journal

    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "asks first")
        q = j.questions.ask(run.id, "question", "Which warehouse?")
        print(q.id, flush=True)
        got = j.questions.wait(q.id, timeout=90)
        told = got.dismissal if got.dismissal is not None else json.dumps(got.response)
        print(got.status.value, told, flush=True)
    """
)


def test_a_waiting_agent_sees_the_answer_given_after_a_cli_undo_of_a_held_answer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator(OPERATOR)).close()
    agent = subprocess.Popen(
        [sys.executable, "-c", ASKER, str(path)], env=env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None
        qid = agent.stdout.readline().strip()
        assert qid.startswith("int_")
        held = proctor("answer", qid, "--text", "north", "--hold", "60", "--journal", path)
        assert held.returncode == 0, held.stderr
        assert f"proctor undo {qid}" in held.stdout
        undone = proctor("undo", qid, "--reason", "wrong one", "--journal", path)
        assert undone.returncode == 0, undone.stderr
        assert undone.stdout.strip() == f"undid the decision on {qid}; it is open again"
        dismissed = proctor("dismiss", qid, "--reason", "asked on the phone", "--journal", path)
        assert dismissed.returncode == 0, dismissed.stderr
        out, _ = agent.communicate(timeout=60)
    finally:
        agent.kill()
    assert out.strip() == "dismissed dismissed by the operator: asked on the phone"
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        decisions = j.approvals.decisions(qid)
    assert [d.decision.get("undone", False) for d in decisions] == [False, True, False]
    assert [d.source for d in decisions] == ["cli", "cli", "cli"]
    late = proctor("undo", qid, "--journal", path)
    assert late.returncode != 0 and "without a hold" in late.stderr


def test_a_hold_on_a_standing_rule_is_refused_not_dropped(tmp_path: Path) -> None:
    """`approve --hold 10 --scope run` made the rule and applied no hold, saying nothing:
    now it is a usage error (exit 2) and nothing is written."""
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "rule")
        aid = j.approvals.request(run.id, {"tool": "fs.read", "args": {"path": "a"}}, reason="r").id
    done = proctor("approve", aid, "--hold", "10", "--scope", "run", "--yes", "--journal", path)
    assert done.returncode == 2 and "--hold is for a one-time decision" in done.stderr
    with Journal.open(path, read_only=True) as j:
        assert j.approvals.get(aid).status.value == "pending"
        assert j.approvals.rules() == []


def test_undo_by_another_operator_is_refused_naming_who_decided(tmp_path: Path) -> None:
    """Issue 37: only the person who decided takes it back: `proctor undo` as another
    operator exits 1 (as other refusals) naming who decided; nothing is written."""
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "asks")
        aid = j.approvals.request(
            run.id, {"tool": "shell", "args": {"command": "make"}}, reason="b"
        ).id
    held = proctor("approve", aid, "--hold", "60", "--journal", path)
    assert held.returncode == 0, held.stderr
    other = subprocess.run(
        [sys.executable, "-m", "proctor", "undo", aid, "--journal", str(path)],
        env={**env(), "PROCTOR_OPERATOR": "someone-else"},
        capture_output=True,
        text=True,
    )
    assert other.returncode == 1, other.stderr
    assert f"by operator:{OPERATOR}; only operator:{OPERATOR} may undo it" in other.stderr
    with Journal.open(path, read_only=True) as j:
        assert j.approvals.get(aid).status == "approved"
    mine = proctor("undo", aid, "--journal", path)
    assert mine.returncode == 0, mine.stderr
