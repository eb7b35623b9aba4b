"""The desk's own sweep (issue 32, item 13): an agent process begins an effect and is
SIGKILLed; nobody else reserves anything; the desk, left open, turns the lapsed lease
ambiguous by itself and the effect reaches the inbox."""

from __future__ import annotations

from pathlib import Path

from proctor.core import Journal
from proctor.core.models import EffectStatus

from ..conftest import WAIT_MS

AGENT = Path(__file__).parents[2] / "agents" / "effects_agent.py"


def test_a_killed_agents_lapsed_lease_reaches_the_inbox_by_itself(
    qtbot, journal_path, open_desk, agents
):
    window = open_desk(journal_path)
    first = agents(journal_path, "begin", "pay:inv-9", script=AGENT)
    first.wait_for(qtbot, "BEGUN")
    first.proc.kill()  # SIGKILL: no cleanup, the lease stays taken until it lapses
    first.proc.wait(10)
    qtbot.waitUntil(lambda: window.inbox.model.row_of("effect:pay:inv-9") >= 0, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        effect = j.effects.get("pay:inv-9")
    assert effect.status == EffectStatus.AMBIGUOUS
    assert effect.ambiguous_reason == "lease expired before the outcome was recorded"
