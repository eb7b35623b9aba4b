"""Agent text is data (DESIGN invariant 12): a journal whose every agent-supplied field
holds markup (<b>, <img onerror>, <a href>), a right-to-left override and ANSI escapes,
opened in the desk. The test walks every page, selects every row of every list (so every
detail pane, form, diff view, facts tab and tooltip is built), and fails on any place
that renders agent text as rich text (see hostile_walk.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractItemView, QTabWidget, QWidget

from proctor.core import Actor, Journal
from proctor.gui.shell import notify
from proctor.gui.widgets.labels import plain_tip
from proctor.gui.widgets.paged_model import ITEM_ROLE

from .conftest import WAIT_MS, wait_presented
from .hostile_walk import (
    CONTROLS,
    ESC,
    HOSTILE,
    RLO,
    TAGS,
    displayed_texts,
    is_agent_text,
    raw_controls,
    window_problems,
)

H = HOSTILE + CONTROLS
LONG = f"{H}\n{H}\n" + "x" * 600  # multi-line and long: shown with a tooltip in JSON trees
SCHEMA = {
    "type": "object",
    "title": H,
    "description": H,
    "required": ["pick"],
    "properties": {
        "pick": {"title": H, "description": H, "enum": [H, "ok"]},
        "note": {"type": "string", "title": H, "default": H},
    },
}
ROWS_PER_VIEW = 12


def populate_hostile(path: Path) -> dict[str, str]:
    """Markup in every field an agent controls."""
    ids = {}
    name = f"agent {H}"[:200]
    with Journal.open(path, actor=Actor.agent(name)) as a:
        run = a.runs.start(
            f"project {H}", f"title {H}", space=f"space {H}", agent=name, metadata={H: H}
        )
        ids["run"] = run.id
        a.runs.append_events(
            run.id,
            [(f"step.{n}<b>", {H: LONG, "n": n}) for n in range(5)]
            + [(f"type {RLO}{CONTROLS}", {"n": 9})],
        )
        call = a.runs.record_tool_call(run.id, f"tool {H}", {H: H}, idempotency_key=H)
        a.runs.finish_tool_call(call.id, "failed", result={H: H}, error=H)
        ids["approval"] = a.approvals.request(
            run.id, {"tool": H, "args": {H: LONG, "path": H}}, reason=H, safety_class="destructive"
        ).id
        for kind, extra in (
            ("question", {}),
            ("choice", {"options": [H, {"value": H, "label": H}]}),
            ("confirmation", {"request": {"summary": H}}),
            ("form", {"response_schema": SCHEMA, "request": {H: H}}),
            (
                "diff_review",
                {"request": {"diff": f"--- a\n+++ b\n@@ -1 +1 @@\n-{H}\n+{H}!\n", "path": H}},
            ),
            ("merge_conflict", {"request": {"ours": H, "theirs": H + "!", "base": H, "path": H}}),
            (
                "credential_binding",
                {"request": {"service": H, "scope": H, "suggested": [f"vault://{H}"]}},
            ),
            ("choice", {"options": [f"{n} {H}" for n in range(60)]}),
            ("memory_change_review", {"request": {"before": H, "after": H + "!"}}),
        ):
            ids[kind] = a.questions.ask(run.id, kind, f"{kind}: {H}", **extra).id
        entry = a.memory.add(
            "project", H, f"title {H}", f"content {H}", kind=H, run_id=run.id, reason=H
        )
        ids["conflict"] = a.memory.record_conflict(
            entry.id, f"incoming {H}", incoming_source=f"source {H}", run_id=run.id
        ).id
        key = f"effect {H}"
        a.effects.reserve(key, tool=f"tool {H}", run_id=run.id, action={H: LONG})
        a.effects.begin(key)
        a.effects.mark_ambiguous(key, f"reason {H}")
        ids["effect"] = key
        done = a.effects.reserve(f"done {H}", tool=H, run_id=run.id, action={H: H})
        a.effects.begin(done.key)
        a.effects.commit(done.key, {H: H}, external_id=H, evidence={H: H})
        ended = a.runs.start(f"project {H}", f"failed {H}", agent=name)
        a.runs.fail(ended.id, H)
    return ids


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "journal.db"
    return path, populate_hostile(path)


def settle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)
    wait_presented(qtbot)


REACHED: set[str] = set()  # widgets seen showing agent text (the walk really got there)


def findings(window) -> list[str]:
    """Markup rendered as rich text, and control characters shown raw."""
    shown = list(displayed_texts(window))
    REACHED.update(
        re.sub(r" cell \d+,\d+", "", where)
        for where, text in shown
        if is_agent_text(text) or "\\u202e" in text
    )
    raw = [
        f"{where}: raw {raw_controls(text)!r} in {text[:60]!r}"
        for where, text in shown
        if raw_controls(text)
    ]
    return window_problems(window) + raw


def visit(qtbot, window, root: QWidget, seen: set[int], problems: list[str]) -> None:
    """Select rows in every list under ``root`` and show every tab, checking as we go."""
    for tabs in root.findChildren(QTabWidget):
        for i in range(tabs.count()):
            tabs.setCurrentIndex(i)
            settle(qtbot, window)
            problems += findings(window)
    for view in root.findChildren(QAbstractItemView):
        model = view.model()
        if id(view) in seen or model is None or not view.isVisible():
            continue
        seen.add(id(view))
        for row in range(min(model.rowCount(), ROWS_PER_VIEW)):
            view.setCurrentIndex(model.index(row, 0))
            settle(qtbot, window)
            problems += findings(window)


def test_no_agent_text_is_ever_rendered_as_rich_text(qtbot, hostile, open_desk):
    """...nor shown with its control characters obeyed: a right-to-left override could make
    "exe.txt" read as "txt.exe", an ANSI escape could hide text in a copied terminal. Both
    are shown as visible escapes ("\\u202e", "\\x1b")."""
    path, ids = hostile
    window = open_desk(path)
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() >= 11, timeout=WAIT_MS)
    problems: list[str] = []
    seen: set[int] = set()
    for page_id in window.pages:
        window.go(page_id)
        settle(qtbot, window)
        visit(qtbot, window, window.pages[page_id], seen, problems)
    window.show_run(ids["run"])  # the run detail: events, facts tabs, timeline, integrity
    qtbot.waitUntil(lambda: window.runs.showing_run(), timeout=WAIT_MS)
    settle(qtbot, window)
    visit(qtbot, window, window.runs, seen, problems)
    assert sorted(set(problems)) == []
    wanted = {
        "Inbox items",
        "Action and arguments",
        "Side-by-side diff",
        "Effects",
        "Memory",
        "Audit",
        "Tool calls",
        "Run events",
    }
    assert {w for w in wanted if any(w in place for place in REACHED)} == wanted, REACHED
    assert len(REACHED) >= 40


def test_a_new_request_notification_shows_agent_text_literally(
    qtbot, hostile, open_desk, monkeypatch
):
    path, ids = hostile
    window = open_desk(path)
    shown = []
    window.notifier.notified.connect(lambda channel, text: shown.append((channel, text)))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    with Journal.open(path, actor=Actor.agent("late")) as a:
        a.approvals.request(ids["run"], {"tool": "late"}, reason=H)
    qtbot.waitUntil(lambda: bool(shown), timeout=WAIT_MS)
    settle(qtbot, window)
    assert window_problems(window) == []
    assert any(TAGS[1] in text for _, text in shown)  # the banner says it literally


class FakeTray:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def hide(self) -> None:
        pass

    def supportsMessages(self) -> bool:
        return True

    def showMessage(self, title, body, *args) -> None:
        self.messages.append((title, body))


def test_tray_notifications_cannot_carry_markup(qtbot, hostile, open_desk):
    """Desktop notification servers (freedesktop body-markup) render <b>, <a> and <img>:
    the tray text keeps the agent's words but not its tags."""
    path, ids = hostile
    window = open_desk(path)
    tray = FakeTray()
    window.notifier._tray = tray
    model = window.inbox.model
    item = model.index(model.row_of(f"approval:{ids['approval']}"), 0).data(ITEM_ROLE)
    window.notifier._window = QWidget()  # not the active window
    window.notifier.notify([item])
    [(_title, body)] = tray.messages
    assert "<" not in body and ">" not in body and "&" not in body
    assert "img src=x onerror=alert(1)" in body and RLO not in body


def test_plain_tip_escapes_markup():
    tip = plain_tip(H)
    assert "<b>" not in tip and "&lt;b&gt;" in tip
    assert notify.tray_safe(H).count("<") == 0


def test_screen_reader_text_of_inbox_rows_is_bounded_and_escaped(qtbot, tmp_path, open_desk):
    """A run title of 1 MB with bidi overrides and controls: the row's accessible text (what
    a screen reader reads) is short and shows them escaped."""
    from PySide6.QtCore import Qt

    path = tmp_path / "journal.db"
    title = f"{RLO}{CONTROLS}" + "t" * 1_000_000
    with Journal.open(path, actor=Actor.agent(f"agent {RLO}{ESC}[2J")) as a:
        run = a.runs.start("p", title, agent=f"agent {RLO}{ESC}[2J")
        a.approvals.request(run.id, {"tool": "x"}, reason=H)
    window = open_desk(path)
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=WAIT_MS)
    spoken = [
        model.index(0, c).data(Qt.ItemDataRole.AccessibleTextRole)
        for c in range(model.columnCount())
    ]
    spoken = [s for s in spoken if isinstance(s, str)]
    assert spoken and all(len(s) < 1000 and not raw_controls(s) for s in spoken)
    assert any("\\u202e" in s for s in spoken)
