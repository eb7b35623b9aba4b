"""The launcher (`proctor-desk`, `python -m proctor.gui`): --version, a missing journal,
the first-start choice, and the desk opened offscreen with a screenshot (--smoke-test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from proctor.core.storage.db import SCHEMA_HEAD
from proctor.gui.shell import launch
from proctor.gui.shell.launch import WelcomeDialog


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        launch.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == "proctor 0.1.0"


def test_a_journal_that_is_not_there_is_refused(tmp_path, capsys):
    assert launch.main([str(tmp_path / "typo.db")]) == 3
    assert "no journal at" in capsys.readouterr().err
    assert not (tmp_path / "typo.db").exists()


def test_without_a_journal_the_desk_asks_and_a_cancel_ends_quietly(qapp, settings, monkeypatch):
    monkeypatch.setattr(launch, "DeskSettings", lambda: settings)
    monkeypatch.setattr(WelcomeDialog, "ask", classmethod(lambda cls, parent=None: None))
    monkeypatch.setattr("proctor.gui.shell.app.run_desk", lambda *a, **kw: pytest.fail("opened"))
    assert launch.main([]) == 0


def test_without_a_journal_the_remembered_one_opens(qapp, settings, journal_path, monkeypatch):
    settings.add_recent(journal_path)
    monkeypatch.setattr(launch, "DeskSettings", lambda: settings)
    opened = []
    monkeypatch.setattr(
        "proctor.gui.shell.app.run_desk", lambda path, **kw: opened.append(path) or 0
    )
    assert launch.main([]) == 0
    assert opened == [journal_path]


def test_the_welcome_dialog_opens_or_creates(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(
        launch.OpenJournalDialog, "ask", classmethod(lambda cls, parent, start="": "/data/j.db")
    )
    dialog = WelcomeDialog()
    qtbot.addWidget(dialog)
    dialog.open_button.click()
    assert dialog.choice == Path("/data/j.db") and dialog.result() == WelcomeDialog.Accepted
    target = tmp_path / "new" / "journal.db"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **kw: (str(target), ""))
    )
    dialog = WelcomeDialog()
    qtbot.addWidget(dialog)
    dialog.create_button.click()
    assert dialog.choice == target and target.parent.is_dir()


def test_smoke_test_opens_the_desk_offscreen_and_saves_a_screenshot(populated, tmp_path):
    path, _ = populated
    shot = tmp_path / "shot.png"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PROCTOR_LOG_DIR": str(tmp_path / "log"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "proctor.gui", str(path), "--smoke-test", str(shot)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("smoke-test: 6 inbox rows, icons ok")
    assert f"Journal schema {SCHEMA_HEAD}" in done.stdout and "unknown" not in done.stdout
    assert QImage(str(shot)).width() >= 900
    assert "desk started" in (tmp_path / "log" / "desk.log").read_text(encoding="utf-8")


def test_try_a_demo_builds_one_off_the_gui_thread(qtbot, tmp_path, monkeypatch):
    import threading

    from proctor.core import Journal

    threads = []

    def build(path, size="small", seed=0, progress=None):
        threads.append(threading.current_thread() is threading.main_thread())
        progress(1, 2, "")
        Journal.open(path).close()
        progress(2, 2, "")
        return {"runs": 2}

    monkeypatch.setattr("proctor.sim.demo.build_demo_journal", build)
    monkeypatch.setattr("proctor.cmd_desk.demo_folder", lambda base: tmp_path)
    dialog = WelcomeDialog()
    qtbot.addWidget(dialog)
    dialog.demo_button.click()
    assert dialog.choice == tmp_path / "journal.db" and dialog.choice.is_file()
    assert threads == [False]


def test_an_older_journal_is_asked_about_unless_the_command_line_decides(
    qapp, journal_path, tmp_path, monkeypatch
):
    seen = []
    monkeypatch.setattr("proctor.gui.shell.app.run_desk", lambda path, **kw: seen.append(kw) or 0)
    monkeypatch.setattr(launch, "smoke_deadline", lambda app: None)
    shot = str(tmp_path / "shot.png")
    for argv in ([], ["--migrate"], ["--smoke-test", shot], ["--smoke-test", shot, "--migrate"]):
        assert launch.main([str(journal_path), *argv]) == 0
    # the smoke test never waits for an answer: an older journal is observed, not upgraded
    assert [kw["old_schema"] for kw in seen] == ["ask", "migrate", "read_only", "migrate"]


def test_the_desktop_hands_over_a_link_or_a_file_url(qapp, settings, journal_path, monkeypatch):
    """The desktop entry's Exec is `proctor-desk %u`: a proctor:// link opens the journal
    proctor-desk opens by itself, at the link; a file: URL opens that file."""
    settings.add_recent(journal_path)
    monkeypatch.setattr(launch, "DeskSettings", lambda: settings)
    opened = []
    monkeypatch.setattr(
        "proctor.gui.shell.app.run_desk",
        lambda path, **kw: opened.append((path, kw.get("link"))) or 0,
    )
    assert launch.main(["proctor://item/email%3Awelcome%3A42"]) == 0
    assert launch.main([journal_path.as_uri()]) == 0
    assert opened == [
        (journal_path, "proctor://item/email%3Awelcome%3A42"),
        (journal_path, None),
    ]


@pytest.mark.parametrize("url", ["proctor://item/a;b", "proctor://item/%E2%80%AE", "proctor://x/1"])
def test_a_bad_link_from_the_desktop_is_refused_before_the_desk_starts(url, monkeypatch, capsys):
    monkeypatch.setattr(
        "proctor.gui.shell.preflight.check_or_explain", lambda *a: pytest.fail("started")
    )
    assert launch.main([url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("proctor-desk: ") and "\u202e" not in err
