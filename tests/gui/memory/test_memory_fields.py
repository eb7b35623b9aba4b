"""Issue 6 review, desk side: the conflict view's field differences show what the incoming
version carries (and Take incoming applies it); an incoming sensitivity masks both sides;
the Memory page sorts by last use; the history names the run event of each change."""

from __future__ import annotations

from PySide6.QtCore import Qt

from proctor.core import Actor, Journal
from proctor.gui.decide.conflict_view import NOT_CARRIED

from ..conftest import WAIT_MS
from .test_memory_flow import LEFT, open_conflict, open_entry, store


def rows(model) -> dict[str, tuple[str, str, bool]]:
    """Field -> (local, incoming, shown bold) as the table shows them."""
    out = {}
    for r in range(model.rowCount()):
        cells = [model.index(r, c).data() for c in range(3)]
        bold = model.index(r, 0).data(Qt.ItemDataRole.FontRole)
        out[cells[0]] = (cells[1], cells[2], bool(bold and bold.bold()))
    return out


def test_field_differences_show_and_take_incoming_applies_them(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add(
            "project",
            "shop",
            "Deploy day",
            "deploys on Tuesday",
            kind="fact",
            priority=1,
            trust="agent_observed",
        )
        item = a.memory.record_conflict(
            entry.id,
            "deploys on Thursday",
            incoming_source="sync from laptop",
            incoming_kind="decision",
            incoming_priority=1,
            incoming_trust="user_confirmed",
        )
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_conflict(qtbot, page, item.id)
    shown = rows(page.review.fields)
    assert shown["Kind"] == ("fact", "decision", True)
    assert shown["Trust"] == ("agent observed", "user confirmed", True)
    assert shown["Priority"] == ("1", "same", False)
    assert shown["Sensitivity"] == ("normal", NOT_CARRIED, False)
    qtbot.keyClicks(page.review.reason, "the team decided")
    qtbot.mouseClick(page.review.take_button, LEFT)
    qtbot.waitUntil(lambda: "Took incoming" in page.message.text(), timeout=WAIT_MS)
    with store(journal_path) as j:
        got = j.memory.get(entry.id)
        assert (got.content, got.kind, got.priority, got.trust.value, got.confirmed) == (
            "deploys on Thursday",
            "decision",
            1,
            "user_confirmed",
            True,
        )
        assert len(j.memory.history(entry.id)) == 2


def test_an_incoming_sensitivity_masks_both_versions(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        entry = a.memory.add("user", "bob", "Bob's phone", "ask bob", sensitivity="normal")
        item = a.memory.record_conflict(
            entry.id, "+1 555 0199", incoming_source="sync", incoming_sensitivity="personal"
        )
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_conflict(qtbot, page, item.id)
    assert rows(page.review.fields)["Sensitivity"] == ("normal", "personal", True)
    assert "0199" not in page.review.incoming.toPlainText()
    assert "personal" in page.review.incoming.toPlainText()
    assert not page.review.take_button.isEnabled()
    qtbot.mouseClick(page.review.reveal_button, LEFT)
    qtbot.waitUntil(lambda: page.review.incoming.text() == "+1 555 0199", timeout=WAIT_MS)
    # the two versions are compared on the presentation pool after the reveal: Take
    # becomes available once the comparison is on screen
    qtbot.waitUntil(page.review.take_button.isEnabled, timeout=WAIT_MS)


def shown(page) -> list[str]:
    return [e.id for e in page.model.items()]


def test_last_used_sort_follows_the_agents_reads(qtbot, journal_path, open_desk):
    clock = iter(range(1_000, 10_000, 10))
    with Journal.open(
        journal_path, actor=Actor.agent("coder"), clock=lambda: float(next(clock))
    ) as a:
        ids = [a.memory.add("project", "shop", f"Rule {n}", f"rule {n}").id for n in range(4)]
        a.memory.mark_used([ids[2]])
        a.memory.mark_used([ids[0]])
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    page.sort.setCurrentIndex(page.sort.findText("Recently used"))
    expected_head = [ids[0], ids[2]]
    qtbot.waitUntil(lambda: shown(page)[:2] == expected_head, timeout=WAIT_MS)
    column = page.model.headerData  # the "Last used" column says "never" for unread ones
    used_col = next(
        c
        for c in range(page.model.columnCount())
        if column(c, Qt.Orientation.Horizontal) == "Last used"
    )
    assert {page.model.index(page.model.row_of(i), used_col).data() for i in (ids[1], ids[3])} == {
        "never"
    }
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        a.memory.mark_used([ids[3]])  # now (real clock) is after every stamp above
    qtbot.waitUntil(lambda: shown(page)[:3] == [ids[3], *expected_head], timeout=WAIT_MS)
    page.sort.setCurrentIndex(page.sort.findText("Least recently used"))
    qtbot.waitUntil(lambda: shown(page) == [ids[1], ids[2], ids[0], ids[3]], timeout=WAIT_MS)


def test_history_names_the_run_event_of_each_change(qtbot, journal_path, open_desk):
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "memory run", agent="coder")
        entry = a.memory.add("project", "shop", "Deploy day", "Tuesday", run_id=run.id)
        a.memory.replace(entry.id, "Thursday", expected_version=1, run_id=run.id)
        sequences = [m.event_sequence for m in a.memory.history(entry.id)]
    window = open_desk(journal_path)
    window.go("memory")
    page = window.memory
    open_entry(qtbot, page, entry.id)
    history = page.entry.history
    source = [history.index(r, history.columnCount() - 1).data() for r in range(history.rowCount())]
    assert all(s is not None for s in sequences)
    assert source == [f"run {run.id[:12]}… · event #{s}" for s in sequences]
    assert page.entry.change_run_button.text().endswith(f"(event #{sequences[-1]})")
    qtbot.mouseClick(page.entry.change_run_button, LEFT)
    assert window.current_page_id() == "runs"  # the run opens at that change's event
    events = window.runs.detail.events_pane
    qtbot.waitUntil(
        lambda: events.detail.shown is not None and events.detail.shown.sequence == sequences[-1],
        timeout=WAIT_MS,
    )
    assert events.detail.shown.type == "memory.changed"
