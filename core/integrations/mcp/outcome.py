"""What every Proctor MCP tool returns: a request's status and, once decided, the person's
decision (``Outcome``), built from an approval or a question."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from proctor.core.models import Approval, ApprovalStatus, Question, QuestionStatus

StatusName = Literal[
    "pending", "approved", "denied", "answered", "dismissed", "expired", "withdrawn"
]


class Outcome(BaseModel):
    """What every tool returns: the request and, once decided, the person's decision."""

    id: str = Field(description="approval (apr_...) or question (int_...) id")
    kind: Literal["approval", "question"]
    status: StatusName
    approved: bool | None = Field(None, description="approvals: True only when approved")
    answer: Any = Field(
        None, description="questions: the person's answer (JSON); none when dismissed"
    )
    reason: str | None = Field(
        None,
        description="the person's reason, if given; when dismissed: 'dismissed by the "
        "operator: <why>' (no answer is coming: go another way)",
    )
    decided_by: str | None = None
    scope: str | None = Field(None, description="approvals: once, run or space")
    run_id: str
    action_digest: str | None = Field(
        None,
        description=("approvals: the digest of the action to run (of the edited one if edited)"),
    )
    edited: bool = Field(
        False,
        description=(
            "approvals: the person edited the action before approving it; run `action`, not "
            "what you asked for"
        ),
    )
    action: dict[str, Any] | None = Field(
        None,
        description=(
            "approvals, once approved: exactly the action to run (the person's edit, if any)"
        ),
    )
    requested_digest: str | None = Field(
        None, description=("approvals: the digest of the action you asked for")
    )


APPROVAL_STATUS: dict[ApprovalStatus, StatusName] = {
    ApprovalStatus.PENDING: "pending",
    ApprovalStatus.APPROVED: "approved",
    ApprovalStatus.DENIED: "denied",
    ApprovalStatus.EXPIRED: "expired",
    ApprovalStatus.CANCELLED: "withdrawn",
}
QUESTION_STATUS: dict[QuestionStatus, StatusName] = {
    QuestionStatus.REQUESTED: "pending",
    QuestionStatus.PRESENTED: "pending",
    QuestionStatus.RESOLVED: "answered",
    QuestionStatus.DISMISSED: "dismissed",
    QuestionStatus.EXPIRED: "expired",
    QuestionStatus.CANCELLED: "withdrawn",
}


def approval_outcome(a: Approval) -> Outcome:
    status = APPROVAL_STATUS[a.status]
    decided = status in ("approved", "denied", "expired")
    return Outcome(
        id=a.id,
        kind="approval",
        status=status,
        approved=(status == "approved") if decided else None,
        reason=a.decision_reason,
        decided_by=a.decided_by,
        scope=a.decision_scope.value if a.decision_scope else None,
        run_id=a.run_id,
        action_digest=a.effective_digest,
        edited=a.edited,
        action=a.effective_action if status == "approved" else None,
        requested_digest=a.action_digest,
    )


def question_outcome(q: Question) -> Outcome:
    dismissed = q.status == QuestionStatus.DISMISSED
    return Outcome(
        id=q.id,
        kind="question",
        status=QUESTION_STATUS[q.status],
        answer=None if dismissed else q.response,
        reason=q.dismissal,
        decided_by=q.resolved_by,
        run_id=q.run_id,
    )
