"""Memory review end to end: an agent process creates conflicting versions, the desk shows
the conflict live, the operator merges it through the widgets; a second desk's stale click
is refused with who won; edits, remove/restore and reveals go through the store.

Run as a script, this file is the agent process (``python test_memory_flow.py JOURNAL``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proctor.core import Actor, Journal, errors

LOCAL = "Deploys happen on Tuesday.\nNever on Friday.\nFreeze in December.\n"
INCOMING = "Deploys happen on Thursday.\nNever on Friday.\n"
MERGED = "Deploys happen on Thursday.\nNever on Friday.\nFreeze in December.\n"


def agent_main(path: str) -> int:
    """Two agents write one entry; the stale writer records a conflict (as a sync would)."""
    researcher = Journal.open(path, actor=Actor.agent("researcher"))
    run = researcher.runs.start("shop", "learn the deploy rules", agent="researcher")
    entry = researcher.memory.add(
        "project",
        "shop",
        "Deploy window",
        "Deploys happen on Tuesday.\nNever on Friday.\n",
        run_id=run.id,
        reason="read the runbook",
    )
    with Journal.open(path, actor=Actor.agent("planner")) as planner:
        planner.memory.replace(entry.id, LOCAL, expected_version=1, reason="freeze added")
    try:
        researcher.memory.replace(entry.id, INCOMING, expected_version=1, run_id=run.id)
    except errors.StaleVersion:
        current = researcher.memory.get(entry.id)
        item = researcher.memory.record_conflict(
            entry.id,
            INCOMING,
            incoming_source=f"researcher (run {run.id})",
            run_id=run.id,
            local_version=current.version,
        )
        print(f"CONFLICT {item.id} {entry.id}", flush=True)
    researcher.close()
    return 0


if __name__ == "__main__":
    sys.exit(agent_main(sys.argv[1]))

# ---------------------------------------------------------------- the tests

from PySide6.QtCore import Qt  # noqa: E402

from proctor.gui.widgets.dialogs import ReasonDialog  # noqa: E402

from ..conftest import WAIT_MS, wait_presented  # noqa: E402
from ..driver import Desk  # noqa: E402

LEFT = Qt.MouseButton.LeftButton


def run_agent(qtbot, path: Path) -> list[str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=WAIT_MS)
    out = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 0, out
    return out.split()


def open_conflict(qtbot, page, item_id: str) -> None:
    Desk(qtbot, page.window()).open_memory_conflict(item_id)


def open_entry(qtbot, page, entry_id: str) -> None:
    Desk(qtbot, page.window()).open_memory_entry(entry_id, click=True)


def store(path: Path) -> Journal:
    return Journal.open(path, read_only=True)


def facts(path: Path, entry_id: str, item_id: str) -> dict:
    with store(path) as j:
        return {
            "entry": j.memory.get(entry_id),
            "history": j.memory.history(entry_id),
            "audit": j.audit.count(),
            "item": j.memory.conflict(item_id),
            "item_audit": j.audit.for_entity(item_id),
            "decisions": j.approvals.decisions(item_id),
        }


def test_agent_conflict_merged_at_the_desk_and_a_stale_desk_is_refused(
    qtbot, journal_path, open_desk
):
    alice, bob = open_desk(journal_path, "alice"), open_desk(journal_path, "bob")
    for window in (alice, bob):
        window.go("memory")
    _, item_id, entry_id = run_agent(qtbot, journal_path)
    for window in (alice, bob):  # both desks were open before the agent wrote: live
        open_conflict(qtbot, window.memory, item_id)
    qtbot.waitUntil(lambda: alice.inbox.model.row_of(f"conflict:{item_id}") >= 0, timeout=WAIT_MS)
    bob.services.watcher.pause()  # bob clicks before his desk has seen alice's decision
    before = facts(journal_path, entry_id, item_id)
    review = alice.memory.review
    assert review.local.text() == LOCAL and review.incoming.text() == INCOMING
    assert ("delete", "Tuesday") in review.local.marked()
    assert ("insert", "Thursday") in review.incoming.marked()
    qtbot.mouseClick(review.merge_button, LEFT)
    assert review.merging()
    prefilled = review.merge_editor.toPlainText()
    assert "Tuesday" in prefilled and "Thursday" in prefilled and "Freeze" in prefilled
    review.merge_editor.setPlainText(MERGED)
    qtbot.keyClicks(review.reason, "Thursday is right; the freeze stays")
    qtbot.mouseClick(review.merge_button, LEFT)
    qtbot.waitUntil(lambda: "Merged" in alice.memory.message.text(), timeout=WAIT_MS)

    after = facts(journal_path, entry_id, item_id)
    assert after["entry"].content == MERGED
    assert after["entry"].version == before["entry"].version + 1
    new = after["history"][len(before["history"]) :]
    assert len(new) == 1
    assert (new[0].operation, new[0].actor, new[0].version) == (
        "reconcile_merged",
        "operator:alice",
        before["entry"].version + 1,
    )
    assert (new[0].before_content, new[0].after_content) == (LOCAL, MERGED)
    assert new[0].reason == "Thursday is right; the freeze stays"
    assert after["audit"] == before["audit"] + 1
    assert [a.action for a in after["item_audit"]] == ["memory.conflict_merged"]
    assert len(after["decisions"]) == 1
    assert after["item"].status.value == "merged"
    assert after["item"].resolved_by == "operator:alice"
    qtbot.waitUntil(lambda: alice.memory.conflicts.row_of(item_id) < 0, timeout=WAIT_MS)

    stale = bob.memory.review
    assert stale.is_pending()
    qtbot.keyClicks(stale.reason, "take theirs")
    qtbot.mouseClick(stale.take_button, LEFT)
    qtbot.waitUntil(
        lambda: "already merged by operator:alice" in bob.memory.message.text(), timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: not stale.is_pending(), timeout=WAIT_MS)
    assert stale.state.text().startswith("Merged by operator:alice")
    assert not stale.take_button.isEnabled()
    again = facts(journal_path, entry_id, item_id)
    assert (again["entry"], again["history"], again["audit"], again["decisions"]) == (
        after["entry"],
        after["history"],
        after["audit"],
        after["decisions"],
    )


def test_entry_changed_while_reviewing_is_shown_and_never_overwritten(
    qtbot, journal_path, open_desk
):
    window = open_desk(journal_path)
    window.go("memory")
    _, item_id, entry_id = run_agent(qtbot, journal_path)
    page = window.memory
    open_conflict(qtbot, page, item_id)
    review = page.review
    seen = review.data.entry.version
    with Journal.open(journal_path, actor=Actor.agent("planner")) as planner:
        planner.memory.replace(entry_id, LOCAL + "Hotfixes any day.\n", expected_version=seen)
    qtbot.waitUntil(lambda: review.data.entry.version == seen + 1, timeout=WAIT_MS)
    wait_presented(qtbot)  # Take and Merge wait for the new diff to be shown
    assert f"version {seen} → {seen + 1}" in review.notice.text()
    assert "Hotfixes" in review.local.text()
    window.services.watcher.pause()  # the next change lands between look and click
    with Journal.open(journal_path, actor=Actor.agent("planner")) as planner:
        planner.memory.replace(entry_id, "Rewritten by a third agent.\n", expected_version=seen + 1)
    qtbot.keyClicks(review.reason, "incoming is newer")
    qtbot.mouseClick(review.take_button, LEFT)
    qtbot.waitUntil(
        lambda: "you reviewed this conflict against version" in window.memory.message.text(),
        timeout=WAIT_MS,
    )
    with store(journal_path) as j:
        assert j.memory.get(entry_id).content == "Rewritten by a third agent.\n"
        assert j.memory.conflict(item_id).status.value == "pending"
    qtbot.waitUntil(lambda: review.data.entry.version == seen + 2, timeout=WAIT_MS)
    assert "Rewritten" in review.local.text()


def test_edit_remove_restore_keep_every_version(qtbot, journal_path, open_desk, monkeypatch):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add("project", "shop", "Cache TTL", "The cache lives for 60 s.")
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    detail = page.entry
    qtbot.mouseClick(detail.edit_button, LEFT)
    assert detail.editing() and detail.editor.toPlainText() == entry.content
    detail.editor.setPlainText("The cache lives for 300 s.")
    qtbot.keyClicks(detail.edit_reason, "measured in prod")
    qtbot.keyClick(detail.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(
        lambda: detail.data.entry.version == 2 and not detail.editing(), timeout=WAIT_MS
    )
    monkeypatch.setattr(ReasonDialog, "ask", classmethod(lambda *a, **k: "obsolete"))
    qtbot.mouseClick(detail.remove_button, LEFT)
    qtbot.waitUntil(lambda: page.model.row_of(entry.id) < 0, timeout=WAIT_MS)  # live only
    page.removed.setCurrentIndex(page.removed.findData(True))
    open_entry(qtbot, page, entry.id)
    assert detail.remove_button.text() == "Res&tore"
    qtbot.mouseClick(detail.remove_button, LEFT)
    qtbot.waitUntil(
        lambda: detail.data.entry.version == 4 and not detail.data.entry.deleted, timeout=WAIT_MS
    )
    with store(journal_path) as j:
        history = j.memory.history(entry.id)
        assert [(m.version, m.operation) for m in history] == [
            (1, "add"),
            (2, "replace"),
            (3, "remove"),
            (4, "restore"),
        ]
        assert [m.after_content for m in history] == [entry.content] + [
            "The cache lives for 300 s."
        ] * 3
        assert history[1].reason == "measured in prod" and history[2].reason == "obsolete"
        assert j.memory.get(entry.id).trust.value == "operator_edited"
    assert detail.history.rowCount() == 4
    detail.history_view.selectRow(1)
    wait_presented(qtbot)
    assert detail.diff.marked() == [("delete", "60"), ("insert", "300")]
    detail.history_view.selectRow(2)
    wait_presented(qtbot)
    assert "content unchanged" in detail.diff_note.text()


def test_a_stale_edit_is_refused_and_keeps_the_text(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add("project", "shop", "Owner", "Team A owns checkout.")
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    detail = page.entry
    qtbot.mouseClick(detail.edit_button, LEFT)
    detail.editor.setPlainText("Team B owns checkout.")
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        a.memory.replace(entry.id, "Team C owns checkout.", expected_version=1)
    qtbot.waitUntil(
        lambda: "changed while you were editing" in detail.message.text(), timeout=WAIT_MS
    )
    qtbot.mouseClick(detail.save_button, LEFT)
    qtbot.waitUntil(lambda: "at version 2, you saw 1" in detail.message.text(), timeout=WAIT_MS)
    assert detail.editing() and detail.editor.toPlainText() == "Team B owns checkout."
    with store(journal_path) as j:
        assert j.memory.get(entry.id).content == "Team C owns checkout."


def test_sensitive_entries_are_masked_until_an_audited_reveal(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add("user", "bob", "Bob's phone", "+1 555 0100", sensitivity="personal")
        item = a.memory.record_conflict(entry.id, "+1 555 0199", incoming_source="sync")
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    row = page.model.row_of(entry.id)
    assert page.model.index(row, 1).data() == "(hidden: personal)"
    assert "0100" not in page.entry.content.toPlainText()
    open_conflict(qtbot, page, item.id)
    assert "0100" not in page.review.local.toPlainText()
    assert not page.review.take_button.isEnabled() and not page.review.merge_button.isEnabled()
    assert page.review.keep_button.isEnabled()
    qtbot.mouseClick(page.review.reveal_button, LEFT)
    qtbot.waitUntil(lambda: page.review.local.text() == "+1 555 0100", timeout=WAIT_MS)
    wait_presented(qtbot)  # Take and Merge wait for the new diff to be shown
    assert page.review.take_button.isEnabled()
    assert page.model.index(row, 1).data() == "+1 555 0100"
    with store(journal_path) as j:
        reveals = [a for a in j.audit.for_entity(entry.id) if a.action == "memory.reveal"]
        assert len(reveals) == 1 and reveals[0].actor == "operator:alice"
    open_entry(qtbot, page, entry.id)
    assert page.entry.content.toPlainText() == "+1 555 0100"  # revealed once per desk
