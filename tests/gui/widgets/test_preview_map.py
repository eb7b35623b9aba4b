"""Offsets in agent text → offsets in the preview a box shows of it (``preview``): escapes
widen characters, display breaks insert newlines, the head is bounded. Checked against
``preview`` itself: every mapped span shows the same characters, escaped."""

from __future__ import annotations

import random

import pytest

from proctor.gui.widgets.bounded_text import PreviewMap, preview
from proctor.gui.widgets.fmt import visible


def shown_span(text: str, start: int, end: int, limit: int, width: int) -> str:
    head, _ = preview(text, limit, width)
    span = PreviewMap(text, limit, width).span(start, end)
    assert span is not None
    return head[span[0] : span[1]]


@pytest.mark.parametrize(
    ("text", "start", "end", "limit", "width", "expected"),
    [
        ("DELETE FROM t", 0, 6, 100, 400, "DELETE"),
        ("a\u202eDELETE", 2, 8, 100, 400, "DELETE"),  # after an escape (1 char -> 6)
        ("a\u202eDELETE", 1, 3, 100, 400, "\\u202eD"),  # the escape itself, whole
        ("\x00\x00DROP", 2, 6, 100, 400, "DROP"),
        ("x\U000e0041DROP", 2, 6, 100, 400, "DROP"),  # an astral tag: 10 characters
        ("abcdefghij", 2, 8, 100, 4, "cd\nefgh"),  # across a display break
        ("abcdefgh", 4, 8, 100, 4, "efgh"),  # starts right after a break: not on it
        ("abcdefgh", 0, 4, 100, 4, "abcd"),  # ends right before one: not past it
        ("ab\ncdefgh\nij", 3, 9, 100, 3, "cde\nfgh"),  # breaks counted per line
    ],
)
def test_a_span_shows_the_same_characters(text, start, end, limit, width, expected):
    assert shown_span(text, start, end, limit, width) == expected


def test_a_span_past_the_head_is_cut_or_dropped():
    text = "0123456789" * 10
    m = PreviewMap(text, 20, 400)
    assert m.span(25, 30) is None
    assert m.span(15, 30) == (15, 20)
    assert m.span(5, 5) is None  # empty


def test_random_texts_map_like_preview():
    rng = random.Random(7)
    alphabet = "ab \n\t\x00\u202e\u200b\U000e0041é"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        limit, width = rng.randint(1, 70), rng.randint(1, 9)
        start = rng.randint(0, len(text) - 1)
        end = rng.randint(start + 1, len(text))
        head = text[:limit]
        if start >= len(head):
            assert PreviewMap(text, limit, width).span(start, end) is None
            continue
        got = shown_span(text, start, end, limit, width)
        assert got.replace("\n", "") == visible(head[start:end]).replace("\n", ""), (
            text,
            start,
            end,
            limit,
            width,
        )
        assert not got.startswith("\n") or head[start] == "\n"
        assert not got.endswith("\n") or head[min(end, len(head)) - 1] == "\n"
