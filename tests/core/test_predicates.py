"""The rule condition language (core/kernel/predicates.py): parsed and checked when a rule is
made, evaluated type-strictly over the action's JSON, never through eval."""

from __future__ import annotations

import pytest

from proctor.core import errors
from proctor.core.kernel import predicates

REFUND = {
    "tool": "payments.refund",
    "args": {
        "amount": 80,
        "currency": "EUR",
        "items": [{"sku": "A-1"}],
        "note": None,
        "flag": True,
        "command": "sudo rm  -rf /",
    },
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("args.amount <= 100", True),
        ("args.amount > 100", False),
        ("args.amount == 80.0", True),
        ('args.currency == "EUR" and args.amount < 100', True),
        ('args.currency == "USD" or args.amount < 100', True),
        ('not args.currency == "EUR"', False),
        ('args.items.0.sku glob "A-*"', True),
        ('args.items.1.sku glob "*"', False),
        (r'args.command regex "rm\s+-rf"', True),
        (r'args.command regex "rm\\s+-rf"', True),
        ('args.command regex "^rm"', False),
        ('args.currency in ["EUR", "GBP"]', True),
        ("args.amount in [80]", True),
        ("exists args.note", True),
        ("args.note == null", True),
        ("exists args.missing", False),
        ("not exists args.missing", True),
        ("(args.amount < 10 or args.amount > 50) and args.flag == true", True),
        ('tool == "payments.refund"', True),
    ],
)
def test_conditions_evaluate_over_the_action(text, expected):
    assert predicates.parse(text).matches(REFUND) is expected


@pytest.mark.parametrize(
    "text",
    [
        "args.missing != 1",  # a missing path makes every comparison false, != too
        "args.missing < 5",
        'args.amount == "80"',  # type-strict: a string is not a number
        "args.flag == 1",  # true is not 1
        "args.currency < 5",  # a string and a number do not compare
        'args.amount glob "8*"',  # glob and regex only on strings
        'args.amount regex "8"',
    ],
)
def test_comparisons_are_type_strict_and_missing_is_false(text):
    assert predicates.parse(text).matches(REFUND) is False


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("", "empty"),
        ("args.amount", "ends too early"),
        ("args.amount = 1", "unexpected '='"),
        ("args.amount <= ", "ends too early"),
        ('__import__("os").system("x")', "expected a comparison"),
        ("args.amount <= 100; rm -rf /", "unexpected ';'"),
        ('args.x regex "(a+)+$"', "repeats a repeated group"),
        ('args.x regex "["', "bad regex"),
        ("args.x in 3", "needs a list"),
        ("args.x glob 3", "needs a string"),
        ("args.x < [1]", "compares with a number"),
        ("(args.x == 1", "ends too early"),
        ("and == 1", "expected a path"),
        ("args.x == 1 1", "unexpected '1'"),
        ("x == 1 and " * 70 + "x == 1", "more than 64"),
        ("(" * 20 + "x == 1" + ")" * 20, "nested deeper"),
        ('x == "' + "a" * 2100 + '"', "longer than"),
    ],
)
def test_bad_conditions_are_refused_when_the_rule_is_made(text, where):
    with pytest.raises(errors.ValidationError) as info:
        predicates.parse(text)
    assert info.value.field == "predicate" and where in str(info.value)


def test_the_parser_never_evaluates_python(monkeypatch):
    import builtins

    def no_eval(*_a, **_k):
        raise AssertionError("eval/exec used")

    monkeypatch.setattr(builtins, "eval", no_eval)
    monkeypatch.setattr(builtins, "exec", no_eval)
    predicates.parse.cache_clear()
    assert predicates.parse("args.amount <= 100 and not exists args.x").matches(REFUND)


def test_normalized_strips_and_empty_means_no_condition():
    assert predicates.normalized("  args.amount <= 1  ") == "args.amount <= 1"
    assert predicates.normalized("   ") is None and predicates.normalized(None) is None
    assert predicates.matches(None, REFUND)
