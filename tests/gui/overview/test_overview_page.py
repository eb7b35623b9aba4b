"""The Overview page: charts of the journal's aggregates, live from the change feed,
filterable, and a click opens the items behind a bar."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal

from ..conftest import WAIT_MS

HOSTILE = "evil\u202egnp.exe\x1b[2J"


def show_overview(qtbot, window):
    page = window.overview
    with qtbot.waitSignal(page.model.loaded, timeout=WAIT_MS):
        window.registry.trigger("go.overview")
    return page


def waiting_total(page) -> int:
    return int(sum(bar.total() for bar in page.pending.chart.bars))


def test_the_charts_show_what_core_counts(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    page = show_overview(qtbot, window)
    with Journal.open(path, read_only=True) as journal:
        facts = journal.overview.facts()
    assert waiting_total(page) == sum(sum(b.counts.values()) for b in facts.pending) > 0
    assert page.pending.note.text() == f"{waiting_total(page)} waiting now"
    assert len(page.per_hour.chart.bars) == 24
    assert "nothing" not in page.pending.chart.describe()


def test_a_new_request_appears_on_the_overview_without_a_click(qtbot, populated, open_desk, agents):
    path, _ = populated
    window = open_desk(path)
    page = show_overview(qtbot, window)
    before = waiting_total(page)
    agent = agents(path, "--name", "late-agent", "--wait", "30")
    agent.wait_for(qtbot, "REQUESTED")
    qtbot.waitUntil(lambda: waiting_total(page) == before + 1, timeout=WAIT_MS)
    agent.stop()


def test_filters_narrow_every_chart(qtbot, populated, open_desk):
    path, _ = populated
    with Journal.open(path, actor=Actor.agent("only-one")) as j:
        run = j.runs.start("lonely-project", "one run", agent="only-one")
        j.approvals.request(
            run.id, {"tool": "fs.write", "args": {"path": "/x"}}, reason="r", request_key="lonely-1"
        )
    window = open_desk(path)
    page = show_overview(qtbot, window)
    index = page.project.findData("lonely-project")
    assert index > 0
    with qtbot.waitSignal(page.model.loaded, timeout=WAIT_MS):
        page.project.setCurrentIndex(index)
    assert waiting_total(page) == 1
    assert sum(b.total() for b in page.runs.chart.bars) == 1


def test_clicking_an_agent_opens_the_inbox_filtered_to_it(qtbot, populated, open_desk):
    path, _ = populated
    with (
        Journal.open(path, actor=Actor.agent(HOSTILE)) as agent,
        Journal.open(path, actor=Actor.operator("bob")) as operator,
    ):
        run = agent.runs.start("shop", "hostile run", agent=HOSTILE)
        for n in range(3):
            a = agent.approvals.request(
                run.id, {"tool": "t", "args": {"n": n}}, reason="r", request_key=f"h{n}"
            )
            operator.approvals.decide(a.id, True, expected_version=a.version, reason="ok")
        agent.approvals.request(
            run.id, {"tool": "t", "args": {"n": 9}}, reason="r", request_key="h9"
        )
    window = open_desk(path)
    page = show_overview(qtbot, window)
    chart = page.by_agent.chart
    names = [bar.label for bar in chart.bars]
    assert HOSTILE in names
    described = chart.describe()
    assert "\u202e" not in described and "\x1b" not in described
    assert "\\u202e" in described and "\\x1b" in described
    center = chart.bar_rect(names.index(HOSTILE)).center().toPoint()
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=center)
    assert window.current_page_id() == "inbox"
    assert window.inbox.filters.agent.currentData() == HOSTILE
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=WAIT_MS)
