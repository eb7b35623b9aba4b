"""What an approval's detail says of its policy: "1 of 2 approvals — alice approved at 10:02
(“her reason”); waiting for ops" (a sequence says which stage), and why this operator
cannot approve now. Every name and reason is shown as plain text (``fmt.bounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.core import Journal
from proctor.core.policies.models import Progress, Step

from ..infra.i18n import tr
from ..widgets import fmt


@dataclass(frozen=True)
class PolicyView:
    """An approval's policy as the detail shows it (None fields: no policy governs it)."""

    progress: Progress | None
    why_not: str | None  # why this operator cannot approve now (None: they can)
    assignee: str | None


def policy_view(journal: Journal, approval_id: str) -> PolicyView:
    """Read off the GUI thread, with the approval."""
    progress = journal.policies.progress(approval_id)
    why_not = journal.policies.why_not(approval_id) if progress is not None else None
    return PolicyView(progress, why_not, journal.assignments.of(approval_id))


def step_text(step: Step) -> str:
    """``alice approved at 10:02 (“her reason”)``; a delegate's says for whom."""
    verb = tr("approved") if step.approve else tr("denied")
    who = fmt.bounded(step.operator, 80)
    if step.for_operator:
        who += tr(" for {member}").format(member=fmt.bounded(step.for_operator, 80))
    text = f"{who} {verb} at {fmt.clock(step.created_at)}"
    if step.reason:
        text += f" (“{fmt.bounded(step.reason, 200)}”)"
    return text


def progress_text(p: Progress) -> str:
    """The detail's line: how many approvals of how many, each step, and whom it waits for
    (with a sequence's stage)."""
    head = tr("{got} of {needed} approvals").format(got=p.approvals, needed=p.needed)
    steps = "; ".join(step_text(st) for st in p.steps)
    text = f"{head} — {steps}" if steps else head
    if p.denied:
        return text
    if p.stage is None:
        return text + tr("; the policy is satisfied")
    waiting = " or ".join(fmt.bounded(g, 60) for g in p.waiting_for)
    if len(p.policy.stages) > 1:
        return text + tr("; stage {stage} of {stages}: waiting for {groups}").format(
            stage=p.stage + 1, stages=len(p.policy.stages), groups=waiting
        )
    return text + tr("; waiting for {groups}").format(groups=waiting)


def policy_head(p: Progress) -> str:
    """``Policy “two of ops”: needs 2 of ops``."""
    return tr("Policy “{name}”: needs {needs}").format(
        name=fmt.bounded(p.policy.name, 120), needs=fmt.bounded(p.policy.needs(), 200)
    )
