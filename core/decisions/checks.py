"""A trusting agent's checks: is the decision on this item a trusted operator's?

Each ``check_*`` reads the item's row and its decision rows on ``conn`` and raises
``DecisionUnverified`` (naming why) unless the decision is signed by a key the ``Trust``
holds, the signature verifies over the stored payload, and the payload says what the
rows say (item, version, decision, what was decided about, operator, time). An automatic
approval by a rule passes only if the rule is signed by a trusted operator and the action
really matches it (re-checked here, not taken from the row). ``decision_status`` is the
same check for display (desk, ``proctor verify``).
"""

from __future__ import annotations

import fnmatch
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict
from sqlalchemy import bindparam, or_, select

from proctor.core import errors
from proctor.core.kernel.canonical import digest_of, loads
from proctor.core.storage import schema as s
from proctor.core.storage.sql import Prepared, row_where

from .signing import (
    RULE_REVOKE,
    binding_of,
    check_record,
    expected_for_decision,
    expected_for_rule,
    journal_id_in,
    signature_row,
    signed_by_label,
)
from .trust import Trust

AUTOMATIC_SOURCES = ("rule", "expiry", "deadline")  # deadline: 0018e, a policy's


DECISIONS_OF = Prepared(
    select(s.decisions)
    .where(
        s.decisions.c.target_kind == bindparam("kind"),
        s.decisions.c.target_id == bindparam("target"),
    )
    .order_by(s.decisions.c.created_at, s.decisions.c.id)
)


def decision_rows(conn: Any, kind: str, target_id: str) -> list[Any]:
    return in_turn(DECISIONS_OF.all(conn, kind=kind, target=target_id))


def in_turn(rows: list[Any]) -> list[Any]:
    """``rows`` (by time) in the order they were made: of rows made at one instant (a
    test's clock; a decision and its undo), a decision first when none stands, an undo
    first when one does (a decision and its undo alternate)."""
    out: list[Any] = []
    i = 0
    while i < len(rows):
        j = i + 1
        while j < len(rows) and rows[j].created_at == rows[i].created_at:
            j += 1
        group = rows[i:j]
        while len(group) > 1:
            opened = not out or undone(out[-1].decision)  # nothing stands
            pick = next((r for r in group if undone(r.decision) != opened), group[0])
            group.remove(pick)
            out.append(pick)
        out.extend(group)
        i = j
    return out


UNDO_KEYS = {"undone", "was", "by"}
UNDONE_FROM = ("approved", "denied", "resolved", "dismissed")


def undone(decision_text: str) -> bool:
    """The decision row records an undo (0013u): the decisions before it no longer stand.
    Exactly ``decisions/undo.py``'s payload, ``{"undone": true, "was": <a decided status>,
    "by": <who>}``: an answer is never read as one (it records ``{"answer": ...}``;
    decisions/answers.py), nor one of an older journal that merely says ``"undone"``."""
    decision = loads(decision_text)
    return (
        isinstance(decision, dict)
        and set(decision) == UNDO_KEYS
        and decision["undone"] is True
        and decision["was"] in UNDONE_FROM
        and isinstance(decision["by"], str)
    )


def standing(rows: list[Any]) -> list[Any]:
    """The decision rows after the last undo (all of them when nothing was undone)."""
    last = max((i for i, r in enumerate(rows) if undone(r.decision)), default=-1)
    return rows[last + 1 :]


def _only_decision(conn: Any, kind: str, target_id: str, what: str) -> Any:
    rows = standing(decision_rows(conn, kind, target_id))
    if not rows:
        raise errors.DecisionUnverified(f"{what} is closed but has no decision row", why="unsigned")
    if len(rows) > 1:
        raise errors.DecisionUnverified(
            f"{what} has {len(rows)} decision rows; a decided item has one", why="mismatch"
        )
    return rows[0]


def _agree(ok: bool, what: str, field: str) -> None:
    if not ok:
        raise errors.DecisionUnverified(
            f"{what}: the row's {field} is not what its decision says", why="mismatch", field=field
        )


# ---------------------------------------------------------------- approvals


def check_approval(
    conn: Any, trust: Trust, row: Any, now: float, *, acting: bool = True
) -> str | None:
    """For a trusting agent: the approval row ``row`` (pending, withdrawn or expired pass;
    approved or denied must be proven). Returns who decided it, or None. ``acting=False``
    (``proctor verify``, for the record): a format-1 signature, which binds no run, attempt
    or place in the chain, passes on what it does bind."""
    what = f"approval {row.id}"
    if row.status in ("pending", "cancelled"):
        return None
    if row.status == "expired":
        if row.expires_at is None or row.expires_at > now:
            raise errors.DecisionUnverified(
                f"{what} says expired but its expiry has not come", why="mismatch", field="status"
            )
        return "system:expiry"
    d = _only_decision(conn, "approval", row.id, what)
    decision = loads(d.decision)
    if not isinstance(decision, dict):
        raise errors.DecisionUnverified(f"{what}: its decision is not an object", why="mismatch")
    _agree(decision.get("approved") is (row.status == "approved"), what, "status")
    _agree(d.actor == row.decided_by, what, "decided_by")
    _agree(decision.get("scope") == row.decision_scope, what, "decision_scope")
    _agree(digest_of(loads(row.action)) == row.action_digest, what, "action")
    _agree(decision.get("hold_until") == row.hold_until, what, "hold_until")  # 0013u
    if d.source == "rule" or d.actor.startswith("rule:"):
        return check_rule_decision(conn, trust, row, d)
    if d.source == "deadline" or d.actor.startswith("policy:"):
        from .deadline import check_denial

        return check_denial(conn, row, d)
    _agree(decision.get("rule_id") == row.rule_id, what, "rule_id")
    _agree(d.reason == row.decision_reason, what, "decision_reason")
    _agree(decision.get("edited_action_digest") == row.approved_digest, what, "approved_digest")
    consumed = row.consumed_at is not None
    key, payload = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=lambda v: v == row.version - (1 if consumed else 0),
        what=f"the decision on {what}",
        binding=binding_of(conn, "approval", row.id, locate=False),
        need_binding=acting,
    )
    if payload.get("proctor_signed") != 1:
        check_request_event(
            conn, row, payload.get("request_sequence"), payload.get("request_digest")
        )
    return signed_by_label(key)


def check_request_event(conn: Any, row: Any, sequence: Any, digest: Any) -> Any:
    """The ``approval.requested`` event at ``sequence`` of the approval's run's chain: it has
    ``digest``, its content recomputes to it, and it names this approval, its action digest,
    safety class and expiry. Returns the event; DecisionUnverified otherwise."""
    from proctor.core.kernel.canonical import chain_digest
    from proctor.core.storage.tx import event_digest_body

    what = f"approval {row.id}"
    event = (
        row_where(conn, s.events, run_id=row.run_id, sequence=sequence)
        if isinstance(sequence, int)
        else None
    )
    payload = loads(event.payload) if event is not None else None
    if (
        event is None
        or event.type != "approval.requested"
        or event.digest != digest
        or chain_digest(event.prev_digest, event_digest_body(event._mapping, payload)) != digest
    ):
        raise errors.DecisionUnverified(
            f"{what}: its run's chain does not hold the request event the decision was signed "
            f"for (#{sequence})",
            why="mismatch",
            field="request_sequence",
        )
    expected = {
        "approval_id": row.id,
        "action_digest": row.action_digest,
        "safety_class": row.safety_class,
        "expires_at": row.expires_at,
    }
    for field, value in expected.items():
        _agree(isinstance(payload, dict) and payload.get(field) == value, what, field)
    if event.attempt != row.attempt:
        _agree(False, what, "attempt")
    return event


def check_unconsumed(conn: Any, row: Any) -> None:
    """For a trusting agent about to consume approval ``row``: its run's chain records no
    ``approval.consumed`` for it and no effect row names it (a consumption cleared from the
    row by hand is still in the evidence). DecisionUnverified otherwise."""
    from .signing import request_event

    event = request_event(conn, row.run_id, "approval.consumed", "approval_id", row.id)
    effect = EFFECT_OF_APPROVAL.first(conn, run_id=row.run_id, approval_id=row.id)
    if event is not None or effect is not None:
        where = (
            f"its run's chain records approval.consumed at #{event.sequence}"
            if event is not None
            else f"effect {effect.key} was reserved with it"
        )
        raise errors.DecisionUnverified(
            f"approval {row.id} was consumed before ({where}); the row was reset",
            why="already_consumed",
        )


def check_rule_decision(conn: Any, trust: Trust, row: Any, d: Any) -> str:
    """An automatic decision by a rule: the rule is a trusted operator's and the action
    really matches it (pattern, scope, effect, live at the decision's time)."""
    from .writer import action_name, action_resource

    what = f"approval {row.id}"
    rule = row_where(conn, s.approval_rules, id=row.rule_id) if row.rule_id else None
    if rule is None or d.actor != f"rule:{rule.id}":
        raise errors.DecisionUnverified(
            f"{what} was decided by a rule that does not exist", why="rule_mismatch"
        )
    try:
        key, _ = check_record(
            conn,
            trust,
            rule.id,
            expected_for_rule(conn, journal_id_in(conn), rule),
            what=f"rule {rule.id}",
            binding=binding_of(conn, "rule", rule.id),
        )
    except errors.DecisionUnverified as err:
        raise errors.DecisionUnverified(
            f"{what} was decided by rule {rule.id}: {err}",
            why="rule_unsigned" if err.why == "unsigned" else err.why,
        ) from err

    def refuse(why: str) -> NoReturn:
        raise errors.DecisionUnverified(f"{what}: rule {rule.id} {why}", why="rule_mismatch")

    action = loads(row.action)
    if not fnmatch.fnmatchcase(action_name(action), rule.action_pattern) or not fnmatch.fnmatchcase(
        action_resource(action), rule.resource_pattern
    ):
        refuse("does not match the action")
    from proctor.core.kernel.predicates import condition_holds

    if not condition_holds(rule, action):
        refuse("has a condition the action does not meet")
    if (rule.effect == "allow") is not (row.status == "approved") or rule.effect not in (
        "allow",
        "deny",
    ):
        refuse(f"is a {rule.effect} rule, the approval is {row.status}")
    place, at = chain_place(conn, row, d)
    if place is None:
        refuse("decided it, but the audit chain does not record the decision")
    if rule.created_at > at:
        refuse("was made after the decision")
    if rule.expires_at is not None and rule.expires_at <= at:
        refuse(f"had expired when the chain recorded the decision (audit #{place})")
    revoked_at = revoked_in_chain(conn, rule.id, place)
    if revoked_at is not None:
        refuse(f"was revoked (audit #{revoked_at}) before the decision (audit #{place})")
    if rule.revoked_at is not None and rule.revoked_at <= at:
        refuse("was revoked")
    revoked = signature_row(conn, f"{rule.id}/revoked")
    if revoked is not None and revoked.created_at <= at:
        refuse("was revoked")
    run = row_where(conn, s.runs, id=row.run_id)
    if rule.scope == "run":
        if rule.run_id != row.run_id:
            refuse("belongs to another run")
    elif rule.scope == "space":
        if (
            run is None
            or rule.project not in ("*", run.project)
            or (rule.space is not None and rule.space != run.space)
        ):
            refuse("belongs to another project or space")
    else:
        refuse(f"has scope {rule.scope}")
    return f"rule {rule.id} by {signed_by_label(key)}"


def chain_place(conn: Any, row: Any, d: Any) -> tuple[int | None, float]:
    """Where the audit chain records rule decision ``d`` on approval ``row`` (its sequence,
    None when no audit row does) and the time the chains show there: the latest of the
    decision's audit row, the audit row before it and the approval's request event. A
    decision row dated back does not move it (order in the chain, not a claimed time)."""
    from .signing import request_event

    audited = AUTO_DECISION_AUDIT.first(conn, entity_id=row.id)
    if audited is None:
        return None, d.created_at
    times = [d.created_at, audited.created_at]
    before = AUDIT_TIME.scalar(conn, sequence=audited.sequence - 1)
    if before is not None:
        times.append(before)
    event = request_event(
        conn, row.run_id, "approval.requested", "approval_id", row.id, near=row.created_at
    )
    if event is not None:
        times.append(event.created_at)
    return audited.sequence, max(times)


def revoked_in_chain(conn: Any, rule_id: str, place: int) -> int | None:
    """The audit sequence of ``rule_id``'s revocation, when the chain records it before
    ``place``."""
    return REVOKED_BEFORE.scalar(conn, entity_id=rule_id, place=place)


_a = s.audit.c
AUTO_DECISION_AUDIT = Prepared(
    select(_a.sequence, _a.created_at)
    .where(
        _a.entity_kind == "approval",
        _a.entity_id == bindparam("entity_id"),
        or_(_a.action == "approval.auto_approved", _a.action == "approval.auto_denied"),
    )
    .order_by(_a.sequence)
    .limit(1)
)
AUDIT_TIME = Prepared(select(_a.created_at).where(_a.sequence == bindparam("sequence")))
REVOKED_BEFORE = Prepared(
    select(_a.sequence)
    .where(
        _a.entity_kind == "rule",
        _a.entity_id == bindparam("entity_id"),
        _a.action == "rule.revoked",
        _a.sequence < bindparam("place"),
    )
    .order_by(_a.sequence)
    .limit(1)
)
EFFECT_OF_APPROVAL = Prepared(
    select(s.effects.c.key)
    .where(
        s.effects.c.run_id == bindparam("run_id"),
        s.effects.c.approval_id == bindparam("approval_id"),
    )
    .limit(1)
)


# ---------------------------------------------------------------- other items


def check_question(conn: Any, trust: Trust, row: Any) -> str | None:
    """An answered (or dismissed) question must carry a trusted operator's signed answer
    (or dismissal, recorded as its response)."""
    if row.status not in ("resolved", "dismissed"):
        return None
    what = f"question {row.id}"
    d = _only_decision(conn, "interaction", row.id, what)
    _agree(d.actor == row.resolved_by, what, "resolved_by")
    from proctor.core.decisions.answers import disagrees

    wrong = (
        "response"
        if row.response is None
        else disagrees(loads(d.decision), loads(row.response), row.hold_until)
    )
    _agree(wrong is None, what, wrong or "response")  # the hold too (issue 37)
    key, _ = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=lambda v: v == row.version,
        what=f"the answer to {what}",
        binding=binding_of(conn, "interaction", row.id),
    )
    return signed_by_label(key)


def check_effect(conn: Any, trust: Trust, row: Any) -> str | None:
    """An effect a person resolved (committed or failed, nothing after): the resolution
    must be a trusted operator's."""
    if row.resolved_by is None or row.status not in ("committed", "failed"):
        return None
    rows = decision_rows(conn, "effect", row.key)
    if not rows:
        raise errors.DecisionUnverified(
            f"effect {row.key} says {row.resolved_by} resolved it but has no decision row",
            why="unsigned",
        )
    d = rows[-1]
    if d.created_at < row.updated_at:
        return None  # the agent's own later step (a retry that failed); not a resolution
    what = f"effect {row.key}"
    _agree(loads(d.decision) == {"outcome": row.status}, what, "status")
    _agree(d.actor == row.resolved_by, what, "resolved_by")
    key, _ = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=lambda v: v == row.version,
        what=f"the resolution of {what}",
        binding=binding_of(conn, d.target_kind, d.target_id),
    )
    return signed_by_label(key)


def check_conflict(conn: Any, trust: Trust, row: Any) -> str | None:
    if row.status == "pending":
        return None
    what = f"memory conflict {row.id}"
    d = _only_decision(conn, "reconciliation", row.id, what)
    _agree(loads(d.decision) == {"choice": row.status}, what, "status")
    _agree(d.actor == row.resolved_by, what, "resolved_by")
    key, _ = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=lambda v: v == row.version,
        what=f"the resolution of {what}",
        binding=binding_of(conn, d.target_kind, d.target_id),
    )
    return signed_by_label(key)


def retry_decision(conn: Any, run_id: str, attempt: Any) -> Any:
    """The operator's decision row asking run ``run_id`` to retry as ``attempt``
    (``Runs.request_retry``: ``{"retry_requested": N}``), the latest; None when none does."""
    asked = [
        d
        for d in decision_rows(conn, "run", run_id)
        if d.actor.startswith("operator:") and loads(d.decision) == {"retry_requested": attempt}
    ]
    return asked[-1] if asked else None


def check_retry(conn: Any, trust: Trust | None, row: Any) -> str:
    """The retry run ``row`` asks for (``retry_requested``) is an operator's decision: a
    decision row says so (a value written by hand has none), and, for a trusting agent, it
    is signed by a trusted operator. Returns who asked; DecisionUnverified otherwise."""
    what = f"the retry of run {row.id} as attempt {row.retry_requested}"
    d = retry_decision(conn, row.id, row.retry_requested)
    if d is None:
        raise errors.DecisionUnverified(
            f"{what} has no operator's decision row: nobody asked for it (retry_requested "
            "was written by hand)",
            why="unsigned",
        )
    if trust is None:
        return d.actor
    key, _ = check_record(
        conn,
        trust,
        d.id,
        expected_for_decision(conn, journal_id_in(conn), d),
        version_ok=lambda v: isinstance(v, int) and v <= row.version,
        what=what,
        binding=binding_of(conn, "run", row.id),
    )
    return signed_by_label(key)


def _same_json(a_text: str, b_text: str) -> bool:
    from .signing import same

    return same(loads(a_text), loads(b_text))


# ---------------------------------------------------------------- display / verify


class SignatureState(BaseModel):
    """How one decision stands: ``signed`` (by ``signer``), ``unsigned``, ``invalid``
    (``why``), or ``automatic`` (a rule or an expiry; ``signer`` names the rule's signer
    when the rule is signed)."""

    model_config = ConfigDict(frozen=True)

    state: str
    signer: str | None = None
    why: str | None = None
    detail: str | None = None

    @property
    def text(self) -> str:
        if self.state == "signed":
            return f"signed by {self.signer}"
        if self.state == "automatic":
            return self.signer or "automatic"
        if self.state == "unsigned":
            return "unsigned"
        return f"invalid: {self.detail or self.why}"


def decision_status(conn: Any, trust: Trust | None, d: Any) -> SignatureState:
    """The signature state of decision row ``d``. With ``trust`` None the keys the journal
    records are used: display only (it proves the row matches the signature, not who
    holds the key)."""
    if d.source in AUTOMATIC_SOURCES or not d.actor.startswith("operator:"):
        return _automatic(conn, trust, d)
    if signature_row(conn, d.id) is None:
        return SignatureState(state="unsigned")
    try:
        key, _ = check_record(
            conn,
            trust or journal_keys(conn),
            d.id,
            expected_for_decision(conn, journal_id_in(conn), d),
            version_ok=lambda v: _version_fits(conn, d, v),
            binding=binding_of(conn, d.target_kind, d.target_id) if _latest(conn, d) else None,
        )
    except errors.DecisionUnverified as err:
        return SignatureState(state="invalid", why=err.why, detail=err.message)
    return SignatureState(
        state="signed",
        signer=key.name if trust else f"{key.name} (key from the journal, no trust file)",
    )


def _latest(conn: Any, d: Any) -> bool:
    """``d`` is its approval's latest decision row, or nothing was undone there: the rows
    now show what it was signed for. (An undo clears what the decision it undid bound, and
    a decision after it binds anew: the earlier ones are checked on what they signed.)"""
    if d.target_kind != "approval":
        return True
    rows = decision_rows(conn, "approval", d.target_id)
    return rows[-1].id == d.id or not any(undone(r.decision) for r in rows)


def _version_fits(conn: Any, d: Any, signed: Any) -> bool:
    """A signature names the item's version then: at most its version now; none for a
    decision whose target has no versioned row (a group's change, a policy: 0014p)."""
    from .signing import SUBJECT_TABLES

    if d.target_kind not in SUBJECT_TABLES:
        return signed is None
    return isinstance(signed, int) and signed <= _version_now(conn, d)


def _version_now(conn: Any, d: Any) -> int:
    from .signing import subject_of

    version, _ = subject_of(conn, d.target_kind, d.target_id)
    return version if version is not None else 0


def _automatic(conn: Any, trust: Trust | None, d: Any) -> SignatureState:
    if d.source != "rule":
        return SignatureState(state="automatic", signer=d.actor)
    row = conn.execute(select(s.approvals).where(s.approvals.c.id == d.target_id)).first()
    if row is None:
        return SignatureState(state="invalid", why="rule_mismatch", detail="no such approval")
    try:
        who = check_rule_decision(conn, trust or journal_keys(conn), row, d)
    except errors.DecisionUnverified as err:
        return SignatureState(state="invalid", why=err.why, detail=err.message)
    return SignatureState(state="automatic", signer=who)


def journal_keys(conn: Any) -> Trust:
    """The public keys the journal records, as a Trust: for display, never for deciding."""
    from .keys import key_id_of, parse_public_key
    from .trust import TrustedKey

    keys = []
    for row in conn.execute(select(s.operator_keys)):
        try:
            raw = parse_public_key(row.public_key)
            keys.append(TrustedKey(row.operator.removeprefix("operator:"), key_id_of(raw), raw))
        except errors.ValidationError:
            continue
    return Trust(keys, "the journal's recorded keys")


__all__ = [
    "RULE_REVOKE",
    "SignatureState",
    "check_approval",
    "check_conflict",
    "check_effect",
    "check_question",
    "check_retry",
    "decision_status",
]
