"""What an action is about: its resource, as rules match it and as a person reads it.

``RESOURCE_KEYS`` are the arguments an action's resource is taken from when it names none
(the first present wins). Rules match ``matched`` (core.decisions.writer.action_resource:
``str()`` of the value, kept as it is so existing rules keep matching); the desk and the
CLI show ``words``: a list as "a, b", never a Python repr (issue 32 item 17)."""

from __future__ import annotations

import json
from typing import Any

RESOURCE_KEYS = ("path", "url", "command", "to", "table", "account")


def readable(value: Any) -> str:
    """A value as a person reads it: a list as "a, b" (never a Python repr), an object as
    compact JSON, else its text."""
    if isinstance(value, list | tuple):
        return ", ".join(readable(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return "" if value is None else str(value)


def resource_value(action: Any) -> tuple[bool, Any]:
    """(found, value): the action's own ``resource``, else its first RESOURCE_KEYS argument."""
    if not isinstance(action, dict):
        return False, None
    if "resource" in action:
        return True, action["resource"]
    args = action.get("args")
    args = args if isinstance(args, dict) else {}
    for key in RESOURCE_KEYS:
        if key in args:
            return True, args[key]
    return False, None


def words(action: Any) -> str:
    """What an action is about, readable: ``jonas@…, mia@…``, not ``['jonas@…', 'mia@…']``."""
    found, value = resource_value(action)
    return readable(value) if found else ""
