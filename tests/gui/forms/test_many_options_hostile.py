"""Issue 32 item 16: a choice with more than 50 options is listed (with a filter), and its
rows go through the same escaping as the buttons of a short choice: right-to-left overrides,
ESC and NUL never reach the screen. 10,000 hostile options, asked as an agent would (labels
given, and values without labels), in one and several-answer choices."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from PySide6.QtWidgets import QListWidget

from proctor.core import Actor, Journal

from ..driver import Desk

COUNT = 10_000
HOSTILE = "\u202eevil\u202c \x1b[2J\x1b]0;title\x07 \x00nul \u200bzw \u2066iso\u2069"


def hostile_options(labelled: bool) -> list:
    if labelled:
        return [{"value": f"v{n}", "label": f"{n} {HOSTILE}"} for n in range(COUNT)]
    return [f"{n} {HOSTILE}" for n in range(COUNT)]


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` that must never be drawn as themselves."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf")]


@pytest.mark.parametrize("labelled", [True, False], ids=["labels", "values"])
@pytest.mark.parametrize("multi", [False, True], ids=["one", "several"])
def test_ten_thousand_hostile_options_are_escaped(
    qtbot, journal_path: Path, open_desk, labelled: bool, multi: bool
) -> None:
    schema = None
    if multi:
        schema = {
            "type": "object",
            "properties": {"choice": {"type": "array", "items": {"type": "string"}}},
        }
    with Journal.open(journal_path, actor=Actor.agent("asker")) as j:
        run = j.runs.start("shop", "many options", agent="asker")
        qid = j.questions.ask(
            run.id,
            "choice",
            "Pick one",
            options=hostile_options(labelled),
            response_schema=schema,
        ).id
    window = open_desk(journal_path)
    detail = Desk(qtbot, window).open_question(qid)
    listing = detail.view.findChild(QListWidget)
    assert listing is not None and listing.count() == COUNT
    texts = [listing.item(n).text() for n in range(listing.count())]
    bad = [(n, unsafe(t)) for n, t in enumerate(texts) if unsafe(t)]
    assert bad == [], f"{len(bad)} rows draw control or bidi characters, e.g. {bad[:1]}"
    assert "\\u202e" in texts[0].lower() or "u+202e" in texts[0].lower()  # shown, visibly
    assert texts[7].startswith("7 ")
