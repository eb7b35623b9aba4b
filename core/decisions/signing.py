"""Signed decisions: the payload an operator's key signs, signing inside a write, and
checking one signature against a ``Trust`` (docs/signed-decisions.md is the spec).

The payload is canonicalised with RFC 8785 (JCS, the ``rfc8785`` package) so an agent in
another language can rebuild and verify it. The bytes that were signed are stored beside
the signature; a verifier checks the signature over them, then checks that what they
claim is what the journal's rows say (``check_record``'s ``expected``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select

from proctor.core import errors
from proctor.core.kernel.canonical import digest_of, loads
from proctor.core.models import ActorKind
from proctor.core.storage import schema as s
from proctor.core.storage.sql import Prepared, insert_rows, row_where

if TYPE_CHECKING:
    from proctor.core.storage.tx import Tx

    from .trust import Trust, TrustedKey

FORMAT = 2
# Format 1 (before 0.x of issue #31) named the item, not its run, attempt or place in the
# chain: its signatures still verify for the record, but a trusting agent acts on none of them
# for an approval (``why="old_format"``); docs/signed-decisions.md says why.
FORMATS = (1, 2)
# Format 2's binding: what the trusting agent relies on besides the item (null where it does
# not apply)
BINDING = (
    "run_id",
    "attempt",
    "scope",
    "expires_at",
    "rule_id",
    "rule_version",
    "request_sequence",
    "request_digest",
)
# Record kinds (the payload's "kind")
DECISION, RULE, RULE_REVOKE, SNOOZE = "decision", "rule", "rule.revoke", "snooze"


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical JSON (UTF-8). ValidationError for what JCS cannot carry
    (integers beyond +-2**53, NaN, non-string keys)."""
    import rfc8785

    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise errors.ValidationError(f"cannot be signed (RFC 8785): {exc}") from exc


def payload_of(
    *,
    kind: str,
    journal_id: str,
    record_id: str,
    target_kind: str,
    target_id: str,
    target_version: int | None,
    subject_digest: str | None,
    content: Any,
    reason: str | None,
    operator: str,
    key_id: str,
    signed_at: float,
    edited_action_digest: str | None = None,
    binding: dict | None = None,
) -> dict:
    """The signed payload: every field always present (null when it does not apply)."""
    bound = binding or {}
    return {
        **{field: bound.get(field) for field in BINDING},
        "proctor_signed": FORMAT,
        "kind": kind,
        "journal_id": journal_id,
        "record_id": record_id,
        "target_kind": target_kind,
        "target_id": target_id,
        "target_version": target_version,
        "subject_digest": subject_digest,
        "edited_action_digest": edited_action_digest,
        "content": content,
        "reason": reason,
        "operator": operator,
        "key_id": key_id,
        "signed_at": signed_at,
    }


def verify_bytes(raw_public: bytes, data: bytes, signature_b64: str) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        signature = base64.b64decode(signature_b64, validate=True)
        Ed25519PublicKey.from_public_bytes(raw_public).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


# ---------------------------------------------------------------- what is signed


def rule_content(row: Any) -> dict:
    """What a rule says (the content its creation signature covers)."""
    keys = (
        "effect",
        "action_pattern",
        "resource_pattern",
        "scope",
        "run_id",
        "project",
        "space",
        "expires_at",
        "source_approval_id",
    )
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    content = {k: get(k) for k in keys}
    # a rule's condition (0005r) is covered too; absent when it has none, so the content of
    # a rule without one (and its signature) is what it was before conditions existed
    predicate = row.get("predicate") if isinstance(row, dict) else getattr(row, "predicate", None)
    if predicate is not None:
        content["predicate"] = predicate
    return content


def conflict_subject(row: Any) -> dict:
    return {
        "entry_id": row.entry_id,
        "local_content": row.local_content,
        "local_version": row.local_version,
        "incoming_content": row.incoming_content,
        "incoming_source": row.incoming_source,
    }


def subject_of(conn: Any, kind: str, target_id: str) -> tuple[int | None, str | None]:
    """The item's version now and the digest of what was decided about (the action, the
    question, the effect's action, the two memory versions, the rule)."""
    table, key = SUBJECT_TABLES.get(kind, (None, None))
    row = row_where(conn, table, **{key: target_id}) if table is not None and key else None
    if row is None:
        return None, None
    if kind in ("approval", "approval_step"):  # a step of a policy (core/policies/steps.py)
        return row.version, row.action_digest
    if kind == "interaction":
        return row.version, row.request_digest
    if kind == "effect":
        return row.version, digest_of(loads(row.action))
    if kind == "reconciliation":
        return row.version, digest_of(conflict_subject(row))
    if kind == "rule":
        return row.version, digest_of(rule_content(row))
    return row.version, None


SUBJECT_TABLES = {
    "approval": (s.approvals, "id"),
    "approval_step": (s.approvals, "id"),
    "interaction": (s.questions, "id"),
    "effect": (s.effects, "key"),
    "reconciliation": (s.conflicts, "id"),
    "rule": (s.approval_rules, "id"),
    "run": (s.runs, "id"),
}


def request_event(
    conn: Any,
    run_id: str | None,
    type_: str,
    field: str,
    item_id: str,
    *,
    near: float | None = None,
) -> Any:
    """The event of ``type_`` in ``run_id``'s chain whose payload names ``item_id`` under
    ``field`` (the first, by sequence), or None. ``near``: the time it was appended at (an
    item's ``created_at``: filed in the same transaction), found by a binary search over the
    run's sequence and a short scan from there; the whole run is scanned only when that
    misses (clocks that disagreed along the chain)."""
    if run_id is None:
        return None
    if near is not None:
        found = _near(conn, run_id, type_, field, item_id, near)
        if found is not None:
            return found
    rows = EVENTS_NAMING.all(conn, run_id=run_id, type=type_, pattern=f'%"{item_id}"%')
    return _naming(rows, field, item_id)


def _naming(rows: Any, field: str, item_id: str) -> Any:
    for row in rows:
        payload = loads(row.payload)
        if isinstance(payload, dict) and payload.get(field) == item_id:
            return row
    return None


_e = s.events.c
EVENTS_NAMING = Prepared(
    select(s.events)
    .where(
        _e.run_id == bindparam("run_id"),
        _e.type == bindparam("type"),
        _e.payload.like(bindparam("pattern")),
    )
    .order_by(_e.sequence)
)
LAST_SEQUENCE = Prepared(select(func.max(_e.sequence)).where(_e.run_id == bindparam("run_id")))
TIME_AT = Prepared(
    select(_e.created_at).where(_e.run_id == bindparam("run_id"), _e.sequence == bindparam("seq"))
)
NEAR_SCAN = 32  # events of the type looked at from where the binary search lands
EVENTS_FROM = Prepared(
    select(s.events)
    .where(
        _e.run_id == bindparam("run_id"),
        _e.type == bindparam("type"),
        _e.sequence >= bindparam("seq"),
    )
    .order_by(_e.sequence)
    .limit(NEAR_SCAN)
)


def _near(conn: Any, run_id: str, type_: str, field: str, item_id: str, at: float) -> Any:
    lo, hi = 1, int(LAST_SEQUENCE.scalar(conn, run_id=run_id) or 0)
    while lo < hi:  # the first sequence appended at or after ``at`` (times mostly ascend)
        mid = (lo + hi) // 2
        created = TIME_AT.scalar(conn, run_id=run_id, seq=mid)
        if created is not None and created < at:
            lo = mid + 1
        else:
            hi = mid
    return _naming(EVENTS_FROM.all(conn, run_id=run_id, type=type_, seq=lo), field, item_id)


REQUEST_EVENTS = {
    "approval": ("approval.requested", "approval_id"),
    "interaction": ("interaction.requested", "interaction_id"),
}


def binding_of(conn: Any, kind: str, target_id: str, *, locate: bool = True) -> dict:
    """Format 2's binding of the item as its rows say now: its run and attempt, an approval's
    scope, expiry and rule (with the rule's version), and (``locate``) the place in its run's
    chain of the event that filed it (sequence and digest); a rule's run, scope, expiry and
    version. A checker passes ``locate=False`` and checks the event the signature names."""
    table, key = SUBJECT_TABLES.get(kind, (None, None))
    row = row_where(conn, table, **{key: target_id}) if table is not None and key else None
    if row is None:
        return {}
    if kind == "rule":
        return dict(
            run_id=row.run_id,
            scope=row.scope,
            expires_at=row.expires_at,
            rule_id=row.id,
            rule_version=row.version,
        )
    if kind == "run":
        return dict(run_id=row.id)
    bound = dict(run_id=getattr(row, "run_id", None))
    if kind in REQUEST_EVENTS:  # an effect's attempt moves on with each retry: not bound
        bound["attempt"] = row.attempt
    if kind == "approval":
        rule = row_where(conn, s.approval_rules, id=row.rule_id) if row.rule_id else None
        bound.update(
            scope=row.decision_scope,
            expires_at=row.expires_at,
            rule_id=row.rule_id,
            rule_version=rule.version if rule is not None else None,
        )
    if kind in REQUEST_EVENTS and locate:
        event = request_event(
            conn, row.run_id, *REQUEST_EVENTS[kind], target_id, near=row.created_at
        )
        if event is not None:
            bound.update(request_sequence=event.sequence, request_digest=event.digest)
    return bound


def journal_id_in(conn: Any) -> str | None:
    row = row_where(conn, s.journal_meta, key="journal_id")
    return row.value if row is not None else None


# ---------------------------------------------------------------- signing (in a write)


def sign_in(
    tx: Tx,
    kind: str,
    record_id: str,
    target_kind: str,
    target_id: str,
    content: Any,
    reason: str | None,
    *,
    signed_at: float | None = None,
    edited_action_digest: str | None = None,
) -> None:
    """Sign one record inside ``tx`` with the journal's operator key (nothing when the
    journal has no key or its actor is not an operator)."""
    key = tx.store.signer
    if key is None or tx.actor.kind is not ActorKind.OPERATOR:
        return
    journal_id = journal_id_in(tx.conn)
    if journal_id is None:
        raise errors.Corrupt(f"{tx.store.path} has no journal id; it cannot be signed in")
    version, subject = subject_of(tx.conn, target_kind, target_id)
    payload = payload_of(
        kind=kind,
        journal_id=journal_id,
        record_id=record_id,
        target_kind=target_kind,
        target_id=target_id,
        target_version=version,
        subject_digest=subject,
        content=content,
        reason=reason,
        operator=tx.actor.label,
        key_id=key.key_id,
        signed_at=tx.now if signed_at is None else signed_at,
        edited_action_digest=edited_action_digest,
        binding=binding_of(tx.conn, target_kind, target_id),
    )
    data = canonical_bytes(payload)
    insert_rows(
        tx.conn,
        s.signatures,
        [
            dict(
                record_id=record_id,
                record_kind=kind,
                key_id=key.key_id,
                operator=tx.actor.label,
                payload=data.decode("utf-8"),
                signature=base64.b64encode(key.sign(data)).decode(),
                created_at=tx.now,
            )
        ],
    )
    if row_where(tx.conn, s.operator_keys, key_id=key.key_id) is None:
        insert_rows(
            tx.conn,
            s.operator_keys,
            [
                dict(
                    key_id=key.key_id,
                    operator=tx.actor.label,
                    public_key=key.public_key,
                    first_seen_at=tx.now,
                )
            ],
        )


def sign_decision(
    tx: Tx,
    decision_id: str,
    kind: str,
    target_id: str,
    decision: Any,
    *,
    actor: str,
    reason: str | None,
    created_at: float,
) -> None:
    """write_decision's hook: an operator's own decision is signed; automatic ones (a rule,
    an expiry) are not (a rule's own signature stands for them)."""
    if actor != tx.actor.label:
        return
    edited = decision.get("edited_action_digest") if isinstance(decision, dict) else None
    sign_in(
        tx,
        DECISION,
        decision_id,
        kind,
        target_id,
        decision,
        reason,
        signed_at=created_at,
        edited_action_digest=edited,
    )


# ---------------------------------------------------------------- checking one record


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values (true is not 1, 1 is not "1")."""
    try:
        return canonical_bytes(a) == canonical_bytes(b)
    except errors.ValidationError:
        return False


def signature_row(conn: Any, record_id: str) -> Any:
    return row_where(conn, s.signatures, record_id=record_id)


def check_record(
    conn: Any,
    trust: Trust,
    record_id: str,
    expected: dict,
    *,
    version_ok: Callable[[Any], bool] | None = None,
    what: str = "the decision",
    binding: dict | None = None,
    need_binding: bool = False,
) -> tuple[TrustedKey, dict]:
    """The trusted key that signed ``record_id`` and its payload, when the signature is
    good, the key is the named operator's, and the payload says exactly ``expected`` (and
    ``version_ok(target_version)``; with format 2, ``binding`` too: the fields it names, a
    ``rule_version`` no later than the rule's now). ``need_binding``: a format-1 signature
    (which binds no run, attempt or chain place) is refused. DecisionUnverified naming why
    otherwise."""
    row = signature_row(conn, record_id)
    if row is None:
        if trust.problem and not trust.keys:
            raise errors.DecisionUnverified(f"nobody is trusted: {trust.problem}", why="no_trust")
        raise errors.DecisionUnverified(f"{what} ({record_id}) is not signed", why="unsigned")
    data = row.payload.encode("utf-8")
    try:  # the signature covers these bytes; what they claim is compared as JSON values
        payload = json.loads(data)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}): the signed payload is not a JSON object", why="bad_signature"
        )
    key_id, signed_at = payload.get("key_id"), payload.get("signed_at")
    if not isinstance(key_id, str) or not isinstance(signed_at, int | float):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}): the payload names no key or time", why="bad_signature"
        )
    key = trust.key(key_id, float(signed_at))
    if row.key_id != key_id or not verify_bytes(key.raw_public, data, row.signature):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}): the signature does not verify with {key.name}'s key "
            f"{key.fingerprint}",
            why="bad_signature",
        )
    if not key_belongs_to(key, payload.get("operator")) or row.operator != payload.get("operator"):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}) is recorded as {payload.get('operator')} but signed with "
            f"{key.name}'s key {key.fingerprint}",
            why="wrong_operator",
        )
    version = payload.get("proctor_signed")
    if version not in FORMATS or (need_binding and version == 1):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}) was signed in format {version}, which binds no run, "
            "attempt or place in the chain; this agent acts only on format "
            f"{FORMAT}; a decided approval cannot be decided again: ask the agent to file the "
            "request again",
            why="old_format",
            hint="Nothing was done. Ask the agent to file the request again; a trusted "
            "operator then decides the new approval.",
        )
    if version != 1 and binding is not None:
        expected = {**expected, **{f: v for f, v in binding.items() if f != "rule_version"}}
    claimed = {field: payload.get(field) for field in expected}
    if not same(claimed, expected):
        field = next(f for f, v in expected.items() if not same(claimed[f], v))
        raise errors.DecisionUnverified(
            f"{what} ({record_id}) was signed by {key.name} for another {field} than the "
            f"journal now shows",
            why="mismatch",
            field=field,
        )
    if version_ok is not None and not version_ok(payload.get("target_version")):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}) was signed by {key.name} for version "
            f"{payload.get('target_version')}, not the item's version now",
            why="mismatch",
            field="target_version",
        )
    if version != 1 and binding is not None and not _rule_version_ok(payload, binding):
        raise errors.DecisionUnverified(
            f"{what} ({record_id}) was signed by {key.name} for rule version "
            f"{payload.get('rule_version')}, later than the rule's now",
            why="mismatch",
            field="rule_version",
        )
    return key, payload


def _rule_version_ok(payload: dict, binding: dict) -> bool:
    signed, now = payload.get("rule_version"), binding.get("rule_version")
    if signed is None or now is None:
        return signed is None and now is None
    return isinstance(signed, int) and signed <= now


def key_belongs_to(key: TrustedKey, operator: Any) -> bool:
    """True when ``operator`` (an actor label, ``operator:alice``) is the trusted key's
    owner: the trust file names ``alice`` (or ``operator:alice``)."""
    return isinstance(operator, str) and operator in (key.name, f"operator:{key.name}")


def expected_for_decision(conn: Any, journal_id: str | None, d: Any) -> dict:
    """What the signature of decision row ``d`` must say (all from the rows)."""
    _version, subject = subject_of(conn, d.target_kind, d.target_id)
    return {
        "kind": DECISION,
        "journal_id": journal_id,
        "record_id": d.id,
        "target_kind": d.target_kind,
        "target_id": d.target_id,
        "subject_digest": subject,
        "content": loads(d.decision),
        "reason": d.reason,
        "operator": d.actor,
        "signed_at": d.created_at,
    }


def expected_for_rule(conn: Any, journal_id: str | None, rule: Any) -> dict:
    return {
        "kind": RULE,
        "journal_id": journal_id,
        "record_id": rule.id,
        "target_kind": "rule",
        "target_id": rule.id,
        "content": rule_content(rule),
        "operator": rule.created_by,
        "signed_at": rule.created_at,
        "subject_digest": digest_of(rule_content(rule)),
    }


def signed_by_label(key: TrustedKey) -> str:
    return f"{key.name} ({key.fingerprint})"
