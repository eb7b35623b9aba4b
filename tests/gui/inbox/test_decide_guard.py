"""A decision takes a deliberate act on the item the operator is looking at (issue 16):
a second click landing on the item the desk just advanced to decides nothing, risky
approvals confirm, banners name every recent decision (plain text) and close by themselves.
Real journal files, agent processes, real widgets; the settle clock is stepped by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.decide import settle
from proctor.gui.decide.confirm import ConfirmApproval
from proctor.gui.inbox import commands
from proctor.gui.widgets.labels import PlainLabel

from ..conftest import WAIT_MS
from ..forms.test_forms_agents import AskingAgent
from .test_inbox_flow import press, select, wait_row


class Clock:
    """Stands in for settle.now: time moves only when the test says so."""

    def __init__(self) -> None:
        self.t = 10_000.0

    def __call__(self) -> float:
        return self.t

    def step(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(settle, "now", c)
    return c


def status(path: Path, approval_id: str) -> str:
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        return j.approvals.get(approval_id).status.value


def shown(qtbot, window, key: str):
    """Wait until the detail shows the whole entity of ``key``; the detail widget."""
    pane = window.inbox.detail
    item_id = key.split(":", 1)[1]
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.id == item_id
            and pane.current_item().id == item_id
        ),
        timeout=WAIT_MS,
    )
    return pane.current()


def idle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)


def two_approvals(qtbot, journal_path, agents) -> tuple[str, str]:
    """An email.send (older, row 1) and a payments.refund (newer, row 0)."""
    older = agents(journal_path, "--tool", "email.send", "--args", '{"to": "ann@example.com"}')
    [email] = [line.split()[1] for line in older.wait_for(qtbot, "REQUESTED")]
    newer = agents(
        journal_path, "--tool", "payments.refund", "--args", '{"account": "acct_9", "amount": 120}'
    )
    [refund] = [line.split()[1] for line in newer.wait_for(qtbot, "REQUESTED")]
    return refund, email


def test_double_click_on_approve_decides_only_the_item_seen(
    qtbot, journal_path, open_desk, agents, clock
):
    window = open_desk(journal_path)
    refund, email = two_approvals(qtbot, journal_path, agents)
    wait_row(qtbot, window, email)
    select(qtbot, window, refund)
    detail = shown(qtbot, window, f"approval:{refund}")
    clock.step(5)  # the operator reads the refund
    qtbot.mouseClick(detail.approve_button, Qt.MouseButton.LeftButton)
    shown(qtbot, window, f"approval:{email}")  # the desk advanced under the pointer
    qtbot.mouseClick(detail.approve_button, Qt.MouseButton.LeftButton)  # the second click
    idle(qtbot, window)
    assert status(journal_path, refund) == "approved"
    assert status(journal_path, email) == "pending"
    assert (
        "Not approved" in detail.message.text() and "just come on screen" in detail.message.text()
    )
    assert "payments.refund acct_9" in window.inbox.message.text()
    clock.step(settle.SETTLE_S)  # now it has been on screen long enough to be read
    qtbot.mouseClick(detail.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: status(journal_path, email) == "approved", timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: "email.send ann@example.com" in window.inbox.message.text(), timeout=WAIT_MS
    )
    banner = window.inbox.message.text()
    assert "payments.refund acct_9" in banner  # every item decided lately, by name


def test_a_double_mouse_click_lands_once(qtbot, journal_path, open_desk, agents, clock):
    window = open_desk(journal_path)
    refund, email = two_approvals(qtbot, journal_path, agents)
    wait_row(qtbot, window, email)
    select(qtbot, window, refund)
    detail = shown(qtbot, window, f"approval:{refund}")
    clock.step(5)
    button, left = detail.approve_button, Qt.MouseButton.LeftButton
    # a real double-click: press, release, then press + double-click event + release; the
    # write of the first click commits (and the desk advances) in between
    qtbot.mouseClick(button, left)
    shown(qtbot, window, f"approval:{email}")
    qtbot.mousePress(button, left)
    qtbot.mouseDClick(button, left)
    qtbot.mouseRelease(button, left)
    idle(qtbot, window)
    assert status(journal_path, refund) == "approved"
    assert status(journal_path, email) == "pending"


def test_pressing_a_twice_approves_only_the_first(qtbot, journal_path, open_desk, agents, clock):
    window = open_desk(journal_path)
    refund, email = two_approvals(qtbot, journal_path, agents)
    wait_row(qtbot, window, email)
    select(qtbot, window, refund)
    press(qtbot, window, Qt.Key.Key_A)  # the operator chose the refund: a key decides it
    shown(qtbot, window, f"approval:{email}")
    press(qtbot, window, Qt.Key.Key_A)  # the item the desk advanced to: not read yet
    idle(qtbot, window)
    assert status(journal_path, refund) == "approved"
    assert status(journal_path, email) == "pending"


def test_send_answer_twice_does_not_approve_the_next_item(
    qtbot, journal_path, open_desk, agents, clock
):
    window = open_desk(journal_path)
    writer = agents(journal_path, "--tool", "fs.write", "--args", '{"path": "/etc/hosts"}')
    [write] = [line.split()[1] for line in writer.wait_for(qtbot, "REQUESTED")]
    asker = AskingAgent(journal_path, {"kind": "question", "prompt": "Which region?"})
    try:
        qid = asker.line(qtbot, "ASKED")
        wait_row(qtbot, window, write)
        model = window.inbox.model
        qtbot.waitUntil(lambda: model.row_of(f"question:{qid}") >= 0, timeout=WAIT_MS)
        window.inbox.set_current_row(model.row_of(f"question:{qid}"))
        question = shown(qtbot, window, f"question:{qid}")
        qtbot.waitUntil(lambda: question.view is not None, timeout=WAIT_MS)
        qtbot.keyClicks(question.view.edit, "eu-west-1")
        clock.step(5)
        qtbot.mouseClick(question.submit_button, Qt.MouseButton.LeftButton)
        approval = shown(qtbot, window, f"approval:{write}")  # advanced to the fs.write
        qtbot.mouseClick(approval.approve_button, Qt.MouseButton.LeftButton)
        assert asker.result(qtbot)["status"] == "resolved"
        idle(qtbot, window)
        assert status(journal_path, write) == "pending"
        assert "Answered “Which region?”" in window.inbox.message.text()
    finally:
        asker.stop()


def test_banner_is_plain_text_and_closes_by_itself(
    qtbot, journal_path, open_desk, agents, clock, monkeypatch
):
    monkeypatch.setattr(commands, "BANNER_CLOSE_MS", 300)
    window = open_desk(journal_path)
    agent = agents(
        journal_path, "--tool", "<b>fs.write</b>\u202e", "--args", '{"path": "<i>/tmp/x</i>"}'
    )
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    press(qtbot, window, Qt.Key.Key_A)
    bar = window.inbox.message
    qtbot.waitUntil(lambda: "Approved" in bar.text(), timeout=WAIT_MS)
    label = bar.findChild(PlainLabel)
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert "<b>fs.write</b>\\u202e <i>/tmp/x</i>" in bar.text()  # literal, bidi escaped
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=WAIT_MS)


# ---------------------------------------------------------------- confirm by risk
@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    from proctor.sim.demo import build_demo_journal, recent_start

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    # started three hours earlier than `proctor demo` starts it: the demo's DELETE FROM
    # sessions (expiring an hour after it was filed) is then past its expiry, whatever the
    # pace of the demo's people
    build_demo_journal(path, start_time=recent_start() - 3 * 3600)
    return path


def demo_copy(template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "demo.db"
    shutil.copy(template, target)
    return target


def delete_sessions(path: Path) -> str:
    """The demo's pending ``DELETE FROM sessions`` migration (destructive, past expiry)."""
    with Journal.open(path, actor=Actor.operator("check"), read_only=True) as j:
        from proctor.core.models import InboxFilter, InboxKind

        page = j.inbox.list(InboxFilter(kinds=frozenset({InboxKind.APPROVAL})), limit=500)
        for item in page.items:
            a = j.approvals.get(item.id)
            if "DELETE FROM sessions" in str(a.action.get("args", {}).get("sql", "")):
                return a.id
    raise AssertionError("the demo has no DELETE FROM sessions approval")


def test_key_a_on_the_demo_delete_asks_and_cancel_keeps_it_pending(
    qtbot, demo_template, tmp_path, open_desk, monkeypatch
):
    path = demo_copy(demo_template, tmp_path)
    approval_id = delete_sessions(path)
    window = open_desk(path)
    select(qtbot, window, approval_id)
    asked = []
    monkeypatch.setattr(ConfirmApproval, "ask", lambda parent, what: asked.append(what) or False)
    press(qtbot, window, Qt.Key.Key_A)
    assert len(asked) == 1
    what = asked[0]
    assert what.headline.startswith("Approve db.migrate")
    assert "DELETE FROM sessions WHERE expires_at < now() - interval '90 days';" in what.action
    assert any("destructive" in r for r in what.risks)
    assert any("past its expiry" in r for r in what.risks)
    idle(qtbot, window)
    assert status(path, approval_id) == "pending"
    detail = window.inbox.detail.current()
    assert "cancelled the confirmation" in detail.message.text()


def test_the_confirm_dialog_restates_and_defaults_to_cancel(
    qtbot, demo_template, tmp_path, open_desk, monkeypatch
):
    path = demo_copy(demo_template, tmp_path)
    approval_id = delete_sessions(path)
    window = open_desk(path)
    select(qtbot, window, approval_id)
    seen = []

    def look(parent, what):  # the real dialog, then Enter: the default button cancels
        dialog = ConfirmApproval(parent, what)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        seen.append(
            (
                dialog.action.toPlainText(),
                dialog.why.text(),
                dialog.cancel.isDefault(),
                dialog.ok.isDefault(),
            )
        )
        dialog.reject()
        return False

    monkeypatch.setattr(ConfirmApproval, "ask", look)
    press(qtbot, window, Qt.Key.Key_A)
    [(action, why, cancel_default, ok_default)] = seen
    assert "DELETE FROM sessions" in action and "past its expiry" in why
    assert cancel_default and not ok_default
    idle(qtbot, window)
    assert status(path, approval_id) == "pending"


def test_which_classes_confirm_is_a_preference(qtbot, journal_path, open_desk, agents, monkeypatch):
    window = open_desk(journal_path)
    asked = []
    monkeypatch.setattr(ConfirmApproval, "ask", lambda parent, what: asked.append(what) or True)
    first = agents(journal_path, "--tool", "db.query", "--args", '{"table": "orders"}')
    [plain] = [line.split()[1] for line in first.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, plain)
    press(qtbot, window, Qt.Key.Key_A)  # an unsafe write: not asked by default
    qtbot.waitUntil(lambda: status(journal_path, plain) == "approved", timeout=WAIT_MS)
    assert asked == []
    window.settings.confirm = frozenset({"unsafe_write"})
    second = agents(journal_path, "--tool", "fs.write", "--args", '{"path": "/srv/x"}')
    [risky] = [line.split()[1] for line in second.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, risky)
    press(qtbot, window, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: status(journal_path, risky) == "approved", timeout=WAIT_MS)
    assert len(asked) == 1 and "unsafe write" in asked[0].risks[0]


# ---------------------------------------------------------------- decided elsewhere
def test_decided_by_the_cli_in_another_process_disables_the_controls_at_once(
    qtbot, journal_path, open_desk, agents
):
    import subprocess
    import sys

    window = open_desk(journal_path)
    agent = agents(journal_path, "--tool", "fs.write", "--args", '{"path": "/srv/app.cfg"}')
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    detail = window.inbox.detail.current()
    approve = window.registry.action("inbox.approve")
    deny = window.registry.action("inbox.deny")
    assert approve.isEnabled() and deny.isEnabled() and detail.approve_button.isEnabled()
    assert detail.edit_button.isEnabled()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "proctor",
            "approve",
            approval_id,
            "--journal",
            str(journal_path),
            "--as",
            "bob",
            "--reason",
            "done from the terminal",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the change feed brings it: no click, no key
    qtbot.waitUntil(lambda: not approve.isEnabled(), timeout=WAIT_MS)
    assert not deny.isEnabled() and not detail.approve_button.isEnabled()
    assert not any(b.isEnabled() for b in detail.scopes.buttons())
    assert not detail.edit_button.isEnabled()  # "Edit, then approve…" is no way around it
    qtbot.waitUntil(lambda: "Approved by operator:bob at" in detail.state.text(), timeout=WAIT_MS)
    assert "done from the terminal" in detail.state.text()
    assert window.inbox.detail.current_item().id == approval_id  # still shown, not replaced


def test_the_runs_waiting_tab_confirms_a_risky_approval_too(
    qtbot, populated, open_desk, monkeypatch
):
    from ..runs.test_runs_detail import open_run

    path, ids = populated
    window = open_desk(path)
    window.go("runs")
    detail = open_run(qtbot, window, ids["run"])
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 3, timeout=WAIT_MS)
    row = next(
        r
        for r in range(3)
        if pending.items.item(r).data(Qt.ItemDataRole.UserRole + 1).id == ids["hostile"]
    )
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == ids["hostile"], timeout=WAIT_MS
    )
    asked = []
    monkeypatch.setattr(ConfirmApproval, "ask", lambda parent, what: asked.append(what) or False)
    assert pending.registry.trigger("inbox.approve")
    assert len(asked) == 1 and any("destructive" in r for r in asked[0].risks)
    idle(qtbot, window)
    assert status(path, ids["hostile"]) == "pending"


def test_an_action_longer_than_the_boxes_show_always_asks(
    qtbot, journal_path, open_desk, monkeypatch
):
    """The action box shows the first BOX_CHARS of a huge action; approving such an action
    asks first (whatever the confirm preference), and the dialog's own box is bounded too."""
    from proctor.gui.widgets.action_text import BOX_CHARS
    from proctor.gui.widgets.bounded_text import LINE_CHARS, longest_line

    from ..data import agent, request

    with agent(journal_path, "bulk-bot") as a:
        run = a.runs.start("webshop", "Import the catalogue", agent="bulk-bot")
        tail = "; and also DROP TABLE orders"
        huge = request(
            a,
            run.id,
            "fs.write",
            {"path": "/srv/catalogue.csv", "body": "x" * (BOX_CHARS + 5000) + tail},
            "Write the catalogue.",
            safety_class="idempotent_write",
        )
    window = open_desk(journal_path)
    window.settings.confirm = frozenset()  # nothing asks by preference
    select(qtbot, window, huge)
    seen = []

    def look(parent, what):
        dialog = ConfirmApproval(parent, what)
        qtbot.addWidget(dialog)
        seen.append((what.risks, dialog.action.toPlainText()))
        dialog.reject()
        return False

    monkeypatch.setattr(ConfirmApproval, "ask", look)
    press(qtbot, window, Qt.Key.Key_A)
    [(found, shown)] = seen
    assert any(f"first {BOX_CHARS:,}" in r and "Show all or Copy" in r for r in found)
    head = shown.split("\n… ")[0]  # the head shown, then how many characters more
    assert len(head.replace("\n", "")) <= BOX_CHARS
    assert longest_line(shown) <= LINE_CHARS  # never one unbroken line laid out whole
    assert "more characters" in shown
    idle(qtbot, window)
    assert status(journal_path, huge) == "pending"
