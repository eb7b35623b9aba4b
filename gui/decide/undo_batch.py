"""A bulk approve or deny held like one decision (issue 37): the Undo bar offers to take the
whole batch back while its holds last; one click undoes each (``Approvals.bulk_undo``) and
says which the agent already used (or whose hold passed), as refused results."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.core.models import BulkResult

from ..infra.i18n import tr
from ..widgets import fmt


@dataclass(frozen=True)
class Batch:
    """The held decisions of one bulk approve or deny."""

    approve: bool
    items: tuple[tuple[str, int], ...]  # (approval id, its version after the decision)
    hold_until: float  # the latest of their holds (an earlier one's undo says it ended)


def held_batch(results: list[BulkResult], approve: bool, now: float) -> Batch | None:
    """The batch of ``results`` still held at ``now`` (None: nothing to undo)."""
    held = [
        r
        for r in results
        if r.ok and r.version is not None and r.hold_until is not None and r.hold_until > now
    ]
    if not held:
        return None
    return Batch(
        approve,
        tuple((r.id, r.version) for r in held if r.version is not None),
        max(r.hold_until for r in held if r.hold_until is not None),
    )


def batch_text(batch: Batch) -> str:
    """What the batch decided: "Approved 5 requests"."""
    if batch.approve:
        return tr("Approved %n request(s)", n=len(batch.items))
    return tr("Denied %n request(s)", n=len(batch.items))


def batch_undone_text(results: list[BulkResult]) -> str:
    """What the page says once the batch's undo is through: how many are pending again, and
    each that stands (the agent used it, or its hold ended), bounded."""
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    text = tr("Undone: %n request(s) pending again; the agent was not told.", n=len(ok))
    if bad:
        text += " " + tr("%n not undone: ", n=len(bad))
        text += "; ".join(fmt.bounded(r.error or "", 120) for r in bad[:3])
    return text
