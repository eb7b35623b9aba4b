"""The Rules page: every rule with its match, scope, maker, expiry and use; the requests a
rule decided open their run; Revoke asks why, is audited, and the rule stays as history."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.gui.widgets.dialogs import ReasonDialog

from ..conftest import WAIT_MS
from ..runs.test_runs_page import open_page


def make_rules(path, ids):
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        run = bob.runs.get(ids["run2"])
        rule = bob.approvals.add_rule(
            "allow",
            "pay_invoice",
            scope="space",
            project=run.project,
            space=run.space,
            predicate="args.amount <= 100",
        )
        old = bob.approvals.add_rule("deny", "shell", run_id=ids["run"])
        bob.approvals.revoke_rule(old.id, expected_version=1, reason="superseded")
    with Journal.open(path, actor=Actor.agent("ops-bot")) as agent:
        decided = agent.approvals.request(
            ids["run2"], {"tool": "pay_invoice", "args": {"amount": 40}}, reason="r"
        )
    assert decided.rule_id == rule.id
    return rule, old, decided


def cell(page, row, title):
    col = [page.model.headerData(c, _h(), 0) for c in range(page.model.columnCount())]
    return page.model.data(page.model.index(row, col.index(title)))


def _h():
    from PySide6.QtCore import Qt

    return Qt.Orientation.Horizontal


def row_of(page, rule_id):
    return page.model.row_of(rule_id)


def test_rules_page_lists_rules_with_use_and_history(qtbot, populated, open_desk):
    path, ids = populated
    rule, old, decided = make_rules(path, ids)
    window = open_desk(path)
    page = open_page(qtbot, window, "rules")
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=WAIT_MS)
    r = row_of(page, rule.id)
    assert (
        cell(page, r, "State"),
        cell(page, r, "Effect"),
        cell(page, r, "Tool"),
        cell(page, r, "When"),
        cell(page, r, "Decided"),
    ) == ("active", "allow", "pay_invoice", "args.amount <= 100", "1")
    assert cell(page, r, "Scope").startswith("space infra/")
    assert cell(page, r, "Made by") == "operator:bob"
    assert cell(page, row_of(page, old.id), "State") == "revoked"
    page.table.selectRow(r)
    qtbot.waitUntil(lambda: page.detail.decided.rowCount() == 1, timeout=WAIT_MS)
    assert page.detail.decided.item(0).id == decided.id
    with qtbot.waitSignal(window.rules.open_run, timeout=WAIT_MS) as opened:
        page.detail.decided_view.doubleClicked.emit(page.detail.decided.index(0, 0))
    assert opened.args == [ids["run2"]]
    page.active_only.setChecked(True)
    qtbot.waitUntil(
        lambda: page.model.rowCount() == 1 and not page.model.is_loading(), timeout=WAIT_MS
    )


def test_revoke_asks_why_and_the_rule_stays_as_history(qtbot, populated, open_desk, monkeypatch):
    path, ids = populated
    rule, _old, _decided = make_rules(path, ids)
    window = open_desk(path)
    page = open_page(qtbot, window, "rules")
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=WAIT_MS)
    page.table.selectRow(row_of(page, rule.id))
    qtbot.waitUntil(
        lambda: page.detail.usage is not None and page.detail.usage.rule.id == rule.id,
        timeout=WAIT_MS,
    )
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: None))
    page.detail.revoke_button.click()  # cancelled: nothing happens
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "too wide"))
    with qtbot.waitSignal(page.revoked, timeout=WAIT_MS):
        page.detail.revoke_button.click()
    qtbot.waitUntil(
        lambda: cell(page, row_of(page, rule.id), "State") == "revoked", timeout=WAIT_MS
    )
    with Journal.open(path, read_only=True) as j:
        revoked = j.approvals.rule(rule.id)
        assert revoked.revoke_reason == "too wide" and revoked.revoked_by == "operator:alice"
        assert [a.reason for a in j.audit.for_entity(rule.id) if a.action == "rule.revoked"] == [
            "too wide"
        ]
    qtbot.waitUntil(lambda: not page.detail.revoke_button.isEnabled(), timeout=WAIT_MS)
