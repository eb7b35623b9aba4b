"""Signed decisions from the desk: the desk signs with the operator's key (made on first
use), a trusting agent accepts what it signed, the run's "Approvals & questions" tab marks
each decision signed-by-whom / unsigned, the integrity view counts them, and Preferences
shows the key's fingerprint."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from proctor.core import Actor, Journal, errors
from proctor.core.decisions.keys import KeyStore, trust_file
from proctor.gui.runs.facts import TABS
from proctor.gui.shell.preferences import PreferencesDialog, prefs_from

from .conftest import WAIT_MS
from .runs.test_runs_detail import open_run


def test_the_desk_makes_a_key_on_first_use(tmp_path, monkeypatch):
    from proctor.gui.shell.app import open_for_desk

    monkeypatch.setenv("PROCTOR_KEYS_DIR", str(tmp_path / "keys"))
    journal = open_for_desk(tmp_path / "j.db", Actor.operator("carol"), read_only=False)
    try:
        assert journal.signer is not None and journal.signer.name == "carol"
        assert KeyStore(tmp_path / "keys").load("carol").key_id == journal.signer.key_id
    finally:
        journal.close()


def test_a_desk_approval_is_signed_and_a_trusting_agent_accepts_it(
    qtbot, populated, open_desk, tmp_path
):
    path, ids = populated
    key, _ = KeyStore(tmp_path / "keys").init("alice")
    trust = trust_file([{"name": "alice", "public_key": key.public_key}])
    window = open_desk(path, signer=key)
    detail = open_run(qtbot, window, ids["run"])
    pending = detail.pending
    qtbot.waitUntil(lambda: pending.count() == 3, timeout=WAIT_MS)
    row = next(
        r
        for r in range(3)
        if pending.items.item(r).data(Qt.ItemDataRole.UserRole + 1).id == ids["approval"]
    )
    pending.list.setCurrentIndex(pending.items.index(row, 0))
    widget = pending.detail.current()
    qtbot.waitUntil(
        lambda: widget.entity is not None and widget.entity.id == ids["approval"], timeout=WAIT_MS
    )
    assert pending.registry.trigger("inbox.approve")
    qtbot.waitUntil(lambda: pending.count() == 2, timeout=WAIT_MS)

    with Journal.open(path, actor=Actor.agent("coder"), trust=trust) as agent:
        approval = agent.approvals.wait(ids["approval"], timeout=0)
        assert approval.status.value == "approved"
        agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "k1")
    with Journal.open(
        path,
        actor=Actor.agent("coder"),
        trust=trust_file(
            [{"name": "x", "public_key": KeyStore(tmp_path / "other").init("x")[0].public_key}]
        ),
    ) as stranger:
        with pytest.raises(errors.DecisionUnverified) as refused:
            stranger.approvals.wait(ids["approval"], timeout=0)
        assert refused.value.why == "unknown_key"

    names = [t.name for t in TABS]
    tab = detail.fact_tabs[names.index("Approvals & questions")]
    model = tab.model
    column = [
        model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())
    ].index("Signature")
    qtbot.waitUntil(
        lambda: any(
            "signed by alice" in (model.data(model.index(r, column)) or "")
            for r in range(model.rowCount())
        ),
        timeout=WAIT_MS,
    )

    detail.tabs.setCurrentWidget(detail.integrity)
    qtbot.waitUntil(lambda: detail.integrity.status is not None, timeout=WAIT_MS)
    assert "Decisions: 1 signed" in detail.integrity.result.text()


def test_preferences_show_the_fingerprint_and_say_a_file_key_is_weaker(qtbot, tmp_path, settings):
    key, _ = KeyStore(tmp_path / "keys").init("alice")
    dialog = PreferencesDialog(None, prefs_from(settings), key)
    qtbot.addWidget(dialog)
    assert key.fingerprint in dialog.key.text()
    assert "weaker" in dialog.key.text()
    unsigned = PreferencesDialog(None, prefs_from(settings), None)
    qtbot.addWidget(unsigned)
    assert "unsigned" in unsigned.key.text()
    json.dumps(dialog.key.text())


def test_the_windows_preferences_show_its_signing_key(
    qtbot, journal_path, open_desk, tmp_path, monkeypatch
):
    key, _ = KeyStore(tmp_path / "keys").init("alice")
    window = open_desk(journal_path, signer=key)
    shown = []
    monkeypatch.setattr(PreferencesDialog, "exec", lambda self: shown.append(self.key.text()) or 0)
    window.edit_preferences()
    assert shown and key.fingerprint in shown[0]
