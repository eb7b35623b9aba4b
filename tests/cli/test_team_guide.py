"""docs/team.md is tested as written: every ``sh`` block, in order, runs in bash against
pg-core's real PostgreSQL server — with only the example server's host, port and
administrator replaced by the test server's — and what it set up works: the journal file
it migrated verifies there, and an agent login it made files a request that an operator
login it made decides (and that login only)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "team.md"
BLOCK = re.compile(r"^( *)```sh\n(.*?)^\1```", re.S | re.M)
PASSWORDS = {"ci_runner_1": "runner-pw-1", "dana": "dana-pw-2", "auditor": "auditor-pw-3"}


def guide_blocks() -> list[str]:
    blocks = []
    for indent, body in BLOCK.findall(GUIDE.read_text(encoding="utf-8")):
        blocks.append("\n".join(line[len(indent) :] for line in body.splitlines()))
    return blocks


def here(script: str, port: int, admin: str) -> str:
    """The guide's example server (db.example.org, administrator postgres) as the test's."""
    script = script.replace("postgres@db.example.org:5432", f"{admin}@127.0.0.1:{port}")
    script = script.replace(
        "--host db.example.org --username postgres",
        f"--host 127.0.0.1 --port {port} --username {admin}",
    )
    assert "db.example.org" not in script, script
    return script


@pytest.fixture
def shell_env(tmp_path, pg_server):
    """bash with `proctor` (this checkout's) and the server's client tools on PATH, HOME in
    a temporary folder holding ~/proctor/journal.db, and the administrator's password in
    PGPASSWORD as the guide advises."""
    import pg_server as pgs

    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "proctor"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m proctor "$@"\n')
    shim.chmod(0o755)
    home = tmp_path / "home"
    journal = home / "proctor" / "journal.db"
    with Journal.open(journal, actor=Actor.agent("laptop-agent")) as j:
        run = j.runs.start("proj", "before the move")
        j.runs.append_event(run.id, "step", {"n": 1})
        j.approvals.request(run.id, {"tool": "deploy", "args": {"target": "prod"}}, reason="ship")
    env = {
        **os.environ,
        "HOME": str(home),
        "PGPASSWORD": pgs.PASSWORD,
        "PATH": f"{bindir}:{pg_server.bindir}:{os.environ['PATH']}",
        "PROCTOR_CONFIG": os.devnull,
    }
    env.pop("PROCTOR_JOURNAL", None)
    yield env, journal
    for name in ("proctor", "proctor_restored"):
        pg_server.drop_database(name)


def test_the_team_guide_runs_as_written(pg_server, shell_env, tmp_path):
    import pg_server as pgs

    env, journal = shell_env
    blocks = guide_blocks()
    assert len(blocks) >= 5 and any("team init" in b for b in blocks)
    stdin = "".join(f"{pw}\n" for pw in PASSWORDS.values())
    for block in blocks:
        script = "set -euo pipefail\n" + here(block, pg_server.port, pgs.USER)
        done = subprocess.run(
            ["bash", "-c", script],
            env=env,
            cwd=tmp_path,
            text=True,
            capture_output=True,
            timeout=300,
            input=stdin if "add-user" in block else None,
        )
        assert done.returncode == 0, (block, done.stdout, done.stderr)
        if "migrate-to" in block:
            assert "verified on arrival" in done.stdout and "every chain" in done.stdout
        if "proctor verify" in block:
            assert done.stdout.startswith("ok: 1 runs"), done.stdout
    url = f"postgresql+psycopg://{{}}:{{}}@127.0.0.1:{pg_server.port}/proctor"
    with (
        Journal.open(
            url.format("ci_runner_1", PASSWORDS["ci_runner_1"]), actor=Actor.agent("ci")
        ) as agent,
        Journal.open(url.format("dana", PASSWORDS["dana"]), actor=Actor.operator("dana")) as dana,
        Journal.open(
            url.format("auditor", PASSWORDS["auditor"]),
            actor=Actor.operator("auditor"),
            read_only=True,
        ) as auditor,
    ):
        moved = [r.title for r in agent.runs.list().items]
        assert moved == ["before the move"]  # the journal file arrived
        run = agent.runs.start("proj", "on the server")
        asked = agent.approvals.request(run.id, {"tool": "deploy", "args": {}}, reason="go")
        with pytest.raises(errors.NotAllowed):
            agent.approvals.decide(asked.id, True, expected_version=1)
        assert dana.approvals.decide(asked.id, True, expected_version=1).status == "approved"
        assert auditor.approvals.get(asked.id).decided_by == "operator:dana"
    assert journal.exists()  # migrate-to leaves the file as it was
    assert shutil.which("bash")
