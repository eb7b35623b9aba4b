"""Issue 32, "Done when": an operator session on the demo ends with no simulated run
failed by an operator's choice. A short session of ``operator_session.py``: the demo
started as ``proctor demo`` starts it (its builder process, live agent processes trusting
the operator's key), choices made by clicking the real desk window's widgets, until the
choices whose outcome the agents must carry out were made on live agents' items and a
failed demo run was asked to retry; then the journal is read.

Fails on the code before: the live agents never started a retry asked of a failed demo
run ("Retry run…" said the agent starts attempt 2; the run stayed failed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from operator_session import Operator, run_session

# made at least once on an item a live agent waits on, before the session ends (the other
# kinds are made meanwhile on whatever waits; tests/integration/test_sim_outcomes.py
# drives each outcome on a live agent one by one)
MUST = ("answer", "approve")


def enough(op: Operator) -> bool:
    return all(op.tally.live[kind] for kind in MUST) and bool(op.retried)


@pytest.mark.slow
# the offscreen platform says these whenever a dialog is shown or the window is raised
@pytest.mark.qt_log_ignore("This plugin does not support (propagateSizeHints|raise)")
def test_an_operator_session_fails_no_run(qapp, tmp_path: Path) -> None:
    result = run_session(
        60.0,  # a bound only: the session ends when ``enough`` holds
        folder=tmp_path,
        agents=3,
        rate=2.0,
        until=enough,
        drain_s=90.0,
    )
    assert not result["failures"]["operator"], result
    assert not result["failures"]["retry_not_honoured"], result
    assert not result["failures"]["other"], result  # no failure at all, in fact
    for kind in MUST:
        assert result["on_live_items"].get(kind), (kind, result)
