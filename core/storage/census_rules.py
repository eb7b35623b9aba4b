"""The census's classes and rules (core/storage/census.py): an entry's kind and rule, and the
tables the rules read: each entity's status moves, who may make which, what moves along,
what an undo, a retry or a hold may write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
