"""What crosses the boundary: a policy (its draft and its stored form), a group, a step and
a request's progress through its policy."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from proctor.core import errors
from proctor.core.models import Frozen, RuleHit, SafetyClass

Mode = Literal["quorum", "sequence"]
AtDeadline = Literal["deny", "wait"]


class PolicyStage(Frozen):
    """``need`` approvals of distinct people who are members of any of ``groups``."""

    groups: list[str] = Field(min_length=1)
    need: int = Field(ge=1, le=50)


def stage_of(text: str) -> PolicyStage:
    """``ops:2`` or ``ops,sre:2`` (M of the named groups): a stage as people write it (the
    CLI's ``--stage``, the desk's "New policy…")."""
    groups, sep, need = text.strip().rpartition(":")
    need = need.strip()
    if not sep or not groups.strip() or not need.isdigit() or int(need) < 1:
        raise errors.ValidationError(
            f"{text.strip()!r} is not a stage: use GROUP[,GROUP...]:N, e.g. ops:2", field="stages"
        )
    return PolicyStage(groups=[g.strip() for g in groups.split(",") if g.strip()], need=int(need))


class PolicyDraft(Frozen):
    """A policy before it is made: which requests it governs (the way a rule matches: tool
    and resource patterns, a safety class, a condition, a project and space) and what such a
    request needs (``quorum``: one stage; ``sequence``: its stages one after another)."""

    name: str = Field(min_length=1, max_length=200)
    action_pattern: str = "*"
    resource_pattern: str = "*"
    safety_class: SafetyClass | None = None
    predicate: str | None = None
    project: str = "*"
    space: str | None = None
    mode: Mode = "quorum"
    stages: list[PolicyStage] = Field(min_length=1, max_length=10)
    # escalation: after ``escalate_after`` seconds undecided, members of ``escalate_to`` may
    # also take the steps of the stage the request waits for
    escalate_after: float | None = Field(default=None, gt=0)
    escalate_to: str | None = None
    # 0018e, at the escalation's deadline (``deadline`` seconds after the request was filed):
    # "deny" (the policy denies the request), or "wait" (it waits until its own expiry)
    at_deadline: AtDeadline = "wait"
    deadline: float | None = Field(default=None, gt=0)

    def needs(self) -> str:
        """``2 of ops`` / ``1 of ops, then 1 of finance``."""
        parts = [f"{st.need} of {' or '.join(st.groups)}" for st in self.stages]
        text = ", then ".join(parts)
        if self.escalate_to and self.escalate_after:
            text += f"; after {_span(self.escalate_after)} also {self.escalate_to}"
        if self.at_deadline == "deny" and self.deadline:
            text += f"; denied after {_span(self.deadline)}"
        return text


class Policy(PolicyDraft):
    id: str
    created_by: str
    created_at: float
    revoked_at: float | None = None
    revoked_by: str | None = None
    revoke_reason: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def denies_at(self, created_at: float) -> float | None:
        """When a request filed at ``created_at`` is denied by this policy (None: never)."""
        if self.at_deadline != "deny" or not self.deadline:
            return None
        return created_at + self.deadline

    def escalated(self, created_at: float, now: float) -> bool:
        """Whether a request filed at ``created_at`` is escalated at ``now``."""
        return bool(self.escalate_to and self.escalate_after) and now >= created_at + (
            self.escalate_after or 0
        )


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


class PolicyPreview(Frozen):
    """Which past requests a draft would have governed and which pending ones match it now
    (a policy governs the requests filed after it is made: the pending ones keep their way)."""

    past: list[RuleHit]
    past_total: int
    pending: list[RuleHit]
    scanned: int
    truncated: bool


class Delegation(Frozen):
    """``operator`` hands their part to ``delegate`` from ``starts_at`` until ``ends_at``."""

    id: str
    operator: str
    delegate: str
    starts_at: float
    ends_at: float
    reason: str | None = None
    created_at: float
    ended_at: float | None = None  # 0018e: when its delegator ended it early

    def running(self, now: float) -> bool:
        return self.starts_at <= now < self.ends_at and (
            self.ended_at is None or now < self.ended_at
        )


class Step(Frozen):
    """One person's step. ``for_operator``: the member whose part a delegate took."""

    operator: str
    for_operator: str | None = None
    group: str
    stage: int
    approve: bool
    reason: str | None = None
    created_at: float


class Progress(Frozen):
    """Where a request stands under its policy. ``stage``: the stage it waits for (None
    once satisfied or denied); ``waiting_for``: that stage's groups."""

    approval_id: str
    policy: Policy
    steps: list[Step]
    stage: int | None
    approvals: int
    needed: int
    waiting_for: list[str]
    satisfied: bool
    denied: bool

    def still_needed(self) -> str | None:
        """``1 more of ops, then 1 of finance`` (None once satisfied or denied)."""
        if self.stage is None:
            return None
        parts = []
        for number in range(self.stage, len(self.policy.stages)):
            stage = self.policy.stages[number]
            got = sum(1 for s in self.steps if s.stage == number and s.approve)
            groups = self.waiting_for if number == self.stage else stage.groups
            more = "more " if got else ""
            parts.append(f"{stage.need - got} {more}of {' or '.join(groups)}")
        return ", then ".join(parts)

    def summary(self) -> str:
        """``1 of 2 approvals; waiting for ops``."""
        if self.denied:
            by = next((s.operator for s in self.steps if not s.approve), None)
            return f"denied by {by}" if by else "denied at its policy's deadline"
        head = f"{self.approvals} of {self.needed} approvals"
        if self.satisfied:
            return head + "; the policy is satisfied"
        return f"{head}; waiting for {' or '.join(self.waiting_for)}"
