"""Opening journals through DeskApp (off the GUI thread), errors through the presenter."""

from __future__ import annotations

import shiboken6

from proctor.core import Actor, Journal
from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.shell.app import DeskApp

from .conftest import WAIT_MS


def test_desk_app_opens_journals_and_swaps_windows(
    qtbot, populated, tmp_path, settings, monkeypatch
):
    path, _ = populated
    other = tmp_path / "other.db"
    Journal.open(other).close()
    from PySide6.QtWidgets import QApplication

    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="dana")
        first = desk.window
        assert first.journal.actor == Actor.operator("dana")
        qtbot.waitUntil(lambda: first.inbox.model.rowCount() == 6, timeout=WAIT_MS)
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            first.open_requested.emit(str(other))  # File ▸ Open / Open recent
        assert desk.window is not first and desk.window.journal.actor.name == "dana"
        assert not shiboken6.isValid(first) or not first.isVisible()
        assert settings.recent()[:2] == [str(other), str(path)]
        shown = []
        monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
        with qtbot.waitSignal(desk.open_failed, timeout=WAIT_MS):
            desk.open(tmp_path / "missing" / "x.db", read_only=True)
        assert shown and "no journal" in shown[0][2]
        assert desk.window.isVisible()  # a failed open keeps the current desk
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def test_unexpected_errors_are_logged_and_shown_with_details(
    qtbot, populated, open_desk, monkeypatch, caplog
):
    path, _ = populated
    window = open_desk(path)
    shown = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))

    def boom() -> None:
        raise RuntimeError("disk on fire")

    with qtbot.waitSignal(window.presenter.presented, timeout=WAIT_MS):
        window.services.runner.run(boom)  # no on_error: the default presenter
    [(_parent, _title, text, details)] = shown
    assert "RuntimeError: disk on fire" in text and "Traceback" in details
    assert "unexpected error" in caplog.text


def test_expected_errors_are_inline_with_the_next_step(qtbot, populated, open_desk):
    from proctor.core import errors

    path, _ = populated
    window = open_desk(path)
    window.presenter.present(errors.StoreBusy("the journal is busy"))
    assert window.notice.text().startswith("the journal is busy. Another process holds")


def test_a_write_the_journal_refuses_is_inline_not_a_bug(qtbot, populated, open_desk, monkeypatch):
    """A row put in by hand makes the operator's approval hit a trigger: the desk says so
    where the operator acted, with the next step, not as a bug's details dialog."""
    from adversary import squat_next_event

    path, ids = populated
    squat_next_event(path, ids["run"])
    window = open_desk(path)
    shown = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    approvals = window.journal.approvals

    def approve() -> None:
        asked = approvals.get(ids["approval"])
        approvals.decide(asked.id, True, expected_version=asked.version)

    with qtbot.waitSignal(window.presenter.presented, timeout=WAIT_MS):
        window.services.runner.run(approve)
    assert not shown
    assert window.notice.text().startswith(
        "the journal refused this write: events rows are immutable"
    )
    assert "proctor verify" in window.notice.text()
