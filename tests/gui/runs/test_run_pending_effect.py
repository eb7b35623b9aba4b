"""Resolving an ambiguous effect from a run's "Waiting for you" tab goes through the same
checks as the Inbox: a reason, the second confirmation for a non-idempotent write, and the
evidence kept."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.core.models import EffectStatus
from proctor.gui.widgets.dialogs import ConfirmDialog

from ..conftest import WAIT_MS

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1


def select_effect(qtbot, pending, key: str):
    qtbot.waitUntil(
        lambda: any(
            pending.items.item(r).data(ITEM_ROLE).id == key for r in range(pending.count())
        ),
        timeout=WAIT_MS,
    )
    row = next(r for r in range(pending.count()) if pending.items.item(r).data(ITEM_ROLE).id == key)
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and getattr(widget.entity, "key", "") == key,
        timeout=WAIT_MS,
    )
    return widget


def test_marking_failed_from_the_run_asks_twice_and_keeps_the_evidence(
    qtbot, populated, open_desk, monkeypatch
):
    path, ids = populated
    window = open_desk(path)
    window.show_run(ids["run2"])
    detail = window.runs.detail
    qtbot.waitUntil(
        lambda: detail.run is not None and detail.run.id == ids["run2"], timeout=WAIT_MS
    )
    pending = detail.pending
    widget = select_effect(qtbot, pending, ids["effect"])
    waiting = pending.count()
    assert widget.view.run_button.isHidden()  # one "Open run" (the detail's own), not two
    asked: list[str] = []
    answers = iter([False, True])
    monkeypatch.setattr(
        ConfirmDialog,
        "ask",
        classmethod(lambda cls, parent, title, *a, **k: asked.append(title) or next(answers)),
    )

    assert pending.registry.trigger("inbox.effect_failed")  # no reason yet: refused
    assert not asked and "Write a reason first" in widget.form.message.text()
    qtbot.keyClicks(widget.form.reason, "the mail server log has no DATA for it")
    qtbot.keyClicks(widget.form.url, "https://mail.example/log/42")
    assert pending.registry.trigger("inbox.effect_failed")  # the second confirmation says no
    assert asked == ["Mark failed — it may happen twice"]
    with Journal.open(path, read_only=True) as j:
        assert j.effects.get(ids["effect"]).status == EffectStatus.AMBIGUOUS

    assert pending.registry.trigger("inbox.effect_failed")
    qtbot.waitUntil(lambda: pending.count() == waiting - 1, timeout=WAIT_MS)
    with Journal.open(path, actor=Actor.operator("check")) as j:
        effect = j.effects.get(ids["effect"])
        receipts = j.effects.receipts(ids["effect"])
    assert effect.status == EffectStatus.FAILED and len(asked) == 2
    [resolution] = [r for r in receipts if r.kind == "resolution"] or receipts[-1:]
    assert resolution.evidence["evidence"] == {"url": "https://mail.example/log/42"}
    assert resolution.evidence["reason"] == "the mail server log has no DATA for it"
