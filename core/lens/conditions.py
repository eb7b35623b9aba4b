"""The lens as rule conditions read it: ``risk.<code>``, ``risk.detected`` and
``risk.unread`` (``proctor.core.kernel.predicates``). Registered when this package is
imported, which ``import proctor.core`` does; the parsers still load on the first read."""

from __future__ import annotations

from typing import Any

from proctor.core.kernel.predicates import RiskReader

from .facts import CODES
from .read import read_action


def risk_view(action: Any) -> dict[str, Any]:
    """``{"detected": class or None, "unread": n, "<family>": {"<name>": count}}``."""
    reading = read_action(action)
    view: dict[str, Any] = {"detected": reading.detected, "unread": len(reading.unread)}
    for fact in reading.facts:
        family, _, name = fact.code.partition(".")
        counts = view.setdefault(family, {})
        counts[name] = counts.get(name, 0) + 1
    return view


NAMES = frozenset({"detected", "unread"} | CODES | {code.split(".")[0] for code in CODES})
READER = RiskReader(risk_view, NAMES)
