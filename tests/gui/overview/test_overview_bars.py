"""Issue 32 item 9: a bar of the Overview's "Waiting for a person, by age" says "Click to
open these items", and a real click on it opens the inbox with exactly the items that bar
counted — every bar in turn, over items of every age, with a snoozed one, an earlier safety
filter and a search left in the inbox. The other charts' tooltips say what they open."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.audit.overview import AGE_BUCKETS

from ..conftest import WAIT_MS
from .test_overview_page import show_overview

AGES_MIN = (1, 2, 12, 14, 20, 45, 90, 200, 300, 700, 1000)  # minutes ago, every bucket
SNOOZED_AGE_MIN = 13


def bucket_of(age_s: float) -> int:
    return next(i for i, (_label, limit) in enumerate(AGE_BUCKETS) if age_s < limit)


def waiting_items(path: Path) -> dict[str, float]:
    """Approvals and questions created at AGES_MIN ago (plus one snoozed): id -> created."""
    now = time.time()
    made: dict[str, float] = {}
    for n, minutes in enumerate(AGES_MIN):
        at = now - minutes * 60
        with Journal.open(path, actor=Actor.agent("coder"), clock=lambda at=at: at) as a:
            run = a.runs.start("shop", f"run {n}", agent="coder")
            if n % 3 == 2:
                item = a.questions.ask(run.id, "question", f"Question {n}?").id
            else:
                item = a.approvals.request(
                    run.id, {"tool": "fs.write", "args": {"n": n}}, reason="r"
                ).id
            made[item] = at
    at = now - SNOOZED_AGE_MIN * 60
    with Journal.open(path, actor=Actor.agent("coder"), clock=lambda: at) as a:
        run = a.runs.start("shop", "snoozed", agent="coder")
        snoozed = a.approvals.request(run.id, {"tool": "fs.write", "args": {}}, reason="r")
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.inbox.snooze("approval", snoozed.id, now + 86_400, expected_version=snoozed.version)
    return made


def test_each_age_bar_opens_exactly_its_items(qtbot, journal_path, open_desk):
    made = waiting_items(journal_path)
    now = time.time()
    window = open_desk(journal_path)
    page = show_overview(qtbot, window)
    chart = page.pending.chart
    assert len(chart.bars) == len(AGE_BUCKETS)
    for index, bar in enumerate(chart.bars):
        expected = {i for i, at in made.items() if bucket_of(now - at) == index}
        assert bar.total() == len(expected), bar.label  # the bar counts what waits
        if not expected:
            continue
        assert "Click to open these items" in chart.tip(index)
        inbox = window.inbox
        inbox.filters.show_only(text="zzz")  # an earlier search, left behind
        inbox.filters.safety.addItem("destructive", "destructive")
        inbox.filters.safety.setCurrentIndex(inbox.filters.safety.count() - 1)
        window.go("overview")
        center = chart.bar_rect(index).center().toPoint()
        qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=center)
        assert window.current_page_id() == "inbox"
        model = inbox.model

        def listed(model=model) -> set[str]:
            return {model.item(r).id for r in range(model.rowCount())}

        qtbot.waitUntil(lambda expected=expected: listed() == expected, timeout=WAIT_MS)
        assert inbox.filters.age.isVisible() and bar.label in inbox.filters.age.currentText()


def test_the_other_charts_say_what_a_click_opens(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    page = show_overview(qtbot, window)
    for card, opens in (
        (page.by_agent, "this agent's waiting items"),
        (page.by_tool, "search the inbox"),
        (page.per_hour, "audit log"),
        (page.split, "audit log"),
        (page.runs, "runs"),
    ):
        chart = card.chart
        qtbot.waitUntil(lambda chart=chart: bool(chart.bars), timeout=WAIT_MS)
        assert opens in chart.tip(0)
        assert "Click to open these items" not in chart.tip(0)
