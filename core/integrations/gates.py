"""What every runtime adapter shares: a tool call as a Proctor action, and an operator's
decision on it as a plain verdict the adapter hands back to its runtime.

An action is ``{"tool": name, "args": {...}}``. The verdict carries the action the operator
approved: the requested one, or the operator's edit (core's edit-then-approve: the approval's
``effective_action``). Adapters pass only that action's arguments on.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import Approval, ApprovalStatus, SafetyClass

DECIDED = (ApprovalStatus.APPROVED, ApprovalStatus.DENIED, ApprovalStatus.EXPIRED)


class Verdict(BaseModel):
    """An operator's decision on one tool call, as a runtime needs it."""

    model_config = ConfigDict(frozen=True)
    approval_id: str
    status: str  # pending | approved | denied | expired | cancelled
    approved: bool = False
    reason: str | None = None
    decided_by: str | None = None
    args: Any = None  # the arguments to run with (the operator's edit, if any)
    edited: bool = False

    @property
    def decided(self) -> bool:
        return self.status in DECIDED


def read_approval(journal: Journal, approval_id: str) -> Approval:
    """The approval as it stands, for handing its decision to a runtime: a due expiry is
    applied, and with the journal opened with ``trust=`` a decision no trusted operator signed
    raises DecisionUnverified here, before any runtime acts on it."""
    return journal.approvals.wait(approval_id, 0)


def tool_action(tool: str, args: Any) -> dict[str, Any]:
    """The Proctor action for one tool call."""
    return {"tool": str(tool), "args": args if isinstance(args, dict) else {"input": args}}


def stable_id(prefix: str, *parts: str) -> str:
    """A run id derived from the runtime's own ids (the same session -> the same run)."""
    return prefix + hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def approved_action(approval: Approval) -> tuple[Any, bool]:
    """The action the agent may run and whether the operator edited it."""
    if approval.status == ApprovalStatus.APPROVED and approval.edited:
        return approval.effective_action, True
    return approval.action, False


def verdict_of(approval: Approval) -> Verdict:
    action, edited = approved_action(approval)
    args = action.get("args") if isinstance(action, dict) else None
    reason = approval.decision_reason
    if approval.status == ApprovalStatus.EXPIRED:
        reason = reason or "the request expired before anyone decided"
    return Verdict(
        approval_id=approval.id,
        status=approval.status.value,
        approved=approval.status == ApprovalStatus.APPROVED,
        reason=reason,
        decided_by=approval.decided_by,
        args=args,
        edited=edited,
    )


def wait_or_withdraw(journal: Journal, approval_id: str, timeout: float, why: str) -> Verdict:
    """Wait up to ``timeout`` for the decision; if none came, withdraw the request so nobody
    approves what no one waits for. A decision that lands while withdrawing wins."""
    approval = journal.approvals.wait(approval_id, max(0.0, timeout))
    if approval.status != ApprovalStatus.PENDING:
        return verdict_of(approval)
    return withdraw(journal, approval_id, why)


def withdraw(journal: Journal, approval_id: str, why: str) -> Verdict:
    try:
        return verdict_of(journal.approvals.withdraw(approval_id, why))
    except errors.InvalidTransition:  # decided meanwhile
        return verdict_of(read_approval(journal, approval_id))


def poll_decisions(
    journal: Journal, approval_ids: list[str], *, timeout: float | None, poll_s: float = 0.2
) -> dict[str, Verdict]:
    """Block until every approval is decided (or ``timeout``): their verdicts, by id."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        verdicts = {a: verdict_of(read_approval(journal, a)) for a in approval_ids}
        if all(v.status != ApprovalStatus.PENDING for v in verdicts.values()):
            return verdicts
        if deadline is not None and time.monotonic() >= deadline:
            return verdicts
        time.sleep(poll_s)


__all__ = [
    "Lost",
    "Verdict",
    "approved_action",
    "claim_or_lose",
    "claim_resume",
    "lost_resume",
    "poll_decisions",
    "read_approval",
    "resume_record",
    "stable_id",
    "tool_action",
    "verdict_of",
    "wait_or_withdraw",
    "withdraw",
]


ResumeRefusal = Literal["claimed_elsewhere", "already_resumed", "ambiguous"]


def claim_resume(
    journal: Journal,
    key: str,
    *,
    runtime: str,
    run_id: str,
    thread_id: str,
    lease_seconds: float,
    owner: str,
) -> tuple[ResumeRefusal, str | None] | None:
    """Reserve the effect "resume this thread" once (exactly one process resumes a saved
    run). None when this process holds it; else the outcome's status and detail:
    claimed_elsewhere, already_resumed or ambiguous (a person resolves it on the desk)."""
    try:
        journal.effects.reserve(
            key,
            tool=f"{runtime}.resume",
            run_id=run_id,
            action={"thread_id": thread_id},
            safety_class=SafetyClass.UNSAFE_WRITE,
            lease_seconds=lease_seconds,
            owner=owner,
            origin=origins.here(runtime, tool="resume"),
        )
    except errors.EffectBusy as exc:
        return "claimed_elsewhere", str(exc)
    except errors.EffectCommitted:
        return "already_resumed", None
    except errors.EffectAmbiguous as exc:
        return "ambiguous", f"{exc}: a person resolves {key} on the desk"
    return None


class Lost(BaseModel):
    """What a resumer that lost the claim on a saved state hands back to its loop: the
    winner's result once it finished (``done`` and the final output, or the state it stopped
    at next), else the same state to try again with (the winner is still at work, or a person
    resolves a crashed claim). The README's ``while not outcome.done:`` loop ends on it."""

    model_config = ConfigDict(frozen=True)
    status: ResumeRefusal
    done: bool = False
    state: str | None = None
    approvals: list[str] = []
    output: Any = None
    detail: str | None = None

    def outcome_fields(self, output_name: str) -> dict[str, Any]:
        """The fields of the runtime's outcome (its final output under ``output_name``)."""
        return {
            "done": self.done,
            "state": self.state,
            "approvals": self.approvals,
            output_name: self.output,
            "detail": self.detail,
        }


def claim_or_lose(journal: Journal, key: str, state: str, **claim: Any) -> Lost | None:
    """``claim_resume`` (``claim``: its keyword arguments); None when this process resumes
    ``state``, else what the loser hands back (``lost_resume``)."""
    refused = claim_resume(journal, key, **claim)
    return None if refused is None else lost_resume(journal, key, refused, state)


def lost_resume(
    journal: Journal, key: str, refused: tuple[ResumeRefusal, str | None], state: str
) -> Lost:
    """The outcome for the loser of ``claim_resume`` on ``key`` (the saved ``state``)."""
    status, detail = refused
    if status != "already_resumed":  # still at work, or a person decides: try again later
        return Lost(status=status, state=state, detail=detail)
    result = journal.effects.get(key).result
    result = result if isinstance(result, dict) else {}
    if result.get("done"):
        return Lost(status=status, done=True, output=result.get("output"), detail=detail)
    if isinstance(result.get("state"), str):  # the winner stopped at new interruptions
        return Lost(
            status=status,
            state=result["state"],
            approvals=list(result.get("approvals") or []),
            detail="resumed by another process; it stopped at new approvals",
        )
    return Lost(  # resolved by a person: this saved state is spent and nothing came of it
        status=status,
        done=True,
        detail=f"{key} was resumed elsewhere and left no result (resolved by a person): "
        "the run's later state was lost with that process; cancel the run or start a new thread",
    )


def resume_record(outcome: Any, output: Any) -> dict[str, Any]:
    """What the winner commits on the claim: enough for a loser to end as it did."""
    return {
        "status": outcome.status,
        "done": bool(outcome.done),
        "output": output,
        "state": outcome.state,
        "approvals": list(outcome.approvals),
    }
