"""The window around the inbox: actions, keyboard, pages, status, read-only, live refresh,
notifications, accessibility, the GUI-thread guard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from proctor.core import Actor, EffectStatus, Journal
from proctor.gui.decide.decider import Decider
from proctor.gui.infra.guard import GuiThreadStoreCall
from proctor.gui.shell.preferences import Prefs
from proctor.gui.widgets.palette import CommandPalette, ShortcutHelp

from .conftest import WAIT_MS
from .data import agent, request
from .driver import Desk


def select_key(qtbot, window, key: str) -> None:
    Desk(qtbot, window).open_inbox_item(key, presented=True)


def key_on_table(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.waitUntil(window.isActiveWindow)
    window.inbox.table.setFocus()
    qtbot.keyClick(window.inbox.table, key, modifier)


# ---------------------------------------------------------------- actions and keyboard


def test_registry_has_no_duplicate_shortcuts_and_builds_every_menu(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    assert window.registry.duplicates() == {}
    in_menus = {
        a.objectName()
        for menu in window.menuBar().findChildren(type(window.recent_menu))
        for a in menu.actions()
    }
    for spec in window.registry.specs():
        assert spec.id in in_menus, spec.id
    help_dialog = ShortcutHelp(window.registry, window)
    qtbot.addWidget(help_dialog)
    rows = {
        help_dialog.model.index(r, 0).data(): help_dialog.model.index(r, 2).data()
        for r in range(help_dialog.model.rowCount())
    }
    assert rows["Approve"] == "A or Ctrl+Return"
    assert rows["Command palette…"] == "Ctrl+K"


def test_command_palette_runs_an_action(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    key_on_table(qtbot, window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.findChild(CommandPalette)
    assert palette is not None
    qtbot.waitUntil(palette.isActiveWindow)
    qtbot.keyClicks(palette.search, "snoozed items")
    assert palette.model.rowCount() == 1
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert window.inbox.filters.snoozed.isChecked()


def test_question_mark_opens_shortcut_help(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    key_on_table(qtbot, window, Qt.Key.Key_Question)
    assert window.findChild(ShortcutHelp) is not None


def test_j_k_move_and_slash_searches(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    inbox = window.inbox
    qtbot.waitUntil(lambda: inbox.current_item() is not None)
    assert inbox.table.currentIndex().row() == 0
    key_on_table(qtbot, window, Qt.Key.Key_J)
    key_on_table(qtbot, window, Qt.Key.Key_J)
    key_on_table(qtbot, window, Qt.Key.Key_K)
    assert inbox.table.currentIndex().row() == 1
    key_on_table(qtbot, window, Qt.Key.Key_Slash)
    assert inbox.filters.search.hasFocus()


def test_single_keys_do_not_fire_while_typing(qtbot, populated, open_desk, monkeypatch):
    path, _ = populated
    window = open_desk(path)
    calls = []
    monkeypatch.setattr(Decider, "approve", lambda self, *a, **k: calls.append(a))
    search = window.inbox.filters.search
    search.setFocus()
    qtbot.keyClicks(search, "ajks")
    assert search.text() == "ajks" and calls == []


def test_single_keys_can_be_switched_off(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    window.apply_preferences(Prefs("system", single_keys=False, notifications=True))
    qtbot.waitUntil(lambda: window.inbox.current_item() is not None)
    key_on_table(qtbot, window, Qt.Key.Key_J)
    assert window.inbox.table.currentIndex().row() == 0
    key_on_table(qtbot, window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page_id() == "runs"
    assert window.settings.single_keys is False


def test_enter_opens_the_item_and_escape_returns(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    select_key(qtbot, window, f"approval:{ids['approval']}")
    key_on_table(qtbot, window, Qt.Key.Key_Return)
    reason = window.inbox.detail.current().reason
    assert reason.hasFocus()
    qtbot.keyClick(reason, Qt.Key.Key_Escape)
    assert window.inbox.table.hasFocus()


# ---------------------------------------------------------------- deciding in the window


def test_own_decision_moves_to_the_next_item(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    key = f"approval:{ids['approval']}"
    select_key(qtbot, window, key)
    row = window.inbox.model.row_of(key)
    key_on_table(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.inbox.model.row_of(key) < 0, timeout=WAIT_MS)
    assert window.inbox.pinned is None
    current = window.inbox.current_item()
    assert current is not None and window.inbox.table.currentIndex().row() == min(
        row, window.inbox.model.rowCount() - 1
    )
    assert window.inbox.detail.current_item().id == current.id


def test_a_quick_run_of_decisions_is_told_in_one_line_that_is_not_cut(qtbot, populated, open_desk):
    """Five approvals decided one after another within seconds: the banner names the
    newest and counts the rest ("also 4 approved"), never five names in a row."""
    path, ids = populated
    with agent(path, "coder") as a:
        keys = [
            "approval:" + request(a, ids["run"], f"fs.write{n}", {"path": f"f{n}"}, "tidy")
            for n in range(5)
        ]
    window = open_desk(path)
    for n, key in enumerate(keys):
        select_key(qtbot, window, key)
        key_on_table(qtbot, window, Qt.Key.Key_A)
        qtbot.waitUntil(lambda key=key: window.inbox.model.row_of(key) < 0, timeout=WAIT_MS)
        told = window.inbox.message.text()
        assert f"Approved fs.write{n}" in told, told
    assert told.count("fs.write") == 1 and "also 4 approved" in told, told


def test_inbox_keys_do_nothing_on_another_page(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    key = f"approval:{ids['approval']}"
    select_key(qtbot, window, key)
    window.go("memory")
    qtbot.waitUntil(lambda: not window.inbox.isVisible())
    focus = QApplication.focusWidget() or window
    for k in (Qt.Key.Key_A, Qt.Key.Key_X):  # d/s would open a dialog if the bug came back
        qtbot.keyClick(focus, k)
    assert not window.registry.action("inbox.approve").isEnabled()
    with Journal.open(path, actor=Actor.operator("check")) as j:
        assert j.approvals.get(ids["approval"]).status == "pending"


def test_scope_run_creates_a_rule(qtbot, populated, open_desk, monkeypatch):
    """Issue 19: the rule is shown (its draft loaded) and confirmed before it is made."""
    from proctor.gui.decide.rule_draft import RuleConfirmDialog

    path, ids = populated
    window = open_desk(path)
    select_key(qtbot, window, f"approval:{ids['approval']}")
    detail = window.inbox.detail.current()
    detail.scopes.button(1).click()
    qtbot.waitUntil(lambda: detail.rule_panel.base is not None, timeout=WAIT_MS)
    confirmed = []
    monkeypatch.setattr(
        RuleConfirmDialog, "ask", classmethod(lambda cls, *a: confirmed.append(a) or True)
    )
    key_on_table(qtbot, window, Qt.Key.Key_A)
    assert len(confirmed) == 1
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{ids['approval']}") < 0, timeout=WAIT_MS
    )
    with Journal.open(path) as j:
        approval = j.approvals.get(ids["approval"])
        assert approval.decision_scope.value == "run" and approval.rule_id
        assert j.approvals.rule(approval.rule_id).run_id == ids["run"]


def test_resolve_an_ambiguous_effect(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    key = f"effect:{ids['effect']}"
    select_key(qtbot, window, key)
    detail = window.inbox.detail.current()
    qtbot.keyClicks(detail.reason, "the mail server log shows it was delivered")
    qtbot.keyClicks(detail.external, "msg-991")
    assert window.registry.trigger("inbox.effect_committed")
    qtbot.waitUntil(lambda: window.inbox.model.row_of(key) < 0, timeout=WAIT_MS)
    with Journal.open(path) as j:
        effect = j.effects.get(ids["effect"])
    assert effect.status == EffectStatus.COMMITTED
    assert effect.resolved_by == "operator:alice"


def test_other_kinds_show_their_details(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    select_key(qtbot, window, f"question:{ids['question']}")
    assert "currency" in window.inbox.detail.current().prompt.text()
    assert not window.registry.action("inbox.approve").isEnabled()
    select_key(qtbot, window, f"conflict:{ids['conflict']}")
    detail = window.inbox.detail.current()
    assert detail.local.text() == "db1.internal" and detail.incoming.text() == "db2.internal"


def test_open_run_from_an_approval(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    select_key(qtbot, window, f"approval:{ids['approval']}")
    qtbot.mouseClick(window.inbox.detail.current().run_button, Qt.MouseButton.LeftButton)
    assert window.current_page_id() == "runs"
    runs = window.runs
    qtbot.waitUntil(
        lambda: runs.detail.title.text() == "Fix checkout rounding bug", timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: runs.detail.events.rowCount() > 30, timeout=WAIT_MS)


def test_read_only_desk_watches_but_does_not_decide(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path, read_only=True)
    select_key(qtbot, window, f"approval:{ids['approval']}")
    assert not window.registry.action("inbox.approve").isEnabled()
    assert not window.registry.action("inbox.snooze").isEnabled()
    assert window.status.state.text() == "store: read-only"
    assert "(read-only)" in window.windowTitle()


# ---------------------------------------------------------------- live refresh


def test_pages_refresh_live_and_badges_follow(qtbot, populated, open_desk):
    path, _ids = populated
    window = open_desk(path)
    qtbot.waitUntil(lambda: window.sidebar_model.count("inbox") == 6, timeout=WAIT_MS)
    window.go("runs")
    qtbot.waitUntil(lambda: window.runs.model.rowCount() == 2, timeout=WAIT_MS)
    with agent(path, "newbie") as a:
        run = a.runs.start("webshop", "Brand new run", agent="newbie")
        request(a, run.id, "noop", {}, "just checking")
    qtbot.waitUntil(lambda: window.runs.model.row_of(run.id) >= 0, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.sidebar_model.count("inbox") == 7, timeout=WAIT_MS)
    assert window.status.last_change.text() != "last change: —"


def test_poll_finds_changes_when_the_file_watcher_misses_them(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    watcher.poll_only()  # as on a platform where -wal cannot be watched
    # settled: the poll has its baseline and the read it started (the first one) is over,
    # so from here on only a poll can move the watcher past ``seen``
    qtbot.waitUntil(lambda: watcher.has_baseline() and not watcher.reading(), timeout=WAIT_MS)
    seen, wal = watcher.last_seq, watcher.wakeups["wal"]
    with agent(path, "coder") as a:
        approval_id = request(a, ids["run"], "poll_me", {}, "found by polling")
    qtbot.waitUntil(lambda: watcher.last_seq > seen, timeout=WAIT_MS)
    assert watcher.wakeups["poll"] >= 1 and watcher.wakeups["wal"] == wal
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") >= 0, timeout=WAIT_MS
    )


def put_in_background(qtbot, window) -> None:
    """Another window takes the focus: the desk is not the active window any more."""
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow(), timeout=WAIT_MS)


def test_banner_when_a_request_arrives_in_the_background(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    put_in_background(qtbot, window)
    with (
        qtbot.waitSignal(window.notifier.notified, timeout=WAIT_MS) as blocker,
        agent(path, "coder") as a,
    ):
        request(a, ids["run"], "deploy", {"to": "prod"}, "release 4.2")
    assert blocker.args[0] == "banner"
    assert "deploy: release 4.2" in window.banner.text()


def test_the_banner_goes_once_what_it_announced_waits_no_more(qtbot, populated, open_desk):
    """Decided elsewhere (the CLI, another desk): "New request waiting" would announce what
    nobody waits for any more."""
    path, ids = populated
    window = open_desk(path)
    put_in_background(qtbot, window)
    with (
        qtbot.waitSignal(window.notifier.notified, timeout=WAIT_MS),
        agent(path, "coder") as a,
    ):
        approval_id = request(a, ids["run"], "deploy", {"to": "prod"}, "release 4.2")
    assert window.banner.isVisible()
    with Journal.open(path, actor=Actor.operator("bob")) as op:
        op.approvals.decide(approval_id, False, expected_version=1, reason="no")
    qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=WAIT_MS)


# ---------------------------------------------------------------- guard, a11y, theme


def test_store_calls_on_the_gui_thread_are_refused(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path)
    with pytest.raises(GuiThreadStoreCall):
        window.journal.inbox.list()
    assert window.services.guard.violations == ["journal.inbox.list"]
    window.services.guard.violations.clear()


def interactive(window: QWidget) -> list[QWidget]:
    kinds = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QPlainTextEdit)
    return [
        w
        for w in window.findChildren(QWidget)
        if isinstance(w, kinds) and w.isVisible() and w.focusPolicy() != Qt.FocusPolicy.NoFocus
    ]


def accessible_name(widget: QWidget) -> str:
    iface = QAccessible.queryAccessibleInterface(widget)
    return iface.text(QAccessible.Text.Name) if iface else ""


def test_every_interactive_widget_has_an_accessible_name(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    for key in (f"approval:{ids['approval']}", f"effect:{ids['effect']}"):
        select_key(qtbot, window, key)
        nameless = [type(w).__name__ for w in interactive(window) if not accessible_name(w)]
        assert nameless == []
    for page in ("runs", "memory", "effects", "audit"):
        window.go(page)
        nameless = [type(w).__name__ for w in interactive(window) if not accessible_name(w)]
        assert nameless == [], page


def test_tab_reaches_the_decision_form(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    select_key(qtbot, window, f"approval:{ids['approval']}")
    qtbot.waitUntil(window.isActiveWindow)
    window.inbox.table.setFocus()
    detail = window.inbox.detail.current()
    wanted = {detail.reason, detail.approve_button, window.inbox.filters.search, window.sidebar}
    seen = set()
    for _ in range(80):
        focus = QApplication.focusWidget()
        seen.add(focus)
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
    assert wanted <= seen


def test_dark_and_light_palettes(qtbot, populated, open_desk):
    from proctor.gui.infra.theme import Theme, ThemeMode

    path, _ = populated
    window = open_desk(path)
    theme = Theme(QApplication.instance(), ThemeMode.DARK)
    try:
        assert QApplication.palette().base().color().lightness() < 80
        window.grab()
    finally:
        theme.apply(ThemeMode.LIGHT)
    assert QApplication.palette().base().color().lightness() > 200


def test_window_state_and_recent_journals_are_remembered(qtbot, populated, open_desk, settings):
    path, _ = populated
    window = open_desk(path)
    window.resize(1000, 700)
    window.close()
    assert settings.state("geometry") is not None
    settings.add_recent(path)
    settings.add_recent("/tmp/other.db")
    settings.add_recent(path)
    assert settings.recent() == [str(path), "/tmp/other.db"]


def test_status_bar_names_journal_schema_operator(qtbot, populated, open_desk):
    path, _ = populated
    window = open_desk(path, operator="carol")
    status = window.status
    assert status.path.text() == str(path)
    assert status.schema.text().startswith("schema ")
    assert status.operator.text() == "operator: carol"
    assert status.state.text() == "store: ok"


def test_second_operator_cannot_approve_own_agent_request(qtbot, populated, open_desk):
    """An operator named like the requesting agent is refused (core rule), shown inline."""
    path, ids = populated
    window = open_desk(path, operator="coder")
    select_key(qtbot, window, f"approval:{ids['approval']}")
    key_on_table(qtbot, window, Qt.Key.Key_A)
    detail = window.inbox.detail.current()
    qtbot.waitUntil(lambda: "cannot approve" in detail.message.text(), timeout=WAIT_MS)
    assert Actor.operator("coder").name == "coder"


def test_clicking_age_switches_newest_and_oldest_first(qtbot, populated, open_desk):
    from proctor.gui.inbox.model import COL_AGE, COL_SUMMARY

    path, _ids = populated
    window = open_desk(path)
    inbox = window.inbox
    header = inbox.table.horizontalHeader()
    first = inbox.model.item(0).id
    x = header.sectionViewportPosition(COL_AGE) + 5
    qtbot.mouseClick(
        header.viewport(),
        Qt.MouseButton.LeftButton,
        pos=header.viewport().rect().topLeft() + QPoint(x, 5),
    )
    assert inbox.filters.sort.currentData() is False
    qtbot.waitUntil(
        lambda: inbox.model.has_loaded and inbox.model.item(0).id != first, timeout=WAIT_MS
    )
    assert inbox.model.item(inbox.model.rowCount() - 1).id == first
    x = header.sectionViewportPosition(COL_SUMMARY) + 5
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert header.sortIndicatorSection() == COL_AGE  # only Age sorts
    assert inbox.filters.sort.currentData() is False


def test_preferences_and_file_open_go_through_their_dialogs(
    qtbot, populated, open_desk, monkeypatch, tmp_path
):
    from proctor.gui.shell.preferences import PreferencesDialog
    from proctor.gui.widgets.dialogs import OpenJournalDialog

    path, _ = populated
    window = open_desk(path)
    monkeypatch.setattr(
        PreferencesDialog,
        "ask",
        lambda parent, prefs: Prefs("dark", single_keys=True, notifications=False),
    )
    assert window.registry.trigger("app.preferences")
    assert window.settings.theme == "dark" and window.settings.notifications is False
    assert window.notifier.enabled is False
    other = str(tmp_path / "other.db")
    monkeypatch.setattr(OpenJournalDialog, "ask", lambda parent, start="", settings=None: other)
    with qtbot.waitSignal(window.open_requested) as blocker:
        assert window.registry.trigger("app.open")
    assert blocker.args == [other]


def test_a_read_before_the_commit_is_visible_is_followed_up(
    qtbot, populated, open_desk, monkeypatch
):
    """WAL frames are written (file event) before readers see the commit: the watcher
    re-reads shortly after instead of waiting for the next write or the poll."""
    from proctor.core.models import ChangeSet

    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    watcher.pause()  # no file events, no poll: only the follow-ups can find the change
    Desk(qtbot, window).watcher_settled()
    changes = window.journal.changes
    real_since = changes.since
    early = []

    def not_yet_visible(seq, limit=5000, **looks):
        if not early:
            early.append(seq)
            return ChangeSet(since=seq, until=seq, changes=[])
        return real_since(seq, limit=limit, **looks)

    monkeypatch.setattr(changes, "since", not_yet_visible, raising=False)
    with agent(path, "coder") as a:
        approval_id = request(a, ids["run"], "late", {}, "seen by a follow-up")
    watcher.wal_written()
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") >= 0, timeout=WAIT_MS
    )
    assert early and watcher.wakeups["follow_up"] >= 1


def test_a_request_the_inbox_filter_hides_is_still_news(qtbot, populated, open_desk):
    path, ids = populated
    window = open_desk(path)
    filters = window.inbox.filters
    filters.kind.setCurrentIndex(filters.kind.findText("Questions"))  # approvals hidden
    qtbot.waitUntil(
        lambda: (
            window.inbox.model.has_loaded
            and all(
                window.inbox.model.item(r).kind.value == "question"
                for r in range(window.inbox.model.rowCount())
            )
        ),
        timeout=WAIT_MS,
    )
    put_in_background(qtbot, window)
    with (
        qtbot.waitSignal(window.notifier.notified, timeout=WAIT_MS) as blocker,
        agent(path, "coder") as a,
    ):
        request(a, ids["run"], "deploy", {"to": "prod"}, "release 4.3")
    assert "deploy: release 4.3" in blocker.args[1]
    assert window.inbox.model.row_of(f"approval:{ids['approval']}") < 0  # still filtered


def test_a_commit_not_visible_yet_is_retried_often_while_fresh(
    qtbot, populated, open_desk, monkeypatch
):
    """The commit becomes visible when the agent's fsync returns, a few to tens of ms
    after its frames' file event: the follow-ups are never more than FOLLOW_UP_STEP_MS
    apart for the first FOLLOW_UP_FINE_MS, and go on for a while after (a commit seen late
    by a whole step was the request → painted p95). Here it stays hidden for 8 reads."""
    from proctor.core.models import ChangeSet
    from proctor.gui.infra import watcher as watcher_mod

    path, ids = populated
    window = open_desk(path)
    watcher = window.services.watcher
    watcher.pause()  # no file events, no poll: only the follow-ups can find the change
    Desk(qtbot, window).watcher_settled()
    changes = window.journal.changes
    real_since = changes.since
    hidden = []

    def not_yet_visible(seq, limit=5000, **looks):
        if len(hidden) < 8:
            hidden.append(seq)
            return ChangeSet(since=seq, until=seq, changes=[])
        return real_since(seq, limit=limit, **looks)

    monkeypatch.setattr(changes, "since", not_yet_visible, raising=False)
    with agent(path, "coder") as a:
        approval_id = request(a, ids["run"], "late", {}, "seen by the 9th read")
    watcher.wal_written()
    schedule = list(watcher._follow_ups)  # the delays still to come, in order
    qtbot.waitUntil(
        lambda: window.inbox.model.row_of(f"approval:{approval_id}") >= 0, timeout=WAIT_MS
    )
    assert len(hidden) == 8 and watcher.wakeups["follow_up"] >= 8
    at, fresh = 0, []
    for delay in schedule:
        if at < watcher_mod.FOLLOW_UP_FINE_MS:
            fresh.append(delay)
        at += delay
    assert max(fresh) <= watcher_mod.FOLLOW_UP_STEP_MS <= 5, schedule
    assert at >= 150, schedule  # and it keeps looking past the fine part
