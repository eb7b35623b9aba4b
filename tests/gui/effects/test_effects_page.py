"""The Effects page and the inbox's effect detail: two desks racing (one wins, the other
sees the winner), nothing but an ambiguous effect can be resolved, lapsed leases (and
only those) can be marked ambiguous, evidence and the second confirmation in the inbox,
the keyboard, and agent text shown as plain text."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from proctor.core import Actor, Journal, errors
from proctor.core.models import EffectStatus
from proctor.gui.widgets.dialogs import ConfirmDialog

from ..conftest import WAIT_MS
from ..driver import Desk

LEFT = Qt.MouseButton.LeftButton
HOSTILE = '<b>boom</b> <img src="http://example.invalid/x.png"> <a href="x">click</a>'


LAPSE_S = 1.5


def ambiguous(
    path,
    key: str,
    *,
    safety: str = "unsafe_write",
    why: str = "socket closed",
    lease: float = 30.0,
    begin: bool = True,
    mark: bool = True,
) -> str:
    with Journal.open(path, actor=Actor.agent("mailer")) as a:
        run = a.runs.start("crm", "send the welcome mails", agent="mailer")
        a.runs.record_tool_call(run.id, "send_mail", {"to": "new@example.com"}, safety_class=safety)
        a.effects.reserve(
            key,
            tool="send_mail",
            run_id=run.id,
            safety_class=safety,
            action={"to": "new@example.com", "body": HOSTILE},
            lease_seconds=lease,
            owner="mailer@1",
        )
        if begin:
            a.effects.begin(key, owner="mailer@1")
        if mark:
            a.effects.mark_ambiguous(key, why, owner="mailer@1")
        return run.id


def select(qtbot, page, key: str) -> None:
    Desk(qtbot, page.window()).open_effect(key)


def effects_page(open_desk, path, operator: str = "alice"):
    window = open_desk(path, operator)
    window.go("effects")
    return window, window.effects


def test_two_desks_one_wins_the_other_sees_the_winner(qtbot, journal_path, open_desk, monkeypatch):
    ambiguous(journal_path, "mail:1")
    alice, a_page = effects_page(open_desk, journal_path, "alice")
    bob, b_page = effects_page(open_desk, journal_path, "bob")
    select(qtbot, a_page, "mail:1")
    select(qtbot, b_page, "mail:1")
    bob.services.watcher.pause()  # bob clicks before his desk has seen alice's answer
    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(lambda *a, **k: True))
    qtbot.keyClicks(a_page.form.reason, "the SMTP log has no DATA ack")
    alice.activateWindow()
    qtbot.waitUntil(alice.isActiveWindow)
    qtbot.keyClick(a_page.form.reason, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: "Marked failed" in a_page.message.text(), timeout=WAIT_MS)

    qtbot.keyClicks(b_page.form.reason, "the customer got the mail")
    assert b_page.committed_button.isEnabled()  # bob still sees it ambiguous
    qtbot.mouseClick(b_page.committed_button, LEFT)
    qtbot.waitUntil(lambda: "is failed by operator:alice" in b_page.message.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: b_page.effect().status == EffectStatus.FAILED, timeout=WAIT_MS)
    assert b_page.view.state.text().startswith("Failed by operator:alice")
    assert "SMTP log" in b_page.view.state.text()
    assert not b_page.committed_button.isEnabled() and not b_page.form.isVisible()
    with Journal.open(journal_path, read_only=True) as j:
        effect = j.effects.get("mail:1")
        assert (effect.status, effect.resolved_by) == (EffectStatus.FAILED, "operator:alice")
        assert len(j.effects.receipts("mail:1")) == 1
        assert [a.action for a in j.audit.for_entity("mail:1")].count("effect.resolved_failed") == 1
        assert len(j.approvals.decisions("mail:1")) == 1


def test_only_ambiguous_effects_can_be_resolved(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "live:1", mark=False)
    with Journal.open(journal_path, actor=Actor.agent("mailer")) as a:
        a.effects.commit("live:1", {"id": 1}, owner="mailer@1", external_id="m-1")
    ambiguous(journal_path, "live:2", mark=False)
    window, page = effects_page(open_desk, journal_path)
    page.choose_filter("all")
    for key, status in (("live:1", EffectStatus.COMMITTED), ("live:2", EffectStatus.EXECUTING)):
        select(qtbot, page, key)
        assert page.effect().status == status
        assert not page.committed_button.isEnabled() and not page.failed_button.isEnabled()
        assert not page.form.isVisible()
        page.form.reason.setPlainText("try anyway")
        assert not page.resolve(EffectStatus.COMMITTED)
        assert not page.lapsed_button.isVisible()  # a live lease is never released
    assert page.view.facts["Lease"].text().startswith("held by mailer@1")
    select(qtbot, page, "live:1")
    assert page.view.receipts.rowCount() == 1 and page.view.evidence.isVisible()
    assert window.inbox.model.row_of("effect:live:1") < 0
    with Journal.open(journal_path, actor=Actor.operator("alice")) as op:
        for key in ("live:1", "live:2"):
            version = op.effects.get(key).version
            with pytest.raises(errors.AlreadyDecided):
                op.effects.resolve(key, "failed", reason="no", expected_version=version)
        assert op.effects.get("live:1").status == EffectStatus.COMMITTED
        assert op.effects.get("live:2").status == EffectStatus.EXECUTING


def test_lapsed_leases_and_only_those_can_be_marked_ambiguous(qtbot, journal_path, open_desk):
    ambiguous(journal_path, "lapse:1", lease=LAPSE_S, mark=False)
    lapsed_at = time.time() + LAPSE_S
    ambiguous(journal_path, "live:9", lease=600, mark=False)
    # a lease long enough that reserve -> begin fits in it on a loaded machine
    qtbot.waitUntil(lambda: time.time() > lapsed_at, timeout=WAIT_MS)
    _window, page = effects_page(open_desk, journal_path)
    page.choose_filter("lapsed")
    select(qtbot, page, "lapse:1")
    assert page.model.row_of("live:9") < 0
    assert page.lapsed_button.isVisible() and page.lapsed_button.isEnabled()
    assert "lease lapsed" in page.view.state.text()
    qtbot.mouseClick(page.lapsed_button, LEFT)
    qtbot.waitUntil(
        lambda: "Marked 1 lapsed effect ambiguous" in page.message.text(), timeout=WAIT_MS
    )
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("lapse:1").status == EffectStatus.AMBIGUOUS
        assert j.effects.get("live:9").status == EffectStatus.EXECUTING
    page.choose_filter("live")
    select(qtbot, page, "live:9")
    assert not page.lapsed_button.isVisible()
    page.mark_lapsed()  # refused by the page itself: the lease is live
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("live:9").status == EffectStatus.EXECUTING


def test_inbox_detail_asks_twice_and_keeps_the_evidence(
    qtbot, journal_path, open_desk, monkeypatch
):
    ambiguous(journal_path, "mail:7", why=HOSTILE)
    window = open_desk(journal_path)
    key = "effect:mail:7"
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(key))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.key == "mail:7"
        ),
        timeout=WAIT_MS,
    )
    detail = pane.current()
    assert detail.view.why.text() == HOSTILE  # shown as text, never as markup
    assert detail.view.why.label.textFormat() == Qt.TextFormat.PlainText
    asked: list[str] = []

    def ask(cls, parent, title, text, ok="OK"):
        asked.append(text)
        return False

    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(ask))
    assert window.registry.trigger("inbox.effect_failed")  # no reason yet: refused inline
    assert "Write a reason" in detail.form.message.text() and not asked
    qtbot.keyClicks(detail.form.reason, "no bounce, no delivery receipt")
    qtbot.keyClicks(detail.form.url, "https://mail.example/log/7")
    assert window.registry.trigger("inbox.effect_failed")
    assert asked and "not idempotent" in asked[0] and "attempt 2" in asked[0]
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:7").status == EffectStatus.AMBIGUOUS
    qtbot.keyClicks(detail.form.external, "msg-77")
    assert window.registry.trigger("inbox.effect_committed")
    qtbot.waitUntil(lambda: model.row_of(key) < 0, timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        [receipt] = j.effects.receipts("mail:7")
        assert receipt.external_id == "msg-77" and receipt.status == "committed"
        assert receipt.evidence["evidence"] == {"url": "https://mail.example/log/7"}
        assert receipt.evidence["prior_error"] is None
        assert receipt.evidence["ambiguous_reason"] == HOSTILE


def test_idempotent_writes_are_marked_failed_without_a_second_question(
    qtbot, journal_path, open_desk, monkeypatch
):
    ambiguous(journal_path, "put:1", safety="idempotent_write")
    _window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "put:1")
    assert "harmless" in page.form.risk.text()
    monkeypatch.setattr(
        ConfirmDialog,
        "ask",
        classmethod(lambda *a, **k: pytest.fail("no second confirmation for an idempotent write")),
    )
    qtbot.keyClicks(page.form.reason, "PUT is idempotent; let it run again")
    qtbot.mouseClick(page.failed_button, LEFT)
    qtbot.waitUntil(lambda: "Marked failed" in page.message.text(), timeout=WAIT_MS)


def test_a_slow_detail_read_never_lets_the_last_effect_take_the_next_ones_reason(
    qtbot, journal_path, open_desk, monkeypatch
):
    """Row B selected, its detail not read yet: the page still shows A, and pressing C must
    not resolve A with the reason typed for B."""
    import threading

    ambiguous(journal_path, "mail:A")
    ambiguous(journal_path, "mail:B")
    window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "mail:A")
    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(lambda *a, **k: True))
    service = page.journal.effects._service
    real, gate = service.context, threading.Event()

    def slow(key):
        if key == "mail:B":
            gate.wait(WAIT_MS / 1000)
        return real(key)

    monkeypatch.setattr(service, "context", slow)
    try:
        page.table.setCurrentIndex(
            page.model.index(Desk(qtbot, window).wait_row(page.model, "mail:B"), 0)
        )
        assert page.key == "mail:B" and page.effect().key == "mail:A"
        qtbot.keyClicks(page.form.reason, "the customer got mail B")
        assert not page.can_resolve()
        assert not window.registry.trigger("effects.committed")
        assert not page.resolve(EffectStatus.COMMITTED)
    finally:
        gate.set()
    qtbot.waitUntil(lambda: page.effect().key == "mail:B", timeout=WAIT_MS)
    assert page.can_resolve()
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:A").status == EffectStatus.AMBIGUOUS
        assert j.effects.get("mail:B").status == EffectStatus.AMBIGUOUS


def test_a_reload_while_the_outcome_is_written_keeps_the_commands_off(
    qtbot, journal_path, open_desk, monkeypatch
):
    """The lease tick or another process re-reads the effect while its outcome is on its way:
    C / F stay off until the write is done, so no second, contradictory outcome is sent."""
    import threading

    ambiguous(journal_path, "mail:1")
    window, page = effects_page(open_desk, journal_path)
    select(qtbot, page, "mail:1")
    monkeypatch.setattr(ConfirmDialog, "ask", classmethod(lambda *a, **k: True))
    service = page.journal.effects._service
    real, gate, entered = service.resolve, threading.Event(), threading.Event()

    def slow(*a, **k):
        entered.set()
        gate.wait(WAIT_MS / 1000)
        return real(*a, **k)

    monkeypatch.setattr(service, "resolve", slow)
    try:
        qtbot.keyClicks(page.form.reason, "the SMTP log has no DATA ack")
        assert window.registry.trigger("effects.failed")
        qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
        page.reload_detail()  # what the lease tick / a change from elsewhere does
        qtbot.waitUntil(
            lambda: (
                page.context is not None
                and page.context.effect.key == "mail:1"
                and bool(page.sending)
            ),
            timeout=WAIT_MS,
        )
        page.show_context(page.context)  # a detail read landing mid-write
        assert not page.can_resolve()
        assert not window.registry.trigger("effects.committed")
    finally:
        gate.set()
    qtbot.waitUntil(lambda: "Marked failed" in page.message.text(), timeout=WAIT_MS)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.effects.get("mail:1").status == EffectStatus.FAILED
        assert len(j.effects.receipts("mail:1")) == 1
