"""Hostile and malformed agent input: every agent request method, fed random JSON and text
(Hypothesis) and fixed worst cases (10 MB, 100,000 levels deep, NaN, lone surrogates, NUL,
non-string keys). Each call either stores the value and reads it back exactly (from a
second connection), or raises ``ValidationError`` and leaves every table as it was.
Anything else (a crash, another exception, a partial row) fails.

The limits are those documented in ``proctor.core.kernel.limits``. ``PROCTOR_LONG=1`` runs many
more examples; the number of inputs tried is printed as ``FIGURE fuzz_inputs``.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.core import Actor, Journal, errors
from proctor.core.kernel.limits import MAX_DEPTH, MAX_JSON_BYTES

LONG = os.environ.get("PROCTOR_LONG", "") not in ("", "0")
EXAMPLES = 400 if LONG else 25
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ENVELOPE = 2  # levels Proctor may wrap around an agent's value (event payload, digest body)
TRIED = count()
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    '<a href="http://example.invalid">x</a>',
    "<b>b</b>",
    "\u202egnp.exe",
    "\x1b[31mred\x1b[0m",
    "\x00",
    "\ud800",
    "\udfff",
    "\ufeff",
    "😀",
]

# ---------------------------------------------------------------- strategies

any_char = st.characters(exclude_categories=())  # includes NUL, controls, lone surrogates
texts = st.one_of(
    st.text(any_char, max_size=40),
    st.sampled_from(HOSTILE),
    st.lists(st.sampled_from(HOSTILE), max_size=4).map("".join),
)
keys = st.one_of(
    texts,
    texts,
    texts,
    st.integers(),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.tuples(st.integers()),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), st.floats(), texts
)
shallow = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=16,
)


def nest(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


deep = st.builds(nest, st.integers(1, MAX_DEPTH + 40), shallow)
json_values = st.one_of(shallow, shallow, shallow, deep)


# ---------------------------------------------------------------- the oracle


def depth_of(value: Any) -> int:
    best, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            best = max(best, depth)
            stack.extend((c, depth) for c in (item.values() if isinstance(item, dict) else item))
    return best


def structurally_valid(value: Any) -> bool:
    """JSON that can be stored and read back exactly (ignoring depth and size)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(isinstance(k, str) and text_ok(k) for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, str):
            if not text_ok(item):
                return False
        elif isinstance(item, int):
            if abs(item) >= 10**4300:  # more than 4,300 digits
                return False
        elif item is not None:
            return False
    return True


def text_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def verdict(value: Any, envelope: int = ENVELOPE) -> str:
    """'store' (must be stored), 'refuse' (must be refused) or 'either' (near the depth
    limit, where Proctor's envelope decides)."""
    if not structurally_valid(value):
        return "refuse"
    depth = depth_of(value)
    if depth > MAX_DEPTH:
        return "refuse"
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_JSON_BYTES:
        return "refuse"
    fits = depth <= MAX_DEPTH - envelope and size <= MAX_JSON_BYTES - 4096
    return "store" if fits else "either"


def same(a: Any, b: Any) -> bool:
    """Equal in value and in JSON type (1 is not 1.0 or True; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


# ---------------------------------------------------------------- journals and row counts


class Desk:
    """An agent journal, an operator journal and a raw reader on one file."""

    def __init__(self, path: Path) -> None:
        self.agent = Journal.open(path, actor=Actor.agent("fuzzer"))
        self.operator = Journal.open(path, actor=Actor.operator("olga"))
        self.raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        names = [
            r[0]
            for r in self.raw.execute(
                "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
            )
        ]
        self._count_sql = "SELECT " + ", ".join(f'(SELECT COUNT(*) FROM "{n}")' for n in names)
        self.run_id = self.agent.runs.start("fuzz", "fuzz target", agent="fuzzer").id
        self._keys = count()

    def rows(self) -> tuple[int, ...]:
        return self.raw.execute(self._count_sql).fetchone()

    def key(self, prefix: str) -> str:
        return f"{prefix}-{next(self._keys)}"

    def close(self) -> None:
        self.raw.close()
        self.agent.close()
        self.operator.close()


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    d = Desk(tmp_path_factory.mktemp("fuzz") / "journal.db")
    yield d
    assert d.agent.integrity_check() == ["ok"]
    d.close()
    print(f"\nFIGURE fuzz_inputs {next(TRIED)}")


class Refused(Exception):
    """The fuzzed call raised ValidationError and wrote nothing."""


def guarded(desk: Desk, call: Callable[[], Any]) -> Any:
    """Run the fuzzed ``call`` (setup around it is not judged): a refusal must be a
    ValidationError that wrote nothing."""
    before = desk.rows()
    try:
        return call()
    except errors.ValidationError as exc:
        assert desk.rows() == before, "a refused call left rows behind"
        raise Refused from exc


def attempt(expected: str, method: Callable[[], Any]) -> Any:
    """The method's stored value read back, or None when the fuzzed call was refused."""
    next(TRIED)
    try:
        stored = method()
    except Refused:
        assert expected != "store", "valid input was refused"
        return None
    assert expected != "refuse", "invalid input was stored"
    return stored


# ---------------------------------------------------------------- JSON into every method


def event_payload(desk: Desk, value: Any) -> Any:
    event = guarded(desk, lambda: desk.agent.runs.append_event(desk.run_id, "fuzz.event", value))
    return desk.operator.runs.events(desk.run_id, after=event.sequence - 1, limit=1)[0].payload


def batch_payload(desk: Desk, value: Any) -> Any:
    events = guarded(
        desk, lambda: desk.agent.runs.append_events(desk.run_id, [("fuzz.a", 1), ("fuzz.b", value)])
    )
    return desk.operator.runs.events(desk.run_id, after=events[1].sequence - 1, limit=1)[0].payload


def run_metadata(desk: Desk, value: Any) -> Any:
    run = guarded(
        desk, lambda: desk.agent.runs.start("fuzz", "with metadata", metadata={"m": value})
    )
    return desk.operator.runs.events(run.id, limit=1)[0].payload["metadata"]["m"]


def run_result(desk: Desk, value: Any) -> Any:
    run = desk.agent.runs.start("fuzz", "to complete")
    guarded(desk, lambda: desk.agent.runs.complete(run.id, value))
    return desk.operator.runs.events(run.id, descending=True, limit=1)[0].payload["result"]


def tool_request(desk: Desk, value: Any) -> Any:
    call = guarded(desk, lambda: desk.agent.runs.record_tool_call(desk.run_id, "fuzz_tool", value))
    return desk.operator.runs.tool_call(call.id).request


def tool_result(desk: Desk, value: Any) -> Any:
    call = desk.agent.runs.record_tool_call(desk.run_id, "fuzz_tool", {"n": 1})
    guarded(desk, lambda: desk.agent.runs.finish_tool_call(call.id, "succeeded", result=value))
    return desk.operator.runs.tool_call(call.id).result


def approval_action(desk: Desk, value: Any) -> Any:
    approval = guarded(
        desk,
        lambda: desk.agent.approvals.request(
            desk.run_id, {"tool": "fuzz", "args": value}, reason="fuzzing"
        ),
    )
    return desk.operator.approvals.get(approval.id).action["args"]


def question_request(desk: Desk, value: Any) -> Any:
    asked = guarded(
        desk, lambda: desk.agent.questions.ask(desk.run_id, "question", "fuzz?", request=value)
    )
    return desk.operator.questions.get(asked.id).request


def choice_options(desk: Desk, value: Any) -> Any:
    asked = guarded(
        desk, lambda: desk.agent.questions.ask(desk.run_id, "choice", "pick", options=["a", value])
    )
    return desk.operator.questions.get(asked.id).options[1]


def effect_action(desk: Desk, value: Any) -> Any:
    key = desk.key("action")
    guarded(
        desk, lambda: desk.agent.effects.reserve(key, tool="fuzz", run_id=desk.run_id, action=value)
    )
    return desk.operator.effects.get(key).action


def effect_result(desk: Desk, value: Any) -> Any:
    key = desk.key("result")
    desk.agent.effects.reserve(key, tool="fuzz", run_id=desk.run_id)
    desk.agent.effects.begin(key)
    guarded(desk, lambda: desk.agent.effects.commit(key, value))
    return desk.operator.effects.get(key).result


def effect_evidence(desk: Desk, value: Any) -> Any:
    key = desk.key("evidence")
    desk.agent.effects.reserve(key, tool="fuzz", run_id=desk.run_id)
    desk.agent.effects.begin(key)
    guarded(desk, lambda: desk.agent.effects.commit(key, evidence=value))
    return desk.operator.effects.receipts(key)[-1].evidence["evidence"]


def answer_response(desk: Desk, value: Any) -> Any:
    asked = desk.agent.questions.ask(
        desk.run_id, "form", "anything?", response_schema={"type": "object"}
    )
    guarded(
        desk,
        lambda: desk.operator.questions.answer(
            asked.id, {"v": value}, expected_version=asked.version
        ),
    )
    return desk.agent.questions.get(asked.id).response["v"]


def choice_document(value: Any) -> Any:
    """What interactions.ask digests for a choice with options ["a", value]: the options,
    and the response schema made from them (an option's "value", or the option itself)."""
    copied = value.get("value") if isinstance(value, dict) else value
    return {"options": ["a", value], "schema": {"properties": {"choice": {"enum": ["a", copied]}}}}


# method -> (call, levels the test itself wraps around the value, or a function giving
# the whole document Proctor writes with it, judged exactly)
JSON_METHODS: dict[str, tuple[Callable[[Desk, Any], Any], int | Callable[[Any], Any]]] = {
    "runs.append_event": (event_payload, 0),
    "runs.append_events": (batch_payload, 0),
    "runs.start(metadata)": (run_metadata, 1),
    "runs.complete": (run_result, 0),
    "runs.record_tool_call": (tool_request, 0),
    "runs.finish_tool_call": (tool_result, 0),
    "approvals.request": (approval_action, 1),
    "interactions.ask(request)": (question_request, 0),
    "interactions.ask(options)": (choice_options, choice_document),
    "effects.reserve": (effect_action, 0),
    "effects.commit(result)": (effect_result, 0),
    "effects.commit(evidence)": (effect_evidence, 0),
    "interactions.answer": (answer_response, 1),
}


def check_json_method(desk: Desk, name: str, value: Any) -> None:
    method, extra = JSON_METHODS[name]
    if callable(extra):
        expected = verdict(extra(value), envelope=1)  # the document itself (+ a digest body)
    else:
        wrapped = value
        for _ in range(extra):  # judge the value at the depth it really has
            wrapped = [wrapped]
        expected = verdict(wrapped)
    if name == "interactions.answer" and not structurally_valid(value):
        expected = "refuse"
    stored = attempt(expected, lambda: method(desk, value))
    if stored is not None or expected == "store":
        assert same(stored, value), f"{name} changed the value"


@pytest.mark.parametrize("name", list(JSON_METHODS))
@FUZZ
@given(value=json_values)
def test_json_is_stored_exactly_or_refused(desk, name, value):
    check_json_method(desk, name, value)


# ---------------------------------------------------------------- text into every method


def run_title(desk: Desk, text: str) -> Any:
    run = guarded(desk, lambda: desk.agent.runs.start(text, text, space=text))
    got = desk.operator.runs.get(run.id)
    return [got.project, got.title, got.space]


def approval_reason(desk: Desk, text: str) -> Any:
    approval = guarded(
        desk, lambda: desk.agent.approvals.request(desk.run_id, {"tool": text}, reason=text)
    )
    got = desk.operator.approvals.get(approval.id)
    return [got.action["tool"], got.reason]


def question_prompt(desk: Desk, text: str) -> Any:
    asked = guarded(desk, lambda: desk.agent.questions.ask(desk.run_id, "question", text))
    return [desk.operator.questions.get(asked.id).prompt]


def memory_texts(desk: Desk, text: str) -> Any:
    entry = guarded(
        desk, lambda: desk.agent.memory.add("project", text, text, text, kind=text, reason=text)
    )
    conflict = guarded(
        desk, lambda: desk.agent.memory.record_conflict(entry.id, text + "!", incoming_source=text)
    )
    got = desk.operator.memory.get(entry.id)
    incoming = desk.operator.memory.conflict(conflict.id)
    return [
        got.scope_key,
        got.title,
        got.content,
        got.kind,
        incoming.incoming_content[:-1],
        incoming.incoming_source,
    ]


def effect_texts(desk: Desk, text: str) -> Any:
    key = desk.key(text)
    guarded(desk, lambda: desk.agent.effects.reserve(key, tool=text, run_id=desk.run_id))
    desk.agent.effects.begin(key)
    guarded(desk, lambda: desk.agent.effects.fail(key, text))
    got = desk.operator.effects.get(key)
    assert got.key == key
    return [got.tool, got.error]


def run_error(desk: Desk, text: str) -> Any:
    run = desk.agent.runs.start("fuzz", "to fail")
    guarded(desk, lambda: desk.agent.runs.fail(run.id, text))
    failed = desk.operator.runs.events(run.id, descending=True, limit=1)[0]
    assert desk.operator.runs.get(run.id).error == (text or None)  # "" is no error
    return [failed.payload["error"]]


def event_type(desk: Desk, text: str) -> Any:
    event = guarded(desk, lambda: desk.agent.runs.append_event(desk.run_id, text, None))
    return [desk.operator.runs.events(desk.run_id, after=event.sequence - 1, limit=1)[0].type]


TEXT_METHODS: dict[str, tuple[Callable[[Desk, str], Any], Callable[[str], bool]]] = {
    "runs.start": (run_title, lambda t: True),
    "approvals.request": (approval_reason, lambda t: bool(t.strip()) and len(t) <= 10_000),
    "interactions.ask": (question_prompt, lambda t: bool(t.strip()) and len(t) <= 100_000),
    "memory.add/record_conflict": (memory_texts, lambda t: bool(t.strip()) and len(t) < 200_000),
    "effects.reserve/fail": (effect_texts, lambda t: True),
    "runs.fail": (run_error, lambda t: True),
    "runs.append_event(type)": (event_type, lambda t: 0 < len(t) <= 100),
}


def check_text_method(desk: Desk, name: str, text: str) -> None:
    method, allowed = TEXT_METHODS[name]
    expected = "store" if text_ok(text) and allowed(text) else "refuse"
    stored = attempt(expected, lambda: method(desk, text))
    if expected == "store":
        assert all(same(value, text) for value in stored), f"{name} changed the text"


@pytest.mark.parametrize("name", list(TEXT_METHODS))
@FUZZ
@given(text=texts)
def test_text_is_stored_exactly_or_refused(desk, name, text):
    check_text_method(desk, name, text)


# ---------------------------------------------------------------- fixed worst cases

TEN_MB = "x" * (10 * 1024 * 1024)
FIXED_JSON = {
    "10 MB string": {"blob": TEN_MB},
    # 400,000 objects in the long run, 40,000 (1 MB) in CI
    "10 MB of small objects": [
        {"n": n, "s": "abcdefgh"} for n in range(400_000 if LONG else 40_000)
    ],
    "over the size limit": {"blob": "y" * (MAX_JSON_BYTES + 1)},
    "100,000 levels deep": nest(100_000),
    "just past the depth limit": nest(MAX_DEPTH + 1),
    "NaN": {"v": float("nan")},
    "Infinity": [float("inf")],
    "-Infinity": -float("inf"),
    "lone surrogate value": {"v": "a\ud800b"},
    "lone surrogate key": {"\udc00": 1},
    "NUL in key and value": {"a\x00b": "c\x00d"},
    "integer keys": {1: "a", 2: "b"},
    "mixed keys": {1: "a", "b": 2},
    "None key": {None: 1},
    "bool key": {True: 1},
    "float key": {1.5: 1},
    "tuple key": {(1, 2): 3},
    "set": {"v": {1, 2}},
    "bytes": {"v": b"raw"},
    "4,301-digit integer": {"v": 10**4300},
    "huge float": 1.7976931348623157e308,
    "markup and controls": {h: h for h in HOSTILE if text_ok(h)},
}
# The costly cases go through a few methods (all of them in the long run).
BIG = {
    "10 MB string": ["runs.append_event", "approvals.request", "effects.commit(result)"],
    "10 MB of small objects": ["runs.append_event"],
    "over the size limit": ["runs.append_event", "interactions.ask(request)"],
}
CASES = [(m, c) for c in FIXED_JSON for m in (BIG[c] if c in BIG and not LONG else JSON_METHODS)]


@pytest.mark.parametrize(("name", "case"), CASES)
def test_fixed_hostile_json(desk, name, case):
    check_json_method(desk, name, FIXED_JSON[case])


FIXED_TEXT = {
    "NUL": "a\x00b",
    "lone surrogate": "x\ud800",
    "RTL override": "\u202eabc",
    "ANSI": "\x1b[2J\x1b[31mred",
    "markup": HOSTILE[0],
    "1 MB": "z" * 1_000_000,
    "whitespace only": " \t\n",
}


@pytest.mark.parametrize(("name", "case"), [(m, c) for c in FIXED_TEXT for m in TEXT_METHODS])
def test_fixed_hostile_text(desk, name, case):
    check_text_method(desk, name, FIXED_TEXT[case])
