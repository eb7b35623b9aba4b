"""The desk's "Mark failed, allow a retry", clicked on the Effects page, is what the demo
agent does next (issue 32, item 7): a real ``proctor.sim`` agent process whose effect hung
past its lease waits for a person; the operator types a reason, clicks Mark failed and then
the confirmation's "Mark failed, allow a retry"; the agent runs the effect again as attempt 2
and completes its run, as the dialog said ("the agent's next attempt will do it again")."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.core.models import ApprovalStatus, EffectStatus
from proctor.gui.widgets.dialogs import ConfirmDialog

from ..conftest import WAIT_MS
from ..driver import LEFT, Desk

SIM_STEP = Path(__file__).parents[2] / "integration" / "sim_step.py"


def click_ok_when_asked(qtbot, seen: list) -> None:
    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ConfirmDialog):
            QTimer.singleShot(20, poll)
            return
        seen.append((dialog.windowTitle(), dialog.ok.text()))
        qtbot.mouseClick(dialog.ok, LEFT)

    QTimer.singleShot(0, poll)


def test_mark_failed_allow_a_retry_is_retried_by_the_demo_agent(
    qtbot, journal_path, open_desk, agents
):
    # a fresh agent with an odd index: its first effect hangs past its lease
    agent = agents(journal_path, "sim-lease", "1", "0", "approval", script=SIM_STEP)
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:

        def pending():
            for run in bob.runs.list(agent="sim-lease", limit=5).items:
                for a in bob.approvals.for_run(run.id):
                    if a.status == ApprovalStatus.PENDING:
                        return a
            return None

        qtbot.waitUntil(lambda: pending() is not None, timeout=WAIT_MS)
        approval = pending()
        bob.approvals.decide(approval.id, True, expected_version=approval.version)
        key = f"{approval.action['tool']}/{approval.id}"
        qtbot.waitUntil(  # the lease lapsed: nobody knows whether it happened
            lambda: key in {e.key for e in bob.effects.list(status=["ambiguous"]).items},
            timeout=WAIT_MS,
        )
    window = open_desk(journal_path)
    window.go("effects")
    page = window.effects
    Desk(qtbot, window).open_effect(key)
    qtbot.mouseClick(page.form.reason, LEFT)
    qtbot.keyClicks(page.form.reason, "the provider has no record of it")
    seen: list = []
    click_ok_when_asked(qtbot, seen)
    qtbot.mouseClick(page.failed_button, LEFT)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT_MS)
    [line] = agent.wait_for(qtbot, "RUN")
    assert line.split()[2] == "completed"
    assert seen[0][1] == "Mark failed, allow a retry"
    with Journal.open(journal_path, read_only=True) as j:
        effect = j.effects.get(key)
        assert (effect.status, effect.attempt) == (EffectStatus.COMMITTED, 2)
        assert effect.resolved_by is None  # the retry starts clean; the resolution is evidence
