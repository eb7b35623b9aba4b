"""Consuming an approval: the agent uses an approved approval once, for exactly the action
that was approved, and reserves its effect in the same transaction (``Approvals.
consume_and_reserve`` runs :func:`consume_in` as its write)."""

from __future__ import annotations

from typing import Any

from proctor.core import errors
from proctor.core.decisions.writer import approved_action_of, consume_deadline
from proctor.core.effects.rows import reserve_in
from proctor.core.kernel.canonical import sha256_hex
from proctor.core.kernel.integrity import refuse_tampered
from proctor.core.models import ApprovalStatus, ChangeKind
from proctor.core.policies.trust import check_quorum
from proctor.core.storage import schema as s
from proctor.core.storage.sql import update_where
from proctor.core.storage.tx import Tx

from .transitions import approval_row, lapse


def consume_in(
    tx: Tx,
    trust: Any,
    approval_id: str,
    action_digest: str,
    effect_key: str,
    *,
    reservation: dict,
) -> dict | None:
    """Consume ``approval_id`` for ``action_digest`` and reserve ``effect_key``
    (``reservation``: the effect's lease_seconds, owner, idempotency_key and origin). The
    reserved effect's row, or None when the reservation is refused or the approval lapsed
    (the refusal is raised after the commit)."""
    row = approval_row(tx, approval_id)
    # the requested action's stored text is the canonical one its digest names (the
    # usual case): the effect stores that text, not the parsed action serialised again
    canonical = (
        row.action is not None
        and row.action_digest is not None
        and sha256_hex(row.action) == row.action_digest
    )
    if not canonical:
        refuse_tampered("approval", approval_id, row)
    approved = _consumable(tx, trust, row, action_digest)
    tx.live_run(row.run_id)  # an ended run consumes nothing (and gets no event)
    if tx.now >= consume_deadline(row):
        lapse(tx, row)
        return None
    reserved = reserve_in(
        tx,
        effect_key,
        run_id=row.run_id,
        tool=row.action_name,
        action=approved,
        action_text=row.action if canonical and row.approved_digest is None else None,
        safety_class=row.safety_class,
        approval_id=approval_id,
        then=(
            row.run_id,
            "approval.consumed",
            {"approval_id": approval_id, "effect_key": effect_key},
        ),
        **reservation,
    )
    if reserved is None:
        return None  # the refusal (and any write that must survive it) is pending
    update_where(
        tx.conn,
        s.approvals,
        dict(consumed_at=tx.now, consumed_effect_key=effect_key, version=row.version + 1),
        id=approval_id,
        consumed_at=None,
    )
    tx.changed(ChangeKind.APPROVAL, approval_id, row.run_id)
    return reserved


def _consumable(tx: Tx, trust: Any, row: Any, action_digest: str) -> Any:
    """The approved action ``row`` grants, when it may be consumed now for
    ``action_digest``: approved, unconsumed, for that digest, trusted (with trust
    configured) and past its hold."""
    approval_id = row.id
    if row.status != ApprovalStatus.APPROVED:
        raise errors.NotConsumable(f"approval {approval_id} is {row.status}, not approved")
    if row.consumed_at is not None:
        raise errors.NotConsumable(
            f"approval {approval_id} was already consumed for {row.consumed_effect_key}"
        )
    approved_digest, approved = approved_action_of(row, tx.conn)
    if approved_digest != action_digest:
        raise errors.DigestMismatch(
            f"approval {approval_id} is for action {approved_digest[:12]}…, "
            f"not {action_digest[:12]}…"
            + (
                " (the operator edited the action: run the approved one)"
                if row.approved_digest is not None
                else ""
            )
        )
    if trust is not None:
        from proctor.core.decisions.checks import check_approval, check_unconsumed

        check_approval(tx.conn, trust, row, tx.now)
        check_quorum(tx.conn, trust, row)
        check_unconsumed(tx.conn, row)
    if row.hold_until is not None and tx.now < row.hold_until:
        raise errors.Held(
            f"approval {approval_id} may still be undone by the operator for "
            f"{row.hold_until - tx.now:.1f} s; wait, then consume it",
            hold_until=row.hold_until,
        )
    return approved
