"""Whom an agent trusts: a trusted-operators file, from outside the journal.

Fails closed: a file that cannot be read, is not a trusted-operators document, or lists
nobody gives a ``Trust`` that trusts no one (every decision is refused, naming why). It
never means "trust disabled". Without any trust configured (no ``trust=`` and no
``PROCTOR_TRUSTED_OPERATORS``) ``resolve_trust`` returns None: today's behaviour.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.core import errors

from .keys import fingerprint, key_id_of, parse_public_key

ENV = "PROCTOR_TRUSTED_OPERATORS"


@dataclass(frozen=True)
class TrustedKey:
    name: str
    key_id: str
    raw_public: bytes
    retired_at: float | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key_id)


class Trust:
    """The operator keys an agent trusts. ``problem`` is set when the source could not be
    used; then nobody is trusted."""

    def __init__(self, keys: list[TrustedKey], source: str, problem: str | None = None) -> None:
        self.keys = {k.key_id: k for k in keys}
        self.source = source
        self.problem = problem or (None if keys else f"{source} lists no operators")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trust:
        source = os.fspath(path)
        try:
            doc = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return cls([], source, f"the trusted-operators file {source} cannot be read: {exc}")
        return cls.from_document(doc, source)

    @classmethod
    def from_document(cls, doc: Any, source: str = "trust document") -> Trust:
        try:
            return cls(parse_operators(doc), source)
        except errors.ValidationError as exc:
            return cls([], source, f"{source} is not a trusted-operators file: {exc}")

    def key(self, key_id: str, signed_at: float) -> TrustedKey:
        """The trusted key ``key_id`` if it was live at ``signed_at``; DecisionUnverified
        naming why otherwise."""
        if self.problem and not self.keys:
            raise errors.DecisionUnverified(f"nobody is trusted: {self.problem}", why="no_trust")
        key = self.keys.get(key_id)
        if key is None:
            raise errors.DecisionUnverified(
                f"signed by key {fingerprint(key_id)}, which {self.source} does not trust",
                why="unknown_key",
            )
        if key.retired_at is not None and signed_at >= key.retired_at:
            raise errors.DecisionUnverified(
                f"signed by {key.name}'s key {key.fingerprint}, retired before it signed",
                why="retired_key",
            )
        return key


def parse_operators(doc: Any) -> list[TrustedKey]:
    if not isinstance(doc, dict) or doc.get("proctor_trusted_operators") != 1:
        raise errors.ValidationError('expected {"proctor_trusted_operators": 1, ...}')
    operators = doc.get("operators")
    if not isinstance(operators, list):
        raise errors.ValidationError("'operators' must be a list", field="operators")
    keys = []
    for i, op in enumerate(operators):
        if not isinstance(op, dict) or not isinstance(op.get("name"), str):
            raise errors.ValidationError(f"operator #{i} needs a name", field="operators")
        raw = parse_public_key(op.get("public_key"))
        retired = op.get("retired_at")
        if retired is not None and not isinstance(retired, int | float):
            raise errors.ValidationError(
                f"operator #{i}: retired_at must be a time", field="retired_at"
            )
        if "key_id" in op and op["key_id"] != key_id_of(raw):
            raise errors.ValidationError(
                f"operator #{i}: key_id does not match the key", field="key_id"
            )
        keys.append(
            TrustedKey(
                op["name"], key_id_of(raw), raw, float(retired) if retired is not None else None
            )
        )
    return keys


def resolve_trust(trust: Any) -> Trust | None:
    """``Journal.open``'s ``trust=``: a Trust, a path, a trusted-operators dict, or None
    (then ``PROCTOR_TRUSTED_OPERATORS``, if set, names the file; set but empty trusts
    no one)."""
    if isinstance(trust, Trust):
        return trust
    if isinstance(trust, dict):
        return Trust.from_document(trust)
    if trust is not None:
        return Trust.load(trust)
    env = os.environ.get(ENV)
    if env is None:
        return None
    if not env.strip():
        return Trust([], ENV, f"{ENV} is set but empty")
    return Trust.load(env)


# ---------------------------------------------------------------- no trust set

LOGGER = "proctor.trust"
_warned: set[str] = set()


def untrusted_warning(journal: Any) -> str | None:
    """For an agent that set no trust, on a journal that holds signed decisions: the
    warning (logged once per process and journal, at WARNING on ``proctor.trust``) that it
    believes every decision row, and the command that sets trust. None otherwise."""
    from proctor.core.models import ActorKind

    if journal.trust is not None or journal.actor.kind is not ActorKind.AGENT:
        return None
    if not journal.read(_has_signatures):
        return None
    where = str(journal.path)
    text = (
        f"{where} holds signed operator decisions, but this agent ({journal.actor.label}) "
        "trusts no key: it believes every decision row, a forged one too. Set trust: an "
        "operator runs `proctor keys export -o trusted.json`; the agent then runs with "
        f"`{ENV}=trusted.json` (or `--trust trusted.json` for proctor mcp and proctor hook)"
    )
    if where not in _warned:
        _warned.add(where)
        import logging

        logging.getLogger(LOGGER).warning(text)
    return text


def _has_signatures(conn: Any) -> bool:
    from sqlalchemy import exc, select

    from proctor.core.storage import schema as s

    try:
        return conn.execute(select(s.signatures.c.record_id).limit(1)).first() is not None
    except exc.DBAPIError:  # a journal older than 0005s has no signatures table
        return False
