"""`proctor approve` asks for what the desk confirms (issue 32, item 3): on a real pseudo-
terminal it restates the action (escaped) and asks, default no; in a script it needs --yes;
denying never asks. The rule is the core's one (``proctor.core.approvals.confirm.risks``),
the desk's confirmation calls the same."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.approvals.confirm import DEFAULT_CONFIRM, risks

AGENT = "agent-7"
HOSTILE = "sessions\x1b]0;owned\x07\u202e"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "j.db"
    Journal.open(path, actor=Actor.agent(AGENT)).close()
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", "tester")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    return path


def request(path: Path, safety: str, expires_in: float | None = None) -> str:
    with Journal.open(path, actor=Actor.agent(AGENT)) as agent:
        run = agent.runs.start("shop", "confirm test")
        action = {"tool": "db.migrate", "resource": HOSTILE, "args": {"table": HOSTILE}}
        return agent.approvals.request(
            run.id, action, reason="go", safety_class=safety, expires_in=expires_in
        ).id


def status(path: Path, ident: str) -> str:
    with Journal.open(path, read_only=True) as j:
        return j.approvals.get(ident).status.value


def script(*args: str) -> subprocess.CompletedProcess[str]:
    """`proctor` as a script runs it: no terminal on any stream."""
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def on_terminal(answer: bytes | None, *args: str) -> tuple[int, str]:
    """`proctor` on a real pseudo-terminal; ``answer`` is typed once the prompt shows (None:
    it must finish without asking). Returns the exit code and everything the terminal got."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60  # a safety net for a hung child, never an assertion
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if answer is not None and not answered and b"[y/N]" in seen:
            os.write(leader, answer)
            answered = True
        if proc.poll() is not None and not ready:
            break
    proc.wait(timeout=30)
    os.close(leader)
    text = seen.decode("utf-8", "replace")
    assert answered == (answer is not None), text
    return proc.returncode, text


@pytest.mark.parametrize("safety", ["destructive", "financial", "external_side_effect"])
def test_a_risky_approval_in_a_script_needs_yes(fresh: Path, safety: str) -> None:
    ident = request(fresh, safety)
    refused = script("approve", ident)
    assert refused.returncode == 1
    assert "was not approved" in refused.stderr and "--yes" in refused.stderr
    assert status(fresh, ident) == "pending"
    done = script("approve", ident, "--yes")
    assert done.returncode == 0, done.stderr
    assert status(fresh, ident) == "approved"


def test_a_standing_rule_or_a_near_expiry_asks_even_for_a_safe_read(fresh: Path) -> None:
    plain = request(fresh, "safe_read")
    scoped = script("approve", plain, "--scope", "run")
    assert scoped.returncode == 1 and "standing rule" in scoped.stderr
    assert status(fresh, plain) == "pending"
    near = request(fresh, "safe_read", expires_in=60)
    soon = script("approve", near)
    assert soon.returncode == 1 and "expires in" in soon.stderr
    assert status(fresh, near) == "pending"
    assert script("approve", plain).returncode == 0  # once, far from expiry: no question
    assert status(fresh, plain) == "approved"


def test_denying_never_asks(fresh: Path) -> None:
    ident = request(fresh, "destructive")
    done = script("deny", ident, "--reason", "not today")
    assert done.returncode == 0, done.stderr
    assert status(fresh, ident) == "denied"


@pytest.mark.parametrize(("typed", "approved"), [(b"n\n", False), (b"\n", False), (b"y\n", True)])
def test_on_a_terminal_it_restates_and_asks_default_no(
    fresh: Path, typed: bytes, approved: bool
) -> None:
    ident = request(fresh, "destructive")
    code, seen = on_terminal(typed, "approve", ident, "--reason", "checked it")
    assert "db.migrate" in seen and "It is a destructive action." in seen
    assert "\\x1b]0;owned\\x07" in seen and "\x1b]0" not in seen  # the agent's text, escaped
    assert "\u202e" not in seen and "your reason: checked it" in seen
    assert (code == 0) is approved, seen
    assert status(fresh, ident) == ("approved" if approved else "pending")


def test_on_a_terminal_a_plain_approval_does_not_ask(fresh: Path) -> None:
    ident = request(fresh, "idempotent_write")
    code, seen = on_terminal(None, "approve", ident)
    assert code == 0, seen
    assert status(fresh, ident) == "approved"


def test_the_desk_confirms_by_the_same_rule(fresh: Path) -> None:
    """The desk's confirmation is the core's rule with the desk's box size, nothing else."""
    pytest.importorskip("PySide6")
    from proctor.gui.decide import confirm as desk

    ident = request(fresh, "financial", expires_in=30)
    with Journal.open(fresh, read_only=True) as j:
        approval = j.approvals.get(ident)
        now = j.now()
    for scope in ("once", "run", "space"):
        assert desk.risks(approval, scope, DEFAULT_CONFIRM, now) == risks(approval, scope, now)


def test_approve_edited_asks_as_approve_does_restating_the_edit(fresh: Path) -> None:
    ident = request(fresh, "destructive")
    edit = ("approve-edited", ident, "--args", '{"table": "only_this_one"}')
    refused = script(*edit)
    assert refused.returncode == 1 and "--yes" in refused.stderr, refused.stderr
    assert status(fresh, ident) == "pending"
    code, seen = on_terminal(b"n\n", *edit)
    assert code == 1 and "only_this_one" in seen and "It is a destructive action." in seen
    assert status(fresh, ident) == "pending"
    done = script(*edit, "--yes")
    assert done.returncode == 0, done.stderr
    assert status(fresh, ident) == "approved"


def test_recipients_read_as_a_list_of_names_not_a_python_repr(fresh: Path) -> None:
    """An email's recipients in the restatement and in `proctor inbox`: "a@x, b@y", never
    "['a@x', 'b@y']" (issue 32 item 17; the demo's inbox said email.send ['k.watanabe@…'])."""
    with Journal.open(fresh, actor=Actor.agent(AGENT)) as agent:
        run = agent.runs.start("shop", "mail")
        action = {"tool": "email.send", "args": {"to": ["kenji@example.jp", "mia@example.org"]}}
        ident = agent.approvals.request(
            run.id, action, reason="reply", safety_class="external_side_effect"
        ).id
    listed = script("inbox")
    assert listed.returncode == 0, listed.stderr
    assert "email.send kenji@example.jp, mia@example.org" in listed.stdout
    code, seen = on_terminal(b"n\n", "approve", ident)
    assert "Approve email.send kenji@example.jp, mia@example.org" in seen
    assert "['" not in listed.stdout and "['kenji" not in seen
    assert code != 0 and status(fresh, ident) == "pending"
