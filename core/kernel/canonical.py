"""Canonical JSON and digests: one helper, used everywhere."""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from proctor.core.errors import ValidationError

from .limits import check_document

ZERO_DIGEST = "0" * 64


# json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False),
# without building an encoder per call
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
# the same, as the one-shot C encoder json.dumps itself runs, made once (JSONEncoder.encode
# makes it anew per call); without a circular-reference check: a value that contains itself
# is refused by the recursion limit instead (RecursionError, as a too deep value is)
_C_ENCODER = (
    c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", True, False, False)
    if c_make_encoder is not None
    else None
)


def canonical_json(obj: Any) -> str:
    """Serialize ``obj`` deterministically; NaN, Infinity and anything over the limits in
    ``limits.py`` (depth, size, non-text keys, lone surrogates) are refused."""
    text = scalar_json(obj)
    check_document(obj, text)
    return text


def scalar_json(obj: Any) -> str:
    """``obj``'s canonical JSON, unchecked against the limits (for a part of a document that
    is checked whole)."""
    try:
        if _C_ENCODER is not None and type(obj) is not str:
            return "".join(_C_ENCODER(obj, 0))
        return _ENCODER.encode(obj)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError(f"not valid JSON data: {exc}", field="") from exc


def pretty_json(value: Any) -> str:
    """JSON for people to read: indented, keys sorted, non-ASCII kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_of(obj: Any) -> str:
    """sha256 over the canonical JSON of ``obj``."""
    return sha256_hex(canonical_json(obj))


def chain_digest(prev_digest: str, obj: Any) -> str:
    """One link of a hash chain: sha256(prev_digest + canonical(obj))."""
    return sha256_hex(prev_digest + canonical_json(obj))


_DECODER = json.JSONDecoder()


def loads(text: str | None) -> Any:
    """``json.loads(text)`` (None for None). A stored canonical text is one JSON value with
    nothing around it: decoded in one call; anything else goes through ``json.loads``."""
    if text is None:
        return None
    if type(text) is str:
        try:
            value, end = _DECODER.raw_decode(text)
        except ValueError:
            end = -1
        if end == len(text):
            return value
    return json.loads(text)
