"""The word-level diff behind memory history and conflict review: exact for unicode, long
texts and white space, and rendered as plain text with highlight formats only."""

from __future__ import annotations

import itertools
import random
import unicodedata

import pytest

from proctor.gui.decide.conflict_view import union_merge
from proctor.gui.widgets.text_diff import (
    DELETE,
    EQUAL,
    INSERT,
    DiffView,
    Piece,
    new_text,
    old_text,
    segments,
    whitespace_only,
    word_diff,
)


def changes(pieces: list[Piece]) -> list[tuple[str, str]]:
    return [(p.op, p.text) for p in pieces if p.op != EQUAL]


def exact(old: str, new: str) -> list[Piece]:
    pieces = word_diff(old, new)
    assert old_text(pieces) == old
    assert new_text(pieces) == new
    assert all(p.text for p in pieces)
    assert all(a.op != b.op for a, b in itertools.pairwise(pieces))
    return pieces


def test_one_word_changed_is_one_highlight():
    pieces = exact("the quick brown fox", "the slow brown fox")
    assert changes(pieces) == [(DELETE, "quick"), (INSERT, "slow")]


NFD = unicodedata.normalize("NFD", "café crème"), unicodedata.normalize("NFD", "café brûlée")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Grüße aus Köln", "Grüße aus Zürich", [(DELETE, "Köln"), (INSERT, "Zürich")]),
        ("会议在东京举行", "会议在京都举行", None),  # no spaces: the run is one word
        ("status 👍 ok", "status 👍🏽 ok", [(DELETE, "👍"), (INSERT, "👍🏽")]),
        ("dev 👩‍💻 here", "dev 👩‍🔬 here", [(DELETE, "👩‍💻"), (INSERT, "👩‍🔬")]),
        ("שלום עולם", "שלום לכולם", [(DELETE, "עולם"), (INSERT, "לכולם")]),
        (
            *NFD,
            [
                (DELETE, unicodedata.normalize("NFD", "crème")),
                (INSERT, unicodedata.normalize("NFD", "brûlée")),
            ],
        ),
    ],
)
def test_unicode_is_diffed_by_whole_words_and_graphemes(old, new, expected):
    pieces = exact(old, new)
    if expected is not None:
        assert changes(pieces) == expected


def test_combining_marks_stay_on_their_letter():
    old, new = unicodedata.normalize("NFD", "resume"), unicodedata.normalize("NFD", "résumé")
    pieces = exact(old, new)
    assert changes(pieces) == [(DELETE, old), (INSERT, new)]  # one word, never a lone accent


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a b", "a  b"),
        ("a b", "a\tb"),
        ("line\n", "line"),
        ("x\ny\n", "x\n\ny\n"),
        ("trailing", "trailing   "),
        ("a\r\nb", "a\nb"),
        ("  lead", "lead"),
    ],
)
def test_whitespace_only_changes_are_exact_and_marked(old, new):
    pieces = exact(old, new)
    assert whitespace_only(pieces)
    assert all(not t.strip() for _, t in changes(pieces))


def test_identical_and_empty_texts():
    assert changes(exact("same", "same")) == []
    assert not whitespace_only(exact("same", "same"))
    assert changes(exact("", "new")) == [(INSERT, "new")]
    assert changes(exact("old", "")) == [(DELETE, "old")]
    assert exact("", "") == []


def long_text(rng: random.Random, words: int, line_every: int | None) -> str:
    letters = "abcdefghijklmnopqrstuvwxyzäöü"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(4000)]
    out = []
    for n in range(words):
        out.append(rng.choice(vocab))
        out.append("\n" if line_every and n % line_every == line_every - 1 else " ")
    return "".join(out)


@pytest.mark.parametrize("line_every", [12, None])
def test_100_kb_texts_diff_exactly_and_find_each_edit(line_every):
    rng = random.Random(7)
    old = long_text(rng, 17_000, line_every)
    assert len(old.encode()) > 100_000
    words = old.split(" ")
    spots = sorted(rng.sample(range(1, len(words) - 1), 25))
    for n in spots:
        words[n] = f"EDIT{n}"
    new = " ".join(words)
    pieces = exact(old, new)
    inserted = " ".join(t for op, t in changes(pieces) if op == INSERT)
    for n in spots:
        assert f"EDIT{n}" in inserted
    changed = sum(len(t) for _, t in changes(pieces))
    assert changed < len(old) // 10  # found the edits, not "everything changed"


def test_long_lines_are_cut_at_content_defined_places():
    rng = random.Random(3)
    line = long_text(rng, 5000, None).replace("\n", " ")
    parts = segments(line)
    assert "".join(parts) == line and len(parts) > 5
    edited = segments("prefix " + line)
    assert len(set(parts) & set(edited)) >= len(parts) - 2  # an early edit moves few cuts


def test_view_highlights_exactly_the_changed_words(qtbot):
    pieces = exact("keep this line\nold word here\n", "keep this line\nnew word here\n\n")
    both, left, right = DiffView("both"), DiffView("old", side="old"), DiffView("new", side="new")
    for view in (both, left, right):
        qtbot.addWidget(view)
        view.show_pieces(pieces)
    assert left.marked() == [(DELETE, "old")]
    assert right.marked() == [(INSERT, "new"), (INSERT, "\n")]
    assert both.marked() == [(DELETE, "old"), (INSERT, "new"), (INSERT, "\n")]
    assert left.text() == "keep this line\nold word here\n"
    assert right.text() == "keep this line\nnew word here\n\n"


def test_changed_line_breaks_are_visible(qtbot):
    view = DiffView("new", side="new")
    qtbot.addWidget(view)
    view.show_pieces(exact("a\nb", "a\n\nb"))
    assert "↵" in view.toPlainText()
    assert view.marked() == [(INSERT, "\n")]


def test_markup_in_agent_text_is_shown_literally(qtbot):
    hostile = '<b>bold</b> <img src="http://example.invalid/x.png"> <a href="x">click</a>'
    view = DiffView("both")
    qtbot.addWidget(view)
    view.show_pieces(exact("plain", hostile))
    assert hostile in view.toPlainText()
    assert "<b>" in view.document().toPlainText()


def test_100_kb_render_is_whole(qtbot):
    rng = random.Random(11)
    old = long_text(rng, 17_000, 10)
    new = old.replace(" a", " A", 40)
    view = DiffView("new", side="new")
    qtbot.addWidget(view)
    view.show_pieces(exact(old, new))
    assert view.toPlainText() == new
    assert all(op == INSERT for op, _ in view.marked())


def test_union_merge_keeps_both_versions_of_changed_lines():
    merged = union_merge("host: db1\nport: 5432\n", "host: db2\nport: 5432\n")
    assert merged == "host: db1\nhost: db2\nport: 5432\n"
    assert union_merge("same", "same") == "same"
    assert union_merge("no newline", "other") == "no newline\nother"
