"""The risk lens on the desk (issue 36): what the action reads as, in a reserved line above
the decision buttons (escaped agent text, every fact in the tooltip); an action that reads as
a stronger class than the agent declared is confirmed as that class would be, by the key the
operator presses; what is new against the last approved actions of the same tool."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.decide.confirm import ConfirmApproval

from ..conftest import WAIT_MS
from .test_inbox_flow import press, select

UNBOUNDED = 'psql -c "DELETE FROM ses\u202esions"'
BOUNDED = "psql -c \"DELETE FROM sessions WHERE created_at < now() - interval '30 days'\""


def asked(path, command: str, safety: str = "safe_read") -> str:
    with Journal.open(path, actor=Actor.agent("ops")) as a:
        run = a.runs.start("infra", "clean up", agent="ops")
        return a.approvals.request(
            run.id,
            {"tool": "Bash", "args": {"command": command}},
            reason="tidy",
            safety_class=safety,
        ).id


def status(path, ident: str) -> str:
    with Journal.open(path, read_only=True) as j:
        return j.approvals.get(ident).status.value


def shown_lens(qtbot, window, ident: str):
    select(qtbot, window, ident)
    detail = window.inbox.detail.current()
    qtbot.waitUntil(lambda: detail.lens is not None and detail.entity.id == ident, timeout=WAIT_MS)
    return detail


def test_the_line_says_what_it_reads_escaped_and_the_tooltip_has_every_fact(
    qtbot, journal_path, open_desk
):
    ident = asked(journal_path, UNBOUNDED)
    window = open_desk(journal_path)
    detail = shown_lens(qtbot, window, ident)
    text = detail.lens_line.read.text()
    assert text.startswith("⚠ Reads as destructive, declared safe read: DELETE FROM"), text
    assert "\\u202e" in text and "\u202e" not in text  # agent text, escaped
    tip = detail.lens_line.read.toolTip()
    assert "has no WHERE" in tip and "runs psql" in tip and "(args.command)" in tip


def test_approving_what_reads_stronger_than_declared_asks_first(
    qtbot, journal_path, open_desk, monkeypatch
):
    ident = asked(journal_path, UNBOUNDED)
    restated: list = []
    monkeypatch.setattr(
        ConfirmApproval, "ask", classmethod(lambda cls, _p, what: restated.append(what) or False)
    )
    window = open_desk(journal_path)
    shown_lens(qtbot, window, ident)
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: bool(restated), timeout=WAIT_MS)
    assert any("reads as a destructive one" in r for r in restated[0].risks), restated[0].risks
    assert status(journal_path, ident) == "pending"  # cancelled: nothing approved


def test_a_bounded_delete_declared_as_a_write_does_not_ask(
    qtbot, journal_path, open_desk, monkeypatch
):
    ident = asked(journal_path, BOUNDED, safety="unsafe_write")
    monkeypatch.setattr(ConfirmApproval, "ask", classmethod(lambda cls, *_: False))
    window = open_desk(journal_path)
    detail = shown_lens(qtbot, window, ident)
    assert detail.lens_line.read.text().startswith("Reads as: deletes rows of sessions")
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: status(journal_path, ident) == "approved", timeout=WAIT_MS)


def test_the_second_line_says_what_is_new_against_the_approved_precedent(
    qtbot, journal_path, open_desk
):
    first = asked(journal_path, BOUNDED, safety="unsafe_write")
    with Journal.open(journal_path, actor=Actor.operator("alice")) as op:
        op.approvals.decide(first, True, expected_version=1)
    second = asked(journal_path, BOUNDED + " && rm -rf /srv/cache", safety="unsafe_write")
    window = open_desk(journal_path)
    detail = shown_lens(qtbot, window, second)
    line = detail.lens_line.new.text()
    assert line.startswith("new against the last 1 approved: "), line
    assert "rm deletes /srv/cache" in line and "deletes rows of sessions" not in line
