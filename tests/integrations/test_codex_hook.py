"""`proctor hook codex` as a subprocess, fed the event Codex CLI sends to a PreToolUse command
hook (codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json). Codex honours
only `deny`: anything else — allow, ask, updatedInput, a crash, a silent exit when it was not
approved — runs the call. So the hook prints nothing only when a person approved exactly this
call, and denies in every other case."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

EVENT = {
    "session_id": "0197-codex-session",
    "turn_id": "turn-3",
    "transcript_path": None,
    "cwd": "/home/dev/repo",
    "hook_event_name": "PreToolUse",
    "model": "gpt-5",
    "permission_mode": "default",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "tool_use_id": "call_01",
}


def start_hook(
    journal: Path | None, event: object, *, timeout: float = 30.0, raw: str | None = None
) -> subprocess.Popen:
    args = [sys.executable, "-m", "proctor", "hook", "codex", "--timeout", str(timeout)]
    if journal is not None:
        args += ["--journal", str(journal)]
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PROCTOR_JOURNAL": ""},
    )
    assert proc.stdin is not None
    proc.stdin.write(raw if raw is not None else json.dumps(event))
    proc.stdin.close()
    return proc


def result(proc: subprocess.Popen) -> dict | None:
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.wait(timeout=60) == 0, err  # exit 0: Codex reads stdout (other codes run it)
    return json.loads(out) if out.strip() else None


def denied(out: dict | None) -> str:
    """The reason of a denial Codex honours (anything else would run the call)."""
    assert out is not None, "no output: Codex would run the call"
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (spec["hookEventName"], spec["permissionDecision"]) == ("PreToolUse", "deny")
    return spec["permissionDecisionReason"]


def approvals(desk) -> list:
    return [a for r in desk.journal.runs.list().items for a in desk.journal.approvals.for_run(r.id)]


def test_approved_prints_nothing_and_the_request_is_the_tool_call(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    assert a.action == {"tool": "Bash", "args": {"command": "rm -rf build"}}
    assert a.agent == "codex" and a.origin.runtime == "codex" and a.origin.tool == "Bash"
    run = desk.journal.runs.get(a.run_id)
    assert run.project == "codex" and run.title.startswith("Codex session")
    desk.approve(a.id, "build/ is generated")
    assert result(hook) is None


def test_denied_denies_with_the_operators_reason(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "not on the release branch")
    reason = denied(result(hook))
    assert "not on the release branch" in reason and "alice" in reason


def test_an_edited_approval_is_a_denial_naming_the_edit(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    desk.journal.approvals.approve_edited(
        a.id, {"tool": "Bash", "args": {"command": "rm -rf build/tmp"}}, expected_version=a.version
    )
    reason = denied(result(hook))  # Codex ignores updatedInput: it would run `rm -rf build`
    assert "rm -rf build/tmp" in reason and "ask again" in reason


def test_no_decision_in_time_denies_and_withdraws(journal_path, desk):
    reason = denied(result(start_hook(journal_path, EVENT, timeout=0.5)))
    assert "no decision within 0.5 s" in reason
    [a] = approvals(desk)
    assert a.status == "cancelled"


def test_stopped_mid_wait_still_denies(journal_path, desk):
    hook = start_hook(journal_path, EVENT, timeout=120)
    [item] = desk.wait_pending("approval")
    hook.send_signal(signal.SIGTERM)
    assert "stopped before a decision" in denied(result(hook))
    deadline = time.monotonic() + 20
    while desk.journal.approvals.get(item.id).status == "pending":
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        json.dumps({**EVENT, "tool_input": "x"}),
        json.dumps({**EVENT, "tool_name": ""}),
    ],
)
def test_bad_input_denies(journal_path, desk, raw):
    assert "Proctor:" in denied(result(start_hook(journal_path, EVENT, raw=raw)))
    assert approvals(desk) == []


def test_no_journal_denies(tmp_path):
    assert "no journal" in denied(result(start_hook(None, EVENT)))
    assert "no journal" in denied(result(start_hook(tmp_path / "missing.db", EVENT)))
    assert not (tmp_path / "missing.db").exists()


def test_the_same_call_delivered_twice_is_one_request(journal_path, desk):
    first = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    second = start_hook(journal_path, EVENT)  # before or after the decision: it joins
    desk.approve(item.id)
    assert result(first) is None and result(second) is None
    assert len(approvals(desk)) == 1


def test_other_events_print_nothing(journal_path, desk):
    assert result(start_hook(journal_path, {**EVENT, "hook_event_name": "PostToolUse"})) is None


# ---- SIGTERM at every point of the hook's life (as Codex's own timeout or a supervisor
# would send it): before its input arrives, in the middle of it, after it, while it waits.
# Codex runs the call on a silent exit, so each must print the denial and exit 0.

READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(platform.machine())
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def spawn(journal: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "proctor", "hook", "codex", "--timeout", "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PROCTOR_JOURNAL": str(journal)},
    )


def catches_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


def reading_stdin(pid: int) -> bool:
    """Blocked in read(0, ...): the hook is waiting for (the rest of) its input."""
    fields = Path(f"/proc/{pid}/syscall").read_text().split()
    return fields[:2] == [str(READ_SYSCALL), "0x0"]


def wait_for(check, pid: int) -> None:
    deadline = time.monotonic() + 30
    while not check(pid):
        assert time.monotonic() < deadline, f"{check.__name__} never became true"
        time.sleep(0.005)


def terminated(proc: subprocess.Popen) -> dict | None:
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()  # stdin stays as it was
    assert proc.wait(timeout=60) == 0, f"exit {proc.returncode} (Codex runs the call): {err!r}"
    return json.loads(out) if out.strip() else None


def test_sigterm_before_any_input_denies(journal_path):
    proc = spawn(journal_path)
    wait_for(catches_sigterm, proc.pid)  # the hook's first line of Proctor code ran
    if READ_SYSCALL is not None:
        wait_for(reading_stdin, proc.pid)
    assert "stopped before a decision" in denied(terminated(proc))


def test_sigterm_in_the_middle_of_the_input_denies(journal_path, desk):
    proc = spawn(journal_path)
    raw = json.dumps(EVENT).encode()
    assert proc.stdin is not None
    proc.stdin.write(raw[: len(raw) // 2])
    proc.stdin.flush()
    wait_for(catches_sigterm, proc.pid)
    if READ_SYSCALL is not None:
        wait_for(reading_stdin, proc.pid)  # it read the first half and waits for the rest
    assert "stopped before a decision" in denied(terminated(proc))
    assert approvals(desk) == []  # nothing was filed


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.2, 0.5])
def test_sigterm_at_any_moment_after_the_input_denies(journal_path, desk, delay):
    """From the hook's first line of Proctor code (before that, Python's own start-up, no
    handler can run: a documented limit) through imports, reading, parsing, opening the
    journal, filing and waiting: each point denies."""
    proc = spawn(journal_path)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(EVENT).encode())
    proc.stdin.close()
    wait_for(catches_sigterm, proc.pid)
    time.sleep(delay)
    assert "stopped before a decision" in denied(terminated(proc))


def test_sigterm_while_waiting_for_the_operator_denies_and_withdraws(journal_path, desk):
    proc = spawn(journal_path)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(EVENT).encode())
    proc.stdin.close()
    [item] = desk.wait_pending("approval")
    proc.send_signal(signal.SIGTERM)  # twice: the second arrives during the withdrawal
    assert "stopped before a decision" in denied(terminated(proc))
    assert desk.journal.approvals.get(item.id).status == "cancelled"


def test_the_early_denial_is_the_hooks_own_words():
    """What the SIGTERM guard writes before anything is imported is the denial the hook
    itself makes for a stop (one text, two places: the guard cannot import it)."""
    from proctor.core.integrations.codex import refuse
    from proctor.hook_guard import DENY

    assert json.loads(DENY) == refuse("the hook was stopped before a decision")


@pytest.mark.parametrize("where", ["__init__", "__main__"])
def test_importing_proctor_from_a_program_run_like_the_hook_leaves_sigterm_alone(tmp_path, where):
    """An agent's own program ``python -m x hook codex`` (its argv looks like the hook's, both
    while its package is imported and once __main__.py runs) imports proctor.core: its SIGTERM
    stays the default one; only Proctor's own entry installs the guard."""
    pkg = tmp_path / "x"
    pkg.mkdir()
    probe = (
        "import signal, sys\n"
        "import proctor, proctor.core\n"
        "print(sys.argv[1:3], signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n"
    )
    (pkg / "__init__.py").write_text(probe if where == "__init__" else "")
    (pkg / "__main__.py").write_text(probe if where == "__main__" else "")
    done = subprocess.run(
        [sys.executable, "-m", "x", "hook", "codex"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "['hook', 'codex'] True", done.stdout
