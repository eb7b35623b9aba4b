"""The Runs page: status shown as words and shape, filters, search, sort, live changes,
CSV export of the filtered list, opening a run and going back."""

from __future__ import annotations

import csv

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.audit.timeline import RunQuery
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.runs.filters import RunFilterBar
from proctor.gui.runs.model import COL_STATUS, RunsModel
from proctor.gui.widgets.export import SaveDialog
from proctor.gui.widgets.list_page import fill_combo
from proctor.gui.widgets.paged_model import ITEM_ROLE
from proctor.gui.widgets.run_status import STYLE, status_icon

from ..conftest import WAIT_MS
from ..data import HOSTILE_ARGS, HOSTILE_REASON, agent
from ..widgets.test_models import guarded, loaded


def add_runs(path) -> dict[str, str]:
    """Three more runs: a failed one, a completed one, a running one with a child."""
    with agent(path, "tester") as a:
        failed = a.runs.start("shop", "Migrate the orders table", agent="tester")
        a.runs.append_event(failed.id, "tool.output", {"exit_code": 1})
        a.runs.fail(failed.id, "migration 0042 failed: column exists")
        done = a.runs.start("docs", "Write the changelog", agent="tester")
        a.runs.complete(done.id, {"ok": True})
        parent = a.runs.start("shop", "Release 4.2", agent="tester")
        child = a.runs.start("shop", "Release 4.2: build", agent="tester", parent_run_id=parent.id)
    return {"failed": failed.id, "done": done.id, "parent": parent.id, "child": child.id}


def open_page(qtbot, window, name: str):
    """Go to a list page (runs, audit, …) and wait for its first rows."""
    window.go(name)
    page = getattr(window, name)
    qtbot.waitUntil(lambda: page.model.has_loaded and not page.model.is_loading(), timeout=WAIT_MS)
    return page


def runs_page(qtbot, window):
    return open_page(qtbot, window, "runs")


def shown_titles(page) -> list[str]:
    return [page.model.item(r).title for r in range(page.model.rowCount())]


def wait_titles(qtbot, page, expected) -> None:
    qtbot.waitUntil(
        lambda: not page.model.is_loading() and shown_titles(page) == expected, timeout=WAIT_MS
    )


def test_status_is_words_and_a_shape_not_only_colour(qtbot, populated, open_desk):
    path, _ids = populated
    more = add_runs(path)
    page = runs_page(qtbot, open_desk(path))
    row = page.model.row_of(more["failed"])
    index = page.model.index(row, COL_STATUS)
    assert index.data() == "failed"
    assert not index.data(Qt.ItemDataRole.DecorationRole).isNull()
    assert "failed" in index.data(Qt.ItemDataRole.AccessibleTextRole)
    waiting = page.model.index(page.model.row_of(_ids["run"]), COL_STATUS)
    assert waiting.data() == "waiting for you"
    shapes = {
        STYLE[s][0]
        for s in (
            "running",
            "waiting_for_user",
            "completed",
            "failed",
            "cancelled",
            "interrupted",
            "pending",
        )
    }
    assert len(shapes) == 7  # every run status has its own shape
    assert not status_icon("unknown-status").isNull()


def test_filters_search_and_open_items(qtbot, populated, open_desk):
    path, ids = populated
    more = add_runs(path)
    page = runs_page(qtbot, open_desk(path))
    bar = page.list.filters
    bar.status.setCurrentIndex(bar.status.findText("Failed"))
    wait_titles(qtbot, page, ["Migrate the orders table"])
    bar.status.setCurrentIndex(0)
    page.list.search.setText("release 4.2")
    wait_titles(qtbot, page, ["Release 4.2: build", "Release 4.2"])
    page.list.search.setText(more["done"][-10:])  # ids are searched too
    wait_titles(qtbot, page, ["Write the changelog"])
    page.list.search.clear()
    bar.waiting.setChecked(True)
    qtbot.waitUntil(
        lambda: (
            not page.model.is_loading()
            and set(shown_titles(page))
            == {"Fix checkout rounding bug", "Rotate database credentials"}
        ),
        timeout=WAIT_MS,
    )
    bar.waiting.setChecked(False)
    qtbot.waitUntil(lambda: bar.agent.findData("tester") >= 0, timeout=WAIT_MS)
    bar.agent.setCurrentIndex(bar.agent.findData("ops-bot"))
    wait_titles(qtbot, page, ["Rotate database credentials"])
    del ids


def test_sort_by_header_and_by_menu(qtbot, populated, open_desk):
    path, _ids = populated
    add_runs(path)
    page = runs_page(qtbot, open_desk(path))
    expected = sorted(shown_titles(page))
    page.table.horizontalHeader().setSortIndicator(1, Qt.SortOrder.AscendingOrder)  # Title
    wait_titles(qtbot, page, expected)
    assert page.list.filters.sort.currentData() == "title:asc"
    bar = page.list.filters
    bar.sort.setCurrentIndex(bar.sort.findData("events:desc"))
    qtbot.waitUntil(
        lambda: not page.model.is_loading() and page.model.query.sort == "events", timeout=WAIT_MS
    )
    counts = [page.model.item(r).last_sequence for r in range(page.model.rowCount())]
    assert counts == sorted(counts, reverse=True)
    assert page.table.horizontalHeader().sortIndicatorSection() == 7


def test_live_status_change_shows_without_reload(qtbot, populated, open_desk):
    path, ids = populated
    more = add_runs(path)
    page = runs_page(qtbot, open_desk(path))
    row = page.model.row_of(more["parent"])
    page.table.selectRow(row)
    with agent(path, "tester") as a:
        a.runs.fail(more["parent"], "out of disk")
    status = lambda: page.model.index(page.model.row_of(more["parent"]), COL_STATUS).data()  # noqa: E731
    qtbot.waitUntil(lambda: status() == "failed", timeout=WAIT_MS)
    assert page.table.currentIndex().row() == page.model.row_of(more["parent"])
    del ids


def test_export_the_filtered_list_as_csv(qtbot, populated, open_desk, tmp_path, monkeypatch):
    path, _ids = populated
    add_runs(path)
    page = runs_page(qtbot, open_desk(path))
    page.list.search.setText("release")
    wait_titles(qtbot, page, ["Release 4.2: build", "Release 4.2"])
    out = tmp_path / "runs.csv"
    monkeypatch.setattr(SaveDialog, "ask", classmethod(lambda cls, *a: str(out)))
    page.list.export_button.click()
    qtbot.waitUntil(lambda: "Wrote 2 runs" in page.list.message.text(), timeout=WAIT_MS)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["title"] for r in rows] == ["Release 4.2: build", "Release 4.2"]
    assert not (tmp_path / "runs.csv.partial").exists()


def test_enter_opens_the_run_and_back_returns(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    page = runs_page(qtbot, window)
    row = page.model.row_of(ids["run2"])
    page.table.setCurrentIndex(page.model.index(row, 1))
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_Return)
    assert page.showing_run()
    qtbot.waitUntil(
        lambda: page.detail.title.text() == "Rotate database credentials", timeout=WAIT_MS
    )
    qtbot.mouseClick(page.detail.back_button, Qt.MouseButton.LeftButton)
    assert not page.showing_run()
    assert page.table.currentIndex().row() == row


def test_runs_model_passes_the_model_tester(qtbot, qtmodeltester, populated):
    path, _ids = populated
    add_runs(path)
    runner, journal = TaskRunner(), guarded(path)
    model = RunsModel(runner)
    qtmodeltester.check(model)
    model.show_query(journal, RunQuery(sort="title", descending=False))
    loaded(qtbot, model)
    titles = [model.index(r, 1).data(ITEM_ROLE).title for r in range(model.rowCount())]
    assert titles == sorted(titles)
    with Journal.open(path, actor=Actor.agent("late")) as a:
        a.runs.start("zzz", "Aardvark run")
    model.refresh()
    qtbot.waitUntil(lambda: model.index(0, 1).data() == "Aardvark run", timeout=WAIT_MS)
    model.sort(4, Qt.SortOrder.DescendingOrder)
    loaded(qtbot, model)
    qtmodeltester.check(model)
    runner.shutdown()


def test_agent_text_is_never_markup(qtbot, journal_path, open_desk):
    with agent(journal_path, "mallory") as a:
        run = a.runs.start("shop", HOSTILE_REASON, agent="mallory")
        a.runs.append_event(run.id, "note", HOSTILE_ARGS)
        a.runs.fail(run.id, HOSTILE_REASON)
    window = open_desk(journal_path)
    page = runs_page(qtbot, window)
    tip = page.model.index(page.model.row_of(run.id), 1).data(Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;bold&lt;/b&gt;" in tip and "<b>" not in tip
    page.show_run(run.id)
    detail = page.detail
    qtbot.waitUntil(lambda: detail.run is not None and detail.run.id == run.id, timeout=WAIT_MS)
    for label in (detail.title, detail.ending, detail.facts_label):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert detail.title.text() == HOSTILE_REASON
    model = detail.events
    qtbot.waitUntil(lambda: model.is_loaded(1), timeout=WAIT_MS)
    summary_tip = model.index(1, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert "&lt;img" in summary_tip and "<img" not in summary_tip
    assert "<b>/etc/passwd</b>" in model.index(1, 3).data()  # shown as the characters


def test_facet_menus_keep_a_choice_no_longer_offered_and_stay_quiet(qtbot):
    bar = RunFilterBar()
    qtbot.addWidget(bar)
    bar.set_facets(["ann", "bob"], ["shop"])
    bar.agent.setCurrentIndex(bar.agent.findData("bob"))
    with qtbot.assertNotEmitted(bar.changed):
        bar.set_facets(["ann"], ["docs"])
    assert [bar.agent.itemData(n) for n in range(bar.agent.count())] == [None, "ann", "bob"]
    assert bar.agent.currentData() == "bob"
    assert bar.project.currentData() is None


def test_fill_combo_without_keep_falls_back_to_all(qtbot):
    bar = RunFilterBar()
    qtbot.addWidget(bar)
    fill_combo(bar.agent, "All agents", ["ann", "bob"])
    bar.agent.setCurrentIndex(bar.agent.findData("ann"))
    fill_combo(bar.agent, "All agents", ["ann", "cy"])
    assert bar.agent.currentData() == "ann"
    fill_combo(bar.agent, "All agents", ["cy"])
    assert [bar.agent.itemText(n) for n in range(bar.agent.count())] == ["All agents", "cy"]
    assert bar.agent.currentData() is None


def test_custom_range_shows_exactly_the_runs_started_inside_it(qtbot, populated, open_desk):
    """From the keyboard: End on the time menu opens the from–to dialog; a reversed range
    is refused; Enter applies it; the menu shows the range; Escape keeps it."""
    import time

    from PySide6.QtCore import QDateTime

    from proctor.gui.runs.range_dialog import minute, range_text

    path, _ids = populated
    base = minute(time.time()) - 86_400  # a day back: nothing else started then
    hours = {
        "five hours before": 5,
        "four hours before": 4,
        "three hours before": 3,
        "two hours before": 2,
        "one hour before": 1,
    }
    for title, h in hours.items():
        with Journal.open(path, actor=Actor.agent("dated"), clock=lambda h=h: base - h * 3600) as a:
            a.runs.start("history", title, agent="dated")
    page = runs_page(qtbot, open_desk(path))
    bar = page.list.filters
    qtbot.waitUntil(page.window().isActiveWindow, timeout=WAIT_MS)
    bar.when.setFocus()
    qtbot.keyClick(bar.when, Qt.Key.Key_End)
    qtbot.waitUntil(
        lambda: bar.range_dialog is not None and bar.range_dialog.isVisible(), timeout=WAIT_MS
    )
    dialog = bar.range_dialog
    since, until = base - 4 * 3600, base - 2 * 3600  # from inclusive, to exclusive
    dialog.start.setDateTime(QDateTime.fromSecsSinceEpoch(int(until)))
    dialog.end.setDateTime(QDateTime.fromSecsSinceEpoch(int(since)))
    assert not dialog.ok.isEnabled() and "before" in dialog.problem.text()
    qtbot.keyClick(dialog.end, Qt.Key.Key_Return)  # refused: the dialog stays
    assert dialog.isVisible()
    dialog.start.setDateTime(QDateTime.fromSecsSinceEpoch(int(since)))
    dialog.end.setDateTime(QDateTime.fromSecsSinceEpoch(int(until)))
    assert dialog.ok.isEnabled() and dialog.problem.text() == ""
    qtbot.keyClick(dialog.end, Qt.Key.Key_Return)
    wait_titles(qtbot, page, ["three hours before", "four hours before"])
    assert (page.model.query.since, page.model.query.until) == (since, until)
    assert bar.when.currentText() == range_text(since, until)
    exported = bar.query(None)  # what "Export CSV…" writes uses the same range
    assert (exported.since, exported.until) == (since, until)
    bar.when.activated.emit(bar.custom_index)  # picked again from the menu: the dialog
    qtbot.waitUntil(
        lambda: bar.range_dialog is not None and bar.range_dialog.isVisible(), timeout=WAIT_MS
    )
    assert bar.range_dialog.value() == (since, until)  # starts from the range in use
    qtbot.keyClick(bar.range_dialog.start, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: bar.range_dialog is None, timeout=WAIT_MS)
    assert bar.when.currentText() == range_text(since, until)  # cancelling keeps it
    bar.when.setCurrentIndex(0)  # "Any time"
    qtbot.waitUntil(
        lambda: not page.model.is_loading() and len(shown_titles(page)) > 5, timeout=WAIT_MS
    )
    assert page.model.query.until is None and bar.when.itemText(bar.custom_index) == "Custom range…"
