"""The census: every column of every journal table, classed by what may happen to it once
written (issue 31). A plain data module; the triggers that enforce it are rendered from it
(``db.census_trigger_sql``, ``pg.census_trigger_sql``, schema 0009b) and a test generated from
the schema fails when a column has no entry here.

Four classes:

- ``identity``: what the row is; never changes once written (a trigger refuses any UPDATE
  of it; on the evidence tables every column is identity and the row refuses UPDATE whole).
- ``state``: moves only as its rule says, each rule a trigger on both stores:
  ``moves`` (the status: only along ``MOVES``), ``once`` (NULL, then set once, never changed
  or cleared), ``up`` (never steps back), ``decision`` (set in the one UPDATE that moves the
  row out of its open state, with its decision, never afterwards), ``with_move`` (changes
  only in an UPDATE that also moves the status), ``with_version`` (changes only in an UPDATE
  that steps ``version`` up: a memory entry's fields, whose history is its mutation chain).
- ``derived``: recomputed from other rows by ``proctor verify`` (a run's head from its event
  chain), which names a row that disagrees.
- ``free``: live metadata nothing relies on for a decision (snoozes, leases, timestamps of
  the last write, use counts); a same-user process can change it, and that is all it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .schema import POLICY_TABLES

Kind = Literal["identity", "state", "derived", "free"]
Rule = Literal["", "moves", "once", "up", "decision", "with_move", "with_version"]


@dataclass(frozen=True)
class Entry:
    kind: Kind
    rule: Rule = ""
    why: str = ""


ID = Entry("identity")
MOVES_ = Entry("state", "moves")
ONCE = Entry("state", "once")
UP = Entry("state", "up")
DECISION = Entry("state", "decision")
WITH_MOVE = Entry("state", "with_move")
WITH_VERSION = Entry("state", "with_version")


def free(why: str) -> Entry:
    return Entry("free", "", why)


def derived(why: str) -> Entry:
    return Entry("derived", "", why)


def _evidence(*columns: str) -> dict[str, Entry]:
    """An evidence table: every column identity (the row refuses UPDATE and DELETE)."""
    return dict.fromkeys(columns, ID)


SNOOZE = free("when the desk shows the item again; no decision reads it")
TOUCHED = free("the time of the row's last write, for display and sorting")
WAITER = free("when a waiting agent last looked; no decision reads it")

# Each entity's status moves: from -> the states it may move to (a state not listed as a key
# is final: it never moves again).
MOVES: dict[str, dict[str, tuple[str, ...]]] = {
    "runs": {
        "pending": (
            "running",
            "waiting_for_user",
            "interrupted",
            "completed",
            "failed",
            "cancelled",
        ),
        "running": ("waiting_for_user", "interrupted", "completed", "failed", "cancelled"),
        "waiting_for_user": ("running", "interrupted", "completed", "failed", "cancelled"),
        "interrupted": ("running", "waiting_for_user", "completed", "failed", "cancelled"),
        "failed": ("running",),  # a retry an operator asked for (RETRY, 0013u)
    },
    "attempts": {
        "running": ("waiting_for_user", "completed", "failed", "interrupted"),
        "waiting_for_user": ("running", "completed", "failed", "interrupted"),
    },
    "tool_calls": {
        "pending": ("running", "succeeded", "failed", "outcome_unknown"),
        "running": ("succeeded", "failed", "outcome_unknown"),
        "outcome_unknown": ("succeeded", "failed"),
    },
    "approvals": {
        "pending": ("approved", "denied", "expired", "cancelled"),
        "approved": ("expired", "pending"),  # lapses; or undone within its hold (UNDO)
        "denied": ("pending",),  # undone within its hold (UNDO, 0013u)
    },
    "interactions": {
        "requested": ("presented", "resolved", "expired", "cancelled", "dismissed"),
        "presented": ("resolved", "expired", "cancelled", "dismissed"),
        "resolved": ("presented",),  # undone within its hold (UNDO, 0014u)
        "dismissed": ("presented",),  # undone within its hold (UNDO, 0014u)
    },
    "memory_reconciliations": {
        "pending": ("accepted_local", "accepted_incoming", "merged", "dismissed"),
    },
    "effects": {
        "reserved": ("executing", "committed", "failed", "ambiguous"),
        "executing": ("committed", "failed", "ambiguous"),
        "ambiguous": ("committed", "failed"),  # by a person only
        "failed": ("reserved",),  # a retry (attempt + 1)
    },
}

# The moves the agent's (or the expiry's) own API makes: a same-user process that makes one by
# hand gains nothing it could not get from the API (it withdraws, expires, finishes its own
# work). Every other move is a person's decision (approve, deny, answer, resolve): made by hand
# it is forged, and ``proctor verify`` or a trusting agent must name it.
AGENT_MOVES: dict[str, set[tuple[str, str]]] = {
    "runs": {
        (src, dst)
        for src, dsts in MOVES["runs"].items()
        for dst in dsts  # the agent runs, waits, finishes or is interrupted
    },
    "attempts": {(src, dst) for src, dsts in MOVES["attempts"].items() for dst in dsts},
    "tool_calls": {
        ("pending", "running"),
        ("pending", "succeeded"),
        ("pending", "failed"),
        ("pending", "outcome_unknown"),
        ("running", "succeeded"),
        ("running", "failed"),
        ("running", "outcome_unknown"),
    },
    "approvals": {("pending", "cancelled"), ("pending", "expired"), ("approved", "expired")},
    "interactions": {
        ("requested", "presented"),
        ("requested", "cancelled"),
        ("requested", "expired"),
        ("presented", "cancelled"),
        ("presented", "expired"),
    },
    "memory_reconciliations": set(),
    "effects": {
        ("reserved", "executing"),
        ("reserved", "committed"),
        ("reserved", "failed"),
        ("reserved", "ambiguous"),
        ("executing", "committed"),
        ("executing", "failed"),
        ("executing", "ambiguous"),
        ("failed", "reserved"),
    },
}

# Who made a person's move: a move not in AGENT_MOVES must name its decider in this column.
DECIDER: dict[str, str] = {
    "approvals": "decided_by",
    "interactions": "resolved_by",
    "memory_reconciliations": "resolved_by",
    "effects": "resolved_by",
}

# (a, b): ``a`` changes only in an UPDATE that changes ``b`` too. An approval is consumed for
# one effect (both set at once), a rule is revoked by someone (with its reason, if any), a
# cancel is asked with its reason.
ALONG: dict[str, tuple[tuple[str, str], ...]] = {
    "approvals": (
        ("consumed_at", "consumed_effect_key"),
        ("consumed_effect_key", "consumed_at"),
    ),
    "approval_rules": (
        ("revoked_at", "revoked_by"),
        ("revoked_by", "revoked_at"),
        ("revoke_reason", "revoked_at"),
    ),
    "runs": (("cancel_reason", "cancel_requested"), ("retry_reason", "retry_requested")),
}

# A person's decision taken back within its hold (0013u): the move from a decided state back
# to the open one, allowed only while the row is unconsumed and was decided with a hold, and
# only clearing every ``decision`` column (the undo's own decision row is the evidence).
UNDO: dict[str, tuple[tuple[str, ...], str, str]] = {
    "approvals": (("approved", "denied"), "pending", "hold_until"),
    # an answer or a dismissal, back to open (0014u): it was shown to the operator who
    # answered it, so it is ``presented``
    "interactions": (("resolved", "dismissed"), "presented", "hold_until"),
}

# Undone only while the store's own clock is within the hold (0014u; approvals 0015u): an
# UPDATE by hand that takes a decision back after its hold is refused, whatever clock the
# writer keeps.
UNDO_BY_CLOCK: set[str] = {"interactions", "approvals"}

# A run that failed moves again only as the retry an operator asked for (0013u): to the
# attempt it names, in the UPDATE that starts that attempt; once per request.
RETRY: dict[str, tuple[str, str, str]] = {
    "runs": ("failed", "retry_requested", "current_attempt"),
}

# An approval is consumed only once its hold has passed (0013u): the consume's time is
# compared with the hold.
HELD: dict[str, tuple[str, str]] = {
    "approvals": ("consumed_at", "hold_until"),
    # the agent took the answer (0014u): only after the hold, and it is never undone then
    "interactions": ("taken_at", "hold_until"),
}

# ... and only once the store's own clock has passed the hold too (0015u): a consume (or a
# take) written by hand with a time of the writer's choosing past the hold is refused while
# the hold lasts.
HELD_BY_CLOCK: set[str] = {"approvals", "interactions"}

# The first write of a ``once`` column that the agent's own API makes (the agent consumes its
# approval, fails its run with its own words): by hand it gains the agent nothing.
AGENT_FIRST_WRITES: set[tuple[str, str]] = {
    ("approvals", "consumed_at"),
    ("approvals", "consumed_effect_key"),
    ("interactions", "taken_at"),
    ("runs", "error"),
}

# A status that moves only together with an event: the UPDATE that moves it also steps the
# row's head (this column) forward, so a move by hand leaves a head verify names.
WITH_EVENT: dict[str, str] = {"runs": "last_sequence"}

# The state a row is decided from: a ``decision`` column is written only by the UPDATE that
# moves the row out of it.
OPEN: dict[str, tuple[str, ...]] = {
    "approvals": ("pending",),
    "interactions": ("requested", "presented"),
    "memory_reconciliations": ("pending",),
}

CENSUS: dict[str, dict[str, Entry]] = {
    "runs": {
        "id": ID,
        "project": ID,
        "space": ID,
        "agent": ID,
        "title": ID,
        "parent_run_id": ID,
        "status": MOVES_,
        "version": UP,
        "deadline": ID,
        "created_at": ID,
        "updated_at": TOUCHED,
        "finished_at": WITH_MOVE,
        "last_sequence": derived("the run's head: verify recomputes it from the event chain"),
        "last_digest": derived("the run's head: verify recomputes it from the event chain"),
        "current_attempt": UP,
        "cancel_requested": UP,  # false -> true, never back
        "cancel_reason": ONCE,
        "error": ONCE,  # written just after the move that ends the run (the first failure's)
        "retry_requested": UP,  # the attempt an operator asked a retry as (RETRY)
        "retry_reason": free(
            "the last retry request's reason, for display; its decision row and run event "
            "are the evidence, and it changes only with the request (ALONG)"
        ),
    },
    "attempts": {
        "run_id": ID,
        "number": ID,
        "status": MOVES_,
        "started_at": ID,
        "finished_at": WITH_MOVE,
        "error": WITH_MOVE,
    },
    "tool_calls": {
        "id": ID,
        "run_id": ID,
        "attempt": ID,
        "tool": ID,
        "safety_class": ID,
        "idempotency_key": ID,
        "request": ID,
        "result": WITH_MOVE,
        "error": WITH_MOVE,
        "status": MOVES_,
        "version": UP,
        "created_at": ID,
        "updated_at": TOUCHED,
    },
    "approvals": {
        "id": ID,
        "run_id": ID,
        "attempt": ID,
        "agent": ID,
        "tool_call_id": ID,
        "action": ID,
        "action_name": ID,
        "action_digest": ID,
        "safety_class": ID,
        "reason": ID,
        "requested_scope": ID,
        "status": MOVES_,
        "on_expiry": ID,
        "expires_at": ID,
        "request_key": ID,
        "request_digest": ID,
        "version": UP,
        "created_at": ID,
        "decided_at": DECISION,
        "decided_by": DECISION,
        "decision_reason": DECISION,
        "decision_scope": DECISION,
        "rule_id": DECISION,
        "consumed_at": ONCE,
        "consumed_effect_key": ONCE,
        "snoozed_until": SNOOZE,
        "input_schema": ID,
        "approved_action": DECISION,  # the operator's edit, set with the approval
        "approved_digest": DECISION,
        "origin": ID,
        "requested_by": ID,  # a server journal's only (0007t): the login that filed it
        "waiter_seen_at": WAITER,
        "hold_until": DECISION,  # until when the decision may be undone (0013u)
    },
    "approval_rules": {
        "id": ID,
        "effect": ID,
        "action_pattern": ID,
        "resource_pattern": ID,
        "scope": ID,
        "run_id": ID,
        "project": ID,
        "space": ID,
        "created_by": ID,
        "created_at": ID,
        "expires_at": ID,
        "revoked_at": ONCE,
        "revoked_by": ONCE,
        "source_approval_id": ID,
        "version": UP,
        "predicate": ID,
        "revoke_reason": ONCE,
    },
    "interactions": {
        "id": ID,
        "run_id": ID,
        "attempt": ID,
        "agent": ID,
        "kind": ID,
        "prompt": ID,
        "request": ID,
        "response_schema": ID,
        "options": ID,
        "status": MOVES_,
        "expires_at": ID,
        "request_key": ID,
        "request_digest": ID,
        "version": UP,
        "created_at": ID,
        "resolved_at": DECISION,
        "resolved_by": DECISION,
        "response": DECISION,  # the answer: written once, with it
        "snoozed_until": SNOOZE,
        "origin": ID,
        "requested_by": ID,
        "waiter_seen_at": WAITER,
        "hold_until": DECISION,  # until when the answer may be undone (0014u)
        "taken_at": ONCE,  # when the agent took the held answer (HELD, 0014u)
    },
    "memory_entries": {
        "id": ID,
        "scope": WITH_VERSION,
        "scope_key": WITH_VERSION,
        "kind": WITH_VERSION,
        "title": WITH_VERSION,
        "content": WITH_VERSION,
        "priority": WITH_VERSION,
        "trust": WITH_VERSION,
        "sensitivity": WITH_VERSION,
        "pinned": WITH_VERSION,
        "confirmed": WITH_VERSION,
        "deleted": WITH_VERSION,
        "version": UP,
        "content_hash": WITH_VERSION,
        "source_run_id": ID,
        "created_at": ID,
        "updated_at": TOUCHED,
        "last_used_at": free("when an agent last read the entry (ordering of recall)"),
        "use_count": free("how often agents read the entry (ordering of recall)"),
    },
    "memory_reconciliations": {
        "id": ID,
        "entry_id": ID,
        "local_content": ID,
        "local_version": ID,
        "incoming_content": ID,
        "incoming_source": ID,
        "incoming_kind": ID,
        "incoming_priority": ID,
        "incoming_trust": ID,
        "incoming_sensitivity": ID,
        "run_id": ID,
        "status": MOVES_,
        "version": UP,
        "created_at": ID,
        "resolved_at": DECISION,
        "resolved_by": DECISION,
        "resolution_reason": DECISION,
        "snoozed_until": SNOOZE,
        "agent": ID,
        "origin": ID,
        "requested_by": ID,
    },
    "effects": {
        "key": ID,
        "run_id": ID,
        "attempt": UP,
        "tool": ID,
        "action": ID,
        "action_digest": ID,
        "safety_class": ID,
        "idempotency_key": ID,
        "status": MOVES_,
        "lease_owner": free("the process holding the lease; a lapsed lease makes it ambiguous"),
        "lease_seconds": free("the lease's length, renewed by its holder"),
        "lease_expires_at": free("the lease's end, renewed by its holder"),
        "approval_id": WITH_MOVE,  # set with the reservation (a retry may name another)
        "result": WITH_MOVE,
        "error": WITH_MOVE,
        "ambiguous_reason": WITH_MOVE,
        "resolved_by": WITH_MOVE,
        "resolution_reason": WITH_MOVE,
        "version": UP,
        "created_at": ID,
        "started_at": WITH_MOVE,
        "updated_at": TOUCHED,
        "snoozed_until": SNOOZE,
        "agent": ID,
        "origin": ID,
    },
    "events": _evidence(
        "id",
        "run_id",
        "sequence",
        "type",
        "payload",
        "run_version",
        "attempt",
        "actor",
        "created_at",
        "prev_digest",
        "digest",
    ),
    "receipts": _evidence(
        "id",
        "effect_key",
        "run_id",
        "kind",
        "status",
        "external_id",
        "evidence",
        "digest",
        "actor",
        "created_at",
    ),
    "decisions": _evidence(
        "id",
        "target_kind",
        "target_id",
        "run_id",
        "decision",
        "actor",
        "source",
        "request_id",
        "reason",
        "created_at",
        "digest",
    ),
    "audit": _evidence(
        "sequence",
        "id",
        "actor",
        "action",
        "entity_kind",
        "entity_id",
        "run_id",
        "before",
        "after",
        "reason",
        "request_id",
        "request_digest",
        "created_at",
        "prev_digest",
        "digest",
    ),
    "memory_mutations": _evidence(
        "id",
        "entry_id",
        "operation",
        "actor",
        "reason",
        "version",
        "before_hash",
        "after_hash",
        "before_content",
        "after_content",
        "run_id",
        "idempotency_key",
        "request_digest",
        "created_at",
        "event_sequence",
        "prev_digest",
        "digest",
    ),
    "changes": _evidence("seq", "entity_kind", "entity_id", "run_id", "created_at"),
    "signatures": _evidence(
        "record_id", "record_kind", "key_id", "operator", "payload", "signature", "created_at"
    ),
    "journal_meta": _evidence("key", "value"),
    "operator_keys": {
        "key_id": ID,
        "operator": ID,
        "public_key": ID,
        "first_seen_at": ID,
    },
    # 0014p: approval policies, evidence (core/storage/policy_sql.py refuses the rest)
    "group_changes": _evidence(
        "id", "group_name", "operator", "seq", "change", "decision_id", "actor", "created_at"
    ),
    "policies": _evidence(
        "id",
        "name",
        "action_pattern",
        "resource_pattern",
        "safety_class",
        "predicate",
        "project",
        "space",
        "mode",
        "escalate_after",
        "escalate_to",
        "decision_id",
        "created_by",
        "created_at",
    ),
    "delegations": _evidence(
        "id",
        "operator",
        "delegate",
        "starts_at",
        "ends_at",
        "reason",
        "decision_id",
        "created_at",
    ),
    "policy_stages": _evidence("policy_id", "stage", "group_name", "need"),
    "policy_revocations": _evidence(
        "policy_id", "reason", "decision_id", "revoked_by", "revoked_at"
    ),
    "policy_bindings": _evidence("approval_id", "policy_id", "created_at"),
    "approval_steps": _evidence(
        "id",
        "approval_id",
        "policy_id",
        "stage",
        "group_name",
        "operator",
        "for_operator",
        "approve",
        "reason",
        "decision_id",
        "created_at",
    ),
    "alembic_version": {
        "version_num": derived(
            "the schema's revision, written by migrations; an unknown one is refused at open"
        ),
    },
}


def columns(table: str, *, kind: Kind | None = None, rule: Rule | None = None) -> list[str]:
    """``table``'s columns in census order, of ``kind`` and ``rule`` if given."""
    return [
        c
        for c, e in CENSUS[table].items()
        if (kind is None or e.kind == kind) and (rule is None or e.rule == rule)
    ]


# ---------------------------------------------------------------- the rules as SQL
# Tables whose rows refuse UPDATE whole (their own triggers; every column is identity).
WHOLE_ROW = (
    "events",
    "receipts",
    "decisions",
    "audit",
    "memory_mutations",
    "changes",
    "signatures",
    "journal_meta",
    *POLICY_TABLES,
)
# Columns only a server journal has (0007t: set by the server at INSERT, kept on UPDATE by
# its own trigger).
SERVER_ONLY: set[tuple[str, str]] = {
    ("approvals", "requested_by"),
    ("interactions", "requested_by"),
    ("memory_reconciliations", "requested_by"),
}

# Written only by migrations (a trigger would stop the next one).
UNGUARDED = ("alembic_version",)


@dataclass(frozen=True)
class Dialect:
    """How a store writes "differs" and "false": SQLite's ``IS NOT`` and 0, PostgreSQL's
    ``IS DISTINCT FROM`` and false."""

    differs: str
    false: str
    now: str  # the store's clock, in seconds since the epoch (UNDO_BY_CLOCK)


SQLITE = Dialect("IS NOT", "0", "((julianday('now') - 2440587.5) * 86400.0)")
POSTGRESQL = Dialect(
    "IS DISTINCT FROM", "false", "(extract(epoch from clock_timestamp())::double precision)"
)


@dataclass(frozen=True)
class Check:
    """One trigger: an UPDATE of ``table`` whose ``refused`` condition holds aborts."""

    name: str
    table: str
    refused: str
    message: str


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _changed(cols: list[str], d: Dialect) -> str:
    return " OR ".join(f"NEW.{c} {d.differs} OLD.{c}" for c in cols)


def _moves_ok(table: str, d: Dialect) -> str:
    allowed = " OR ".join(
        f"(OLD.status = '{src}' AND NEW.status IN ({_quoted(dst)}))"
        for src, dst in MOVES[table].items()
    )
    return f"COALESCE(({allowed}), {d.false})"


def checks(d: Dialect, already: dict[str, set[str]] | None = None) -> list[Check]:
    """The census's triggers (schema 0009b), one per table and rule. ``already``: identity
    columns older triggers guard (not guarded twice)."""
    out = []
    for table in CENSUS:
        if table in WHOLE_ROW or table in UNGUARDED:
            continue
        ident = [
            c
            for c in columns(table, kind="identity")
            if c not in (already or {}).get(table, set()) and (table, c) not in SERVER_ONLY
        ]
        if ident:
            out.append(
                Check(
                    f"trg_{table}_census_identity",
                    table,
                    _changed(ident, d),
                    f"{table} identity columns are immutable",
                )
            )
        once = columns(table, rule="once")
        if once:
            cond = " OR ".join(
                f"(OLD.{c} IS NOT NULL AND NEW.{c} {d.differs} OLD.{c})" for c in once
            )
            out.append(
                Check(
                    f"trg_{table}_once",
                    table,
                    cond,
                    f"{table}: {', '.join(once)} are set once and never changed or cleared",
                )
            )
        up = columns(table, rule="up")
        if up:
            cond = " OR ".join(
                f"(OLD.{c} IS NOT NULL AND (NEW.{c} IS NULL OR NEW.{c} < OLD.{c}))" for c in up
            )
            out.append(
                Check(
                    f"trg_{table}_no_step_back",
                    table,
                    cond,
                    f"{table}: {', '.join(up)} never step back",
                )
            )
        if table in MOVES:
            out.append(
                Check(
                    f"trg_{table}_moves",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NOT {_moves_ok(table, d)}",
                    f"{table} status moves only along its state machine",
                )
            )
        if table in DECIDER:
            undo = (
                [(a, UNDO[table][1]) for a in UNDO[table][0]] if table in UNDO else []
            )  # an undo clears the decider: its own decision row names who undid it
            agent_moves = (
                " OR ".join(
                    f"(OLD.status = '{a}' AND NEW.status = '{b}')"
                    for a, b in sorted(AGENT_MOVES[table]) + undo
                )
                or d.false
            )
            out.append(
                Check(
                    f"trg_{table}_decider",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NEW.{DECIDER[table]} IS NULL "
                    f"AND NOT COALESCE(({agent_moves}), {d.false})",
                    f"{table}: a person's decision names who made it ({DECIDER[table]})",
                )
            )
        for a, b in ALONG.get(table, ()):
            same = "IS NOT DISTINCT FROM" if d is POSTGRESQL else "IS"
            out.append(
                Check(
                    f"trg_{table}_{a}_along",
                    table,
                    f"NEW.{a} {d.differs} OLD.{a} AND NEW.{b} {same} OLD.{b}",
                    f"{table}: {a} changes only with {b}",
                )
            )
        if table in WITH_EVENT:
            head = WITH_EVENT[table]
            out.append(
                Check(
                    f"trg_{table}_status_with_event",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NOT COALESCE(NEW.{head} > OLD.{head}, "
                    f"{d.false})",
                    f"{table} status moves only with its event",
                )
            )
        if table in UNDO:
            sources, to, hold = UNDO[table]
            cleared = " AND ".join(f"NEW.{c} IS NULL" for c in columns(table, rule="decision"))
            used = HELD[table][0]
            clock = f" AND OLD.{hold} > {d.now}" if table in UNDO_BY_CLOCK else ""
            out.append(
                Check(
                    f"trg_{table}_undo",
                    table,
                    f"COALESCE(OLD.status IN ({_quoted(sources)}) AND NEW.status = '{to}', "
                    f"{d.false}) AND NOT COALESCE(OLD.{used} IS NULL AND OLD.{hold} IS "
                    f"NOT NULL{clock} AND NEW.version = OLD.version + 1 AND {cleared}, "
                    f"{d.false})",
                    f"{table}: a decision is undone only within its hold, before it is "
                    + ("taken" if used == "taken_at" else "consumed")
                    + ", clearing the decision, as a version of its own",
                )
            )
        if table in HELD:
            used, hold = HELD[table]
            passed = f" AND {d.now} >= OLD.{hold}" if table in HELD_BY_CLOCK else ""
            out.append(
                Check(
                    f"trg_{table}_held",
                    table,
                    f"OLD.{used} IS NULL AND NEW.{used} IS NOT NULL AND OLD.{hold} IS NOT NULL "
                    f"AND NOT COALESCE(NEW.{used} >= OLD.{hold}{passed}, {d.false})",
                    f"{table}: a decision is not "
                    + ("taken" if used == "taken_at" else "consumed")
                    + f" before its hold ends ({hold})",
                )
            )
        if table in RETRY:
            final, asked, attempt = RETRY[table]
            out.append(
                Check(
                    f"trg_{table}_retry",
                    table,
                    f"OLD.status = '{final}' AND NEW.status {d.differs} OLD.status AND NOT "
                    f"COALESCE(OLD.{asked} > OLD.{attempt} AND NEW.{attempt} = OLD.{asked}, "
                    f"{d.false})",
                    f"{table}: a {final} run moves again only as the retry an operator asked "
                    f"for, starting the attempt it names ({asked})",
                )
            )
        decided = columns(table, rule="decision")
        if decided:
            opened = _quoted(OPEN[table])
            leaves = (
                f"COALESCE(OLD.status IN ({opened}) AND NEW.status NOT IN ({opened}), {d.false})"
            )
            if table in UNDO:  # the undo clears them (trg_*_undo checks the rest)
                sources, to, _hold = UNDO[table]
                cleared = " AND ".join(f"NEW.{c} IS NULL" for c in decided)
                leaves = (
                    f"({leaves} OR COALESCE(OLD.status IN ({_quoted(sources)}) AND "
                    f"NEW.status = '{to}' AND {cleared}, {d.false}))"
                )
            out.append(
                Check(
                    f"trg_{table}_decision",
                    table,
                    f"({_changed(decided, d)}) AND NOT {leaves}",
                    f"{table}: {', '.join(decided)} are written once, with the decision",
                )
            )
        moved = columns(table, rule="with_move")
        if moved:
            out.append(
                Check(
                    f"trg_{table}_with_move",
                    table,
                    f"({_changed(moved, d)}) AND NEW.status IS NOT DISTINCT FROM OLD.status"
                    if d is POSTGRESQL
                    else f"({_changed(moved, d)}) AND NEW.status IS OLD.status",
                    f"{table}: {', '.join(moved)} change only with a status move",
                )
            )
        versioned = columns(table, rule="with_version")
        if versioned:
            out.append(
                Check(
                    f"trg_{table}_with_version",
                    table,
                    f"({_changed(versioned, d)}) AND NOT COALESCE(NEW.version > OLD.version, "
                    f"{d.false})",
                    f"{table}: {', '.join(versioned)} change only with a new version "
                    "(and its mutation)",
                )
            )
    return out


__all__ = [
    "AGENT_FIRST_WRITES",
    "AGENT_MOVES",
    "ALONG",
    "CENSUS",
    "DECIDER",
    "HELD",
    "HELD_BY_CLOCK",
    "MOVES",
    "OPEN",
    "RETRY",
    "SERVER_ONLY",
    "UNDO",
    "UNDO_BY_CLOCK",
    "WITH_EVENT",
    "Entry",
    "checks",
    "columns",
]
