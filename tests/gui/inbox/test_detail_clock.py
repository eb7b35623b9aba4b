"""The shown item's times follow the clock: "requested … ago" in the detail's header is
the same age the list and the "Pending for" line say, however long the item stays shown
(on proctor demo the header said 1h 08m while the list and the state line said 1h 13m)."""

from __future__ import annotations

import time
import types

from proctor.gui.widgets import fmt

from ..conftest import WAIT_MS
from ..driver import Desk


def test_the_requested_age_in_the_header_moves_with_the_clock(
    qtbot, populated, open_desk, monkeypatch
):
    path, ids = populated
    window = open_desk(path)
    Desk(qtbot, window).open_inbox_item(f"approval:{ids['approval']}")
    detail = window.inbox.detail.current()
    qtbot.waitUntil(lambda: detail.entity is not None, timeout=WAIT_MS)
    assert "ago" in detail.subtitle.text()
    later = time.time() + 3 * 3600  # the item stays shown for three hours
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    monkeypatch.setattr(fmt, "time", types.SimpleNamespace(**{**clock, "time": lambda: later}))
    age = fmt.age(detail.entity.created_at)
    assert age.startswith("3h")
    qtbot.waitUntil(lambda: f"Pending for {age}" in detail.state.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: f"requested {age} ago" in detail.subtitle.text(), timeout=WAIT_MS)
