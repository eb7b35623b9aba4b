"""The Raw JSON tab never drops what was typed (issue 32, item 6): a key the schema does not
allow is shown as a problem, switching to the Form tab keeps the raw answer as typed, and
nothing is sent. The desk refuses exactly the answers the CLI (``proctor answer --json``)
refuses: one check, the core's."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtCore import Qt

from proctor.cli import main
from proctor.core import Actor, Journal

from ..conftest import WAIT_MS
from ..driver import LEFT, Desk

S = {"type": "string"}
SCHEMA = {
    "type": "object",
    "properties": {
        "name": S,
        "where": {
            "type": "object",
            "properties": {"city": S},
            "additionalProperties": False,
        },
        "tags": {"type": "object", "patternProperties": {"^t_": S}, "additionalProperties": False},
    },
    "required": ["name"],
    "additionalProperties": False,
}
# (the answer typed, the field the core names, or None: the core accepts it)
ANSWERS = [
    ({"name": "Ada", "extra": "x"}, "extra"),
    ({"name": "Ada", "where": {"city": "Oslo", "zip": "0150"}}, "where/zip"),
    ({"name": "Ada", "tags": {"t_a": "1", "b": "2"}}, "tags/b"),
    ({"name": "Ada", "where": {"city": "Oslo"}, "tags": {"t_a": "1"}}, None),
]


def ask(journal_path) -> str:
    with Journal.open(journal_path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "addresses", agent="coder")
        return a.questions.ask(run.id, "form", "Where to?", response_schema=SCHEMA).id


def cli_refuses(journal_path, question_id: str, answer: dict, capsys) -> bool:
    """``proctor answer ID --json …`` run for real on a copy of the journal's state."""
    try:
        rc = main(
            ["--journal", str(journal_path), "answer", question_id, "--json", json.dumps(answer)]
        )
    except SystemExit as stop:
        rc = stop.code if isinstance(stop.code, int) else 1
    capsys.readouterr()
    return rc != 0


def click_tab(qtbot, tabs, index: int) -> None:
    bar = tabs.tabBar()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(index).center())


@pytest.mark.parametrize(("answer", "field"), ANSWERS, ids=[f or "allowed" for _a, f in ANSWERS])
def test_the_raw_tab_refuses_what_the_cli_refuses(
    qtbot, journal_path, open_desk, answer, field, capsys, monkeypatch
):
    question_id = ask(journal_path)
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(question_id)
    form = detail.view.form
    click_tab(qtbot, form.tabs, 1)  # "Raw JSON"
    assert form.raw_mode()
    form.raw.selectAll()
    qtbot.keyClicks(form.raw, json.dumps(answer))
    click_tab(qtbot, form.tabs, 0)  # back to "Form": what the form cannot hold stays typed
    if field is None:
        assert not form.raw_mode() and form.value() == answer
        qtbot.waitUntil(detail.submit_button.isEnabled, timeout=WAIT_MS)
        return
    assert form.value() == answer, "the key was dropped"  # kept raw, or held by the form
    if form.raw_mode():
        assert json.loads(form.raw.toPlainText()) == answer
        assert f"{field}: not expected here" in form.summary.text()
    else:
        assert "problem" in form.summary.text()
    assert f"{field}: not expected here" in form.problem_texts()
    assert form.summary.isVisible() and not detail.view.is_valid()
    assert not detail.submit_button.isEnabled()
    qtbot.mouseClick(detail.submit_button, LEFT)
    form.raw.setFocus()
    qtbot.keyClick(form.raw, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    Desk(qtbot, window).settle()
    with Journal.open(journal_path, read_only=True) as j:
        assert j.questions.get(question_id).status.value in ("requested", "presented")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    monkeypatch.setenv("PROCTOR_OPERATOR", "carol")
    assert cli_refuses(journal_path, question_id, answer, capsys)  # the same answer, refused
