"""``journal.policies``: groups of operators, policies (made with a preview, listed,
revoked with a reason) and where a request stands under its policy."""

from __future__ import annotations

from proctor.core import errors
from proctor.core.decisions.writer import MAX_REASON, record_decision
from proctor.core.kernel.limits import check_text
from proctor.core.storage import schema as s
from proctor.core.storage.sql import insert_rows
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import delegations, match, steps, waiting
from . import groups as groups_mod
from .models import Delegation, Policy, PolicyDraft, PolicyPreview, Progress


def _reason(reason: str | None, *, required: bool) -> str | None:
    reason = (reason or "").strip() or None
    if required and not reason:
        raise errors.ValidationError("a reason is required", field="reason")
    if reason:
        check_text(reason, "the reason", "reason", MAX_REASON)
    return reason


class Policies:
    def __init__(self, store: Store) -> None:
        self.j = store

    # ------------------------------------------------------------ groups
    def groups(self) -> dict[str, list[str]]:
        """Every group with members -> its members (sorted)."""
        return self.j.read(groups_mod.members_in)

    def add_member(
        self,
        group: str,
        operator: str,
        *,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> None:
        self._change(group, operator, "add", reason, request_id, source)

    def remove_member(
        self,
        group: str,
        operator: str,
        *,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> None:
        self._change(group, operator, "remove", reason, request_id, source)

    def _change(
        self,
        group: str,
        operator: str,
        change: str,
        reason: str | None,
        request_id: str | None,
        source: str,
    ) -> None:
        self.j.require_operator()
        text = _reason(reason, required=False)
        self.j.write(
            lambda tx: groups_mod.change_in(tx, group, operator, change, text, request_id, source)
        )

    # ------------------------------------------------------------ delegation
    def delegate(
        self,
        delegate: str,
        *,
        until: float,
        starts_at: float | None = None,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> Delegation:
        """Hand this operator's part in every policy to ``delegate`` from ``starts_at``
        (default: now) until ``until``: within it, ``delegate`` may take the step a policy
        asks of this operator (counted as theirs)."""
        self.j.require_operator()
        text = _reason(reason, required=False)
        return self.j.write_then(
            lambda tx: delegations.delegate_in(
                tx,
                delegate,
                starts_at=starts_at,
                ends_at=until,
                reason=text,
                request_id=request_id,
                source=source,
            ),
            lambda tx, lid: next(
                d for d in delegations.delegations_in(tx.conn, now=None) if d.id == lid
            ),
        )

    def end_delegation(
        self,
        delegation_id: str,
        *,
        reason: str,
        request_id: str | None = None,
        source: str = "api",
    ) -> Delegation:
        """End this operator's delegation ``delegation_id`` now, with a reason (a decision
        with its audit row): a step its delegate takes from now on is not this operator's."""
        self.j.require_operator()
        text = _reason(reason, required=True) or ""
        return self.j.write_then(
            lambda tx: delegations.end_in(
                tx, delegation_id, reason=text, request_id=request_id, source=source
            ),
            lambda tx, _none: next(
                d for d in delegations.delegations_in(tx.conn, now=None) if d.id == delegation_id
            ),
        )

    def delegations(self, *, current_only: bool = True) -> list[Delegation]:
        """The delegations (``current_only``: those running or still to come)."""
        now = self.j.now() if current_only else None
        return self.j.read(lambda c: delegations.delegations_in(c, now=now))

    # ------------------------------------------------------------ policies
    def preview(self, draft: PolicyDraft) -> PolicyPreview:
        """Which past requests ``draft`` would have governed, which pending ones match it."""
        draft = match.checked(draft)
        return self.j.read(lambda c: match.preview_in(c, draft))

    def add(
        self,
        draft: PolicyDraft,
        *,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "api",
    ) -> Policy:
        """Make a policy (a signed decision with its audit row). It governs the requests filed
        from now on; the pending ones keep the way they were filed."""
        self.j.require_operator()
        draft = match.checked(draft)
        reason = _reason(reason, required=False)
        content = draft.model_dump(mode="json")

        def op(tx: Tx) -> str:
            pid = tx.new_id("pol")
            did = record_decision(
                tx,
                "policy",
                pid,
                None,
                content,
                source=source,
                reason=reason,
                request_id=request_id,
                request={"op": "policy.add", **content},
                audit=("policy.made", None, content),
            )
            insert_rows(
                tx.conn,
                s.policies,
                [
                    dict(
                        id=pid,
                        name=draft.name,
                        action_pattern=draft.action_pattern,
                        resource_pattern=draft.resource_pattern,
                        safety_class=draft.safety_class.value if draft.safety_class else None,
                        predicate=draft.predicate,
                        project=draft.project,
                        space=draft.space,
                        mode=draft.mode,
                        escalate_after=draft.escalate_after,
                        escalate_to=draft.escalate_to,
                        at_deadline=draft.at_deadline if draft.escalate_to else None,
                        deadline=draft.deadline,
                        decision_id=did,
                        created_by=tx.actor.label,
                        created_at=tx.now,
                    )
                ],
            )
            insert_rows(
                tx.conn,
                s.policy_stages,
                [
                    dict(policy_id=pid, stage=number, group_name=group, need=stage.need)
                    for number, stage in enumerate(draft.stages)
                    for group in stage.groups
                ],
            )
            return pid

        return self.j.write_then(op, lambda tx, pid: match.policy_in(tx.conn, pid))

    def revoke(
        self, policy_id: str, reason: str, *, request_id: str | None = None, source: str = "api"
    ) -> Policy:
        """Revoke a policy with a reason: requests filed from now on are not governed by it
        (those already bound keep it)."""
        self.j.require_operator()
        text = _reason(reason, required=True)

        def op(tx: Tx) -> None:
            policy = match.policy_in(tx.conn, policy_id)
            if not policy.active:
                raise errors.InvalidTransition(
                    f"policy {policy_id} was already revoked by {policy.revoked_by}"
                )
            did = record_decision(
                tx,
                "policy",
                policy_id,
                None,
                {"revoked": True},
                source=source,
                reason=text,
                request_id=request_id,
                request={"op": "policy.revoke", "id": policy_id, "reason": text},
                audit=("policy.revoked", {"active": True}, {"active": False}),
            )
            insert_rows(
                tx.conn,
                s.policy_revocations,
                [
                    dict(
                        policy_id=policy_id,
                        reason=text,
                        decision_id=did,
                        revoked_by=tx.actor.label,
                        revoked_at=tx.now,
                    )
                ],
            )

        return self.j.write_then(op, lambda tx, _none: match.policy_in(tx.conn, policy_id))

    def get(self, policy_id: str) -> Policy:
        return self.j.read(lambda c: match.policy_in(c, policy_id))

    def list(self, *, active_only: bool = True) -> list[Policy]:
        return self.j.read(lambda c: match.policies_in(c, active_only=active_only))

    # ------------------------------------------------------------ requests
    def waiting_for_me(self) -> set[str]:
        """The pending requests under a policy that wait for this operator now: their own
        part or a delegator's, and an escalation's group once the escalation is due."""
        who = self.j.actor.name
        return self.j.read(lambda c: waiting.waiting_ids_in(c, who, self.j.now(), groups=False))

    def progress(self, approval_id: str) -> Progress | None:
        """Where ``approval_id`` stands under its policy (None: no policy governs it)."""
        return self.j.read(lambda c: steps.progress_in(c, approval_id, self.j.now()))

    def why_not(self, approval_id: str, operator: str | None = None) -> str | None:
        """Why ``operator`` (default: this journal's) cannot approve ``approval_id`` now: they
        already took a step, or the stage it waits for is not theirs (None: they can, or no
        policy governs it). The store refuses the same when they try."""
        name = operator or self.j.actor.name
        return self.j.read(lambda c: waiting.why_not_in(c, approval_id, name, self.j.now()))
