"""The risk lens's facts highlighted in "What it will do" (issue 36): the characters a fact
is read from are marked in the box that shows them, hovering a mark names the fact, and a
hostile multi-MB action is highlighted without stopping the desk."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from proctor.gui.infra.theme import highlight_color
from proctor.gui.widgets import action_text

from ..responsive import GapMeter
from .test_approval_action import open_approval, requested


def marked(box) -> list[str]:
    """The texts the box's highlights cover, as the operator sees them."""
    return [s.cursor.selectedText() for s in box.extraSelections()]


def hover(box, position: int) -> str:
    """Hover the character at ``position``: the tooltip shown ("" for none)."""
    cursor = box.textCursor()
    cursor.setPosition(position)
    at = box.cursorRect(cursor).center() + QPoint(2, 0)
    QToolTip.hideText()
    event = QHelpEvent(QEvent.Type.ToolTip, at, box.viewport().mapToGlobal(at))
    QApplication.sendEvent(box.viewport(), event)
    return QToolTip.text() if QToolTip.isVisible() else ""


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: the tooltip
def test_the_delete_is_highlighted_in_the_command_box(qtbot, journal_path, open_desk):
    command = 'cd /srv && psql -c "DELETE FROM\u202e sessions"'
    approval = requested(journal_path, "Bash", {"command": command})
    window = open_desk(journal_path)
    window.resize(1200, 800)
    detail = open_approval(qtbot, window, approval)
    box = detail.action_text.field("command").box
    shown = box.toPlainText()
    assert "DELETE FROM\\u202e sessions" in marked(box)  # the escape counted as shown
    selection = next(s for s in box.extraSelections() if "DELETE" in s.cursor.selectedText())
    assert selection.format.background().color() == highlight_color(box.palette())
    tip = hover(box, shown.index("DELETE") + 2)
    assert "no WHERE" in tip and "deletes every row" in tip
    # only what says a risk is marked: not the overview ("runs cd, psql" spans the line)
    assert "/srv" not in marked(box) and "cd " not in marked(box)


def test_a_list_of_paths_and_a_nested_step_are_highlighted_where_they_are_shown(
    qtbot, journal_path, open_desk
):
    """A fact on args.steps[1].command lands in the box named steps.[1].command; one on
    args.files[1] in the second line of the files box."""
    args = {
        "files": ["/srv/app/a.txt", "/etc/passwd"],
        "steps": [{"command": "ls"}, {"command": "sudo rm -rf /"}],
    }
    approval = requested(journal_path, "fs.delete", args)
    window = open_desk(journal_path)
    detail = open_approval(qtbot, window, approval)
    files = detail.action_text.field("files").box
    assert "/etc/passwd" in marked(files) and "/srv/app/a.txt" not in marked(files)
    step = detail.action_text.field("steps.[1].command").box
    assert any("rm -rf /" in text for text in marked(step))


def test_a_hostile_3mb_action_is_highlighted_off_the_gui_thread(
    qtbot, journal_path, open_desk, monkeypatch
):
    """3 MB of escapes beside a 60 KB command of a hundred chained commands: the mapping
    from the command's offsets to the box's is made on a presentation worker, the marks
    are bounded, and the event loop keeps turning."""
    threads: list[int] = []
    real = action_text.PreviewMap

    class Recorded(real):  # type: ignore[misc,valid-type]
        def __init__(self, *args, **kwargs):
            threads.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(action_text, "PreviewMap", Recorded)
    spent: list[float] = []  # the GUI thread's time drawing the marks
    real_marks = action_text.FullText.set_marks

    def timed(self, marks):
        began = time.monotonic()
        real_marks(self, marks)
        spent.append(time.monotonic() - began)

    monkeypatch.setattr(action_text.FullText, "set_marks", timed)
    command = 'psql -c "DELETE FROM t"' + "; echo \u202e\x00" * 6000
    args = {"command": command, "body": "\x00\u202e" * 1_500_000}
    approval = requested(journal_path, "Bash", args)
    window = open_desk(journal_path)
    with GapMeter() as meter:
        detail = open_approval(qtbot, window, approval)
    box = detail.action_text.field("command").box
    assert "DELETE FROM t" in marked(box)
    assert threads and threading.get_ident() not in threads
    assert len(box.extraSelections()) <= action_text.MAX_MARKS
    assert sum(spent) < 0.1, spent
    assert meter.longest < 2.0, meter.longest  # the whole open: generous, as GAP_S
