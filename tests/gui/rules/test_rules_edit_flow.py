"""The approval detail: a rule is explicit before it exists (shown, editable, previewed,
confirmed, optionally applied to the pending requests it matches), and edit-then-approve
(JSON editor with schema check and diff; the agent process runs the edited action)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.approvals.rules import DEFAULT_RULE_TTL
from proctor.gui.decide.confirm import ConfirmApproval
from proctor.gui.decide.edit_action import EditActionDialog
from proctor.gui.decide.rule_draft import RuleConfirmDialog

from ..conftest import WAIT_MS
from ..inbox.test_inbox_flow import press, select

EDIT_AGENT = Path(__file__).parents[1] / "edit_agent.py"


def write(path):
    return {"tool": "fs.write", "args": {"path": path, "text": "x"}}


def history(journal_path):
    """Two past fs.write decisions, two pending ones and the one the operator decides."""
    with (
        Journal.open(journal_path, actor=Actor.agent("coder")) as a,
        Journal.open(journal_path, actor=Actor.operator("bob")) as bob,
    ):
        run = a.runs.start("shop", "writes", agent="coder")
        for n in range(2):
            past = a.approvals.request(run.id, write(f"/srv/app/old{n}"), reason="r")
            bob.approvals.decide(past.id, True, expected_version=1)
        others = [
            a.approvals.request(run.id, write(f"/srv/app/p{n}"), reason="r").id for n in range(2)
        ]
        current = a.approvals.request(run.id, write("/srv/app/now"), reason="r").id
    return current, others


def detail_of(window):
    return window.inbox.detail.current()


def choose_scope(qtbot, detail, n):
    detail.scopes.button(n).click()
    qtbot.waitUntil(
        lambda: detail.rule_panel.isVisible() and detail.rule_panel.base is not None,
        timeout=WAIT_MS,
    )


def test_the_rule_is_shown_previewed_confirmed_and_applied(
    qtbot, journal_path, open_desk, monkeypatch
):
    current, others = history(journal_path)
    window = open_desk(journal_path)
    select(qtbot, window, current)
    detail = detail_of(window)
    assert not detail.rule_panel.isVisible()
    choose_scope(qtbot, detail, 2)  # "Always in this space"
    panel = detail.rule_panel
    assert panel.resource.text() == "/srv/app/now"  # exactly this resource by default
    assert panel.expiry.currentText() == "24 hours"  # a default expiry, not for ever
    assert "Allow fs.write on resource /srv/app/now" in panel.headline.text()
    panel.resource.setText("/srv/app/*")
    qtbot.waitUntil(
        lambda: panel.preview is not None and len(panel.preview.pending) == 2, timeout=WAIT_MS
    )
    assert panel.preview.past_total == 2 and "2 past request" in panel.summary.text()
    assert panel.pending.count() == 2 and panel.past.count() == 2
    with qtbot.waitSignal(detail.open_run, timeout=WAIT_MS) as opened:  # each openable
        panel.past.itemActivated.emit(panel.past.item(0))
    assert opened.args[0].startswith("run_")
    qtbot.waitUntil(lambda: window.current_page_id() == "runs", timeout=WAIT_MS)
    window.go("inbox")  # back where the rule was being made: the draft is as it was
    assert detail.rule_panel.isVisible() and panel.resource.text() == "/srv/app/*"
    panel.apply.setChecked(True)
    seen = {}

    def confirm(_parent, draft, preview, applied):
        seen.update(draft=draft, text=RuleConfirmDialog.text(draft, preview, applied))
        return True

    monkeypatch.setattr(RuleConfirmDialog, "ask", classmethod(lambda cls, *a: confirm(*a)))
    before = time.time()
    press(qtbot, window, Qt.Key.Key_A)
    with Journal.open(journal_path, read_only=True) as j:
        qtbot.waitUntil(lambda: j.approvals.get(current).status == "approved", timeout=WAIT_MS)
        decided = j.approvals.get(current)
        rule = j.approvals.rule(decided.rule_id)
        assert (rule.resource_pattern, rule.scope_label) == ("/srv/app/*", "space")
        assert before + DEFAULT_RULE_TTL - 5 <= rule.expires_at <= time.time() + DEFAULT_RULE_TTL
        for other in others:
            a = j.approvals.get(other)
            assert (a.status, a.decided_by) == ("approved", f"rule:{rule.id}")
    assert "/srv/app/*" in seen["text"] and "2 past request" in seen["text"]
    assert "decide 2 pending requests now" in seen["text"]


def test_a_cancelled_confirmation_or_a_bad_condition_decides_nothing(
    qtbot, journal_path, open_desk, monkeypatch
):
    current, _others = history(journal_path)
    window = open_desk(journal_path)
    select(qtbot, window, current)
    detail = detail_of(window)
    choose_scope(qtbot, detail, 1)  # "Always in this run"
    asked = []
    monkeypatch.setattr(
        RuleConfirmDialog, "ask", classmethod(lambda cls, *a: asked.append(a) or False)
    )
    press(qtbot, window, Qt.Key.Key_A)
    assert len(asked) == 1
    detail.rule_panel.condition.setText("args.path = 1")
    assert "rule condition" in detail.rule_panel.problem.text()
    press(qtbot, window, Qt.Key.Key_A)
    assert len(asked) == 1  # never offered: the rule cannot be made as it stands
    qtbot.waitUntil(lambda: "cannot be made" in detail.message.text(), timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.approvals.get(current).status == "pending"
        assert j.approvals.rules() == []


def test_edit_then_approve_reaches_the_agent_process(
    qtbot, journal_path, open_desk, agents, monkeypatch
):
    window = open_desk(journal_path)
    agent = agents(journal_path, script=EDIT_AGENT)
    [line] = agent.wait_for(qtbot, "REQUESTED")
    approval_id = line.split()[1]
    select(qtbot, window, approval_id)
    detail = detail_of(window)
    edited = {"tool": "payments.refund", "args": {"amount": 40, "account": "acct-7"}}
    monkeypatch.setattr(EditActionDialog, "ask", classmethod(lambda cls, *a: edited))
    detail.edit_button.click()
    [approved] = agent.wait_for(qtbot, "APPROVED")
    assert approved.split(" ", 3)[2:] == ["yes", json.dumps(edited["args"], sort_keys=True)]
    assert agent.wait_for(qtbot, "REFUSED") == [f"REFUSED {approval_id} DigestMismatch"]
    [consumed] = agent.wait_for(qtbot, "CONSUMED")
    assert consumed.endswith(json.dumps(edited["args"], sort_keys=True))
    with Journal.open(journal_path, read_only=True) as j:
        a = j.approvals.get(approval_id)
        assert a.action["args"]["amount"] == 400 and a.approved_action == edited
        events = j.runs.events(a.run_id)
    [ev] = [e for e in events if e.type == "approval.approved"]
    from proctor.gui.decide.approval import outcome_text
    from proctor.gui.widgets.event_summary import event_summary

    assert "edited before approval: args.amount: 400 → 40" in outcome_text(a)
    assert "approved as edited by operator:alice — args.amount: 400 → 40" in event_summary(ev)


def test_edit_then_approve_of_a_destructive_action_asks_as_approve_does(
    qtbot, journal_path, open_desk, monkeypatch
):
    with Journal.open(journal_path, actor=Actor.agent("ops")) as a:
        run = a.runs.start("infra", "clean up", agent="ops")
        asked = a.approvals.request(
            run.id,
            {"tool": "shell.exec", "args": {"command": "rm -rf /srv/cache"}},
            reason="free space",
            safety_class="destructive",
        )
    window = open_desk(journal_path)
    select(qtbot, window, asked.id)
    detail = detail_of(window)
    edited = {"tool": "shell.exec", "args": {"command": "rm -rf /srv/cache/tmp"}}
    monkeypatch.setattr(EditActionDialog, "ask", classmethod(lambda cls, *a: edited))
    restated: list = []
    answer = [False]
    monkeypatch.setattr(
        ConfirmApproval, "ask", classmethod(lambda cls, _p, r: restated.append(r) or answer[0])
    )
    detail.edit_button.click()
    assert len(restated) == 1 and "/srv/cache/tmp" in restated[0].action  # the edit, restated
    with Journal.open(journal_path, read_only=True) as j:
        assert j.approvals.get(asked.id).status.value == "pending"  # cancelled: nothing
    answer[0] = True
    detail.edit_button.click()
    qtbot.waitUntil(
        lambda: (
            Journal.open(journal_path, read_only=True).approvals.get(asked.id).status.value
            == "approved"
        ),
        timeout=WAIT_MS,
    )


def test_the_editor_checks_json_and_schema_and_shows_the_diff(qtbot, journal_path):
    with Journal.open(journal_path, actor=Actor.agent("refund-bot")) as a:
        run = a.runs.start("shop", "refunds", agent="refund-bot")
        from ..edit_agent import SCHEMA

        approval = a.approvals.request(
            run.id,
            {"tool": "payments.refund", "args": {"amount": 400}},
            reason="r",
            input_schema=SCHEMA,
        )
    dialog = EditActionDialog(None, approval)
    qtbot.addWidget(dialog)
    assert not dialog.ok.isEnabled() and "Unchanged" in dialog.problem.text()
    dialog.editor.setPlainText('{"amount": ')
    assert not dialog.ok.isEnabled() and "Not valid JSON" in dialog.problem.text()
    dialog.editor.setPlainText('{"amount": 900}')
    assert not dialog.ok.isEnabled() and "schema" in dialog.problem.text()
    dialog.editor.setPlainText('{"amount": 40}')
    assert dialog.ok.isEnabled() and dialog.problem.text() == ""
    assert '-  "amount": 400' in dialog.diff.toPlainText()
    assert '+  "amount": 40' in dialog.diff.toPlainText()
    assert dialog.result_action == {"tool": "payments.refund", "args": {"amount": 40}}
