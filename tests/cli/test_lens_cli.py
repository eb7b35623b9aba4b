"""The risk lens in the CLI (issue 36): `proctor show` prints what an approval's action reads
as (escaped), `--json` carries it, and `proctor approve` asks for an action that reads as a
stronger class than the agent declared, as the desk confirms it."""

from __future__ import annotations

import json
from pathlib import Path

from proctor.core import Actor, Journal

from .test_confirm import fresh, script, status  # noqa: F401 (fixture)

UNBOUNDED = 'psql -c "DELETE FROM ses\u202esions"'


def asked(path: Path, command: str, safety: str = "safe_read") -> str:
    with Journal.open(path, actor=Actor.agent("agent-7")) as agent:
        run = agent.runs.start("shop", "lens test")
        return agent.approvals.request(
            run.id, {"tool": "Bash", "args": {"command": command}}, reason="go", safety_class=safety
        ).id


def test_show_prints_what_the_action_reads_as(fresh: Path) -> None:  # noqa: F811
    ident = asked(fresh, UNBOUNDED)
    done = script("show", ident)
    assert done.returncode == 0, done.stderr
    reads = done.stdout.split("reads as:", 1)[1]
    assert "! declared safe_read, but the lens reads destructive" in reads
    assert "has no WHERE: it deletes every row  [destructive]  (args.command" in reads
    assert "\\u202e" in reads and "\u202e" not in done.stdout
    lens = json.loads(script("show", ident, "--json").stdout)["lens"]
    assert {f["code"] for f in lens["facts"]} >= {"sql.unbounded_write", "shell.commands"}
    assert lens["detected"] == "destructive" and lens["precedent"] == 0


def test_approve_asks_for_what_reads_stronger_than_declared(fresh: Path) -> None:  # noqa: F811
    ident = asked(fresh, UNBOUNDED)
    refused = script("approve", ident)
    assert refused.returncode == 1 and "reads as a destructive one" in refused.stderr
    assert status(fresh, ident) == "pending"
    assert script("approve", ident, "--yes").returncode == 0
    assert status(fresh, ident) == "approved"
    plain = asked(fresh, "ls -la /srv")  # reads as nothing stronger: no question
    assert script("approve", plain).returncode == 0, status(fresh, plain)


def test_add_rule_on_a_fact_previews_then_makes_it(fresh: Path) -> None:  # noqa: F811
    """`--when 'exists risk.sql.unbounded_write'`: the preview lists the unbounded DELETE
    waiting, not the bounded one; with --yes --apply-pending the rule denies it."""
    unbounded = asked(fresh, 'psql -c "DELETE FROM t"')
    bounded = asked(fresh, 'psql -c "DELETE FROM t WHERE id = 7"')
    when = ("--when", "exists risk.sql.unbounded_write")
    shown = script("add-rule", "deny", "Bash", "--project", "shop", *when, "--json")
    assert shown.returncode == 0, shown.stderr
    preview = json.loads(shown.stdout)["preview"]
    assert [h["id"] for h in preview["pending"]] == [unbounded]
    assert json.loads(shown.stdout)["made"] is None
    made = script(
        "add-rule", "deny", "Bash", "--project", "shop", *when, "--yes", "--apply-pending"
    )
    assert made.returncode == 0, made.stderr
    assert "made rule_" in made.stdout and unbounded in made.stdout
    assert (status(fresh, unbounded), status(fresh, bounded)) == ("denied", "pending")
    typo = script("add-rule", "deny", "Bash", "--project", "shop", "--when", "exists risk.sql.x")
    assert typo.returncode == 1 and "risk lens reads no risk.sql.x" in typo.stderr
