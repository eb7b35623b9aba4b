"""OpenAI Agents SDK adapter: the run's tool approvals (tools with ``needs_approval``) are
decided on the Proctor desk, and the saved ``RunState`` resumes — in any process — once the
operator has decided.

One agent thread (a name you choose) = one Proctor run, id ``run_id_for(thread_id)``.

- :meth:`AgentsGate.start` runs the agent until it finishes or stops at interruptions. Each
  ``ToolApprovalItem`` is filed as a Proctor approval of ``{"tool": name, "args": arguments}``
  (keyed by the tool call id, so filing again finds the same request). The outcome carries the
  serialised ``RunState`` (``outcome.state``): keep it wherever the next process can read it.
- :meth:`AgentsGate.resume` loads that state, and once every interruption is decided applies
  the decisions — approved -> ``state.approve(item)``, denied or expired ->
  ``state.reject(item, rejection_message=<the operator's reason>)`` — and continues the run.
  While any decision is open it runs nothing and reports ``waiting``.
- Edited arguments: the SDK cannot run an approved call with other arguments, so an approval
  the operator edited (core's edit-then-approve) is rejected with a message saying so; the
  unedited call never runs on it.
- Exactly once: each resume of one saved state is claimed as a Proctor effect
  ``openai-agents:<thread>:<state digest>``. Of two processes resuming the same state, one
  runs; the other gets ``claimed_elsewhere`` / ``already_resumed``. A resumer that crashed
  mid-run leaves the claim ``ambiguous`` (a person resolves it on the desk).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

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

Status = Literal["done", "waiting", "resumed", "claimed_elsewhere", "already_resumed", "ambiguous"]


class AgentsOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    thread_id: str
    run_id: str
    status: Status
    done: bool = False
    state: str | None = None  # the RunState to resume from (while interrupted)
    approvals: list[str] = []  # the open interruptions' Proctor approvals
    final_output: Any = None
    detail: str | None = None


def run_id_for(thread_id: str) -> str:
    return stable_id("run_oa_", "openai-agents", thread_id)


def item_args(item: Any) -> Any:
    raw = item.arguments
    try:
        return json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {"arguments": raw}


class AgentsGate:
    """Drives an ``agents.Agent`` against a Proctor journal opened by the agent."""

    def __init__(
        self,
        journal: Journal,
        *,
        project: str = "openai-agents",
        agent_name: str | None = None,
        lease_seconds: float = 300.0,
    ) -> None:
        self.j = journal
        self.project = project
        self.agent_name = agent_name or journal.actor.name
        self.lease_seconds = lease_seconds
        self.owner = f"{self.agent_name}@{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def start(self, agent: Any, thread_id: str, input: Any, **run_kw: Any) -> AgentsOutcome:
        from agents import Runner

        self.j.runs.start(
            self.project,
            f"OpenAI agent {agent.name}: {thread_id}",
            agent=self.agent_name,
            run_id=run_id_for(thread_id),
            metadata={"via": "openai-agents", "thread_id": thread_id, "agent": agent.name},
        )
        result = await Runner.run(agent, input, **run_kw)
        return self._after(thread_id, result, "resumed")

    async def resume(self, agent: Any, thread_id: str, state: str, **run_kw: Any) -> AgentsOutcome:
        """Continue a saved run once every interruption is decided (else ``waiting``)."""
        from agents import Runner, RunState

        run_state = await RunState.from_string(agent, state)
        items = run_state.get_interruptions()
        verdicts = [verdict_of(read_approval(self.j, self._file(thread_id, i))) for i in items]
        if not all(v.decided for v in verdicts):
            return self._outcome(
                thread_id,
                "waiting",
                state=state,
                approvals=[v.approval_id for v in verdicts if not v.decided],
            )
        key = f"openai-agents:{thread_id}:{hashlib.sha256(state.encode()).hexdigest()[:24]}"
        refused = self._claim(thread_id, key, state)
        if refused is not None:
            return refused
        for item, v in zip(items, verdicts, strict=True):
            apply(run_state, item, v)
        self.j.effects.begin(key, owner=self.owner)
        try:
            result = await Runner.run(agent, run_state, **run_kw)
        except BaseException as exc:  # tools may have run: a person says what happened
            self.j.effects.mark_ambiguous(
                key, f"{type(exc).__name__}: {exc}"[:2000], owner=self.owner
            )
            raise
        outcome = self._after(thread_id, result, "resumed")
        self.j.effects.commit(key, resume_record(outcome, outcome.final_output), owner=self.owner)
        return outcome

    # ------------------------------------------------------------ internals
    def _after(self, thread_id: str, result: Any, status: Status) -> AgentsOutcome:
        items = list(result.interruptions or [])
        if items:
            ids = [self._file(thread_id, i) for i in items]
            return self._outcome(
                thread_id, "waiting", state=result.to_state().to_string(), approvals=ids
            )
        output = result.final_output
        output = output.model_dump(mode="json") if isinstance(output, BaseModel) else output
        try:
            json.dumps(output)
        except (TypeError, ValueError):
            output = str(output)
        run = self.j.runs.get(run_id_for(thread_id))
        if not run.status.terminal:
            self.j.runs.complete(run.id, {"final_output": output})
        return self._outcome(thread_id, "done", done=True, final_output=output)

    def _file(self, thread_id: str, item: Any) -> str:
        name = str(item.name or "unknown-tool")
        call_id = (
            item.call_id or hashlib.sha256(f"{name}|{item.arguments}".encode()).hexdigest()[:16]
        )
        agent = getattr(getattr(item, "agent", None), "name", None) or "the agent"
        approval = self.j.approvals.request(
            run_id_for(thread_id),
            tool_action(name, item_args(item)),
            reason=f"{agent} wants to call {name}",
            request_key=f"openai-agents:{thread_id}:{call_id}",
            origin=origins.here(
                "openai-agents", tool=name, client=None if agent == "the agent" else agent
            ),
        )
        return approval.id

    def _claim(self, thread_id: str, key: str, state: str) -> AgentsOutcome | None:
        """None when this process resumes ``state``; else what the loser hands back: the
        winner's final output once it finished, the state it stopped at next, or ``state``
        again to retry while the winner works (never a state-less outcome that is not done)."""
        lost = claim_or_lose(
            self.j,
            key,
            state,
            runtime="openai-agents",
            run_id=run_id_for(thread_id),
            thread_id=thread_id,
            lease_seconds=self.lease_seconds,
            owner=self.owner,
        )
        if lost is None:
            return None
        return self._outcome(thread_id, lost.status, **lost.outcome_fields("final_output"))

    def _outcome(self, thread_id: str, status: Status, **kw: Any) -> AgentsOutcome:
        return AgentsOutcome(thread_id=thread_id, run_id=run_id_for(thread_id), status=status, **kw)


def apply(run_state: Any, item: Any, v: Verdict) -> None:
    """The operator's decision on one interruption, as the SDK takes it."""
    if v.approved and not v.edited:
        run_state.approve(item)
        return
    if v.approved:  # edited: the SDK runs only the model's own arguments
        message = edited_message(item, v)
    else:
        message = (
            f"Denied on the Proctor desk by {v.decided_by or 'the operator'}: "
            f"{v.reason or 'no reason given'}"
        )
    run_state.reject(item, rejection_message=message)


def edited_message(item: Any, v: Verdict, limit: int = 2000) -> str:
    """The rejection of a call the operator approved only as edited: it was not run, and what
    the operator wanted instead (the edited arguments), so the model can call it that way."""
    wanted = json.dumps(v.args, ensure_ascii=False, sort_keys=True)
    if len(wanted) > limit:
        wanted = wanted[: limit - 1] + "…"
    return (
        f"Not run: the operator approved {getattr(item, 'name', None) or 'this call'} only with edited "
        f"arguments, which this runtime cannot substitute. The operator wanted: {wanted}. "
        "Call the tool again with exactly these arguments to run it."
    )


__all__ = ["AgentsGate", "AgentsOutcome", "apply", "edited_message", "run_id_for"]
