"""The warm start (issue 33): a short `proctor` command runs in a child forked from a warm
server, and does exactly what it does in its own process: the same output and exit status,
its own environment, working folder and terminal, signals forwarded, the codex hook's
denial on SIGTERM; nothing runs twice, nothing runs for another user's folder, and a server
whose code changed on disk serves nothing. Real processes throughout: the console script,
the server it starts, pseudo-terminals."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor import warm
from proctor.core import Actor, Journal

from .test_confirm import HOSTILE

AGENT = "agent-9"
PROCTOR = str(Path(sys.executable).with_name("proctor"))


class Warm:
    """A private runtime folder (so a server of this test is this test's alone), the
    environment that turns the warm start on, and the server's teardown."""

    def __init__(self, journal: Path) -> None:
        self.runtime = Path(tempfile.mkdtemp(prefix="pw-", dir="/tmp"))
        self.runtime.chmod(0o700)
        self.journal = journal
        self.env = {
            **os.environ,
            "PROCTOR_WARM": "1",
            "PROCTOR_WARM_IDLE": "60",
            "XDG_RUNTIME_DIR": str(self.runtime),
            "PROCTOR_JOURNAL": str(journal),
            "PROCTOR_OPERATOR": "tester",
            "PROCTOR_CONFIG": os.devnull,
        }

    def paths(self) -> tuple[Path, Path] | None:
        """(socket, lock) as the client finds them (None: no private folder)."""
        code = "from proctor import warm; print('\\n'.join(warm.paths() or ()))"
        out = subprocess.run(
            [sys.executable, "-c", code], env=self.env, capture_output=True, text=True
        ).stdout.split()
        return (Path(out[0]), Path(out[1])) if len(out) == 2 else None

    def socket(self) -> Path:
        where = self.paths()
        assert where is not None
        return where[0]

    def server_pid(self) -> int | None:
        where = self.paths()
        lock = where[1] if where else None
        text = lock.read_text().strip() if lock and lock.exists() else ""
        return int(text) if text.isdigit() else None

    def up(self) -> int:
        """Run one command (it starts the server) and wait until the server listens."""
        self.run("runs")
        sock = self.socket()
        deadline = time.monotonic() + 120
        while not sock.exists():
            assert time.monotonic() < deadline, "the warm server never listened"
            time.sleep(0.05)
        pid = self.server_pid()
        assert pid is not None
        return pid

    def run(self, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PROCTOR, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **env},
            timeout=120,
        )

    def stop(self) -> None:
        """The server goes, and any child a failed test left behind."""
        pid = self.server_pid()
        if pid is not None and alive(pid):
            for child in children_of(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            wait_gone(pid)
        shutil.rmtree(self.runtime, ignore_errors=True)


def children_of(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while alive(pid):
        assert time.monotonic() < deadline, f"process {pid} is still there"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    Journal.open(path, actor=Actor.agent(AGENT)).close()
    return path


@pytest.fixture
def served(journal: Path) -> Iterator[Warm]:
    w = Warm(journal)
    try:
        w.up()
        yield w
    finally:
        w.stop()


def request(path: Path, safety: str = "idempotent_write") -> str:
    with Journal.open(path, actor=Actor.agent(AGENT)) as agent:
        run = agent.runs.start("shop", "warm test")
        action = {"tool": "db.migrate", "resource": HOSTILE, "args": {"table": "t"}}
        return agent.approvals.request(run.id, action, reason="go", safety_class=safety).id


def status(path: Path, ident: str) -> str:
    with Journal.open(path, read_only=True) as j:
        return j.approvals.get(ident).status.value


def hook_event(n: int, tool: str = "Bash") -> str:
    return json.dumps(
        {
            "session_id": "warm-session",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"command": f"echo {n}"},
            "tool_use_id": f"toolu_warm_{n}",
            "cwd": "/src",
        }
    )


def approvals_of(path: Path) -> list:
    with Journal.open(path, read_only=True) as j:
        return [a for run in j.runs.list(limit=100).items for a in j.approvals.for_run(run.id)]


def filed_by(path: Path) -> list[int | None]:
    """The pid each hook-filed approval's origin names (the agent that ran the hook)."""
    return [
        a.origin.pid if a.origin else None
        for a in approvals_of(path)
        if a.origin and a.origin.runtime != "python"
    ]


# ------------------------------------------------------------------ the same as in-process


def commands(journal: Path) -> list[tuple[str, ...]]:
    """Every routed command with an argument it refuses, and the reads with real ones."""
    ident = request(journal)
    bad = [(name, "--no-such-option") for name in sorted(warm.ROUTED)]
    reads = [
        ("inbox",),
        ("inbox", "--json"),
        ("show", ident),
        ("show", ident, "--json"),
        ("show", "apr_nosuch"),
        ("runs",),
        ("rules",),
        ("approve", "not-an-approval-id"),
        ("deny", ident),  # --reason is required
    ]
    return bad + reads


def said(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """Exit status and output, with ages ("21s", "1m 05s") read as one (the two runs are a
    second apart, and may fall on either side of a minute)."""

    def aged(text: str) -> str:
        return re.sub(r"\b\d+[smhd](?: \d+[smhd])?\b", "<age>", text)  # "59s", "1m 05s"

    return done.returncode, aged(done.stdout), aged(done.stderr)


def test_every_routed_command_says_and_exits_as_in_its_own_process(served: Warm) -> None:
    for args in commands(served.journal):
        assert said(served.run(*args)) == said(served.run(*args, PROCTOR_WARM="0")), args


def test_a_hook_served_warm_names_the_agent_that_ran_it(served: Warm) -> None:
    """The hook's origin names its parent, the agent (here: this test): a warm child stands
    in for the client, whose parent that is, not the server's."""
    done = subprocess.run(
        [PROCTOR, "hook", "claude-code", "--timeout", "0.2"],
        input=hook_event(1),
        capture_output=True,
        text=True,
        env=served.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert filed_by(served.journal) == [os.getpid()]


def test_a_decision_and_its_writes_commit_through_the_warm_child(served: Warm) -> None:
    ident = request(served.journal)
    done = served.run("approve", ident, "--reason", "checked")
    assert done.returncode == 0, done.stderr
    assert status(served.journal, ident) == "approved"
    again = served.run("approve", ident)
    assert again.returncode != 0 and "already" in again.stderr


def test_the_callers_environment_and_working_folder_are_the_childs(
    served: Warm, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    second = other / "second.db"
    Journal.open(second, actor=Actor.agent(AGENT)).close()
    ident = request(second)
    # a relative --journal, read against the caller's folder; PROCTOR_JOURNAL points away
    done = subprocess.run(
        [PROCTOR, "show", ident, "--journal", "second.db", "--json"],
        capture_output=True,
        text=True,
        cwd=other,
        env=served.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["item"]["id"] == ident
    # the environment: PROCTOR_JOURNAL of this call, not of the call that started the server
    listed = served.run("inbox", "--json", PROCTOR_JOURNAL=str(second))
    assert ident in listed.stdout


# ------------------------------------------------------------------ terminals and signals


def on_terminal(env: dict[str, str], typed: bytes | int, *args: str) -> tuple[int, str]:
    """Run ``args`` on a pseudo-terminal; at the prompt, type ``typed`` or send the signal
    ``typed`` to the process (what Ctrl-C on its terminal does)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [PROCTOR, *args], stdin=follower, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    seen, answered = b"", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            if isinstance(typed, bytes):
                os.write(leader, typed)
            else:
                proc.send_signal(typed)
            answered = True
        if proc.poll() is not None and not ready:
            break
    try:
        proc.wait(timeout=30)
    finally:
        proc.kill()
        os.close(leader)
    return proc.returncode, seen.decode("utf-8", "replace")


@pytest.mark.parametrize(("typed", "approved"), [(b"n\n", False), (b"y\n", True)])
def test_a_prompt_asks_on_the_callers_terminal(served: Warm, typed: bytes, approved: bool) -> None:
    ident = request(served.journal, "destructive")
    code, seen = on_terminal(served.env, typed, "approve", ident)
    assert "It is a destructive action." in seen and "\x1b]0" not in seen
    assert (code == 0) is approved, seen
    assert status(served.journal, ident) == ("approved" if approved else "pending")


def test_ctrl_c_at_a_prompt_stops_the_command_and_approves_nothing(served: Warm) -> None:
    ident = request(served.journal, "destructive")
    code, seen = on_terminal(served.env, signal.SIGINT, "approve", ident)
    assert code != 0, seen
    assert status(served.journal, ident) == "pending"
    assert alive(served.server_pid() or 0)


def start_hook(w: Warm, kind: str, n: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [PROCTOR, "hook", kind, "--timeout", "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=w.env,
    )
    assert proc.stdin is not None
    proc.stdin.write(hook_event(n))
    proc.stdin.close()
    return proc


def wait_pending(path: Path) -> str:
    deadline = time.monotonic() + 60
    while True:
        waiting = [a for a in approvals_of(path) if a.status.value == "pending"]
        if waiting:
            return waiting[0].id
        assert time.monotonic() < deadline, "the hook filed nothing"
        time.sleep(0.05)


def test_sigterm_to_a_waiting_codex_hook_denies_and_withdraws(served: Warm) -> None:
    proc = start_hook(served, "codex", 2)
    ident = wait_pending(served.journal)
    proc.send_signal(signal.SIGTERM)  # to the client: forwarded to the child
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait(timeout=60) == 0, err
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "stopped before a decision" in reason
    assert status(served.journal, ident) == "cancelled"


def test_a_client_killed_outright_ends_its_child(served: Warm) -> None:
    proc = start_hook(served, "claude-code", 3)
    wait_pending(served.journal)
    server = served.server_pid() or 0
    [child] = children_of(server)  # the hook waits in the server's child, not the client
    assert child != proc.pid and alive(child)
    proc.kill()
    proc.wait(timeout=30)
    wait_gone(child)  # it noticed its caller went away and ended
    assert alive(served.server_pid() or 0)


# ------------------------------------------------------------------ when it does not serve


def test_a_server_whose_code_changed_serves_nothing_and_goes(journal: Path) -> None:
    extra = Path(tempfile.mkdtemp(prefix="pw-path-", dir="/tmp"))
    w = Warm(journal)
    w.env["PYTHONPATH"] = str(extra)  # an import folder of the server's
    try:
        old = w.up()
        time.sleep(0.05)
        (extra / "newly_installed.py").write_text("")  # the folder changes: a new package
        ident = request(journal)
        done = w.run("approve", ident)
        assert done.returncode == 0, done.stderr  # run by the client itself, once
        assert status(journal, ident) == "approved"
        wait_gone(old)
        assert not w.socket().exists() or w.server_pid() != old
    finally:
        w.stop()
        shutil.rmtree(extra, ignore_errors=True)


def test_a_runtime_folder_others_can_enter_is_not_used(journal: Path) -> None:
    w = Warm(journal)
    try:
        shared = w.runtime / "proctor"
        shared.mkdir(mode=0o700)
        shared.chmod(0o777)
        for _ in range(2):
            done = w.run("runs")
            assert done.returncode == 0, done.stderr
        time.sleep(0.5)
        assert list(shared.iterdir()) == []  # no socket, no lock: nothing started
    finally:
        w.stop()


def test_off_and_unrouted_commands_run_in_their_own_process(journal: Path) -> None:
    w = Warm(journal)
    try:
        assert w.run("runs", PROCTOR_WARM="0").returncode == 0
        assert w.run("--version").returncode == 0
        assert w.run("inbox", "--help").returncode == 0
        time.sleep(0.5)
        assert not (w.runtime / "proctor").exists() or not list(
            (w.runtime / "proctor").glob("*.sock")
        )
    finally:
        w.stop()


def test_an_idle_server_goes_away(journal: Path) -> None:
    w = Warm(journal)
    w.env["PROCTOR_WARM_IDLE"] = "1"
    try:
        pid = w.up()
        wait_gone(pid)
        assert not w.socket().exists()
    finally:
        w.stop()


def test_warm_status_names_the_server_and_stop_ends_it(served: Warm) -> None:
    pid = served.server_pid()
    status = served.run("warm", "status")
    assert status.returncode == 0 and f"running, pid {pid}" in status.stdout, status.stdout
    stopped = served.run("warm", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    wait_gone(pid or 0)
    assert "not running" in served.run("warm").stdout
    assert "off" in served.run("warm", PROCTOR_WARM="0").stdout
