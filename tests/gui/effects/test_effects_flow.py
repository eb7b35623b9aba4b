"""Ambiguous effects end to end: an agent process reserves and begins effects and is
SIGKILLed; the next reserve makes them ambiguous; the desk shows them live; the operator
resolves one failed and one committed through the widgets; the agent's retry then gets
attempt 2 for the failed one and is refused for the committed one.

The agent process is ``tests/agents/effects_agent.py``.
"""

from __future__ import annotations

from pathlib import Path

from proctor.core import Journal

LEASE_S = 1.0
AGENT = Path(__file__).parents[2] / "agents" / "effects_agent.py"


# ---------------------------------------------------------------- the tests

from PySide6.QtCore import Qt  # noqa: E402

from proctor.core.models import EffectStatus  # noqa: E402
from proctor.gui.decide.resolve_effect import NEXT_COMMITTED, NEXT_FAILED  # noqa: E402
from proctor.gui.widgets.dialogs import ConfirmDialog  # noqa: E402

from ..conftest import WAIT_MS  # noqa: E402
from .test_effects_page import select  # noqa: E402

LEFT = Qt.MouseButton.LeftButton


def test_killed_agent_effects_resolved_at_the_desk_then_retried(
    qtbot, journal_path, open_desk, agents, monkeypatch
):
    window = open_desk(journal_path)
    window.go("effects")
    page = window.effects
    first = agents(journal_path, "begin", "pay:inv-1", "pay:inv-2", script=AGENT)
    run_id = first.wait_for(qtbot, "BEGUN")[0].split()[1]
    first.proc.kill()  # SIGKILL: no cleanup, the leases stay taken
    first.proc.wait(10)
    retry = agents(journal_path, "retry", run_id, "pay:inv-1", "pay:inv-2", script=AGENT)
    assert retry.wait_for(qtbot, "REFUSED", 2) == [
        "REFUSED pay:inv-1 EffectAmbiguous",
        "REFUSED pay:inv-2 EffectAmbiguous",
    ]
    qtbot.waitUntil(lambda: window.inbox.model.row_of("effect:pay:inv-1") >= 0, timeout=WAIT_MS)

    select(qtbot, page, "pay:inv-1")  # appeared live on the open page
    view = page.view
    assert view.facts["Attempt"].text() == "1"
    assert view.facts["Agent"].text() == "payer"
    assert view.facts["Safety class"].text() == "financial"
    assert view.facts["Lease"].text().startswith("1s lease (held by payer@first")
    assert run_id in view.facts["Run"].text()
    assert "lease expired" in view.why.text()
    assert "pay_invoice" in view.tool_note.text()
    assert view.request.isVisible() and "inv-1" in view.request.json_text()
    assert page.form.next_committed.text() == NEXT_COMMITTED
    assert page.form.next_failed.text() == NEXT_FAILED
    assert "You will be asked to confirm" in page.form.risk.text()

    answers = iter([False, True])
    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(lambda *a, **k: next(answers)))
    qtbot.keyClicks(page.form.reason, "the bank shows no debit for inv-1")
    qtbot.keyClicks(page.form.url, "https://bank.example/statement/7")
    qtbot.keyClicks(page.form.note, "checked by phone")
    assert not page.resolve(EffectStatus.FAILED)  # the second confirmation said no
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("pay:inv-1").status == EffectStatus.AMBIGUOUS
    qtbot.mouseClick(page.failed_button, LEFT)
    qtbot.waitUntil(lambda: "Marked failed" in page.message.text(), timeout=WAIT_MS)

    select(qtbot, page, "pay:inv-2")
    qtbot.keyClicks(page.form.reason, "the bank shows the debit for inv-2")
    qtbot.keyClicks(page.form.external, "txn-4411")
    qtbot.mouseClick(page.committed_button, LEFT)
    qtbot.waitUntil(lambda: "Marked committed" in page.message.text(), timeout=WAIT_MS)

    with Journal.open(journal_path, read_only=True) as j:
        failed, committed = j.effects.get("pay:inv-1"), j.effects.get("pay:inv-2")
        assert (failed.status, failed.resolved_by) == (EffectStatus.FAILED, "operator:alice")
        assert committed.status == EffectStatus.COMMITTED
        [receipt] = j.effects.receipts("pay:inv-1")
        assert receipt.kind == "resolution" and receipt.status == "failed"
        assert receipt.evidence["evidence"] == {
            "url": "https://bank.example/statement/7",
            "note": "checked by phone",
        }
        assert "lease expired" in receipt.evidence["ambiguous_reason"]
        assert j.effects.receipts("pay:inv-2")[0].external_id == "txn-4411"
        actions = [a.action for a in j.audit.for_entity("pay:inv-1")]
        assert actions.count("effect.resolved_failed") == 1
        events = [e.type for e in j.runs.events(run_id)]
        assert events.count("effect.resolved") == 2

    again = agents(journal_path, "retry", run_id, "pay:inv-1", "pay:inv-2", script=AGENT)
    lines = again.finish(qtbot)
    assert lines == ["RESERVED pay:inv-1 2", "REFUSED pay:inv-2 EffectCommitted"]
