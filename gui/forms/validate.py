"""Validate an answer with the core's own check and say which field each problem belongs to.

The desk checks with the validator the store uses at submit time
(``proctor.core.questions.service.response_validator``: Draft 2020-12, formats checked),
so the operator sees a problem next to its field while typing, and the desk refuses what
the store and the CLI refuse; the core's check at submit time stays the authority.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proctor.core.questions.service import response_validator

if TYPE_CHECKING:  # jsonschema loads when a form is first checked, not with the desk
    import jsonschema

MAX_PROBLEMS = 50
MESSAGE_MAX = 240


@dataclass(frozen=True)
class Problem:
    path: tuple[str, ...]  # the field's place in the answer ("" keys for the root)
    message: str

    @property
    def where(self) -> str:
        return "/".join(self.path) or "answer"


class Checker:
    """Validates answers against one schema (the validator is built once)."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.broken = ""
        self.validator: Any = None
        try:
            self.validator = response_validator(schema)
        except Exception as exc:  # noqa: BLE001 - the agent's schema is data: report it, never crash
            self.broken = f"the agent's schema cannot be checked: {bounded(str(exc))}"

    def problems(self, value: Any) -> list[Problem]:
        """Every problem of ``value`` (bounded), each tied to the field it concerns."""
        if self.broken:
            return [Problem((), self.broken)]
        try:
            found: list[Problem] = []
            for error in self.validator.iter_errors(value):
                found.extend(to_problems(error))
                if len(found) >= MAX_PROBLEMS:
                    break
        except RecursionError:
            return [Problem((), "the agent's schema refers to itself without end")]
        except Exception as exc:  # noqa: BLE001 - an unresolvable $ref, a broken schema: the agent's data
            return [Problem((), f"the agent's schema cannot be checked: {bounded(str(exc))}")]
        return sorted(found, key=lambda p: p.path)


def problems(schema: Any, value: Any) -> list[Problem]:
    return Checker(schema).problems(value)


def canonical(value: Any) -> str:
    """``value`` as sorted JSON, to compare two answers exactly (1, 1.0 and true differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def to_problems(error: jsonschema.ValidationError) -> list[Problem]:
    """One problem per field: each key the schema does not allow is named."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        path = tuple(str(p) for p in error.absolute_path)
        extra = unexpected(error.schema, error.instance)
        if extra:
            return [Problem((*path, name), "not expected here") for name in extra]
    return [to_problem(error)]


def unexpected(schema: Any, instance: dict) -> list[str]:
    """The keys of ``instance`` an ``additionalProperties: false`` schema does not allow."""
    import re

    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties")
    named: dict = properties if isinstance(properties, dict) else {}
    patterns = schema.get("patternProperties")
    patterns = list(patterns) if isinstance(patterns, dict) else []

    def allowed(key: str) -> bool:
        if key in named:
            return True
        for pattern in patterns:
            try:
                if re.search(pattern, key):
                    return True
            except re.error:
                continue
        return False

    return [str(key) for key in instance if not allowed(str(key))]


def to_problem(error: jsonschema.ValidationError) -> Problem:
    path = tuple(str(p) for p in error.absolute_path)
    kind = error.validator
    if kind == "required":
        name = quoted(error.message)
        return Problem((*path, name), "required") if name else Problem(path, "required")
    if kind == "additionalProperties":
        name = quoted(error.message)
        return Problem(path + ((name,) if name else ()), "not expected here")
    return Problem(path, plain_message(error))


def plain_message(error: jsonschema.ValidationError) -> str:
    """A short message without echoing the (possibly huge) value."""
    kind, want = error.validator, error.validator_value
    messages = {
        "minLength": "must not be empty" if want == 1 else f"needs at least {want} characters",
        "maxLength": f"at most {want} characters",
        "minimum": f"must be at least {want}",
        "maximum": f"must be at most {want}",
        "exclusiveMinimum": f"must be more than {want}",
        "exclusiveMaximum": f"must be less than {want}",
        "multipleOf": f"must be a multiple of {want}",
        "minItems": f"needs at least {want} item{'s' if want != 1 else ''}",
        "maxItems": f"at most {want} item{'s' if want != 1 else ''}",
        "uniqueItems": "items must not repeat",
        "pattern": f"must match the pattern {bounded(str(want), 80)}",
        "format": f"not a valid {want}",
        "type": f"must be {type_words(want)}",
        "enum": "not one of the allowed values",
        "const": f"must be {bounded(json.dumps(want, ensure_ascii=False), 80)}",
        "minProperties": f"needs at least {want} entr{'ies' if want != 1 else 'y'}",
        "maxProperties": f"at most {want} entr{'ies' if want != 1 else 'y'}",
    }
    return (
        messages.get(kind, bounded(error.message))
        if isinstance(kind, str)
        else bounded(error.message)
    )  # validator: unset only on a hand-made error


def type_words(want: Any) -> str:
    names = {
        "string": "text",
        "integer": "a whole number",
        "number": "a number",
        "boolean": "yes or no",
        "object": "an object",
        "array": "a list",
        "null": "empty",
    }
    if isinstance(want, list):
        return " or ".join(names.get(str(w), str(w)) for w in want)
    return names.get(str(want), str(want))


def quoted(message: str) -> str:
    """jsonschema: "'name' is a required property" -> name."""
    return message.split("'")[1] if message.count("'") >= 2 else ""


def bounded(text: str, limit: int = MESSAGE_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
