"""Two desks, one journal file, two operators: a two-person approval (issue 35) completed by
clicking. Alice's click leaves it "1 of 2" (her Approve then off, with the reason); Bob's
desk shows her reason and the same full action, and his click approves it; the agent then
sees it approved. Alice's second approve, raced past the disabled button, is refused by the
core with a clear message. Also: "Waiting for me", "Assign to me" (and "Assigned to me"),
and notifications only to the operators a request waits for. Real widgets, no sleeps."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.models import ApprovalStatus
from proctor.core.policies.models import PolicyDraft, PolicyStage

from ..conftest import WAIT_MS, settled
from ..driver import Desk

LEFT = Qt.MouseButton.LeftButton
ACTION = {"tool": "deploy", "args": {"service": "billing", "version": "1.4.2"}}


def two_of_ops(path) -> None:
    with Journal.open(path, actor=Actor.operator("alice")) as admin:
        admin.policies.add_member("ops", "alice", reason="on call")
        admin.policies.add_member("ops", "bob", reason="on call")
        admin.policies.add(
            PolicyDraft(
                name="two of ops",
                action_pattern="deploy",
                stages=[PolicyStage(groups=["ops"], need=2)],
            )
        )


def ask(path, reason: str = "ship the fix") -> str:
    with Journal.open(path, actor=Actor.agent("agent-1")) as agent:
        run = agent.runs.start("shop", "deploy billing")
        return agent.approvals.request(run.id, ACTION, reason=reason).id


def click_approve(qtbot, window, detail, reason: str) -> None:
    detail.reason.setFocus()
    qtbot.keyClicks(detail.reason, reason)
    settled(qtbot, window)  # a click on what has just appeared does nothing
    qtbot.waitUntil(detail.approve_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(detail.approve_button, LEFT)


def test_two_desks_complete_a_two_person_approval(qtbot, journal_path, open_desk):
    two_of_ops(journal_path)
    first = open_desk(journal_path, operator="alice")
    second = open_desk(journal_path, operator="bob")
    approval_id = ask(journal_path)
    key = f"approval:{approval_id}"

    alice = Desk(qtbot, first).open_inbox_item(key, presented=True)
    assert "0 of 2 approvals; waiting for ops" in alice.policy_line.text()
    assert not alice.edit_button.isEnabled()  # approved once, as asked, under a policy
    click_approve(qtbot, first, alice, "invoice checked")
    # the first desk: still waiting, "1 of 2", its Approve off and the reason said
    qtbot.waitUntil(lambda: "1 of 2 approvals" in alice.policy_line.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not alice.approve_button.isEnabled(), timeout=WAIT_MS)
    assert "alice approved at" in alice.policy_line.text()
    assert "(“invoice checked”)" in alice.policy_line.text()
    assert alice.turn_note.isVisible()
    assert "You already approved this request; it waits for ops" in alice.turn_note.text()
    model = first.inbox.model
    qtbot.waitUntil(
        lambda: (row := model.row_of(key)) >= 0 and model.item(row).progress == "1 of 2",
        timeout=WAIT_MS,
    )
    with Journal.open(journal_path, actor=Actor.agent("agent-1")) as agent:
        assert agent.approvals.wait(approval_id, timeout=0).status == ApprovalStatus.PENDING

    # the second desk: alice's reason, the same full action; bob approves
    bob = Desk(qtbot, second).open_inbox_item(key, presented=True)
    qtbot.waitUntil(lambda: "1 of 2 approvals" in bob.policy_line.text(), timeout=WAIT_MS)
    assert "alice approved at" in bob.policy_line.text()
    assert "(“invoice checked”)" in bob.policy_line.text()
    assert bob.entity.action == ACTION
    assert bob.entity.action_digest == alice.entity.action_digest
    assert not bob.turn_note.isVisible()
    click_approve(qtbot, second, bob, "release notes read")
    with Journal.open(journal_path, actor=Actor.agent("agent-1")) as agent:
        qtbot.waitUntil(
            lambda: agent.approvals.get(approval_id).status == ApprovalStatus.APPROVED,
            timeout=WAIT_MS,
        )
        decided = agent.approvals.wait(approval_id, timeout=0)
        assert decided.status == ApprovalStatus.APPROVED
        assert decided.decided_by == "operator:bob"
        agent.approvals.consume_and_reserve(approval_id, decided.action_digest, "deploy-1")
    Desk(qtbot, second).wait_gone(second.inbox.model, key)


def test_a_second_approve_that_races_the_button_is_refused_clearly(qtbot, journal_path, open_desk):
    two_of_ops(journal_path)
    first = open_desk(journal_path, operator="alice")
    approval_id = ask(journal_path)
    key = f"approval:{approval_id}"
    alice = Desk(qtbot, first).open_inbox_item(key, presented=True)
    stale = first.inbox.current_item()  # the row as it was before her step
    click_approve(qtbot, first, alice, "invoice checked")
    qtbot.waitUntil(lambda: "1 of 2 approvals" in alice.policy_line.text(), timeout=WAIT_MS)
    assert not first.registry.trigger("inbox.approve")  # the command is off too
    # a second approve that raced the reload: the core refuses it, the desk says why
    current = first.inbox.current_item()
    first.inbox.decider.approve(current if current is not None else stale)
    qtbot.waitUntil(lambda: "already approved" in alice.message.text(), timeout=WAIT_MS)
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        assert len(bob.policies.progress(approval_id).steps) == 1


def test_waiting_for_me_and_assign_to_me(qtbot, journal_path, open_desk):
    two_of_ops(journal_path)
    window = open_desk(journal_path, operator="alice")
    governed = ask(journal_path, "two people")
    with Journal.open(journal_path, actor=Actor.agent("agent-1")) as agent:
        run = agent.runs.start("shop", "read")
        plain = agent.approvals.request(run.id, {"tool": "read", "args": {}}, reason="plain").id
    desk, inbox = Desk(qtbot, window), window.inbox
    desk.inbox_row(f"approval:{plain}")
    inbox.filters.mine.setCurrentIndex(inbox.filters.mine.findData("waiting_for"))
    desk.wait_row(inbox.model, f"approval:{governed}")
    assert inbox.model.row_of(f"approval:{plain}") < 0
    # assign the plain one to me, from everyone's items; then "Assigned to me" keeps it
    inbox.filters.mine.setCurrentIndex(0)
    detail = desk.open_inbox_item(f"approval:{plain}", presented=True)
    assert window.registry.trigger("inbox.assign")
    qtbot.waitUntil(lambda: "Assigned to alice" in detail.policy_line.text(), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: inbox.model.item(inbox.model.row_of(f"approval:{plain}")).assignee == "alice",
        timeout=WAIT_MS,
    )
    assert not window.registry.trigger("inbox.assign")  # already mine
    inbox.filters.mine.setCurrentIndex(inbox.filters.mine.findData("assigned_to"))
    desk.wait_row(inbox.model, f"approval:{plain}")
    assert inbox.model.row_of(f"approval:{governed}") < 0
    with Journal.open(journal_path, actor=Actor.operator("bob")) as bob:
        [decision] = [d for d in bob.approvals.decisions(plain) if d.target_kind == "assignment"]
        assert decision.actor == "operator:alice"


def test_notifications_go_only_to_whom_the_request_waits_for(qtbot, journal_path, open_desk):
    two_of_ops(journal_path)
    desks = {name: open_desk(journal_path, operator=name) for name in ("alice", "dave")}
    told: dict[str, list[str]] = {name: [] for name in desks}
    for name, window in desks.items():
        window.arrivals.arrived.connect(
            lambda items, name=name: told[name].extend(i.id for i in items)
        )
    governed = ask(journal_path, "two people")
    plain_id = None
    with Journal.open(journal_path, actor=Actor.agent("agent-1")) as agent:
        run = agent.runs.start("shop", "read")
        plain_id = agent.approvals.request(run.id, {"tool": "read", "args": {}}, reason="p").id
    qtbot.waitUntil(lambda: plain_id in told["dave"] and plain_id in told["alice"], timeout=WAIT_MS)
    assert governed in told["alice"]
    assert governed not in told["dave"]  # dave is in no group of its policy


def test_an_escalation_is_news_to_the_group_it_reaches(qtbot, journal_path, open_desk, monkeypatch):
    """A request escalates by time alone — nothing is written then — yet the escalation's
    group hears of it as of a new request (once); what waited before the desk opened is not
    news, and someone the request never waits for hears nothing."""
    from proctor.gui.shell.notify import Arrivals

    monkeypatch.setattr(Arrivals, "escalation_tick_ms", 200)
    with Journal.open(journal_path, actor=Actor.operator("alice")) as admin:
        admin.policies.add_member("ops", "alice", reason="on call")
        admin.policies.add_member("ops", "bob", reason="on call")
        admin.policies.add_member("managers", "carol", reason="escalations")
        admin.policies.add(
            PolicyDraft(
                name="two of ops, then managers",
                action_pattern="deploy",
                stages=[PolicyStage(groups=["ops"], need=2)],
                escalate_after=2.0,
                escalate_to="managers",
            )
        )
    desks = {name: open_desk(journal_path, operator=name) for name in ("carol", "dave")}
    told: dict[str, list[str]] = {name: [] for name in desks}
    for name, window in desks.items():
        window.arrivals.arrived.connect(
            lambda items, name=name: told[name].extend(i.id for i in items)
        )
    governed = ask(journal_path, "ship it")
    with Journal.open(journal_path) as j:
        assert j.policies.progress(governed).waiting_for == ["ops"]  # not carol's yet
    qtbot.waitUntil(lambda: governed in told["carol"], timeout=WAIT_MS)
    with Journal.open(journal_path) as j:
        assert "managers" in j.policies.progress(governed).waiting_for
    for _ in range(3):  # a few more looks: told once
        with qtbot.waitSignal(desks["carol"].arrivals._tick.timeout, timeout=WAIT_MS):
            pass
    assert told["carol"].count(governed) == 1
    assert governed not in told["dave"]
