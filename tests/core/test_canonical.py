"""Canonical JSON and digests: one helper, deterministic, NaN/Infinity refused."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.core import canonical_json, digest_of, errors
from proctor.core.kernel.canonical import ZERO_DIGEST, chain_digest


def test_canonical_form_is_sorted_compact_and_utf8():
    obj = {"b": [3, 1, {"z": 1, "y": None}], "a": "grüße ✓", "c": True}
    text = canonical_json(obj)
    assert text == '{"a":"grüße ✓","b":[3,1,{"y":null,"z":1}],"c":true}'
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert digest_of(obj) == expected


def test_known_digest_vector():
    # sha256 of the bytes {"a":1} computed independently of proctor
    assert digest_of({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()
    assert digest_of({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"


@pytest.mark.parametrize(
    "bad",
    [float("nan"), float("inf"), -float("inf"), {"x": [1, float("nan")]}, {"x": object()}, {1j}],
)
def test_non_json_values_are_refused(bad):
    with pytest.raises(errors.ValidationError):
        canonical_json(bad)


def test_an_edited_action_is_a_new_action():
    action = {"tool": "shell", "args": {"command": "ls"}}
    assert digest_of(action) == digest_of({"args": {"command": "ls"}, "tool": "shell"})
    assert digest_of(action) != digest_of({"tool": "shell", "args": {"command": "ls -a"}})
    assert digest_of({"n": 1}) != digest_of({"n": "1"})


def test_chain_link():
    assert ZERO_DIGEST == "0" * 64
    body = {"run_id": "r", "sequence": 1}
    link = chain_digest(ZERO_DIGEST, body)
    assert link == hashlib.sha256((ZERO_DIGEST + canonical_json(body)).encode()).hexdigest()
    assert chain_digest(link, body) != link


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(json_values)
def test_canonical_round_trips_and_ignores_key_order(value):
    text = canonical_json(value)
    assert json.loads(text) == value
    assert canonical_json(json.loads(text)) == text
    if isinstance(value, dict):
        reordered = dict(reversed(list(value.items())))
        assert digest_of(reordered) == digest_of(value)
