"""Every table/list model passes Qt's model tester, including across live refreshes."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.core.models import InboxFilter
from proctor.gui.audit.page import AuditModel
from proctor.gui.decide.similar import SimilarModel
from proctor.gui.effects.page import EffectsModel
from proctor.gui.inbox.model import InboxModel
from proctor.gui.infra.guard import GuardedJournal, ThreadGuard
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.runs.model import EventsModel, RunsModel
from proctor.gui.widgets import paged_model
from proctor.gui.widgets.json_tree import JsonTree
from proctor.gui.widgets.palette import CommandsModel, Row
from proctor.gui.widgets.sidebar import Entry, SidebarModel

from ..data import agent, request

WAIT = 10_000


def guarded(path) -> GuardedJournal:
    return GuardedJournal(
        Journal.open(path, actor=Actor.operator("alice")), ThreadGuard(strict=True)
    )


def loaded(qtbot, model) -> None:
    qtbot.waitUntil(lambda: model.has_loaded and not model.is_loading(), timeout=WAIT)


def test_inbox_model_across_refreshes(qtbot, qtmodeltester, populated, monkeypatch):
    path, ids = populated
    monkeypatch.setattr(paged_model, "PAGE", 2)  # several pages, fetchMore on demand
    runner, journal = TaskRunner(), guarded(path)
    model = InboxModel(runner)
    qtmodeltester.check(model)
    model.show(journal, InboxFilter())
    loaded(qtbot, model)
    assert model.rowCount() == 2 and model.canFetchMore()
    model.fetchMore()
    qtbot.waitUntil(lambda: model.rowCount() == 4, timeout=WAIT)
    with agent(path, "coder") as a:  # one arrives, one leaves, one changes (snooze)
        request(a, ids["run"], "late", {}, "late request")
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.approvals.decide(ids["approval"], False, expected_version=1, reason="no")
    arrived = []
    model.arrived.connect(arrived.extend)
    model.refresh()
    qtbot.waitUntil(lambda: bool(arrived), timeout=WAIT)
    loaded(qtbot, model)
    keys = [model.index(r, 0).data(paged_model.KEY_ROLE) for r in range(model.rowCount())]
    assert f"approval:{ids['approval']}" not in keys
    assert len(keys) == len(set(keys))
    model.show(journal, InboxFilter(newest_first=False))  # a new query resets cleanly
    loaded(qtbot, model)
    qtmodeltester.check(model)
    runner.shutdown()


def test_refresh_keeps_current_row(qtbot, populated):
    path, ids = populated
    runner, journal = TaskRunner(), guarded(path)
    model = InboxModel(runner)
    model.show(journal, InboxFilter())
    loaded(qtbot, model)
    from PySide6.QtWidgets import QTableView

    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    row = model.row_of(f"approval:{ids['payment']}")
    view.setCurrentIndex(model.index(row, 1))
    with agent(path, "coder") as a:
        request(a, ids["run"], "newer", {}, "on top")
    model.refresh()
    qtbot.waitUntil(lambda: model.rowCount() == 7, timeout=WAIT)
    current = view.currentIndex()
    assert current.data(paged_model.KEY_ROLE) == f"approval:{ids['payment']}"
    assert current.row() == row + 1  # moved down by the new row on top, still selected
    runner.shutdown()


def test_list_page_models(qtbot, qtmodeltester, populated):
    path, _ids = populated
    runner, journal = TaskRunner(), guarded(path)
    cases = [
        (RunsModel(runner), lambda m: m.show(journal, text=None, status=None)),
        (EffectsModel(runner), lambda m: m.show(journal, None)),
        (AuditModel(runner), lambda m: m.show(journal, action_prefix=None, entity_kind=None)),
    ]
    for model, show in cases:
        qtmodeltester.check(model)
        show(model)
        loaded(qtbot, model)
        assert model.rowCount() > 0, type(model).__name__
        model.refresh()
        loaded(qtbot, model)
        qtmodeltester.check(model)
    runner.shutdown()


def test_small_models(qtmodeltester, populated):
    path, ids = populated
    with Journal.open(path, actor=Actor.operator("alice")) as j:
        similar = SimilarModel()
        qtmodeltester.check(similar)
        similar.set_rows(j.approvals.similar(ids["payment"]))
        assert similar.rowCount() == 1
        events = EventsModel()
        qtmodeltester.check(events)
        events.set_rows(j.runs.events(ids["run"], descending=True, limit=50))
        assert events.rowCount() > 10
    sidebar = SidebarModel([Entry("inbox", "Inbox"), Entry("runs", "Runs")])
    qtmodeltester.check(sidebar)
    sidebar.set_count("inbox", 4)
    assert sidebar.count("inbox") == 4
    commands = CommandsModel(
        [Row("a.b", "Approve", "Inbox", "A", True), Row("c.d", "Deny", "Inbox", "D", False)]
    )
    qtmodeltester.check(commands)
    commands.set_filter("appr")
    assert commands.rowCount() == 1 and commands.id_at(0) == "a.b"
    commands.set_filter("deny")
    assert commands.id_at(0) is None  # disabled commands are listed but cannot run


def test_json_tree_model(qtbot, qtmodeltester):
    tree = JsonTree("Arguments")
    qtbot.addWidget(tree)
    qtmodeltester.check(tree.model)
    tree.set_value({"a": [1, 2, {"b": None}], "long": "x" * 5000, "n": 1.5})
    tree.set_value(list(range(600)))  # over MAX_CHILDREN: summarised
    assert tree.model.rowCount() == 501


def test_a_tree_with_nothing_selected_shows_no_row_and_a_null_value_one(qtbot):
    """The run's event pane and the audit page show nothing before a selection: no "(value)
    null" row, which an event whose payload is null does show."""
    from proctor.gui.runs.events_pane import EventDetail

    detail = EventDetail()
    qtbot.addWidget(detail)
    assert detail.tree.model.rowCount() == 0 and not detail.tree.is_preparing()
    tree = JsonTree("Payload")
    qtbot.addWidget(tree)
    tree.set_value({"big": "x" * 300_000})  # prepared on the pool: cleared before it lands
    tree.clear()
    qtbot.waitUntil(lambda: not tree.is_preparing())
    assert tree.model.rowCount() == 0
    tree.set_value(None)
    qtbot.waitUntil(lambda: tree.model.rowCount() == 1)
