"""A run page's header line and the list's status tip say the run's state now: a failed
run that was retried and runs (or completed) again is not "Failed: …" in red; failed again,
it says so with its attempt, since the run's ``error`` keeps the first failure only; `proctor
show` labels that error "first error" once the run was retried."""

from __future__ import annotations

from pathlib import Path

from proctor.core import Actor, Journal
from proctor.gui.runs.detail import ending_line
from proctor.gui.runs.model import RUN_COLUMNS


def states(path: Path) -> dict[str, object]:
    seen = {}
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        op = Journal.open(path, actor=Actor.operator("alice"))
        try:
            run = agent.runs.start("shop", "flaky")
            agent.runs.fail(run.id, "rate limited")
            seen["failed"] = agent.runs.get(run.id)
            f = seen["failed"]
            op.runs.request_retry(run.id, "the API is back", expected_version=f.version)
            seen["asked"] = agent.runs.get(run.id)
            agent.runs.retry(run.id)
            seen["running again"] = agent.runs.get(run.id)
            agent.runs.fail(run.id, "timeout")
            seen["failed again"] = agent.runs.get(run.id)
        finally:
            op.close()
    return seen


def test_the_header_and_the_tip_follow_a_retry(qapp, tmp_path: Path) -> None:
    seen = states(tmp_path / "j.db")
    tip = RUN_COLUMNS[0].tip
    assert ending_line(seen["failed"]) == "Failed: rate limited"
    assert ending_line(seen["asked"]).startswith("Retry requested as attempt 2")
    running = ending_line(seen["running again"])
    assert "Failed" not in running and running == "Retried as attempt 2 after: rate limited"
    assert "first failure: rate limited" in tip(seen["running again"])
    again = ending_line(seen["failed again"])
    assert again.startswith("Failed again, on attempt 2") and "the first: rate limited" in again


def test_proctor_show_says_first_error_once_retried(tmp_path: Path, capsys) -> None:
    from proctor.cli import main

    path = tmp_path / "j.db"
    run_id = states(path)["failed"].id
    assert main(["show", run_id, "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "first error" in out and "rate limited" in out and "timeout" in out
