"""Saved views on the Runs page: its search, filters and sort kept under a name, applied
again (after a restart too) and deleted, as on the Inbox."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from proctor.gui.infra.settings import DeskSettings

from ..conftest import WAIT_MS
from ..driver import Desk
from ..inbox.test_saved_views import POPUP, choose, entries, save_view


@POPUP
def test_a_saved_run_view_brings_back_its_search_filters_and_sort(
    qtbot, populated, open_desk, tmp_path
):
    path, ids = populated
    window = open_desk(path)
    window.go("runs")
    runs, desk = window.runs.list, Desk(qtbot, window)
    desk.wait_row(window.runs.model, ids["run2"])
    qtbot.waitUntil(lambda: runs.filters.agent.findData("ops-bot") >= 0, timeout=WAIT_MS)
    runs.filters.agent.setCurrentIndex(runs.filters.agent.findData("ops-bot"))
    runs.filters.sort.setCurrentIndex(runs.filters.sort.findData("title:asc"))
    runs.filters.waiting.setChecked(True)
    qtbot.keyClicks(runs.search, "credentials")
    wanted = runs.filters.query(runs.text())
    save_view(qtbot, runs.views, "ops-bot waiting")

    runs.apply_view({})  # everything again
    qtbot.waitUntil(lambda: window.runs.model.row_of(ids["run"]) >= 0, timeout=WAIT_MS)
    choose(qtbot, runs.views, "ops-bot waiting")
    assert runs.search.text() == "credentials"
    assert runs.filters.query(runs.text()) == wanted
    model = window.runs.model
    qtbot.waitUntil(
        lambda: model.row_of(ids["run"]) < 0 and model.row_of(ids["run2"]) >= 0, timeout=WAIT_MS
    )

    again = DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))
    assert list(again.views("runs")) == ["ops-bot waiting"]
    assert again.views("inbox") == {}  # each list has its own views
    window.close()
    second = open_desk(path)
    second.go("runs")
    choose(qtbot, second.runs.list.views, "ops-bot waiting")
    assert second.runs.list.filters.query(second.runs.list.text()) == wanted
    choose(qtbot, second.runs.list.views, "Delete view", "ops-bot waiting")
    assert entries(second.runs.list.views) == ["Save view…"]


def test_a_run_view_with_a_hostile_range_or_status_reads_as_any(qtbot, populated, open_desk):
    path, _ids = populated
    window = open_desk(path)
    runs = window.runs.list
    runs.apply_view(
        {"status": "running", "within": "custom", "range": [5, 1], "sort": 3, "agent": ["x"]}
    )
    q = runs.filters.query(runs.text())
    assert q.status == () and q.since is None and q.until is None and q.agent is None
    assert runs.filters.when.currentIndex() == 0
    runs.apply_view({"within": "custom", "range": [100.0, 200.0], "status": ["failed"]})
    q = runs.filters.query(runs.text())
    assert (q.since, q.until, q.status) == (100.0, 200.0, ("failed",))
