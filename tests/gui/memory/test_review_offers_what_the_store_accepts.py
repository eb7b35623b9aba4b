"""A memory change review offers only what the store accepts (issue 32, item 7): when a
person has confirmed the entry, the agent that asked may not write it (the core's rule,
``memory.service.agent_barred``), so "Accept the change" and "Edit, then accept" are off,
with the core's reason; the operator rejects, and the demo agent process that asked finishes
its run."""

from __future__ import annotations

from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.memory.service import agent_barred
from proctor.core.models import QuestionStatus

from ..conftest import WAIT_MS
from ..driver import LEFT, Desk

SIM_STEP = Path(__file__).parents[2] / "integration" / "sim_step.py"


def asked(qtbot, journal_path, agent_name: str):
    with Journal.open(journal_path, read_only=True) as j:

        def question():
            for run in j.runs.list(agent=agent_name, limit=5).items:
                for q in j.questions.for_run(run.id):
                    if q.status == QuestionStatus.REQUESTED:
                        return q
            return None

        qtbot.waitUntil(lambda: question() is not None, timeout=WAIT_MS)
        return question()


def test_accept_is_not_offered_for_an_entry_a_person_confirmed(
    qtbot, journal_path, open_desk, agents
):
    agent = agents(journal_path, "sim-memory", "0", "1", "question", script=SIM_STEP)
    question = asked(qtbot, journal_path, "sim-memory")
    entry_id = question.request["entry_id"]
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        entry = bob.memory.get(entry_id)
        entry = bob.memory.confirm(entry_id, expected_version=entry.version, reason="checked")
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(question.id)
    view = detail.view
    qtbot.waitUntil(lambda: view.material.change is not None, timeout=WAIT_MS)
    accept, edit = view.verdicts.button_for("accept"), view.verdicts.button_for("edit")
    reject = view.verdicts.button_for("reject")
    assert not accept.isEnabled() and not edit.isEnabled() and reject.isEnabled()
    assert agent_barred(entry, "replace") in view.barred_note.text()
    assert view.barred_note.isVisible()
    qtbot.mouseClick(accept, LEFT)
    assert view.verdicts.value() is None and not detail.submit_button.isEnabled()
    qtbot.mouseClick(reject, LEFT)
    Desk(qtbot, window).answer(detail)
    [line] = agent.wait_for(qtbot, "RUN")
    assert line.split()[2] == "completed"
    with Journal.open(journal_path, read_only=True) as j:
        answered = j.questions.get(question.id)
        assert (answered.status, answered.response) == ("resolved", {"verdict": "reject"})


def test_accept_is_offered_for_an_entry_the_agent_may_write(qtbot, journal_path, open_desk, agents):
    agent = agents(journal_path, "sim-memory", "0", "1", "question", script=SIM_STEP)
    question = asked(qtbot, journal_path, "sim-memory")
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(question.id)
    view = detail.view
    qtbot.waitUntil(lambda: view.material.change is not None, timeout=WAIT_MS)
    accept = view.verdicts.button_for("accept")
    assert accept.isEnabled() and not view.barred_note.isVisible()
    qtbot.mouseClick(accept, LEFT)
    Desk(qtbot, window).answer(detail)
    [line] = agent.wait_for(qtbot, "RUN")
    assert line.split()[2] == "completed"
    with Journal.open(journal_path, read_only=True) as j:
        assert j.memory.get(question.request["entry_id"]).content == question.request["after"]
