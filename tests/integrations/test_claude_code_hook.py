"""`proctor hook claude-code` as Claude Code runs it: a subprocess reading a PreToolUse event on
stdin, answered by an operator deciding through core in this process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors

EVENT = {
    "session_id": "sess-1",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/home/dev/repo",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build", "description": "clean"},
    "tool_use_id": "toolu_01",
}


def start_hook(
    journal: Path, event: object, *, timeout: float = 30.0, raw: str | None = None
) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proctor",
            "hook",
            "claude-code",
            "--journal",
            str(journal),
            "--timeout",
            str(timeout),
        ],
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
    assert proc.wait(timeout=60) == 0, err
    assert out.isascii()
    return json.loads(out) if out.strip() else None


def decision(out: dict | None) -> tuple[str, str]:
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    return spec["permissionDecision"], spec["permissionDecisionReason"]


def test_approved_on_the_desk_allows_exactly_the_tool_input(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    assert a.action == {"tool": "Bash", "args": EVENT["tool_input"]}
    assert a.agent == "claude-code"
    assert (a.origin.runtime, a.origin.tool, a.origin.client) == (
        "claude-code",
        "Bash",
        "session sess-1",
    )
    assert a.origin.pid == os.getpid()  # the process that ran the hook: here, the test
    desk.approve(a.id, reason="build dir only")
    out = result(hook)
    verdict, reason = decision(out)
    assert verdict == "allow" and "build dir only" in reason and "alice" in reason
    assert "updatedInput" not in out["hookSpecificOutput"]


def test_denied_on_the_desk_denies_with_the_operators_reason(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "not on main, use a branch")
    verdict, reason = decision(result(hook))
    assert verdict == "deny" and "not on main, use a branch" in reason


def test_edited_on_the_desk_allows_the_edited_input_only(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    edited = {"tool": "Bash", "args": {"command": "rm -rf build/tmp", "description": "clean"}}
    desk.journal.approvals.approve_edited(
        a.id, edited, expected_version=a.version, reason="narrower"
    )
    out = result(hook)
    assert decision(out)[0] == "allow"
    assert out["hookSpecificOutput"]["updatedInput"] == edited["args"]


def test_no_decision_in_time_asks_and_withdraws_the_request(journal_path, desk):
    hook = start_hook(journal_path, EVENT, timeout=0.5)
    verdict, reason = decision(result(hook))
    assert verdict == "ask" and "no decision" in reason
    [a] = all_approvals(desk)
    assert a.status == "cancelled"
    with pytest.raises(errors.Withdrawn, match="withdrawn by the agent: no decision within"):
        desk.approve(a.id)


def all_approvals(desk) -> list:
    runs = desk.journal.runs.list().items
    return [a for r in runs for a in desk.journal.approvals.for_run(r.id)]


def test_killed_by_claude_codes_timeout_withdraws_the_request(journal_path, desk):
    hook = start_hook(journal_path, EVENT, timeout=120)
    [item] = desk.wait_pending("approval")
    hook.send_signal(signal.SIGTERM)
    hook.wait(timeout=30)
    deadline = time.monotonic() + 20
    while desk.journal.approvals.get(item.id).status == "pending":
        assert time.monotonic() < deadline, "the killed hook left its request pending"
        time.sleep(0.05)
    assert desk.journal.approvals.get(item.id).status == "cancelled"


def test_the_same_tool_call_delivered_twice_is_one_request(journal_path, desk):
    first = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    second = start_hook(journal_path, EVENT)
    time.sleep(0.5)  # let the second hook file (it must join, not add)
    assert len(all_approvals(desk)) == 1
    desk.approve(item.id)
    assert decision(result(first))[0] == "allow"
    assert decision(result(second))[0] == "allow"


HOSTILE = {
    "not json": "rm -rf /",
    "empty": "",
    "a list": "[1, 2]",
    "tool_input a string": json.dumps({**EVENT, "tool_input": "rm -rf /"}),
    "no tool_name": json.dumps({k: v for k, v in EVENT.items() if k != "tool_name"}),
    "tool_name not a string": json.dumps({**EVENT, "tool_name": ["Bash"]}),
    "session_id an object": json.dumps({**EVENT, "session_id": {"$gt": ""}}),
    "deeply nested": '{"tool_name": "Bash", "tool_input": ' + "[" * 100000 + "]" * 100000 + "}",
    "over 4 MB": json.dumps({**EVENT, "tool_input": {"command": "x" * (5 * 1024 * 1024)}}),
    "invalid utf-8 surrogate": '{"tool_name": "Bash", "tool_input": {"c": "\\udc80"}}',
}


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_never_allows(journal_path, desk, raw):
    hook = start_hook(journal_path, None, raw=raw, timeout=0.5)
    verdict, _ = decision(result(hook))
    assert verdict == "ask"
    assert all(a.status != "approved" for a in all_approvals(desk))


def test_control_characters_in_the_event_come_back_escaped(journal_path, desk):
    event = {**EVENT, "tool_name": "Bash\x1b[2J\x07", "cwd": "/tmp/\x1b]0;pwned\x07"}
    hook = start_hook(journal_path, event)
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "no \x1b[31m escapes")
    out_raw = hook.stdout.read()
    assert hook.wait(timeout=60) == 0
    assert "\x1b" not in out_raw and out_raw.isascii()
    assert json.loads(out_raw)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_missing_journal_asks_and_creates_nothing(tmp_path):
    hook = start_hook(tmp_path / "nowhere.db", EVENT)
    verdict, reason = decision(result(hook))
    assert verdict == "ask" and "no journal" in reason
    assert not (tmp_path / "nowhere.db").exists()


def test_a_cancelled_session_run_does_not_allow(journal_path, desk):
    hook = start_hook(journal_path, EVENT)
    [item] = desk.wait_pending("approval")
    desk.approve(item.id)
    assert decision(result(hook))[0] == "allow"
    run_id = desk.journal.approvals.get(item.id).run_id
    with Journal.open(journal_path, actor=Actor.agent("claude-code")) as j:
        j.runs.cancel(run_id, "operator stopped the session")
    second = start_hook(journal_path, {**EVENT, "tool_use_id": "toolu_02"})
    assert decision(result(second))[0] == "ask"


def test_other_hook_events_print_nothing(journal_path, desk):
    hook = start_hook(journal_path, {**EVENT, "hook_event_name": "PostToolUse"})
    assert result(hook) is None
    assert all_approvals(desk) == []


def test_with_trust_an_unsigned_approval_never_allows(journal_path, desk, tmp_path):
    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("alice")
    trusted = tmp_path / "trusted.json"
    trusted.write_text(json.dumps(trust_file([{"name": "alice", "public_key": key.public_key}])))
    hook = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proctor",
            "hook",
            "claude-code",
            "--journal",
            str(journal_path),
            "--trust",
            str(trusted),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    hook.stdin.write(json.dumps(EVENT))
    hook.stdin.close()
    [item] = desk.wait_pending("approval")
    desk.approve(item.id)  # alice's desk without her key: an unsigned decision
    verdict, reason = decision(result(hook))
    assert verdict == "ask" and "Unverified" in reason
    signed = Journal.open(journal_path, actor=Actor.operator("alice"), signer=key)
    try:
        hook = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "proctor",
                "hook",
                "claude-code",
                "--journal",
                str(journal_path),
                "--trust",
                str(trusted),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        hook.stdin.write(json.dumps({**EVENT, "tool_use_id": "toolu_02"}))
        hook.stdin.close()
        [item] = desk.wait_pending("approval")
        signed.approvals.decide(item.id, True, expected_version=1)
        assert decision(result(hook))[0] == "allow"
    finally:
        signed.close()
