"""Issue 37: "Retry run…" on a failed run's page. The header's button is Retry (not Request
cancel) while the run shown failed; it asks for a reason in a dialog that says what happens;
the run's page then says a retry is asked, and the run's own demo agent (a real
``proctor.sim`` process) starts the new attempt and completes the run, which the page shows
as it happens. A run that did not fail has no Retry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.gui.widgets.dialogs import ReasonDialog

from ..conftest import WAIT_MS
from ..driver import LEFT
from .test_runs_detail import open_run

SIM_STEP = Path(__file__).parents[2] / "integration" / "sim_step.py"


def test_retry_from_the_failed_runs_page_is_started_by_its_agent(
    qtbot, journal_path, open_desk, monkeypatch
):
    with Journal.open(journal_path, actor=Actor.agent("sim-retry")) as own:
        run = own.runs.start("shop", "Sync the catalogue", agent="sim-retry")
        own.runs.fail(run.id, "agent error: the API was down")
        live = own.runs.start("shop", "Still going", agent="sim-retry")
    window = open_desk(journal_path)
    detail = open_run(qtbot, window, run.id)
    button = detail.cancel_button
    qtbot.waitUntil(lambda: button.isVisible() and button.isEnabled(), timeout=WAIT_MS)
    assert button.text().replace("&", "") == "Retry run…"
    asked: list[tuple] = []
    monkeypatch.setattr(ReasonDialog, "ask", lambda *a, **k: asked.append(a) or "the API is back")
    qtbot.mouseClick(button, LEFT)
    [(_parent, title, text)] = [a[:3] for a in asked]
    assert title == "Retry run"
    assert "attempt 2 of this same run" in text and "from failed back to running" in text
    qtbot.waitUntil(lambda: "Retry requested as attempt 2" in detail.ending.text(), timeout=WAIT_MS)
    assert not window.registry.action("runs.retry").isEnabled()  # asked once
    agent = subprocess.Popen(
        [sys.executable, str(SIM_STEP), str(journal_path), "sim-retry", "0", "1", "retry"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = agent.communicate(timeout=120)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == 0, err
    assert f"RUN {run.id} completed" in out
    qtbot.waitUntil(lambda: detail.run.status.value == "completed", timeout=WAIT_MS)
    assert detail.run.current_attempt == 2
    with Journal.open(journal_path, actor=Actor.operator("check"), read_only=True) as j:
        [decision] = j.approvals.decisions(run.id)
    assert decision.source == "desk" and decision.reason == "the API is back"
    other = open_run(qtbot, window, live.id)
    qtbot.waitUntil(
        lambda: other.cancel_button.text().replace("&", "") == "Request cancel…", timeout=WAIT_MS
    )
    assert not window.registry.action("runs.retry").isEnabled()
