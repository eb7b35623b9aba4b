"""The Rules page's "Approval policies" tab: every policy with what it needs and who made
it; the selected one's preview lists the requests it would have governed and the pending
ones it matches (Enter opens the run); Revoke… asks why, commits through the store (a
signed decision with its audit row), and the policy stays listed as revoked; a policy
another operator makes appears when the page refreshes."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer

from proctor.core import Actor, Journal
from proctor.core.policies.models import PolicyDraft, PolicyStage
from proctor.gui.widgets.dialogs import ReasonDialog

from ..conftest import WAIT_MS
from ..runs.test_runs_page import open_page

HOSTILE = '<b>two</b> of <a href="x">ops</a> \u202edlrow'


def make_policy(path, name: str = HOSTILE) -> str:
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        if "ops" not in bob.policies.groups():
            bob.policies.add_member("ops", "alice", reason="rota")
        policy = bob.policies.add(
            PolicyDraft(
                name=name, action_pattern="deploy*", stages=[PolicyStage(groups=["ops"], need=2)]
            ),
            reason="no release on one say",
        )
        return policy.id


def test_policies_are_listed_previewed_and_revoked_with_a_reason(
    qtbot, populated, open_desk, monkeypatch
):
    path, ids = populated
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        before = a.approvals.request(ids["run"], {"tool": "deploy", "args": {}}, reason="r1").id
    policy_id = make_policy(path)
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        under = a.approvals.request(ids["run"], {"tool": "deploy", "args": {}}, reason="r2").id
    window = open_desk(path)
    page = open_page(qtbot, window, "rules")
    page.tabs.setCurrentWidget(page.policies)
    panel = page.policies
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.hits.rowCount() >= 2, timeout=WAIT_MS)
    assert panel.model.data(panel.model.index(0, 4)) == "2 of ops"
    shown = {panel.hits.item(r).id for r in range(panel.hits.rowCount())}
    assert {before, under} <= shown
    lines = panel.facts.text().splitlines()  # one fact a line, not one run-on paragraph
    assert "needs 2 of ops (distinct people, never the requester)" in lines
    assert any(line.startswith("made by operator:bob at ") for line in lines)
    assert panel.facts.textFormat() == Qt.TextFormat.PlainText  # agent-free, still never markup

    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: None))
    panel.revoke_button.click()  # cancelled: nothing is written
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "the release train ended"))
    qtbot.mouseClick(panel.revoke_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Revoked the policy" in panel.message.text(), timeout=WAIT_MS)
    with Journal.open(path) as j:
        [policy] = [p for p in j.policies.list(active_only=False) if p.id == policy_id]
        assert policy.revoked_by == "operator:alice"
        assert policy.revoke_reason == "the release train ended"
    qtbot.waitUntil(lambda: panel.model.data(panel.model.index(0, 0)) == "revoked", timeout=WAIT_MS)
    assert not panel.revoke_button.isEnabled()

    make_policy(path, name="a second one")  # another operator, another process
    page.refreshed()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
    panel.active_only.setChecked(True)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)


def test_a_read_only_desk_lists_policies_but_cannot_revoke(qtbot, populated, open_desk):
    path, _ids = populated
    make_policy(path)
    window = open_desk(path, read_only=True)
    page = open_page(qtbot, window, "rules")
    panel = page.policies
    qtbot.waitUntil(lambda: panel.policy is not None, timeout=WAIT_MS)
    assert not panel.revoke_button.isEnabled()


def test_a_policy_drafted_in_the_desk_is_previewed_then_made(qtbot, populated, open_desk):
    """New policy…: the fields typed are previewed off the GUI thread (a bad stage is said,
    and Make policy stays off); Make policy commits a signed policy that governs the next
    request, which then needs two people."""
    from proctor.gui.rules.new_policy import NewPolicyDialog

    path, ids = populated
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.policies.add_member("ops", "alice", reason="rota")
        bob.policies.add_member("ops", "bob", reason="rota")
    window = open_desk(path)
    page = open_page(qtbot, window, "rules")
    panel = page.policies
    made: list[NewPolicyDialog] = []

    def fill(dialog: NewPolicyDialog) -> None:
        made.append(dialog)
        qtbot.keyClicks(dialog.fields["name"], "deploys: two of ops")
        qtbot.keyClicks(dialog.fields["tool"], "deploy*")
        qtbot.keyClicks(dialog.fields["stages"], "ops:two")
        qtbot.waitUntil(lambda: "is not a stage" in dialog.preview.text(), timeout=WAIT_MS)
        assert not dialog.make_button.isEnabled()
        dialog.fields["stages"].clear()
        qtbot.keyClicks(dialog.fields["stages"], "ops:2")
        qtbot.keyClicks(dialog.fields["reason"], "no release on one say")
        qtbot.waitUntil(dialog.make_button.isEnabled, timeout=WAIT_MS)
        assert "Needs 2 of ops" in dialog.preview.text()
        dialog.make_button.click()

    QTimer.singleShot(0, lambda: fill(panel.findChild(NewPolicyDialog)))
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Made the policy" in panel.message.text(), timeout=WAIT_MS)
    assert made
    with Journal.open(path) as j:
        [policy] = j.policies.list()
        assert policy.name == "deploys: two of ops" and policy.created_by == "operator:alice"
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        asked = a.approvals.request(ids["run"], {"tool": "deploy", "args": {}}, reason="go")
    with Journal.open(path) as j:
        assert j.policies.progress(asked.id).needed == 2
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
