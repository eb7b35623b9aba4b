"""Preferences: every setting survives a restart (QSettings in a temp ini file), the dialog
round-trips them, and applying them changes the running desk; the operator name is
recorded on decisions from the next open."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QPushButton

from proctor.core import Journal
from proctor.gui.infra.settings import POLL_RANGE_MS, DeskSettings
from proctor.gui.infra.theme import ThemeMode
from proctor.gui.infra.watcher import POLL_MS
from proctor.gui.shell import preferences
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.launch import start_journal
from proctor.gui.shell.preferences import PreferencesDialog, Prefs, prefs_from, save_prefs

from .conftest import WAIT_MS
from .driver import Desk

CHANGED = Prefs(
    theme="dark",
    single_keys=False,
    notifications=False,
    operator="carol",
    default_journal="/srv/agents/journal.db",
    poll_ms=1500,
)


def reopen_settings(tmp_path: Path) -> DeskSettings:
    """A fresh DeskSettings over the same file, as after a restart."""
    return DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))


def test_defaults_on_a_first_start(tmp_path):
    settings = reopen_settings(tmp_path)  # not the fixture's: it turns the undo window off
    assert prefs_from(settings) == Prefs("system", True, True, "", "", POLL_MS)


def test_every_preference_survives_a_restart(tmp_path, settings):
    save_prefs(settings, CHANGED)
    del settings
    assert prefs_from(reopen_settings(tmp_path)) == CHANGED


def test_bad_stored_values_fall_back_to_safe_ones(tmp_path, settings):
    settings.q.setValue("ui/theme", "neon")
    settings.q.setValue("journal/poll_ms", "soon")
    settings.sync()
    again = reopen_settings(tmp_path)
    assert again.theme == "system" and again.poll_ms == POLL_MS
    again.poll_ms = 5
    assert again.poll_ms == POLL_RANGE_MS[0]
    again.poll_ms = 10**9
    assert again.poll_ms == POLL_RANGE_MS[1]


def test_the_dialog_shows_and_returns_every_field(qtbot):
    dialog = PreferencesDialog(None, CHANGED)
    qtbot.addWidget(dialog)
    assert dialog.value() == CHANGED
    dialog.theme.setCurrentIndex(dialog.theme.findData("light"))
    dialog.single_keys.setChecked(True)
    dialog.operator.setText("  dana  ")
    dialog.default_journal.clear()
    dialog.poll_ms.setValue(200)
    assert dialog.value() == Prefs("light", True, False, "dana", "", 200)
    for widget in (
        dialog.theme,
        dialog.single_keys,
        dialog.notifications,
        dialog.operator,
        dialog.default_journal,
        dialog.poll_ms,
        dialog.browse,
    ):
        assert widget.accessibleName()


def test_choose_fills_the_default_journal(qtbot, monkeypatch):
    dialog = PreferencesDialog(None, Prefs("system", True, True))
    qtbot.addWidget(dialog)
    monkeypatch.setattr(
        preferences.OpenJournalDialog,
        "ask",
        classmethod(lambda cls, parent, start="": "/data/j.db"),
    )
    dialog.browse.click()
    assert dialog.value().default_journal == "/data/j.db"


class RecordingTheme:
    """Stands in for gui.theme.Theme (a real switch restyles every widget: seconds)."""

    def __init__(self) -> None:
        self.applied: list[ThemeMode] = []

    def apply(self, mode: ThemeMode) -> None:
        self.applied.append(ThemeMode(mode))


def test_applying_preferences_changes_the_running_desk(
    qtbot, populated, open_desk, settings, monkeypatch
):
    path, _ = populated
    window = open_desk(path)  # as alice
    window.services.theme = theme = RecordingTheme()
    monkeypatch.setattr(PreferencesDialog, "ask", classmethod(lambda cls, parent, p: CHANGED))
    assert window.registry.trigger("app.preferences")
    assert prefs_from(settings) == CHANGED
    assert theme.applied == [ThemeMode.DARK]
    assert window.services.watcher.poll_interval() == 1500
    assert window.registry.effective_shortcuts("inbox.approve") == ["Ctrl+Return"]
    assert not window.notifier.enabled
    # the name applies on the next open: the bar says so and offers to reopen now
    assert "recorded as alice" in window.notice.text()
    assert "carol" in window.notice.text()
    [button] = [b for b in window.notice.findChildren(QPushButton) if b.text() == "Reopen now"]
    with qtbot.waitSignal(window.open_requested) as reopened:
        button.click()
    assert reopened.args == [str(path)]


def test_a_cancelled_dialog_changes_nothing(populated, open_desk, settings, monkeypatch):
    path, _ = populated
    window = open_desk(path)
    before = prefs_from(settings)
    monkeypatch.setattr(PreferencesDialog, "ask", classmethod(lambda cls, parent, p: None))
    assert window.registry.trigger("app.preferences")
    assert prefs_from(settings) == before
    assert window.notice.text() == ""


def test_decisions_are_recorded_under_the_operator_name_from_preferences(
    qtbot, populated, settings
):
    path, ids = populated
    settings.operator = "carol"
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path)
        window = desk.window
        assert window.journal.actor.name == "carol"
        assert Desk(qtbot, window).decide(ids["approval"])
        with Journal.open(path, read_only=True) as j:
            qtbot.waitUntil(
                lambda: j.approvals.get(ids["approval"]).status == "approved", timeout=WAIT_MS
            )
            decisions = j.approvals.decisions(ids["approval"])
        assert [d.actor for d in decisions] == ["operator:carol"]
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def test_the_desk_starts_on_the_default_journal_else_the_most_recent(tmp_path, settings):
    assert start_journal(settings) is None
    recent, default = tmp_path / "recent.db", tmp_path / "default.db"
    Journal.open(recent).close()
    settings.add_recent(recent)
    settings.add_recent(tmp_path / "deleted.db")  # gone since: skipped
    assert start_journal(settings) == recent
    settings.default_journal = str(default)
    assert start_journal(settings) == recent  # not there (yet): the recent one
    Journal.open(default).close()
    assert start_journal(settings) == default


def test_confirm_preference_has_safe_defaults_and_survives_a_restart(tmp_path, settings, qtbot):
    from proctor.gui.infra.settings import DEFAULT_CONFIRM

    assert settings.confirm == DEFAULT_CONFIRM
    assert {
        "destructive",
        "financial",
        "external_side_effect",
        "near_expiry",
        "standing_rule",
    } <= DEFAULT_CONFIRM and "safe_read" not in DEFAULT_CONFIRM
    dialog = PreferencesDialog(None, prefs_from(settings))
    qtbot.addWidget(dialog)
    dialog.confirm_checks["destructive"].setChecked(False)
    dialog.confirm_checks["safe_read"].setChecked(True)
    save_prefs(settings, dialog.value())
    again = reopen_settings(tmp_path)
    assert "destructive" not in again.confirm and "safe_read" in again.confirm
    for check in dialog.confirm_checks.values():
        check.setChecked(False)
    save_prefs(again, dialog.value())
    assert reopen_settings(tmp_path).confirm == frozenset()  # none is a choice too
