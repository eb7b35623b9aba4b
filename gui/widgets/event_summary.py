"""One-line, plain-text summaries of run events (the timeline's Summary column)."""

from __future__ import annotations

import json  # at the top: an import inside a function costs ~3 us per call under PySide6
from typing import Any

from proctor.core.models import RunEvent

from . import fmt

MAX_PAIRS = 4


def plain_tip(text: str, limit: int = 1000) -> str:
    """A tooltip that shows ``text`` literally (the shared ``labels.plain_tip``)."""
    from .labels import plain_tip as shared

    return shared(text, limit)


def _get(payload: Any, *keys: str) -> str:
    if not isinstance(payload, dict):
        return ""
    for key in keys:
        value = payload.get(key)
        if value not in (None, "", [], {}):
            return value if isinstance(value, str) else fmt.bounded(_compact(value), 120)
    return ""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ": "))
    except (TypeError, ValueError):
        return str(value)


def generic(payload: Any) -> str:
    """``key: value`` pairs of a dict payload, or the compact JSON of anything else."""
    if payload is None:
        return ""
    if not isinstance(payload, dict):
        return _compact(payload)
    pairs = [
        f"{k}: {v if isinstance(v, str) else _compact(v)}"
        for k, v in list(payload.items())[:MAX_PAIRS]
    ]
    more = f" (+{len(payload) - MAX_PAIRS} more)" if len(payload) > MAX_PAIRS else ""
    return " · ".join(pairs) + more


def _tool_finished(p: Any) -> str:
    status = _get(p, "status")
    error = _get(p, "error")
    return f"{status}: {error}" if error else status


def _approval(p: Any) -> str:
    return " · ".join(x for x in (_get(p, "action"), _get(p, "safety_class")) if x)


def _approved(p: Any) -> str:
    """An approval's decision; an edited one says so, and how (path: before → after)."""
    if not isinstance(p, dict) or not p.get("edited"):
        return ""
    changes = p.get("changes")
    changes = changes if isinstance(changes, list) else []
    how = "; ".join(
        f"{c.get('path')}: {fmt.bounded(fmt.pretty_json(c.get('before')), 40)} → "
        f"{fmt.bounded(fmt.pretty_json(c.get('after')), 40)}"
        for c in changes[:4]
        if isinstance(c, dict)
    )
    return f"approved as edited by {_get(p, 'by')}" + (f" — {how}" if how else "")


SUMMARIES = {
    "approval.approved": _approved,
    "run.started": lambda p: f"{_get(p, 'title')} ({_get(p, 'agent')} in {_get(p, 'project')})",
    "run.failed": lambda p: f"failed: {_get(p, 'error')}",
    "run.completed": lambda p: f"completed {_get(p, 'result')}".strip(),
    "run.cancelled": lambda p: f"cancelled: {_get(p, 'reason')}",
    "run.cancel_requested": lambda p: f"cancel requested: {_get(p, 'reason')}",
    "run.interrupted": lambda p: f"interrupted: {_get(p, 'reason')}",
    "attempt.started": lambda p: f"attempt {_get(p, 'attempt')} {_get(p, 'reason')}".strip(),
    "attempt.finished": lambda p: (
        f"attempt {_get(p, 'attempt')} {_get(p, 'status')}"
        + (f": {_get(p, 'error')}" if _get(p, "error") else "")
    ),
    "tool.called": lambda p: f"{_get(p, 'tool')} ({_get(p, 'safety_class')}) {_get(p, 'request')}",
    "tool.finished": _tool_finished,
    "approval.requested": _approval,
    "interaction.requested": lambda p: _get(p, "prompt", "kind"),
    "interaction.presented": lambda p: f"seen by {_get(p, 'by')}" if _get(p, "by") else "",
    "effect.ambiguous": lambda p: f"{_get(p, 'effect_key')}: {_get(p, 'reason', 'error')}",
    "effect.receipt": lambda p: (
        f"{_get(p, 'effect_key')}: receipt so far"
        + (f" ({_get(p, 'external_id')})" if _get(p, "external_id") else "")
    ),
    "memory.changed": lambda p: f"{_get(p, 'operation')} {_get(p, 'entry_id')}",
}


def event_summary(event: RunEvent) -> str:
    """What happened, in one line (agent text stays plain and bounded)."""
    special = SUMMARIES.get(event.type)
    if special is not None:
        try:
            text = special(event.payload)
        except (AttributeError, TypeError):
            text = ""
        if text.strip():
            return fmt.bounded(text, 300)
    return fmt.bounded(generic(event.payload), 300)
