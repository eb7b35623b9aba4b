"""Side effects of LangGraph nodes as Proctor effects (reserve -> begin -> commit, at most
once per thread), and the JSON helpers the adapter shares. Part of :mod:`.langgraph`."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import (
    EffectStatus,
    SafetyClass,
)

T = TypeVar("T")


def run_id_for(thread_id: str) -> str:
    return "run_" + hashlib.sha256(f"langgraph:{thread_id}".encode()).hexdigest()[:24]


class EffectNotExecuted(Exception):
    """Raise from an effect's function when it certainly did not happen: the effect is marked
    ``failed`` (it may be retried). Any other exception marks it ``ambiguous``."""


def jsonable(value: Any) -> Any:
    """Plain JSON data (pydantic models dumped, anything else unknown as its str)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        return str(obj)

    return json.loads(json.dumps(value, default=default, ensure_ascii=False))


def is_approval_value(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    action = value.get("action")
    return value.get("kind") == "approval" or (
        isinstance(action, Mapping) and bool(action.get("tool") or action.get("name"))
    )


class GraphEffects:
    """Side effects of graph nodes as Proctor effects. Build it before the graph (nodes close
    over it); :class:`LangGraphBridge` has one as ``.effects``."""

    def __init__(self, journal: Journal, *, owner: str | None = None) -> None:
        self.j = journal
        self.owner = owner or f"{journal.actor.name}@{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def run(
        self,
        name: str,
        fn: Callable[[], T],
        *,
        tool: str | None = None,
        action: Any = None,
        approval: Mapping[str, Any] | None = None,
        safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
        lease_seconds: float = 60.0,
    ) -> T:
        """Run a side effect at most once per thread, inside a node.

        The effect key is ``langgraph:<thread>:effect:<name>``. A committed effect is not run
        again: its stored result is returned (``fn`` must return JSON data). With
        ``approval=`` (the resume value of an approval interrupt) the approval is consumed for
        exactly its action in the same transaction as the reservation. ``fn`` raising
        :class:`EffectNotExecuted` marks the effect failed; anything else marks it ambiguous
        (a person resolves it on the desk)."""
        from langgraph.config import get_config

        thread_id = str(get_config()["configurable"]["thread_id"])
        key = f"langgraph:{thread_id}:effect:{name}"
        done = self._committed(key)
        if done is not None:
            return done.result
        try:
            if approval is not None and not self._consumed_for(approval, key):
                self.j.approvals.consume_and_reserve(
                    approval["approval_id"],
                    approval["action_digest"],
                    key,
                    lease_seconds=lease_seconds,
                    owner=self.owner,
                    origin=origins.here("langgraph", tool=tool or name),
                )
            else:  # no approval, or a retry of a failed attempt that already consumed it
                self.j.effects.reserve(
                    key,
                    tool=tool or name,
                    run_id=run_id_for(thread_id),
                    action=action,
                    safety_class=safety_class,
                    lease_seconds=lease_seconds,
                    owner=self.owner,
                    origin=origins.here("langgraph", tool=tool or name),
                )
        except errors.EffectCommitted:
            return self.j.effects.get(key).result
        self.j.effects.begin(key, owner=self.owner)
        try:
            result = fn()
        except EffectNotExecuted as exc:
            self.j.effects.fail(key, str(exc) or "not executed", owner=self.owner)
            raise
        except BaseException as exc:
            self.j.effects.mark_ambiguous(key, f"{type(exc).__name__}: {exc}", owner=self.owner)
            raise
        self.j.effects.commit(key, jsonable(result), owner=self.owner)
        return result

    def _committed(self, key: str) -> Any:
        try:
            effect = self.j.effects.get(key)
        except errors.NotFound:
            return None
        return effect if effect.status == EffectStatus.COMMITTED else None

    def _consumed_for(self, approval: Mapping[str, Any], key: str) -> bool:
        return self.j.approvals.get(approval["approval_id"]).consumed_effect_key == key
