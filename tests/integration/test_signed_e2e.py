"""End to end with real keys: the operator's CLI process signs with a key made by
`proctor keys init` (the 0600-file store in a throwaway folder), a trusting agent process
consumes what it signed and refuses a decision forged into the file; `proctor verify
--trust` names the forged one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

from proctor.core import Actor, Journal

HERE = Path(__file__).parent


def proctor(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
    )


def forge(path: Path, approval_id: str) -> None:
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("PRAGMA busy_timeout = 10000")
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='trigger'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute(
            "UPDATE approvals SET status='approved', decided_by='operator:alice', "
            "decided_at=created_at+1, decision_scope='once', version=2 WHERE id=?",
            (approval_id,),
        )
        conn.execute(
            "INSERT INTO decisions VALUES (?, 'approval', ?, NULL, ?, "
            "'operator:alice', 'cli', NULL, NULL, (SELECT created_at+1 FROM "
            "approvals WHERE id=?), ?)",
            (
                f"dec_{uuid.uuid4().hex[:24]}",
                approval_id,
                json.dumps({"approved": True, "scope": "once", "rule_id": None}),
                approval_id,
                "0" * 64,
            ),
        )
    conn.close()


def test_a_trusting_agent_and_the_operators_cli_with_real_keys(tmp_path):
    env = {
        **os.environ,
        "PROCTOR_KEYS_DIR": str(tmp_path / "config" / "keys"),
        "PROCTOR_KEY_STORE": "file",
        "PROCTOR_OPERATOR": "alice",
        "PROCTOR_CONFIG": os.devnull,
    }
    env.pop("PROCTOR_TRUSTED_OPERATORS", None)
    journal = tmp_path / "j.db"
    with Journal.open(journal, actor=Actor.agent("signed-agent")) as j:
        run = j.runs.start("proj", "deploys")
    made = proctor(env, "keys", "init")
    assert made.returncode == 0, made.stderr
    assert "a 0600 file" in made.stdout and "weaker" in made.stdout
    trust = tmp_path / "trusted.json"
    assert proctor(env, "keys", "export", "-o", str(trust)).returncode == 0

    agent = subprocess.Popen(
        [sys.executable, str(HERE / "signed_agent.py"), str(journal), str(trust), run.id, "2"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = agent.stdout.readline().split()
        assert first[0] == "requested", agent.stderr.read()
        approved = proctor(env, "approve", first[1], "--journal", str(journal), "--yes")
        assert approved.returncode == 0, approved.stderr
        assert agent.stdout.readline().split() == ["consumed", "reserved"]

        second = agent.stdout.readline().split()
        assert second[0] == "requested"
        forge(journal, second[1])
        assert agent.stdout.readline().split() == ["refused", "unsigned"]
    finally:
        _out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err

    verified = proctor(env, "verify", str(journal), "--trust", str(trust))
    assert verified.returncode == 1
    named = [
        line for line in verified.stdout.splitlines() if "first unsigned or forged decision" in line
    ]
    assert named and second[1] in named[0], verified.stdout
    assert first[1] not in verified.stdout
    assert "1 signed, 1 unsigned" in verified.stdout
