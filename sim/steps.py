"""The steps a simulated agent takes inside a run (a mixin of ``agent_process.Agent``)."""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from proctor.core import Journal, errors
from proctor.core.models import (
    ApprovalStatus,
    EffectStatus,
    QuestionKind,
    QuestionStatus,
    Trust,
)

from . import content

CRASH_EXIT = 75  # the parent restarts a child that exits with this code


class Stop(Exception):
    """The agent must stop now (signal, drain deadline, or its parent died)."""


class Cancelled(Exception):
    """An operator asked this run to stop."""


class Steps:
    """Each ``step_*`` returns None to go on, or "failed" when it failed the run."""

    # Provided by Agent (agent_process.py); declared here for the type checker only.
    j: Journal
    rng: random.Random
    name: str
    index: int
    owner: str
    run_id: str | None
    waiting_on: tuple[str, str] | None
    project: str
    space: str
    model: str
    step_no: int
    stats: Counter[str]
    memory_steps: int

    if TYPE_CHECKING:

        def check(self) -> None: ...
        def pause(self, seconds: float) -> None: ...
        def wait_approval(self, approval_id: str) -> Any: ...
        def wait_answer(self, interaction_id: str) -> Any: ...
        def wait_for_person(self, key: str) -> Any: ...
        def next_action_kind(self) -> str: ...
        def next_question_kind(self) -> QuestionKind: ...
        def next_fault(self) -> str | None: ...
        def save_stats(self) -> Counter[str]: ...

    @property
    def current_run_id(self) -> str:
        """The id of the run this step belongs to (every step runs inside one)."""
        assert self.run_id is not None
        return self.run_id

    def event(self, type_: str, payload: Any) -> None:
        self.j.runs.append_event(self.current_run_id, type_, payload)

    # ------------------------------------------------------------ model and reads
    def step_model(self) -> None:
        self.step_no += 1
        self.j.runs.append_events(
            self.current_run_id, content.model_events(self.rng, self.model, self.step_no)
        )
        tool, request = content.read_request(self.rng, self.project)
        call = self.j.runs.record_tool_call(self.current_run_id, tool, request)
        self.pause(self.rng.uniform(0.02, 0.15))
        if self.rng.random() < 0.1:
            self.j.runs.finish_tool_call(
                call.id, "failed", error="TimeoutError: no response within 30 s"
            )
        else:
            self.j.runs.finish_tool_call(
                call.id,
                "succeeded",
                result={"bytes": self.rng.randint(200, 90_000), "lines": self.rng.randint(5, 2000)},
            )

    # ------------------------------------------------------------ approvals and effects
    def step_approval(
        self, spec: content.ActionSpec | None = None, follow_up: bool = False
    ) -> str | None:
        spec = spec or content.make_action(self.next_action_kind(), self.rng, self.project)
        rule = self.j.approvals.match_rule(spec.action, self.current_run_id)
        if rule is not None and rule.effect == "deny":
            self.event(
                "agent.rule_blocked",
                {"rule_id": rule.id, "tool": spec.action["tool"], "instead": spec.alternative},
            )
            return None
        call = self.j.runs.record_tool_call(
            self.current_run_id,
            spec.action["tool"],
            spec.action["args"],
            safety_class=spec.safety_class,
        )
        scope = "run" if not follow_up and self.rng.random() < 0.3 else "once"
        expiry: dict[str, Any] = {}
        if self.rng.random() < 0.2:
            expiry = {
                "expires_in": float(self.rng.choice([300, 900, 3600])),
                "on_expiry": self.rng.choice(["deny", "keep_pending"]),
            }
        approval = self.j.approvals.request(
            self.current_run_id,
            spec.action,
            reason=spec.reason,
            safety_class=spec.safety_class,
            requested_scope=scope,
            tool_call_id=call.id,
            **expiry,
        )
        self.stats["approvals"] += 1
        try:
            if approval.status == ApprovalStatus.PENDING:
                approval = self.wait_approval(approval.id)
            elif approval.rule_id:
                self.stats["auto_decided"] += 1
                self.event(
                    "agent.rule_applied", {"approval_id": approval.id, "rule_id": approval.rule_id}
                )
                # trusting only signed decisions, the agent checks who made the rule first
                self.j.approvals.wait(approval.id, timeout=0)
        except errors.DecisionUnverified as exc:
            self.unverified(spec, approval, call.id, exc)
            return None
        self.event(
            "agent.decision_seen",
            {
                "approval_id": approval.id,
                "status": approval.status.value,
                "by": approval.decided_by,
            },
        )
        if approval.status != ApprovalStatus.APPROVED:
            return self.not_approved(spec, approval, call.id)
        self.execute(spec, approval, call.id)
        if scope == "run":  # the same kind of action again: a run rule may now cover it
            again = content.make_action(spec.kind, self.rng, self.project)
            again = content.ActionSpec(
                spec.kind,
                {**again.action, "tool": spec.action["tool"]},
                again.safety_class,
                again.reason,
                again.result,
                again.alternative,
            )
            self.check()
            return self.step_approval(again, follow_up=True)
        return None

    def not_approved(self, spec: content.ActionSpec, approval: Any, call_id: str) -> str | None:
        why = approval.decision_reason or approval.status.value
        self.j.runs.finish_tool_call(call_id, "failed", error=f"not approved: {why}")
        self.stats["denied"] += 1
        # a denial is an operator's choice the agent lives with: it takes its alternative and
        # goes on (the demo never shows a run failed by an operator's choice)
        self.event("agent.adapted", {"approval_id": approval.id, "instead": spec.alternative})
        return None

    def unverified(
        self, spec: content.ActionSpec, approval: Any, call_id: str, exc: errors.ProctorError
    ) -> None:
        """A decision no trusted operator signed (in ``proctor demo``: a rule the demo's
        history made, when the agents trust only the operator's key): not acted on, as a
        denial is not; the agent takes its alternative and goes on, the run does not fail."""
        self.waiting_on = None
        self.j.runs.finish_tool_call(call_id, "failed", error=f"not carried out: {exc}")
        self.stats["unverified"] += 1
        self.event(
            "agent.decision_unverified",
            {"approval_id": approval.id, "why": str(exc), "instead": spec.alternative},
        )

    def execute(self, spec: content.ActionSpec, approval: Any, call_id: str) -> None:
        """Consume the approval, then reserve -> begin -> commit the effect. What runs is what
        was approved: the operator's edited action when there is one ("Edit, then approve…"),
        consumed by its own digest. An effect a person marks failed ("Mark failed, allow a
        retry") is retried as the next attempt of the effect, as the desk says it will be."""
        fault = self.next_fault()
        action = approval.effective_action
        key = f"{action['tool']}/{approval.id}"
        lease = 1.0 if fault == "lease" else 30.0
        self.j.approvals.consume_and_reserve(
            approval.id, approval.effective_digest, key, lease_seconds=lease, owner=self.owner
        )
        if approval.edited:
            self.event(
                "agent.ran_edited",
                {"approval_id": approval.id, "effect_key": key, "args": action.get("args")},
            )
        self.j.effects.begin(key, owner=self.owner)
        self.stats["effects"] += 1
        self.pause(self.rng.uniform(0.05, 0.2))
        try:
            if fault == "lease" or (fault == "crash" and self.rng.random() < 0.5):
                self.note_request(key, approval.id, spec)
            if fault == "crash":
                print(
                    f"{self.name}: simulated crash in the middle of {key}",
                    file=sys.stderr,
                    flush=True,
                )
                self.save_stats()
                os._exit(CRASH_EXIT)
            if fault == "lease":
                time.sleep(lease + 0.3)  # hung past the lease: nobody knows what happened
            effect = self.commit(key, spec.result)
        except errors.EffectAmbiguous:
            self.stats["ambiguous"] += 1
            effect = self.wait_for_person(key)
            if effect.status == EffectStatus.FAILED:
                effect = self.retry(effect, spec.result)
        self.j.runs.finish_tool_call(call_id, "succeeded", result=spec.result)
        assert effect.status == EffectStatus.COMMITTED

    def commit(self, key: str, result: dict) -> Any:
        return self.j.effects.commit(
            key,
            result,
            owner=self.owner,
            external_id=str(next(iter(result.values()), "")),
            evidence={"simulated": True},
        )

    def retry(self, effect: Any, result: dict) -> Any:
        """A person said the effect did not happen: run it again as its next attempt (the
        reservation of a failed effect is its retry), and commit it."""
        retried = self.j.effects.reserve(
            effect.key,
            tool=effect.tool,
            run_id=effect.run_id,
            action=effect.action,
            safety_class=effect.safety_class,
            owner=self.owner,
        )
        self.event(
            "agent.retried",
            {
                "effect_key": effect.key,
                "attempt": retried.attempt,
                "why": effect.resolution_reason or "a person marked it failed",
            },
        )
        self.j.effects.begin(effect.key, owner=self.owner)
        self.stats["retried"] += 1
        return self.commit(effect.key, result)

    def note_request(self, key: str, approval_id: str, spec: content.ActionSpec) -> None:
        """The provider accepted the request (a request id came back) before the crash or
        hang: the receipt so far that the operator sees beside the ambiguous effect."""
        self.j.effects.record_receipt(
            key,
            external_id=f"req_{approval_id[-10:]}",
            owner=self.owner,
            evidence={
                "provider_status": 202,
                "note": "request accepted; no final response yet",
                "tool": spec.action["tool"],
            },
        )
        self.stats["receipts_so_far"] += 1

    # ------------------------------------------------------------ questions
    def step_question(self) -> str | None:
        kind = self.next_question_kind()
        entry = self.some_memory_entry() if kind == QuestionKind.MEMORY_CHANGE_REVIEW else None
        spec = content.make_question(kind, self.rng, self.project, entry)
        expires = float(self.rng.choice([600, 1800])) if self.rng.random() < 0.15 else None
        item = self.j.questions.ask(
            self.current_run_id,
            spec.kind,
            spec.prompt,
            request=spec.request,
            response_schema=spec.response_schema,
            options=spec.options,
            expires_in=expires,
        )
        self.stats["questions"] += 1
        item = self.wait_answer(item.id)
        if item.status != QuestionStatus.RESOLVED:
            # withdrawn, expired or dismissed by the operator: go on without the answer
            because = {"because": item.dismissal} if item.dismissal else {}
            self.event(
                "agent.adapted",
                {
                    "interaction_id": item.id,
                    "instead": "continue with the safest default",
                    **because,
                },
            )
            return None
        self.event(
            "agent.answer_used",
            {"interaction_id": item.id, "kind": kind.value, "answer": item.response},
        )
        if kind == QuestionKind.MEMORY_CHANGE_REVIEW and entry is not None:
            self.apply_memory_review(entry, spec.request, item.response)
        return None

    def apply_memory_review(self, entry: Any, request: dict, response: dict) -> None:
        verdict = response.get("verdict")
        if verdict not in ("accept", "edit"):
            return
        text = response.get("content") if verdict == "edit" else request["after"]
        if not text:
            return
        current = self.j.memory.get(entry.id)
        try:
            self.j.memory.replace(
                entry.id,
                text,
                expected_version=current.version,
                reason="approved by a person",
                run_id=self.run_id,
            )
            self.stats["memory_writes"] += 1
        except (errors.StaleVersion, errors.NotAllowed):
            # changed meanwhile, or confirmed by a person since the question was asked: the
            # store's hint, a conflict with the accepted version that a person resolves
            self.conflict(self.j.memory.get(entry.id), text)

    # ------------------------------------------------------------ memory
    def some_memory_entry(self) -> Any:
        """An entry to propose a change to: one this agent may write once a person accepts
        (the core says which; an entry confirmed by a person is not), else a new one."""
        entries = [
            e
            for e in self.j.memory.list(scope="project", scope_key=self.project, limit=20)
            if not self.j.memory.refusal(e, "replace")
        ]
        if entries:
            entry = self.rng.choice(entries)
            self.j.memory.mark_used([entry.id])
            return entry
        title, text, kind = content.memory_fact(self.rng, "project")
        return self.j.memory.add(
            "project",
            self.project,
            title,
            text,
            kind=kind,
            run_id=self.run_id,
            reason="noted while working",
        )

    def step_memory(self) -> None:
        scope, key = content.memory_place(self.rng, self.project, self.space)
        entries = self.j.memory.list(scope=scope, scope_key=key, limit=50)
        title, text, kind = content.memory_fact(self.rng, scope)
        same = [e for e in entries if e.title == title]
        if same:
            self.j.memory.mark_used([e.id for e in same])  # the agent read what it knew
        roll = self.rng.random()
        self.memory_steps += 1
        if (self.memory_steps + self.index) % 3 == 1:  # a conflict now and then, for sure
            entry = same[0] if same else self.some_memory_entry()
            self.conflict(entry, content.memory_variant(self.rng, entry.content))
        elif not same:
            entry = self.j.memory.add(
                scope,
                key,
                title,
                text,
                kind=kind,
                run_id=self.run_id,
                trust=self.rng.choice([Trust.AGENT_OBSERVED, Trust.MODEL_INFERRED]),
                sensitivity=self.rng.choice(["normal", "normal", "internal", "personal"]),
                reason=f"learned while working on run {self.run_id}",
            )
            self.stats["memory_writes"] += 1
            self.event(
                "memory.written", {"entry_id": entry.id, "scope": scope, "key": key, "op": "add"}
            )
        elif roll < 0.45:
            entry = same[0]
            try:
                self.j.memory.replace(
                    entry.id,
                    content.memory_variant(self.rng, entry.content),
                    expected_version=entry.version,
                    run_id=self.run_id,
                    reason="newer information from the run",
                )
                self.stats["memory_writes"] += 1
                self.event("memory.written", {"entry_id": entry.id, "op": "replace"})
            except (errors.StaleVersion, errors.NotAllowed):  # changed, or confirmed
                self.conflict(
                    self.j.memory.get(entry.id), content.memory_variant(self.rng, entry.content)
                )
        else:
            self.conflict(same[0], content.memory_variant(self.rng, same[0].content))

    def conflict(self, entry: Any, incoming: str) -> None:
        try:
            item = self.j.memory.record_conflict(
                entry.id,
                incoming,
                incoming_source=f"{self.name} (run {self.run_id})",
                run_id=self.run_id,
                local_version=entry.version,
                **content.memory_incoming_fields(self.rng, entry),
            )
        except errors.ConflictPending:  # one already waits for a person on this entry
            return
        self.stats["conflicts"] += 1
        self.event("memory.conflict_raised", {"reconciliation_id": item.id, "entry_id": entry.id})
