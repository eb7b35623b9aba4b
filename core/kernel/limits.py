"""Limits on agent-supplied data, enforced where every JSON value is serialized.

An agent is a program that may be buggy or confused; whatever it sends is either stored
and read back exactly, or refused with ``ValidationError`` before anything is written.

- A JSON document (an action, a payload, a request, a schema, a result, evidence ...)
  is at most ``MAX_JSON_BYTES`` of canonical UTF-8 and nests at most ``MAX_DEPTH``
  objects/arrays deep, counting the envelope Proctor writes around a value (up to two
  levels: an event payload inside its digest body), so 98 levels of an agent's own always
  fit. A choice's options are also copied into its response schema: they count twice
  toward the size and sit three levels deeper there.
- Object keys are strings (an integer key would silently come back as a string).
- Numbers are finite (no NaN or Infinity) and integers have at most 4,300 digits
  (Python's own int-to-text limit).
- Text is valid Unicode: a lone surrogate (``"\\ud800"``) cannot be stored as UTF-8.
  NUL and other control characters are data and are kept.

``check_document`` is called by ``canonical_json`` (the one serializer) on what it wrote;
plain text columns get the Unicode check in ``Journal.write``/``read``, which turn the
driver's encoding error into ``ValidationError``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from proctor.core.errors import ValidationError

MAX_JSON_BYTES = 16 * 1024 * 1024  # one canonical JSON document
MAX_DEPTH = 100  # nested objects/arrays, the outermost one counting as 1

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = str.maketrans("", "", "0123456789+-.eE,:truefalsn ")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# json.dumps writes the keys 1, 1.5, True and None as "1", "1.5", "true" and "null"; a text
# that may hold one (a superset: no [{,] before the quote, which the scan is faster without;
# a text such as {"a\"1":0} only costs the walk of check_keys)
_COERCED_KEY = re.compile(r'"(?:-?[0-9][0-9.eE+-]*|true|false|null)":')


def check_document(value: Any, text: str) -> None:
    """Check ``text`` (``value`` serialized by ``canonical_json``) against the limits. The
    common case costs a few C-level passes over ``text``; no Python walk of ``value``."""
    check_json_text(text)
    if _COERCED_KEY.search(text):  # a key that may have been 1, 1.5, True or None
        check_keys(value)


def check_json_text(text: str) -> None:
    """``check_size`` and ``check_depth``; a short ASCII text with few brackets (the usual
    case) passes both at a glance."""
    if (
        text.isascii()
        and len(text) <= MAX_JSON_BYTES
        and text.count("[") + text.count("{") <= MAX_DEPTH
    ):
        return
    check_size(text)
    check_depth(text)


def check_size(text: str) -> None:
    """Refuse lone surrogates and documents over MAX_JSON_BYTES."""
    if text.isascii():
        size = len(text)
    else:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise ValidationError(
                "not valid JSON data: text must be valid Unicode "
                "(a lone surrogate cannot be stored)",
                field="",
            ) from exc
    if size > MAX_JSON_BYTES:
        raise ValidationError(
            f"not valid JSON data: {size:,} bytes is over the limit of {MAX_JSON_BYTES:,}",
            field="",
            size=size,
        )


def check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (string contents are skipped)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    brackets = _STRING.sub("", text).translate(_NOT_BRACKET)
    if max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH:
        raise ValidationError(
            f"not valid JSON data: nested deeper than {MAX_DEPTH} levels", field=""
        )


def check_keys(value: Any) -> None:
    """Refuse object keys that are not text (JSON would silently turn them into text)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise ValidationError(
                        f"not valid JSON data: object keys must be text, not {type(key).__name__}",
                        field="",
                    )
                stack.append(child)
        elif isinstance(item, list | tuple):
            stack.extend(item)


def check_text(value: Any, what: str, field: str, limit: int, *, required: bool = True) -> None:
    """Refuse ``value`` unless it is text of at most ``limit`` characters (and, when
    ``required``, not blank), each case with its own message: a 5 MB prompt is too long
    (with the limit), not "empty"."""
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be text, not {type(value).__name__}", field=field)
    if required and not value.strip():
        raise ValidationError(f"{what} must not be empty", field=field)
    if len(value) > limit:
        raise ValidationError(
            f"{what} is too long: {len(value):,} characters, over the limit of {limit:,}",
            field=field,
            size=len(value),
            limit=limit,
        )


MAX_HOLD = 60.0  # seconds a decision may be held for its undo: an undo window, not a queue


def hold_seconds(hold: Any) -> float:
    """A decision's hold (the seconds it may be undone, approvals and questions alike),
    checked: 0 (none) to ``MAX_HOLD``."""
    try:
        value = float(hold)
    except (TypeError, ValueError):
        raise ValidationError("the hold is a number of seconds", field="hold") from None
    if not 0 <= value <= MAX_HOLD:
        raise ValidationError(f"the hold is 0 to {MAX_HOLD:.0f} seconds", field="hold", hold=value)
    return value
