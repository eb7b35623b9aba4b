"""The approval rows and the one decision writer shared by every service: reading an
approval, naming its action and resource, the edited action and its checks, who requested
it, and ``write_decision`` (with its signature)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, or_, select

from proctor.core import errors
from proctor.core.kernel.canonical import canonical_json, digest_of
from proctor.core.kernel.resource import resource_value
from proctor.core.models import (
    ActorKind,
    Approval,
    ChangeKind,
    Decision,
    SafetyClass,
)
from proctor.core.storage import schema as s
from proctor.core.storage.items import status_after_closing
from proctor.core.storage.rows import approval_select, as_written, by_id, fetch_prepared, to_models
from proctor.core.storage.sql import Prepared, insert_rows
from proctor.core.storage.tx import Tx

from .signing import sign_decision

MAX_REASON = 10_000

APPROVAL_BY_ID = by_id(approval_select(), s.approvals.c.id)


def approval_in(conn: Any, approval_id: str) -> Approval:
    return fetch_prepared(
        conn, Approval, APPROVAL_BY_ID, f"approval {approval_id}", key=approval_id
    )


def approval_after(tx: Tx, approval_id: str, written: dict | None) -> Approval:
    """The approval as the write transaction ``tx`` leaves it (what a write returns): built
    from ``written`` (its row as this transaction last wrote it) and its run's context (the
    run head ``tx`` keeps), else read."""
    if written is not None:
        run = tx.run_row(written["run_id"])
        approval = as_written(
            Approval,
            {**written, "project": run.project, "space": run.space, "run_title": run.title},
        )
        if approval is not None:
            return approval
    return approval_in(tx.conn, approval_id)


def action_name(action: Any) -> str:
    if not isinstance(action, dict):
        raise errors.ValidationError("an action must be a JSON object", field="action")
    name = action.get("tool") or action.get("name")
    if not isinstance(name, str) or not name.strip():
        raise errors.ValidationError("an action needs a 'tool' name", field="action.tool")
    return name[:200]


def safety_counts(approvals: list[Approval]) -> dict[str, int]:
    """How many of ``approvals`` are of each safety class, most risky first."""
    order = [c.value for c in reversed(list(SafetyClass))]
    counts: dict[str, int] = {}
    for a in approvals:
        counts[a.safety_class.value] = counts.get(a.safety_class.value, 0) + 1
    return dict(
        sorted(counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    )


def action_resource(action: dict) -> str:
    """The action's resource as rules match it (``str()`` of it; the desk and the CLI show
    core.kernel.resource.words instead)."""
    found, value = resource_value(action)
    return str(value) if found else ""


def _live_rules() -> Any:
    r = s.approval_rules.c
    return select(s.approval_rules).where(
        r.revoked_at.is_(None),
        or_(r.expires_at.is_(None), r.expires_at > bindparam("now")),
        or_(
            r.run_id == bindparam("run_id"),
            (r.scope == "space")
            & or_(r.project == bindparam("project"), r.project == "*")
            & (r.space.is_(None) | (r.space == bindparam("space"))),
        ),
    )


# The rules that may decide a request in a run (then matched by pattern in Python).
LIVE_RULES = Prepared(_live_rules())


def approved_action_of(row: Any, conn: Any) -> tuple[str, Any]:
    """(digest, action) of what was approved: the operator's edit, if any — its stored digest
    re-checked against its stored text and against the (immutable) decision row that
    recorded the edit — else the requested action."""
    if row.approved_digest is None:
        return row.action_digest, canonical_json_loads(row.action)
    approved = canonical_json_loads(row.approved_action)
    recorded = [
        d.decision.get("approved_digest")
        for d in decisions_for(conn, row.id)
        if isinstance(d.decision, dict) and d.decision.get("edited")
    ]
    if digest_of(approved) != row.approved_digest or recorded != [row.approved_digest]:
        raise errors.Tampered(
            f"approval {row.id}'s edited action does not match its digest: the journal was "
            "altered after the decision; nothing was reserved",
            kind="approval",
            id=row.id,
        )
    return row.approved_digest, approved


def check_input_schema(schema: Any) -> None:
    import jsonschema

    if not isinstance(schema, dict):
        raise errors.ValidationError("an input schema is a JSON object", field="input_schema")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise errors.ValidationError(
            f"not a valid JSON Schema: {exc.message}", field="input_schema"
        ) from exc


def check_against_schema(action: dict, schema: Any) -> None:
    """An edited action's ``args`` against the tool's input schema (when the agent gave one)."""
    if schema is None:
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = sorted(
        validator.iter_errors(action.get("args", {})), key=lambda e: list(e.absolute_path)
    )
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.absolute_path)
        raise errors.ValidationError(
            f"the edited arguments do not fit the tool's schema: {first.message}"
            + (f" (at args.{where})" if where else ""),
            field="action.args" + (f".{where}" if where else ""),
        )


def check_edit(original: dict, schema: Any, action: dict) -> None:
    """Raises ``ValidationError`` unless ``action`` is an edit an operator may approve in place
    of ``original``: the same tool, other arguments, valid against the tool's ``schema``."""
    name = action_name(original)
    if not isinstance(action, dict):
        raise errors.ValidationError("an edited action is a JSON object", field="action")
    if (
        action_name(action) != name
        or action.get("tool") != original.get("tool")
        or action.get("name") != original.get("name")
    ):
        raise errors.ValidationError(
            f"an edit keeps the tool ({name}); change only its arguments", field="action.tool"
        )
    if digest_of(action) == digest_of(original):
        raise errors.ValidationError("the action is unchanged; approve it as it is", field="action")
    check_against_schema(action, schema)


MAX_CHANGES = 50


def json_changes(before: Any, after: Any, path: str = "") -> list[dict]:
    """What an edit changed, path by path: [{path, before, after}] (a missing side is
    absent from its dict), at most ``MAX_CHANGES``."""
    out: list[dict] = []
    _changes(before, after, path, out)
    return out[:MAX_CHANGES]


def _changes(before: Any, after: Any, path: str, out: list[dict]) -> None:
    if len(out) >= MAX_CHANGES:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append({"path": sub, "before": before[key]})
            elif key not in before:
                out.append({"path": sub, "after": after[key]})
            else:
                _changes(before[key], after[key], sub, out)
        return
    if canonical_json(before) != canonical_json(after):
        out.append({"path": path or "(action)", "before": before, "after": after})


# How long an approval may be used after the decision when its request set no expiry (or
# a person approved it after its advisory, keep_pending, expiry): one hour.
CONSUME_WINDOW = 3600.0


def consume_deadline(row: Any) -> float:
    """Until when an approved approval may be consumed: its ``expires_at`` when it was
    decided before that, else ``CONSUME_WINDOW`` after the decision; a hold (the
    operator's undo window, during which the agent may not consume it) moves it later by
    the hold's length, so the hold never eats the agent's time (approved 2 s before its
    expiry with a 5 s hold, the agent still has 2 s once the hold ends)."""
    decided = row.decided_at if row.decided_at is not None else row.created_at
    if row.expires_at is not None and decided < row.expires_at:
        deadline = row.expires_at
    else:
        deadline = decided + CONSUME_WINDOW
    hold = getattr(row, "hold_until", None)
    return deadline + max(hold - decided, 0.0) if hold is not None else deadline


def requester(tx: Tx, run: Any) -> str:
    """Who asked: the calling agent itself, or the run's agent when an operator files it."""
    return tx.actor.name if tx.actor.kind == ActorKind.AGENT else run.agent


def insert_decision_row(
    tx: Tx,
    kind: str,
    target_id: str,
    run_id: str | None,
    decision: Any,
    *,
    actor: str,
    source: str,
    reason: str | None,
    request_id: str | None = None,
) -> str:
    did = tx.new_id("dec")
    body = {
        "target_kind": kind,
        "target_id": target_id,
        "decision": decision,
        "actor": actor,
        "reason": reason,
        "created_at": tx.now,
    }
    insert_rows(
        tx.conn,
        s.decisions,
        [
            dict(
                id=did,
                target_kind=kind,
                target_id=target_id,
                run_id=run_id,
                decision=canonical_json(decision),
                actor=actor,
                source=source,
                request_id=request_id,
                reason=reason,
                created_at=tx.now,
                digest=digest_of(body),
            )
        ],
    )
    tx.changed(ChangeKind.DECISION, did, run_id)
    sign_decision(tx, did, kind, target_id, decision, actor=actor, reason=reason, created_at=tx.now)
    return did


_SAME: Any = object()  # record_decision: the audit row's reason is the decision's


def record_decision(
    tx: Tx,
    kind: str,
    target_id: str,
    run_id: str | None,
    decision: Any,
    *,
    source: str,
    reason: str | None,
    audit: tuple[str, Any, Any],
    actor: str | None = None,
    request_id: str | None = None,
    request: Any = None,
    audit_reason: Any = _SAME,
    keyed_audit: bool = True,
    event: tuple[str, dict] | None = None,
    closes: bool = False,
) -> str:
    """The one decision writer: the decision row, then its audit row (``audit``: action,
    before, after), then, with ``event`` (type, payload), the run event, in that order and in
    ``tx``; every one by ``actor`` (default: the transaction's actor). ``keyed_audit=False``:
    the audit row does not carry the operator's request (another row of the transaction
    does). ``closes``: the event moves the run as closing the item leaves it
    (``items.status_after_closing``). Returns the decision's id."""
    known = getattr(tx.store, "damage", None)
    if known is not None:
        raise errors.Damaged(
            getattr(known, "where", "a page of its file"),
            f"{getattr(known, 'what', known.message)}; nothing is decided on a journal "
            "known to be damaged",
        )
    who = actor or tx.actor.label
    did = insert_decision_row(
        tx,
        kind,
        target_id,
        run_id,
        decision,
        actor=who,
        source=source,
        reason=reason,
        request_id=request_id,
    )
    action, before, after = audit
    tx.audit(
        action,
        kind,
        target_id,
        run_id=run_id,
        before=before,
        after=after,
        reason=reason if audit_reason is _SAME else audit_reason,
        request_id=request_id if keyed_audit else None,
        request=request if keyed_audit else None,
        actor=actor,
    )
    if event is not None and run_id is not None:
        type_, payload = event
        status = status_after_closing(tx.conn, tx.run_row(run_id)) if closes else None
        tx.run_event(run_id, type_, payload, status=status, actor=actor)
    return did


def decisions_for(conn: Any, target_id: str) -> list[Decision]:
    stmt = (
        select(s.decisions)
        .where(s.decisions.c.target_id == target_id)
        .order_by(s.decisions.c.created_at)
    )
    return to_models(Decision, conn.execute(stmt))


def canonical_json_loads(text: str) -> Any:
    import json

    return json.loads(text)
