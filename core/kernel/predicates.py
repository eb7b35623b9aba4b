"""Conditions of approval rules: a small predicate language over an action's canonical JSON.

A rule may carry a condition on the action it decides, e.g.::

    args.amount <= 100 and args.currency == "EUR"
    args.command regex "rm\\s+-rf" or args.command glob "sudo *"
    not (args.path glob "/etc/*") and exists args.path
    args.to in ["ops@example.com", "oncall@example.com"]

Grammar (keywords are lower case; whitespace is free)::

    expr       := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | primary
    primary    := "(" expr ")" | "exists" path | path OP value
    OP         := "==" | "!=" | "<" | "<=" | ">" | ">=" | "glob" | "regex" | "in"
    value      := number | string | true | false | null | "[" [value ("," value)*] "]"
    path       := name ("." (name | index))*      name: [A-Za-z_][A-Za-z0-9_-]*

A path starts at the action object (``tool``, ``args.amount``, ``args.items.0.sku``),
except one that starts with ``risk``: it reads what the risk lens (``proctor.core.lens``)
reads of the action::

    exists risk.sql.unbounded_write          a fact with that code (docs/lens.md lists them)
    risk.shell.recursive_delete >= 2         how many facts with that code (absent: none)
    exists risk.shell                        any fact of that family (shell.*)
    risk.detected == "destructive"           the strongest class the facts imply (null: none;
                                             compare with == or in: < and > order its text)
    risk.unread > 0                          how many texts the lens could not read

The codes are checked when the rule is made (a misspelt code is refused). The action is read
only when a condition names ``risk`` (once per request, for all the rules: ``Subject``). The
lens registers itself as ``risk_reader`` when ``proctor.core`` is imported; a condition naming
``risk`` where it is not registered, or naming a code it does not know (a newer Proctor's),
fails safe as a condition that does not parse (``condition_holds``).
Strings are JSON strings in double quotes (JSON escapes). Semantics, chosen so that a
condition never matches by accident:

- A path that does not exist makes every comparison on it false (``!=`` too); test
  presence with ``exists``.
- Comparisons are type-strict: a number equals only a number (``1 == 1.0``), a string only
  a string, ``true`` only ``true``. ``< <= > >=`` compare two numbers or two strings, and
  are false for anything else.
- ``glob`` matches a string against a shell pattern (``*``, ``?``, ``[...]``; case
  sensitive, whole string); ``regex`` searches a string with a Python regular expression
  (anywhere in it; anchor with ``^``/``$``). Both are false on non-strings.
- ``in`` is true when the value equals one element of the list.

The text is parsed and checked when the rule is made (unknown words, a bad regex, a
regex with nested repetition such as ``(a+)+``, more than ``MAX_TERMS`` comparisons and
texts over ``MAX_TEXT`` characters are refused with the position). It is never handed to
Python's ``eval``: the parser builds a small tree and ``matches`` walks it.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from proctor.core import errors
from proctor.core.models import RuleEffect

MAX_TEXT = 2_000
MAX_TERMS = 64
MAX_DEPTH = 16
MAX_REGEX = 200
OPERATORS = ("==", "!=", "<=", ">=", "<", ">", "glob", "regex", "in")
KEYWORDS = {"and", "or", "not", "exists", "glob", "regex", "in", "true", "false", "null"}
MISSING = object()
RISK = "risk"


@dataclass(frozen=True)
class RiskReader:
    """What ``risk`` paths read: ``read(action)`` gives ``{"detected": class or None,
    "unread": n, "<family>": {"<name>": count}}``; ``names`` the paths below ``risk`` a
    condition may name ("detected", "unread", "sql", "sql.write" …)."""

    read: Callable[[Any], dict[str, Any]]
    names: frozenset[str]


risk_reader: RiskReader | None = None  # set by proctor.core.lens on import


def use_risk_reader(reader: RiskReader | None) -> None:
    global risk_reader
    risk_reader = reader


TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\\x00-\x1f]|\\.)*")
  | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<op>==|!=|<=|>=|<|>)
  | (?P<punct>[()\[\],.])
  | (?P<word>[A-Za-z_][A-Za-z0-9_-]*)
""",
    re.VERBOSE,
)
# A group that repeats something and is itself repeated: (a+)+, (x*)*, (.+){2,} ...
NESTED_REPEAT = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]")


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


def _fail(message: str, pos: int | None = None) -> errors.ValidationError:
    where = f" (at character {pos + 1})" if pos is not None else ""
    return errors.ValidationError(f"rule condition: {message}{where}", field="predicate")


def tokenize(text: str) -> list[Token]:
    tokens, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise _fail(f"unexpected {text[pos]!r}", pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, m.group(), pos))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.terms = 0

    # ------------------------------------------------------------ token helpers
    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def at(self, text: str) -> bool:
        """The next token is ``text``."""
        tok = self.peek()
        return tok is not None and tok.text == text

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise _fail("the condition ends too early", len(self.text))
        self.i += 1
        return tok

    def at_word(self, word: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "word" and tok.text == word

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok.text != text:
            raise _fail(f"expected {text!r}, found {tok.text!r}", tok.pos)

    # ------------------------------------------------------------ grammar
    def parse(self) -> tuple:
        if not self.tokens:
            raise _fail("the condition is empty")
        tree = self.expr(0)
        tok = self.peek()
        if tok is not None:
            raise _fail(f"unexpected {tok.text!r}", tok.pos)
        return tree

    def expr(self, depth: int) -> tuple:
        if depth > MAX_DEPTH:
            raise _fail(f"nested deeper than {MAX_DEPTH}")
        parts = [self.and_expr(depth)]
        while self.at_word("or"):
            self.take()
            parts.append(self.and_expr(depth))
        return parts[0] if len(parts) == 1 else ("or", tuple(parts))

    def and_expr(self, depth: int) -> tuple:
        parts = [self.not_expr(depth)]
        while self.at_word("and"):
            self.take()
            parts.append(self.not_expr(depth))
        return parts[0] if len(parts) == 1 else ("and", tuple(parts))

    def not_expr(self, depth: int) -> tuple:
        if self.at_word("not"):
            self.take()
            return ("not", self.not_expr(depth + 1))
        return self.primary(depth)

    def primary(self, depth: int) -> tuple:
        tok = self.peek()
        if tok is not None and tok.text == "(":
            self.take()
            inner = self.expr(depth + 1)
            self.expect(")")
            return inner
        self._count()
        if self.at_word("exists"):
            self.take()
            return ("exists", self.path())
        path = self.path()
        op_tok = self.take()
        if op_tok.text not in OPERATORS:
            raise _fail(
                f"expected a comparison (one of {', '.join(OPERATORS)}), found {op_tok.text!r}",
                op_tok.pos,
            )
        ahead = self.peek()
        value_pos = ahead.pos if ahead else len(self.text)
        value = self.value()
        return ("cmp", op_tok.text, path, self._operand(op_tok.text, value, value_pos))

    def _count(self) -> None:
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise _fail(f"more than {MAX_TERMS} comparisons")

    @staticmethod
    def _operand(op: str, value: Any, pos: int) -> Any:
        if op in ("glob", "regex") and not isinstance(value, str):
            raise _fail(f"{op} needs a string pattern", pos)
        if op == "in" and not isinstance(value, list):
            raise _fail('in needs a list, e.g. ["a", "b"]', pos)
        if op in ("<", "<=", ">", ">=") and (
            isinstance(value, bool) or not isinstance(value, (int, float, str))
        ):
            raise _fail(f"{op} compares with a number or a string", pos)
        if op == "regex":
            return _compile_regex(value, pos)
        return value

    def path(self) -> tuple:
        tok = self.take()
        if tok.kind != "word" or tok.text in KEYWORDS:
            raise _fail(f"expected a path such as args.amount, found {tok.text!r}", tok.pos)
        parts: list[str | int] = [tok.text]
        while self.at("."):
            self.take()
            seg = self.take()
            if seg.kind == "word":
                parts.append(seg.text)
            elif seg.kind == "number" and seg.text.isdigit():
                parts.append(int(seg.text))
            else:
                raise _fail(f"expected a name or an index after '.', found {seg.text!r}", seg.pos)
        if parts[0] == RISK and not (
            2 <= len(parts) <= 3 and all(isinstance(p, str) for p in parts)
        ):
            raise _fail("a risk path is risk.detected, risk.unread or risk.<code>", tok.pos)
        return tuple(parts)

    def value(self) -> Any:
        tok = self.take()
        if tok.kind == "string":
            return unquote(tok.text, tok.pos)
        if tok.kind == "number":
            return json.loads(tok.text)
        if tok.kind == "word" and tok.text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[tok.text]
        if tok.text == "[":
            items: list[Any] = []
            if self.at("]"):
                self.take()
                return items
            while True:
                items.append(self.value())
                sep = self.take()
                if sep.text == "]":
                    return items
                if sep.text != ",":
                    raise _fail(f"expected ',' or ']', found {sep.text!r}", sep.pos)
        raise _fail(
            f'expected a value (number, "string", true, false, null or a list), found {tok.text!r}',
            tok.pos,
        )


ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r"}


def unquote(token: str, pos: int) -> str:
    """A double-quoted string's value: JSON escapes; any other backslash is kept as it is
    (so a regex may be written ``"rm\\s+-rf"`` or ``"rm\\\\s+-rf"``)."""
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif nxt in ESCAPES:
            out.append(ESCAPES[nxt])
            i += 2
        else:
            out.append("\\" + nxt)
            i += 2
    text = "".join(out)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise _fail("a string holds a lone surrogate", pos)
    return text


def _compile_regex(pattern: str, pos: int) -> re.Pattern:
    if len(pattern) > MAX_REGEX:
        raise _fail(f"the regex is longer than {MAX_REGEX} characters", pos)
    if NESTED_REPEAT.search(pattern):
        raise _fail(
            "the regex repeats a repeated group (like (a+)+); that can take exponential time", pos
        )
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise _fail(f"bad regex: {exc}", pos) from exc


class Subject:
    """An action conditions are evaluated on; what the risk lens reads of it is read once,
    when a condition first names ``risk``."""

    def __init__(self, action: Any) -> None:
        self.action = action
        self.view: dict[str, Any] | None = None

    def risk(self) -> dict[str, Any]:
        if self.view is None:
            reader = risk_reader
            if reader is None:
                raise _fail("risk paths need the risk lens, which is not loaded")
            try:
                self.view = {RISK: reader.read(self.action)}
            except Exception as exc:
                raise _fail(f"the risk lens could not read the action: {exc}") from exc
        return self.view


def subject_of(action: Any) -> Subject:
    return action if isinstance(action, Subject) else Subject(action)


@dataclass(frozen=True)
class Predicate:
    """A parsed condition. ``text`` is what the operator wrote (stored with the rule);
    ``risk`` the ``risk`` paths it names."""

    text: str
    tree: tuple
    risk: tuple[tuple, ...] = field(default=())

    def matches(self, action: Any) -> bool:
        """Whether ``action`` (or a ``Subject``) satisfies it; ``ValidationError`` when it names
        ``risk`` paths the lens cannot answer (see ``check_risk``)."""
        if self.risk:
            self.check_risk()
        return _eval(self.tree, subject_of(action))

    def check_risk(self) -> None:
        """Refuses ``risk`` paths when the lens is not loaded or does not know them."""
        reader = risk_reader
        if reader is None:
            raise _fail("risk paths need the risk lens, which is not loaded")
        for path in self.risk:
            name = ".".join(str(p) for p in path[1:])
            if name not in reader.names:
                raise _fail(f"the risk lens reads no {'.'.join(map(str, path))}")


@lru_cache(maxsize=512)
def parse(text: str) -> Predicate:
    """Parse and check a condition; raises ``ValidationError`` (field ``predicate``)."""
    if not isinstance(text, str):
        raise _fail("the condition must be text")
    if len(text) > MAX_TEXT:
        raise _fail(f"the condition is longer than {MAX_TEXT} characters")
    tree = _Parser(text).parse()
    return Predicate(text, tree, tuple(dict.fromkeys(risk_paths(tree))))


def risk_paths(node: tuple) -> list[tuple]:
    """The ``risk`` paths of a parsed tree, in order."""
    kind = node[0]
    if kind in ("or", "and"):
        return [p for part in node[1] for p in risk_paths(part)]
    if kind == "not":
        return risk_paths(node[1])
    path = node[1] if kind == "exists" else node[2]
    return [path] if path[0] == RISK else []


def normalized(text: str | None) -> str | None:
    """``text`` stripped and checked, or None for no condition (empty text)."""
    if text is None or not text.strip():
        return None
    predicate = parse(text.strip())
    if predicate.risk:
        predicate.check_risk()
    return text.strip()


def matches(text: str | None, action: Any) -> bool:
    """Whether ``action`` satisfies the condition ``text`` (None: no condition, True)."""
    return True if text is None else parse(text).matches(action)


# ---------------------------------------------------------------- evaluation


def resolve(action: Any, path: tuple) -> Any:
    node = action
    for seg in path:
        if isinstance(seg, int) and isinstance(node, list):
            if seg >= len(node):
                return MISSING
            node = node[seg]
        elif isinstance(node, dict) and str(seg) in node:
            node = node[str(seg)]
        else:
            return MISSING
    return node


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a: Any, b: Any) -> bool:
    """Type-strict JSON equality (``1 == 1.0``; ``true`` is not ``1``)."""
    if _number(a) and _number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, list)):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return a == b


def _compare(op: str, subject: Any, operand: Any) -> bool:
    if subject is MISSING:
        return False
    if op == "==":
        return same(subject, operand)
    if op == "!=":
        return not same(subject, operand)
    if op == "in":
        return any(same(subject, item) for item in operand)
    if op == "glob":
        return isinstance(subject, str) and fnmatch.fnmatchcase(subject, operand)
    if op == "regex":
        return isinstance(subject, str) and operand.search(subject) is not None
    ordered = (_number(subject) and _number(operand)) or (
        isinstance(subject, str) and isinstance(operand, str)
    )
    if not ordered:
        return False
    return {
        "<": subject < operand,
        "<=": subject <= operand,
        ">": subject > operand,
        ">=": subject >= operand,
    }[op]


def _value(subject: Subject, path: tuple) -> Any:
    return resolve(subject.risk() if path[0] == RISK else subject.action, path)


def _eval(node: tuple, subject: Subject) -> bool:
    kind = node[0]
    if kind == "or":
        return any(_eval(part, subject) for part in node[1])
    if kind == "and":
        return all(_eval(part, subject) for part in node[1])
    if kind == "not":
        return not _eval(node[1], subject)
    if kind == "exists":
        return _value(subject, node[1]) is not MISSING
    _cmp, op, path, operand = node
    return _compare(op, _value(subject, path), operand)


__all__ = [
    "Predicate",
    "RiskReader",
    "Subject",
    "condition_holds",
    "matches",
    "normalized",
    "parse",
    "same",
    "use_risk_reader",
]


def condition_holds(row: Any, action: Any) -> bool:
    """A stored rule's condition on ``action`` (or a ``Subject``, shared by the rules tried on
    one request). A condition that no longer parses (written by a newer Proctor, or altered),
    or names ``risk`` paths the lens cannot answer, fails safe: a deny or prompt rule still
    applies, an allow rule does not."""
    text = getattr(row, "predicate", None)
    if text is None:
        return True
    try:
        return parse(text).matches(action)
    except errors.ValidationError:
        return row.effect != RuleEffect.ALLOW
