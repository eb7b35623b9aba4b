"""Issue 37: an agent's wait stamps its request (``waiter_seen_at``) without a change row;
the desk sees the stamp at once (the watcher's feed read also asks for the looks since its
last, a seek on the waiter index), not at the inbox's 15 s reload. The reload is stopped
here: only the watcher can bring the look in."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.core.models import ChangeKind

from ..conftest import WAIT_MS
from ..driver import Desk

ACTION = {"tool": "deploy", "args": {"env": "staging"}}


def test_an_agents_look_shows_in_the_inbox_without_the_reload(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "ship it", agent="bot")
        aid = agent.approvals.request(run.id, ACTION, reason="ship").id
    window = open_desk(journal_path)
    page, desk = window.inbox, Desk(qtbot, window)
    key = f"approval:{aid}"
    row = desk.wait_row(page.model, key)
    assert page.model.items()[row].waiter_seen_at is None
    page._resync.stop()  # no 15 s reload: the look must come through the watcher
    looked: list = []
    window.services.watcher.looked.connect(looked.extend)
    with Journal.open(journal_path, actor=Actor.agent("bot")) as agent:
        agent.approvals.wait(aid, timeout=0)  # the agent's wait stamps its look
        stamped = agent.approvals.get(aid).waiter_seen_at
    assert stamped is not None
    qtbot.waitUntil(lambda: (ChangeKind.APPROVAL, aid) in looked, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: page.model.items()[page.model.row_of(key)].waiter_seen_at == stamped,
        timeout=WAIT_MS,
    )
    assert window.services.watcher.looked_at == stamped
