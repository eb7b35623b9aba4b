"""pydantic-ai adapter: deferred tools that require approval are decided on the Proctor desk,
and the run continues — in any process — with ``DeferredToolResults`` built from the decisions.

One agent thread (a name you choose) = one Proctor run, id ``run_id_for(thread_id)``. The
agent's ``output_type`` includes ``DeferredToolRequests``; its approval-requiring tools
(``requires_approval=True``, ``ApprovalRequired``) end a run with those requests.

- :meth:`DeferredGate.start` runs the agent; each ``DeferredToolRequests.approvals`` call is
  filed as a Proctor approval of ``{"tool": tool_name, "args": args}``, keyed by its
  ``tool_call_id``. The outcome's ``state`` (JSON: the message history and the open calls) is
  what the next process resumes from.
- :meth:`DeferredGate.resume` runs nothing while a decision is open (``waiting``); once all are
  decided it continues the run with ``DeferredToolResults``: approved -> ``True``; approved
  with the operator's edit (core's edit-then-approve) -> ``ToolApproved(override_args=<the
  edited args>)``; denied or expired -> ``ToolDenied(message=<the operator's reason>)``.
- Exactly once: each resume of one saved state is claimed as a Proctor effect
  ``pydantic-ai:<thread>:<state digest>``; a second resumer of the same state gets
  ``already_resumed`` / ``claimed_elsewhere``; a crash mid-run leaves it ``ambiguous``.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins

from .gates import (
    Verdict,
    claim_or_lose,
    read_approval,
    resume_record,
    stable_id,
    tool_action,
    verdict_of,
)

Status = Literal["done", "waiting", "claimed_elsewhere", "already_resumed", "ambiguous"]


class DeferredOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    thread_id: str
    run_id: str
    status: Status
    done: bool = False
    state: str | None = None
    approvals: list[str] = []
    output: Any = None
    detail: str | None = None


def run_id_for(thread_id: str) -> str:
    return stable_id("run_pa_", "pydantic-ai", thread_id)


def tool_result(v: Verdict) -> Any:
    """One decision as pydantic-ai's approval result."""
    from pydantic_ai import ToolApproved, ToolDenied

    if v.approved and v.edited and isinstance(v.args, dict):
        return ToolApproved(override_args=v.args)
    if v.approved:
        return True
    return ToolDenied(
        message=f"Denied on the Proctor desk by {v.decided_by or 'the operator'}:"
        f" {v.reason or 'no reason given'}"
    )


class DeferredGate:
    def __init__(
        self,
        journal: Journal,
        *,
        project: str = "pydantic-ai",
        agent_name: str | None = None,
        lease_seconds: float = 300.0,
    ) -> None:
        self.j = journal
        self.project = project
        self.agent_name = agent_name or journal.actor.name
        self.lease_seconds = lease_seconds
        self.owner = f"{self.agent_name}@{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def start(
        self, agent: Any, thread_id: str, prompt: Any, **run_kw: Any
    ) -> DeferredOutcome:
        self.j.runs.start(
            self.project,
            f"pydantic-ai agent {agent.name or ''}: {thread_id}",
            agent=self.agent_name,
            run_id=run_id_for(thread_id),
            metadata={"via": "pydantic-ai", "thread_id": thread_id},
        )
        return self._after(thread_id, await agent.run(prompt, **run_kw))

    async def resume(
        self, agent: Any, thread_id: str, state: str, **run_kw: Any
    ) -> DeferredOutcome:
        from pydantic_ai import DeferredToolResults
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        saved = json.loads(state)
        calls = saved["calls"]
        verdicts = {
            c["tool_call_id"]: verdict_of(read_approval(self.j, self._file(thread_id, c)))
            for c in calls
        }
        if not all(v.decided for v in verdicts.values()):
            return self._outcome(
                thread_id,
                "waiting",
                state=state,
                approvals=[v.approval_id for v in verdicts.values() if not v.decided],
            )
        key = f"pydantic-ai:{thread_id}:{hashlib.sha256(state.encode()).hexdigest()[:24]}"
        refused = self._claim(thread_id, key, state)
        if refused is not None:
            return refused
        results = DeferredToolResults(
            approvals={cid: tool_result(v) for cid, v in verdicts.items()}
        )
        history = ModelMessagesTypeAdapter.validate_json(saved["messages"])
        self.j.effects.begin(key, owner=self.owner)
        try:
            result = await agent.run(
                message_history=history, deferred_tool_results=results, **run_kw
            )
        except BaseException as exc:  # tools may have run: a person says what happened
            self.j.effects.mark_ambiguous(
                key, f"{type(exc).__name__}: {exc}"[:2000], owner=self.owner
            )
            raise
        outcome = self._after(thread_id, result)
        self.j.effects.commit(key, resume_record(outcome, outcome.output), owner=self.owner)
        return outcome

    # ------------------------------------------------------------ internals
    def _after(self, thread_id: str, result: Any) -> DeferredOutcome:
        from pydantic_ai import DeferredToolRequests

        output = result.output
        if isinstance(output, DeferredToolRequests):
            if output.calls:
                raise errors.ValidationError(
                    "the run also deferred external (non-approval) tool calls; this adapter "
                    "answers approvals only",
                    field="output",
                )
            calls = [
                {"tool_call_id": p.tool_call_id, "tool_name": p.tool_name, "args": p.args_as_dict()}
                for p in output.approvals
            ]
            ids = [self._file(thread_id, c) for c in calls]
            state = json.dumps({"messages": result.all_messages_json().decode(), "calls": calls})
            return self._outcome(thread_id, "waiting", state=state, approvals=ids)
        out = output.model_dump(mode="json") if isinstance(output, BaseModel) else output
        try:
            json.dumps(out)
        except (TypeError, ValueError):
            out = str(out)
        run = self.j.runs.get(run_id_for(thread_id))
        if not run.status.terminal:
            self.j.runs.complete(run.id, {"output": out})
        return self._outcome(thread_id, "done", done=True, output=out)

    def _file(self, thread_id: str, call: dict[str, Any]) -> str:
        approval = self.j.approvals.request(
            run_id_for(thread_id),
            tool_action(call["tool_name"], call["args"]),
            reason=f"the agent wants to call {str(call['tool_name'])[:100]}",
            request_key=f"pydantic-ai:{thread_id}:{call['tool_call_id']}",
            origin=origins.here("pydantic-ai", tool=str(call["tool_name"])),
        )
        return approval.id

    def _claim(self, thread_id: str, key: str, state: str) -> DeferredOutcome | None:
        """None when this process resumes ``state``; else what the loser hands back: the
        winner's output once it finished, the state it stopped at next, or ``state`` again
        to retry while the winner works (never a state-less outcome that is not done)."""
        lost = claim_or_lose(
            self.j,
            key,
            state,
            runtime="pydantic-ai",
            run_id=run_id_for(thread_id),
            thread_id=thread_id,
            lease_seconds=self.lease_seconds,
            owner=self.owner,
        )
        if lost is None:
            return None
        return self._outcome(thread_id, lost.status, **lost.outcome_fields("output"))

    def _outcome(self, thread_id: str, status: Status, **kw: Any) -> DeferredOutcome:
        return DeferredOutcome(
            thread_id=thread_id, run_id=run_id_for(thread_id), status=status, **kw
        )


__all__ = ["DeferredGate", "DeferredOutcome", "run_id_for", "tool_result"]
