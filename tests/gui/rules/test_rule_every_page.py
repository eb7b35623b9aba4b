"""The rule shown is the rule made, on every page that decides (issue 32, item 1): the
Inbox and a run's "Waiting for you" tab approve through the same form, so the rule editor's
choices (scope, resource, condition, "also decide the pending") reach the journal from both.

The operator works with the mouse and the keyboard: a click on "Always in this run", the
resource and the condition typed, "This project" chosen with the arrow keys, the pending
box ticked, Approve clicked and the rule's own confirmation dialog accepted with a click."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel

from proctor.core import Actor, Journal
from proctor.core.models import RuleDraft
from proctor.gui.decide.rule_draft import RuleConfirmDialog, draft_text

from ..conftest import WAIT_MS, settled
from ..driver import LEFT, Desk

GUI = Path(__file__).parents[3] / "gui"


def write(path: str, size: int) -> dict:
    return {"tool": "fs.write", "args": {"path": path, "bytes": size}}


def requests(journal_path) -> tuple[str, str, str]:
    """The approval decided (run A) and one other pending request the project rule matches
    (run B, another space of the same project): (run id, approval id, other id)."""
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "writes", agent="coder")
        other_run = a.runs.start("shop", "more writes", space="other", agent="coder")
        other = a.approvals.request(other_run.id, write("/srv/b/log", 80), reason="r").id
        current = a.approvals.request(run.id, write("/srv/a/log", 40), reason="r").id
    return run.id, current, other


def from_inbox(qtbot, window, run_id: str, approval_id: str):
    detail = Desk(qtbot, window).open_inbox_item(f"approval:{approval_id}", presented=True)
    return detail, lambda: settled(qtbot, window)


def from_run(qtbot, window, run_id: str, approval_id: str):
    window.show_run(run_id)
    runs = window.runs.detail
    qtbot.waitUntil(lambda: runs.run is not None and runs.run.id == run_id, timeout=WAIT_MS)
    pending = runs.pending
    qtbot.waitUntil(lambda: pending.count() == 1, timeout=WAIT_MS)
    bar = runs.tabs.tabBar()  # a click on the "Waiting for you" tab
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(runs.tabs.indexOf(pending)).center())
    qtbot.waitUntil(pending.isVisible, timeout=WAIT_MS)
    Desk(qtbot, window).click_row(pending.list, 0)
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == approval_id, timeout=WAIT_MS
    )
    return widget, lambda: None


PAGES = {"inbox/commands.py": from_inbox, "runs/pending.py": from_run}


def test_every_page_that_decides_is_covered():
    """The pages are the registrants of the decision commands: a new one joins PAGES."""
    deciding = {
        str(path.relative_to(GUI))
        for path in GUI.rglob("*.py")
        if "decision_commands(" in path.read_text() and not path.match("decide/commands.py")
    }
    assert deciding == set(PAGES)


def click_when_asked(qtbot, seen: dict) -> None:
    """Accept the rule's confirmation with a click on its OK button, once it is up."""

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, RuleConfirmDialog):
            QTimer.singleShot(20, poll)
            return
        seen["dialog_text"] = "\n".join(label.text() for label in dialog.findChildren(QLabel))
        qtbot.mouseClick(dialog.ok, LEFT)

    QTimer.singleShot(0, poll)


def as_draft(rule) -> RuleDraft:
    return RuleDraft(
        effect=rule.effect,
        action_pattern=rule.action_pattern,
        resource_pattern=rule.resource_pattern,
        predicate=rule.predicate,
        scope=rule.scope_label,
        run_id=rule.run_id,
        project=rule.project,
        space=rule.space,
        expires_at=rule.expires_at,
    )


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_rule_made_is_the_rule_shown(qtbot, journal_path, open_desk, page):
    run_id, current, other = requests(journal_path)
    window = open_desk(journal_path)
    detail, settle = PAGES[page](qtbot, window, run_id, current)
    panel = detail.rule_panel
    qtbot.mouseClick(detail.scopes.button(1), LEFT)  # "Always in this run"
    qtbot.waitUntil(lambda: panel.isVisible() and panel.base is not None, timeout=WAIT_MS)
    panel.resource.selectAll()
    qtbot.keyClicks(panel.resource, "*")
    qtbot.mouseClick(panel.condition, LEFT)
    qtbot.keyClicks(panel.condition, "args.bytes <= 100")
    panel.scope.setFocus()
    while panel.scope.currentData() != "project":
        qtbot.keyClick(panel.scope, Qt.Key.Key_Down)
    assert panel.scope.currentText() == "This project"
    qtbot.waitUntil(
        lambda: panel.preview is not None and len(panel.preview.pending) == 1, timeout=WAIT_MS
    )
    assert panel.apply.isEnabled() and re.search(r"\b1 pending\b", panel.apply.text())
    box = QPoint(8, panel.apply.height() // 2)  # on the box itself, not the empty row
    qtbot.mouseClick(panel.apply, LEFT, pos=box)
    assert panel.apply.isChecked()
    shown = panel.draft()
    headline = panel.headline.text()
    assert "args.bytes <= 100" in headline and "project shop" in headline
    settle()
    seen: dict = {}
    click_when_asked(qtbot, seen)
    clicked = time.time()
    qtbot.mouseClick(detail.approve_button, LEFT)
    qtbot.waitUntil(lambda: "dialog_text" in seen, timeout=WAIT_MS)
    assert draft_text(shown) in seen["dialog_text"]
    with Journal.open(journal_path, read_only=True) as j:
        qtbot.waitUntil(lambda: j.approvals.get(current).status == "approved", timeout=WAIT_MS)
        decided = j.approvals.get(current)
        assert decided.rule_id is not None
        rule = j.approvals.rule(decided.rule_id)
        made = as_draft(rule)
        assert made.model_dump(exclude={"expires_at"}) == shown.model_dump(exclude={"expires_at"})
        assert (made.resource_pattern, made.predicate, made.scope, made.project) == (
            "*",
            "args.bytes <= 100",
            "project",
            "shop",
        )
        assert abs(rule.expires_at - shown.expires_at) <= time.time() - clicked + 60
        o = j.approvals.get(other)
        assert (o.status, o.decided_by) == ("approved", f"rule:{rule.id}")
