"""The memory token budget per scope is a preference: the dialog shows it, it survives a
restart, a bad stored value falls back, and applying it re-measures the scope tree."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from proctor.core import Actor, Journal
from proctor.core.models import MemoryScope
from proctor.gui.infra.settings import DEFAULT_TOKEN_LIMIT, TOKEN_LIMIT_KEY, DeskSettings
from proctor.gui.memory.scopes import key_of
from proctor.gui.shell.preferences import PreferencesDialog, Prefs, prefs_from, save_prefs

from ..conftest import WAIT_MS


def reopen(tmp_path: Path) -> DeskSettings:
    return DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))


def test_the_budget_is_a_preference_that_survives_a_restart(qtbot, tmp_path, settings):
    assert prefs_from(settings).memory_tokens == DEFAULT_TOKEN_LIMIT
    dialog = PreferencesDialog(None, prefs_from(settings))
    qtbot.addWidget(dialog)
    assert dialog.memory_tokens.accessibleName() == "Memory token budget per scope"
    dialog.memory_tokens.setValue(20_000)
    save_prefs(settings, dialog.value())
    assert reopen(tmp_path).memory_token_limit == 20_000
    settings.q.setValue(TOKEN_LIMIT_KEY, "lots")
    assert settings.memory_token_limit == DEFAULT_TOKEN_LIMIT
    settings.q.setValue(TOKEN_LIMIT_KEY, 0)
    assert settings.memory_token_limit == DEFAULT_TOKEN_LIMIT


def test_applying_a_budget_re_measures_the_scope_tree(qtbot, journal_path, open_desk, settings):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        a.memory.add("project", "shop", "Style", "Four spaces, no tabs, " * 40)
    window = open_desk(journal_path)
    window.go("memory")
    tree = window.memory.tree

    def budget_text() -> str:
        index = tree._find(key_of(MemoryScope.PROJECT, "shop"))
        return index.siblingAtColumn(2).data() if index is not None and index.isValid() else ""

    qtbot.waitUntil(lambda: tree.usage_of(MemoryScope.PROJECT, "shop") is not None, timeout=WAIT_MS)
    assert budget_text().endswith("/ 8.0k")
    window.apply_preferences(Prefs("system", True, True, memory_tokens=100))
    qtbot.waitUntil(lambda: budget_text().endswith("/ 100"), timeout=WAIT_MS)
    assert settings.memory_token_limit == 100 and window.memory.limit == 100
