"""Issue 32 item 15: an ambiguous effect's strongest evidence — a receipt the agent recorded
before it lost track (a provider's ``external id req_…``) — is on screen beside the resolve
buttons, on the Effects page and in the inbox's effect detail, not below the fold where
the buttons say "nobody knows whether it happened"."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

from proctor.core import Actor, Journal

from ..driver import Desk
from .test_effects_page import ambiguous

RECEIPT_ID = "req_8Xk2Lq9"
NEAR_PX = 160  # "beside the buttons": within this many pixels of the decision buttons


def effect_with_receipt(path: Path, key: str) -> None:
    ambiguous(path, key, mark=False)
    with Journal.open(path, actor=Actor.agent("mailer")) as a:
        a.effects.record_receipt(
            key, external_id=RECEIPT_ID, evidence={"smtp": "250 queued"}, owner="mailer@1"
        )
        a.effects.mark_ambiguous(key, "the process was killed", owner="mailer@1")


def on_screen(widget: QWidget) -> QRect:
    """The part of ``widget`` the operator can see, in global coordinates (empty if none)."""
    region = widget.visibleRegion().boundingRect()
    if region.isEmpty():
        return QRect()
    return QRect(widget.mapToGlobal(region.topLeft()), region.size())


def evidence_beside(host: QWidget, buttons: list[QAbstractButton]) -> list[str]:
    """The texts of labels on ``host`` naming the receipt that the operator can see within
    NEAR_PX of the resolve buttons."""
    around = QRect()
    for button in buttons:
        assert button.isVisible()
        around = around.united(on_screen(button))
    assert not around.isEmpty()
    near = around.adjusted(-NEAR_PX, -NEAR_PX, NEAR_PX, NEAR_PX)
    found = []
    for label in host.findChildren(QLabel):
        seen = on_screen(label) if label.isVisible() else QRect()
        if RECEIPT_ID in label.text() and not seen.isEmpty() and near.intersects(seen):
            found.append(label.text())
    return found


def test_effects_page_shows_the_receipt_beside_the_buttons(qtbot, journal_path, open_desk):
    effect_with_receipt(journal_path, "mail:receipt")
    window = open_desk(journal_path)
    window.resize(1280, 760)
    window.go("effects")
    page = window.effects
    Desk(qtbot, window).open_effect("mail:receipt")
    buttons = [page.committed_button, page.failed_button]
    qtbot.waitUntil(lambda: bool(evidence_beside(page, buttons)), timeout=10_000)
    [text] = evidence_beside(page, buttons)
    assert "external id" in text


def test_inbox_effect_detail_shows_the_receipt_beside_the_buttons(qtbot, journal_path, open_desk):
    effect_with_receipt(journal_path, "mail:receipt")
    window = open_desk(journal_path)
    window.resize(1280, 760)
    detail = Desk(qtbot, window).open_inbox_item("effect:mail:receipt")
    buttons = [
        b
        for b in detail.findChildren(QAbstractButton)
        if b.accessibleName()
        .replace("&", "")
        .startswith(("Mark effect committed", "Mark effect failed"))
    ]
    assert len(buttons) == 2, [b.accessibleName() for b in detail.findChildren(QAbstractButton)]
    qtbot.waitUntil(lambda: bool(evidence_beside(detail, buttons)), timeout=10_000)
    assert QPoint(0, 0) != buttons[0].mapToGlobal(QPoint(0, 0))
