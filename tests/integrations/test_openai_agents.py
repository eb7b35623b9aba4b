"""The OpenAI Agents SDK (the published package) with a scripted model: a needs_approval tool is
a Proctor approval; the operator decides through core in this process; the saved RunState
resumes in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

APP = Path(__file__).with_name("oa_app.py")


def run_app(journal: Path, command: str, thread: str, state: Path) -> dict:
    out = subprocess.run(
        [sys.executable, str(APP), str(journal), command, thread, str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def refunds(journal: Path) -> list[str]:
    log = Path(str(journal) + ".refunds.log")
    return log.read_text().splitlines() if log.exists() else []


def test_approved_interruption_resumes_in_another_process(journal_path, tmp_path, desk):
    state = tmp_path / "state.json"
    first = run_app(journal_path, "start", "t-1", state)
    assert first["status"] == "waiting" and refunds(journal_path) == []
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    assert a.action == {"tool": "refund", "args": {"account": "acct-9", "amount": 4200}}
    assert first["approvals"] == [a.id]
    # nothing decided: resuming runs nothing
    assert run_app(journal_path, "resume", "t-1", state)["status"] == "waiting"
    assert refunds(journal_path) == []
    desk.approve(a.id, reason="charged twice, checked")
    done = run_app(journal_path, "resume", "t-1", state)
    assert done["done"] and "refunded 4200 to acct-9" in done["final_output"]
    assert refunds(journal_path) == ["acct-9 4200"]
    # the same saved state resumed again (a retry, a second worker) does not refund again
    again = run_app(journal_path, "resume", "t-1", state)
    assert again["status"] == "already_resumed" and refunds(journal_path) == ["acct-9 4200"]
    run = desk.journal.runs.get(done["run_id"])
    assert run.status == "completed"


def test_denial_is_a_rejection_with_the_operators_reason(journal_path, tmp_path, desk):
    state = tmp_path / "state.json"
    run_app(journal_path, "start", "t-2", state)
    [item] = desk.wait_pending("approval")
    desk.deny(item.id, "the customer was refunded by phone")
    done = run_app(journal_path, "resume", "t-2", state)
    assert done["done"] and refunds(journal_path) == []
    assert "the customer was refunded by phone" in done["final_output"]


def test_filing_twice_is_one_request(journal_path, tmp_path, desk):
    state = tmp_path / "state.json"
    run_app(journal_path, "start", "t-3", state)
    run_app(journal_path, "resume", "t-3", state)
    assert len(desk.wait_pending("approval")) == 1


def test_an_edited_approval_never_runs_the_unedited_call(journal_path, tmp_path, desk):
    state = tmp_path / "state.json"
    run_app(journal_path, "start", "t-4", state)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    edited = {"tool": "refund", "args": {"account": "acct-9", "amount": 100}}
    desk.journal.approvals.approve_edited(a.id, edited, expected_version=a.version)
    done = run_app(journal_path, "resume", "t-4", state)
    assert done["done"] and refunds(journal_path) == []
    assert "edited" in done["final_output"]


def test_a_resumer_that_crashed_mid_run_waits_for_a_person(journal_path, tmp_path, desk):
    state = tmp_path / "state.json"
    run_app(journal_path, "start", "t-5", state)
    [item] = desk.wait_pending("approval")
    desk.approve(item.id)
    crashed = subprocess.run(
        [sys.executable, str(APP), str(journal_path), "resume", "t-5", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CRASH_IN_TOOL": "1", "LEASE": "1"},
    )
    assert crashed.returncode == 17
    [held] = desk.journal.effects.list(status=["executing"]).items
    while held.lease_expires_at > desk.journal.now():  # the crashed resumer's lease lapses
        time.sleep(0.05)
    stuck = run_app(journal_path, "resume", "t-5", state)
    assert stuck["status"] == "ambiguous" and "resolves" in stuck["detail"]
    assert refunds(journal_path) == []
    [claim] = [e for e in desk.journal.effects.list(status=["ambiguous"]).items]
    desk.journal.effects.resolve(
        claim.key, "failed", reason="the bank shows no refund", expected_version=claim.version
    )
    done = run_app(journal_path, "resume", "t-5", state)
    assert done["done"] and refunds(journal_path) == ["acct-9 4200"]


def test_the_rejection_of_an_edit_tells_the_model_what_the_operator_wanted(
    journal_path, tmp_path, desk
):
    """The SDK cannot run an edited call: the model is told it was not run and the edited
    arguments the operator approved, so it can call the tool again with them (issue 32)."""
    state = tmp_path / "state.json"
    run_app(journal_path, "start", "t-6", state)
    [item] = desk.wait_pending("approval")
    a = desk.journal.approvals.get(item.id)
    edited = {"tool": "refund", "args": {"account": "acct-9", "amount": 100}}
    desk.journal.approvals.approve_edited(a.id, edited, expected_version=a.version)
    done = run_app(journal_path, "resume", "t-6", state)
    assert done["done"] and refunds(journal_path) == []
    told = done["final_output"]
    assert "Not run" in told and json.dumps(edited["args"], sort_keys=True) in told
