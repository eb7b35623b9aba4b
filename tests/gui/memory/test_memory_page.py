"""The Memory page around the flows: scope tree and token budgets, filters and sort, bulk
resolution with a counted confirmation, the inbox's conflict detail, the keyboard, and
the page's models under Qt's model tester."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.core.models import ConflictStatus, MemoryScope
from proctor.gui.decide.reveal import TOKEN_LIMIT_KEY, RevealState, RowsModel
from proctor.gui.infra.guard import GuardedJournal, ThreadGuard
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.memory.entry import HISTORY_HEADERS, history_cells
from proctor.gui.memory.model import ConflictsModel, EntriesModel
from proctor.gui.memory.scopes import SCOPE_ROLE, key_of
from proctor.gui.widgets.dialogs import ReasonDialog

from ..conftest import WAIT_MS, wait_presented
from .test_memory_flow import open_conflict, open_entry

LEFT = Qt.MouseButton.LeftButton


def fill(path) -> dict[str, str]:
    ids: dict[str, str] = {}
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        for n in range(3):
            e = a.memory.add(
                "project",
                "shop",
                f"Rule {n}",
                f"rule {n} local text " * 20,
                kind="constraint" if n == 0 else "fact",
                priority=n,
            )
            ids[f"e{n}"] = e.id
            ids[f"c{n}"] = a.memory.record_conflict(
                e.id, f"rule {n} incoming", incoming_source="sync from laptop"
            ).id
        ids["user"] = a.memory.add("user", "bob", "Tea", "no sugar", kind="preference").id
        # this entry moves on after its conflict was recorded: bulk "take incoming" skips it
        e2 = a.memory.get(ids["e2"])
        a.memory.replace(e2.id, "rule 2 edited later", expected_version=e2.version)
    return ids


def status(path, item_id: str) -> str:
    with Journal.open(path, read_only=True) as j:
        return j.memory.conflict(item_id).status.value


def loaded(qtbot, model) -> None:
    qtbot.waitUntil(lambda: model.has_loaded and not model.is_loading(), timeout=WAIT_MS)


def test_scope_tree_counts_tokens_and_filters(qtbot, journal_path, open_desk, settings):
    ids = fill(journal_path)
    settings.q.setValue(TOKEN_LIMIT_KEY, 100)
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    tree = page.tree
    qtbot.waitUntil(lambda: tree.usage_of(MemoryScope.PROJECT, "shop") is not None, timeout=WAIT_MS)
    index = tree._find(key_of(MemoryScope.PROJECT, "shop"))
    row = [index.siblingAtColumn(c) for c in range(3)]
    assert row[0].data().startswith("shop") and "⚠3" in row[0].data()
    assert row[1].data() == "3"
    usage = tree.usage_of(MemoryScope.PROJECT, "shop")
    assert usage.tokens > 100 and row[2].data().endswith("/ 100")
    assert "over the budget" in row[2].data(Qt.ItemDataRole.ToolTipRole)
    tree.choose(MemoryScope.USER, "bob")
    qtbot.waitUntil(lambda: [e.id for e in page.model.items()] == [ids["user"]], timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: page.conflicts.has_loaded and page.conflicts.rowCount() == 0, timeout=WAIT_MS
    )
    tree.choose(None, None)
    qtbot.waitUntil(
        lambda: page.model.rowCount() == 4 and page.conflicts.rowCount() == 3, timeout=WAIT_MS
    )
    page.kind.setCurrentIndex(page.kind.findData("constraint"))
    qtbot.waitUntil(lambda: [e.id for e in page.model.items()] == [ids["e0"]], timeout=WAIT_MS)
    page.kind.setCurrentIndex(0)
    page.sort.setCurrentIndex(page.sort.findText("Highest priority"))
    qtbot.waitUntil(
        lambda: [e.priority for e in page.model.items()] == [2, 1, 0, 0], timeout=WAIT_MS
    )
    page.search.setText("NO SUGAR")
    qtbot.waitUntil(lambda: [e.id for e in page.model.items()] == [ids["user"]], timeout=WAIT_MS)
    assert tree.model_.index(0, 0).data(SCOPE_ROLE) == ""


def all_conflicts_selected(qtbot, window, count: int):
    """The Memory page with its ``count`` pending conflicts all selected (the bulk panel)."""
    window.go("memory")
    page = window.memory
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == count, timeout=WAIT_MS)
    page.conflicts_table.setFocus()
    page.conflicts_table.selectAll()
    qtbot.waitUntil(lambda: page.right.currentWidget() is page.bulk)
    return page


def press_bulk(qtbot, page, choice: str) -> None:
    qtbot.mouseClick(
        page.bulk.buttons[next(c for c in page.bulk.buttons if c.value == choice)], LEFT
    )


def test_bulk_take_incoming_confirms_the_count(qtbot, journal_path, open_desk, monkeypatch):
    ids = fill(journal_path)
    page = all_conflicts_selected(qtbot, open_desk(journal_path), 3)
    assert page.bulk.title.text() == "3 conflicts selected"
    asked: list[tuple] = []

    def ask(cls, parent, title, prompt, **kw):
        asked.append((title, prompt))
        return "the laptop copy is the newest"

    monkeypatch.setattr(ReasonDialog, "ask", classmethod(ask))
    press_bulk(qtbot, page, "accepted_incoming")
    assert asked and asked[0][0] == "Take incoming for 3 conflicts"
    assert "these 3 conflicts" in asked[0][1]
    qtbot.waitUntil(lambda: "for 2 of 3 conflicts" in page.message.text(), timeout=WAIT_MS)
    assert "1 refused" in page.message.text() and "Rule 2" in page.message.text()
    assert [status(journal_path, ids[f"c{n}"]) for n in range(3)] == [
        "accepted_incoming",
        "accepted_incoming",
        "pending",
    ]
    with Journal.open(journal_path, read_only=True) as j:
        assert j.memory.get(ids["e0"]).content == "rule 0 incoming"
        assert j.memory.get(ids["e2"]).content == "rule 2 edited later"
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 1, timeout=WAIT_MS)


def test_bulk_cancelled_resolves_nothing(qtbot, journal_path, open_desk, monkeypatch):
    ids = fill(journal_path)
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 3, timeout=WAIT_MS)
    page.conflicts_table.selectAll()
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: None))
    for button in page.bulk.buttons.values():
        qtbot.mouseClick(button, LEFT)
    assert [status(journal_path, ids[f"c{n}"]) for n in range(3)] == ["pending"] * 3


def open_in_inbox(qtbot, window, conflict_id: str):
    """The Inbox's detail of memory conflict ``conflict_id``, loaded."""
    key = f"conflict:{conflict_id}"
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(key))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.id == conflict_id
        ),
        timeout=WAIT_MS,
    )
    wait_presented(qtbot)
    return pane.current()


def test_inbox_conflict_detail_keeps_local(qtbot, journal_path, open_desk):
    ids = fill(journal_path)
    window = open_desk(journal_path)
    conflict = open_in_inbox(qtbot, window, ids["c0"])
    assert conflict.local.text().startswith("rule 0 local text")
    assert conflict.incoming.text() == "rule 0 incoming"
    fields = {
        conflict.review.fields.index(r, 0).data(): conflict.review.fields.index(r, 1).data()
        for r in range(conflict.review.fields.rowCount())
    }
    assert fields["Kind"] == "constraint" and fields["Priority"] == "0"
    qtbot.mouseClick(conflict.review.keep_button, LEFT)  # no reason yet: refused inline
    assert "reason" in conflict.review.notice.text()
    qtbot.keyClicks(conflict.review.reason, "local is correct")
    qtbot.mouseClick(conflict.review.keep_button, LEFT)
    qtbot.waitUntil(lambda: window.inbox.model.row_of(f"conflict:{ids['c0']}") < 0, timeout=WAIT_MS)
    assert status(journal_path, ids["c0"]) == "accepted_local"
    with Journal.open(journal_path, read_only=True) as j:
        assert j.memory.get(ids["e0"]).version == 1  # keeping local writes no new version


def test_keyboard_reaches_the_review_and_mnemonics_resolve(qtbot, journal_path, open_desk):
    ids = fill(journal_path)
    window = open_desk(journal_path)
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)  # go.memory
    page = window.memory
    assert window.current_page_id() == "memory"
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 3, timeout=WAIT_MS)
    page.focus_conflicts()
    qtbot.waitUntil(lambda: page.review.data is not None, timeout=WAIT_MS)
    wait_presented(qtbot)  # Take and Merge wait for the diff to be shown
    review = page.review
    seen = set()
    for _ in range(60):
        focus = QApplication.focusWidget()
        seen.add(focus)
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
    assert {
        review.reason,
        review.keep_button,
        review.take_button,
        page.table,
        page.conflicts_table,
        page.tree,
        page.search,
    } <= seen
    page.focus_conflicts()  # the detail follows the focused list: back to the conflict
    qtbot.waitUntil(lambda: page.right.currentWidget() is page.conflict_pane)
    item_id = review.data.item.id
    review.reason.setFocus()
    qtbot.keyClicks(review.reason, "dismissed from the keyboard")
    qtbot.keyClick(review.reason, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: status(journal_path, item_id) == "dismissed", timeout=WAIT_MS)
    assert item_id in {ids["c0"], ids["c1"], ids["c2"]}


def test_memory_models_pass_the_model_tester(qtbot, qtmodeltester, journal_path):
    ids = fill(journal_path)
    runner = TaskRunner()
    journal = GuardedJournal(
        Journal.open(journal_path, actor=Actor.operator("alice")), ThreadGuard(strict=True)
    )
    entries, conflicts = EntriesModel(runner, RevealState()), ConflictsModel(runner)
    for model, show in (
        (entries, lambda: entries.show(journal, entries.query)),
        (conflicts, lambda: conflicts.show(journal)),
    ):
        qtmodeltester.check(model)
        show()
        loaded(qtbot, model)
        assert model.rowCount() > 0
        model.refresh()
        loaded(qtbot, model)
        qtmodeltester.check(model)
    history = RowsModel(HISTORY_HEADERS, history_cells)
    qtmodeltester.check(history)
    history.set_rows(journal.unguarded.memory.history(ids["e2"]))
    assert history.rowCount() == 2
    qtmodeltester.check(history)
    runner.shutdown()
    journal.unguarded.close()


def test_read_only_desk_shows_but_never_writes(qtbot, journal_path, open_desk):
    ids = fill(journal_path)
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        secret = a.memory.add("user", "bob", "Bob's phone", "+1 555 0100", sensitivity="personal")
    window = open_desk(journal_path, read_only=True)
    window.go("memory")
    page = window.memory
    open_conflict(qtbot, page, ids["c0"])
    review = page.review
    assert not any(
        b.isEnabled()
        for b in (
            review.keep_button,
            review.take_button,
            review.merge_button,
            review.dismiss_button,
        )
    )
    assert not review.request(ConflictStatus.ACCEPTED_LOCAL)
    open_entry(qtbot, page, secret.id)
    detail = page.entry
    assert not detail.reveal_button.isEnabled()  # a reveal must be audited: not here
    assert not any(
        b.isEnabled()
        for b in (
            detail.edit_button,
            detail.pin_button,
            detail.confirm_button,
            detail.remove_button,
        )
    )
    assert "0100" not in detail.content.toPlainText()


def test_inbox_review_notices_the_entry_moving_on(qtbot, journal_path, open_desk):
    ids = fill(journal_path)
    window = open_desk(journal_path)
    review = open_in_inbox(qtbot, window, ids["c1"]).review
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        a.memory.replace(ids["e1"], "rule 1 rewritten", expected_version=1)
    qtbot.waitUntil(lambda: review.data.entry.version == 2, timeout=WAIT_MS)
    assert "version 1 → 2" in review.notice.text()
    assert review.local.text() == "rule 1 rewritten"


def test_source_and_change_runs_open_in_runs(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "learn things", agent="coder")
        entry = a.memory.add("project", "shop", "Port", "8080", run_id=run.id)
        a.memory.replace(entry.id, "8443", expected_version=1, run_id=run.id)
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    detail = page.entry
    assert detail.history_view.selectionModel().selectedRows()[0].row() == 1  # newest
    assert detail.change_run_button.isVisible()
    qtbot.mouseClick(detail.change_run_button, LEFT)
    assert window.current_page_id() == "runs"
    window.go("memory")
    qtbot.mouseClick(detail.run_button, LEFT)
    assert window.current_page_id() == "runs"
    qtbot.waitUntil(lambda: window.runs.detail.title.text() == "learn things", timeout=WAIT_MS)


def test_bulk_take_incoming_refuses_what_is_hidden(qtbot, journal_path, open_desk, monkeypatch):
    """Bulk "take incoming" never applies a version nobody has seen: a conflict whose entry
    or incoming version is sensitive (hidden until an audited reveal) is refused and stays
    pending for its own review; the others are taken."""
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        plain = a.memory.add("project", "shop", "Deploy day", "Tuesday")
        secret = a.memory.add(
            "project", "shop", "Card on file", "ends 4242", sensitivity="personal"
        )
        claims = a.memory.add("project", "shop", "Home address", "unknown")
        ids = {
            name: a.memory.record_conflict(
                e.id, f"{name} incoming", incoming_source="sync", **kw
            ).id
            for name, e, kw in (
                ("plain", plain, {}),
                ("secret", secret, {}),
                ("claims", claims, {"incoming_sensitivity": "personal"}),
            )
        }
    page = all_conflicts_selected(qtbot, open_desk(journal_path), 3)
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "sync is newer"))
    press_bulk(qtbot, page, "accepted_incoming")
    qtbot.waitUntil(lambda: "for 1 of 3 conflicts" in page.message.text(), timeout=WAIT_MS)
    assert "2 refused" in page.message.text() and "sensitive" in page.message.text()
    with Journal.open(journal_path, read_only=True) as j:
        status_of = {k: j.memory.conflict(v).status.value for k, v in ids.items()}
        assert j.memory.get(secret.id).content == "ends 4242"
    assert status_of == {"plain": "accepted_incoming", "secret": "pending", "claims": "pending"}


def test_a_slow_conflict_read_never_lets_the_last_conflict_take_the_next_ones_reason(
    qtbot, journal_path, open_desk, monkeypatch
):
    """Conflict c1 asked for, its read not back yet: the review still shows c0, and
    "Keep local" must not resolve c0 with the reason typed for c1."""
    import threading

    ids = fill(journal_path)
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 3, timeout=WAIT_MS)
    page.show_detail("conflict", ids["c0"])
    qtbot.waitUntil(
        lambda: page.review.data is not None and page.review.data.item.id == ids["c0"],
        timeout=WAIT_MS,
    )
    wait_presented(qtbot)
    service = page.journal.memory._service
    real, gate = service.conflict, threading.Event()

    def slow(item_id):
        if item_id == ids["c1"]:
            gate.wait(WAIT_MS / 1000)
        return real(item_id)

    monkeypatch.setattr(service, "conflict", slow)
    try:
        page.show_detail("conflict", ids["c1"])
        assert page.review.data.item.id == ids["c0"]
        page.review.reason.setPlainText("keep local for rule 1")
        assert not page.review.can(ConflictStatus.ACCEPTED_LOCAL)
        assert not window.registry.trigger("memory.keep")
        assert not page.review.request(ConflictStatus.ACCEPTED_LOCAL)
    finally:
        gate.set()
    qtbot.waitUntil(lambda: page.review.data.item.id == ids["c1"], timeout=WAIT_MS)
    assert page.review.can(ConflictStatus.ACCEPTED_LOCAL)
    assert status(journal_path, ids["c0"]) == "pending"


def test_bulk_decides_only_the_conflicts_it_lists(qtbot, journal_path, open_desk, monkeypatch):
    """More selected than the panel lists: "Keep local" applies to the listed ones; the one
    the person was never shown stays pending."""
    from proctor.gui.memory import bulk

    monkeypatch.setattr(bulk, "SHOWN", 2)
    ids = fill(journal_path)
    page = all_conflicts_selected(qtbot, open_desk(journal_path), 3)
    listed = [c.id for c in page.bulk.items]
    assert len(listed) == 2
    assert page.bulk.title.text() == "2 shown of 3 selected; the rest stay pending"
    assert "more" not in page.bulk.listing.text()
    asked: list[tuple] = []

    def ask(cls, parent, title, prompt, **kw):
        asked.append((title, prompt))
        return "the local copies are right"

    monkeypatch.setattr(ReasonDialog, "ask", classmethod(ask))
    press_bulk(qtbot, page, "accepted_local")
    assert asked and asked[0][0] == "Keep local for 2 conflicts"
    qtbot.waitUntil(lambda: "for 2 of 2 conflicts" in page.message.text(), timeout=WAIT_MS)
    statuses = {ids[f"c{n}"]: status(journal_path, ids[f"c{n}"]) for n in range(3)}
    assert sorted(statuses.values()) == ["accepted_local", "accepted_local", "pending"]
    assert all(statuses[i] == "accepted_local" for i in listed)
