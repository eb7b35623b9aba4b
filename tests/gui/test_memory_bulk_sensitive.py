"""Bulk "take incoming" never applies a version nobody has seen: a conflict whose entry or
incoming version is sensitive (hidden until an audited reveal) is refused and stays pending
for its own review; the others are taken."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.widgets.dialogs import ReasonDialog

from .conftest import WAIT_MS

LEFT = Qt.MouseButton.LeftButton


def test_bulk_take_incoming_refuses_what_is_hidden(qtbot, journal_path, open_desk,
                                                   monkeypatch):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        plain = a.memory.add("project", "shop", "Deploy day", "Tuesday")
        secret = a.memory.add("project", "shop", "Card on file", "ends 4242",
                              sensitivity="personal")
        claims = a.memory.add("project", "shop", "Home address", "unknown")
        ids = {name: a.memory.record_conflict(e.id, f"{name} incoming",
                                              incoming_source="sync", **kw).id
               for name, e, kw in (("plain", plain, {}), ("secret", secret, {}),
                                   ("claims", claims, {"incoming_sensitivity": "personal"}))}
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    qtbot.waitUntil(lambda: page.conflicts.rowCount() == 3, timeout=WAIT_MS)
    page.conflicts_table.setFocus()
    page.conflicts_table.selectAll()
    qtbot.waitUntil(lambda: page.right.currentWidget() is page.bulk)
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "sync is newer"))
    qtbot.mouseClick(page.bulk.buttons[next(iter(
        c for c in page.bulk.buttons if c.value == "accepted_incoming"))], LEFT)
    qtbot.waitUntil(lambda: "for 1 of 3 conflicts" in page.message.text(), timeout=WAIT_MS)
    assert "2 refused" in page.message.text() and "sensitive" in page.message.text()
    with Journal.open(journal_path, read_only=True) as j:
        status = {k: j.memory.reconciliation(v).status.value for k, v in ids.items()}
        assert j.memory.get(secret.id).content == "ends 4242"
    assert status == {"plain": "accepted_incoming", "secret": "pending", "claims": "pending"}
