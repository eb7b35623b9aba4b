"""The README's Python examples run as written: each as its own process, with an operator
approving from this one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, InboxFilter, InboxKind, Journal

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(
        r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL
    )


def example(marker: str) -> str:
    [block] = [b for b in python_blocks() if marker in b]
    return block


@pytest.mark.parametrize(
    ("marker", "journal"),
    [
        ("consume_and_reserve", ".local/share/proctor/journal.db"),
        ("GraphEffects", "agent.db"),
    ],
)
def test_readme_example_runs_once_the_operator_approves(tmp_path, marker, journal):
    code = example(marker).replace("...  # do it", "pass  # do it")
    env = {**os.environ, "HOME": str(tmp_path)}
    agent = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        path = tmp_path / journal
        approve_the_first_request(path, agent)
        _, err = agent.communicate(timeout=120)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    with Journal.open(path, actor=Actor.operator("check")) as j:
        effects = j.effects.list().items
    assert effects and all(e.status == "committed" for e in effects)
    assert any(e.key == "clean-1" or "refund" in e.key for e in effects), effects


def approve_the_first_request(path: Path, agent: subprocess.Popen) -> None:
    """As an operator: wait (up to a minute) for the agent's approval request, approve it."""
    deadline = time.monotonic() + 60
    while True:
        if agent.poll() is not None:
            raise AssertionError(agent.stderr.read() if agent.stderr else "agent exited")
        assert time.monotonic() < deadline, "no approval request appeared"
        if path.exists():
            with Journal.open(path, actor=Actor.operator("alice")) as j:
                flt = InboxFilter(kinds=frozenset({InboxKind.APPROVAL}))
                items = j.inbox.list(flt).items
                if items:
                    a = j.approvals.get(items[0].id)
                    j.approvals.decide(a.id, True, expected_version=a.version, reason="checked")
                    return
        time.sleep(0.05)


def test_readme_claude_code_settings_run_the_hook(tmp_path):
    """The settings.json snippet is valid JSON and its command, run as Claude Code runs it,
    files the tool call and allows it once the operator approves."""
    import json
    import shlex

    [block] = [
        b
        for b in re.findall(
            r"^```json\n(.*?)^```",
            README.read_text(encoding="utf-8"),
            flags=re.MULTILINE | re.DOTALL,
        )
        if "PreToolUse" in b
    ]
    [entry] = json.loads(block)["hooks"]["PreToolUse"]
    [hook] = entry["hooks"]
    assert hook["type"] == "command" and re.fullmatch(entry["matcher"], "Bash")
    argv = shlex.split(hook["command"])
    assert argv[:3] == ["proctor", "hook", "claude-code"]
    journal = tmp_path / "agent.db"
    Journal.open(journal, actor=Actor.operator("setup")).close()
    argv = [sys.executable, "-m", "proctor", *argv[1:]]
    argv[argv.index("--journal") + 1] = str(journal)
    assert float(argv[argv.index("--timeout") + 1]) < hook["timeout"]
    event = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make test"},
        "tool_use_id": "toolu_1",
        "cwd": "/r",
    }
    agent = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        agent.stdin.write(json.dumps(event))
        agent.stdin.close()
        approve_the_first_request(journal, agent)
        out, err = agent.stdout.read(), agent.stderr.read()
        agent.wait(timeout=60)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"


RUNTIME_EXAMPLES = [  # marker, the model name shown, the scripted model run in its place, output
    ("HumanInTheLoopMiddleware", '"openai:gpt-5.1"', "langchain_model()", "sent to bob"),
    ("AgentsGate", 'model="gpt-5.1"', "model=openai_agents_model()", "refunded 4200"),
    ("DeferredGate", '"openai:gpt-5.1"', "pydantic_ai_model()", "refunded 4200"),
]


@pytest.mark.parametrize(
    ("marker", "shown", "scripted", "said"), RUNTIME_EXAMPLES, ids=[m for m, *_ in RUNTIME_EXAMPLES]
)
def test_readme_runtime_examples_run_once_the_operator_approves(
    tmp_path, marker, shown, scripted, said
):
    block = example(marker)
    assert shown in block
    code = (
        "from agents import set_tracing_disabled; set_tracing_disabled(True)\n"
        "from scripted_models import *\n" + block.replace(shown, scripted)
    )
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    agent = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        approve_the_first_request(tmp_path / "agent.db", agent)
        out, err = agent.communicate(timeout=120)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    assert said in out, out
