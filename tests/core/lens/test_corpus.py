"""The corpus (corpus.py): every case reads as exactly its expected fact codes, the sampled
spans cover the expected text, and the detected class is the expected one."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.core.lens import read_action

from .corpus import CASES


def field_text(action: dict, field: str) -> str:
    """The string at ``field`` ("args.steps[1].command") of ``action``."""
    value: Any = action
    for part in field.replace("[", ".[").split("."):
        value = value[int(part[1:-1])] if part.startswith("[") else value[part]
    assert isinstance(value, str)
    return value


def test_the_corpus_has_at_least_200_cases() -> None:
    assert len(CASES) >= 200


@pytest.mark.parametrize("case", CASES, ids=[str(c["action"]["args"])[:60] for c in CASES])
def test_each_case_reads_as_its_expected_facts(case: dict) -> None:
    reading = read_action(case["action"], cwd=case.get("cwd", "/work/project"))
    assert {f.code for f in reading.facts} == case["codes"], reading
    for code, covered in case["spans"].items():
        texts = [
            field_text(case["action"], f.field)[f.start : f.end]
            for f in reading.facts
            if f.code == code
        ]
        assert covered in texts, (code, texts)
    if case["detected"] != "?":
        assert reading.detected == case["detected"], reading
    for fact in reading.facts:
        assert 0 <= fact.start <= fact.end <= len(field_text(case["action"], fact.field))


def test_rule_conditions_know_every_code_the_corpus_reads() -> None:
    """A code a rule cannot name (``CODES``, checked when a rule is made) would make a rule
    on it impossible: every code the corpus reads is one of them, and every one is read."""
    from proctor.core.lens.facts import CODES

    read = {f.code for case in CASES for f in read_action(case["action"], cwd="/w").facts}
    assert read == CODES
