"""Typed errors raised by proctor.core.

Every error carries a message an operator can act on (``str(err)``) and a short
``hint`` naming the next step. Callers catch the class, not the text.
"""

from __future__ import annotations

from typing import Any


class ProctorError(Exception):
    """Base class of every error proctor.core raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint
        self.details = details

    def __str__(self) -> str:
        return self.message


class NotFound(ProctorError):
    hint = "It may have been removed, or the id is mistyped."


class StaleVersion(ProctorError):
    hint = "Someone changed it since you looked. Reload and decide again."


class AlreadyDecided(ProctorError):
    hint = "Nothing to do: it was decided already. Reload to see the decision."


class Withdrawn(AlreadyDecided):
    """The agent withdrew the request (it stopped waiting: a client timeout, a cancelled
    call, the session's end). Nobody decided it; a decision now reaches no one."""

    hint = "Nothing to do: the agent withdrew it and no longer waits for a decision."


class Expired(ProctorError):
    hint = "The request expired before the decision; the agent has been told."


class IdempotencyConflict(ProctorError):
    hint = "The same request id was used before with different content; use a new id."


class InvalidTransition(ProctorError):
    hint = "The item is not in a state that allows this action. Reload it."


class RunTerminal(InvalidTransition):
    hint = "The run has ended; it accepts no new requests or decisions."


class RunInterrupted(InvalidTransition):
    hint = "The run is interrupted; start a new attempt before asking anything new."


class ResumeBlocked(InvalidTransition):
    """A new attempt was refused: ``blockers`` lists what holds it, as (kind, id) pairs."""

    hint = (
        "Settle what blocks the run first: decide its pending approvals and questions, "
        "resolve its ambiguous effects and unknown tool outcomes; a cancelled run ends."
    )

    def __init__(self, message: str, *, blockers: list[tuple[str, str]], **details: Any) -> None:
        super().__init__(message, blockers=blockers, **details)
        self.blockers = blockers


class ConflictPending(InvalidTransition):
    hint = "This memory entry already has a conflict waiting for a person; resolve it first."


class NotAllowed(ProctorError):
    hint = "Another operator must do this."


class DigestMismatch(ProctorError):
    hint = "The action changed after it was approved; request a new approval."


class NotConsumable(ProctorError):
    hint = "Only an approved, unconsumed approval can be consumed."


class Held(NotConsumable):
    """The decision may still be undone (its hold has not passed): wait, then consume."""

    hint = "The operator may still undo the decision; wait a few seconds and try again."


class NotUndoable(ProctorError):
    """Undo came too late: the hold passed, the agent consumed the approval, or the
    decision had no hold (a rule's, or the hold was off)."""

    hint = "The decision stands; the agent may already act on it. Decide anew if needed."


class ApprovalLapsed(NotConsumable):
    hint = "The approval lapsed before it was used (it is now expired); request a new one."


class EffectBusy(ProctorError):
    hint = "Another worker holds a live lease on this effect; wait for it."


class EffectAmbiguous(ProctorError):
    hint = "Nobody knows whether this effect happened. A person must resolve it."


class EffectCommitted(ProctorError):
    hint = "The effect already happened; it is never run again."


class ValidationError(ProctorError):
    hint = "Fix the named field and submit again."

    def __init__(self, message: str, *, field: str = "", **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class Refused(ProctorError):
    """One of the journal's own rules (a trigger, on either store) refused the write: what
    it would have written breaks a rule of the schema's (``rule``: the trigger's words),
    most often because a row was changed outside Proctor before. Nothing was written."""

    hint = (
        "Nothing was written. A row was likely changed outside Proctor: run `proctor verify` "
        "to see which; if it finds nothing, this is a bug in Proctor: report it."
    )

    def __init__(self, rule: str, **details: Any) -> None:
        super().__init__(f"the journal refused this write: {rule}", rule=rule, **details)
        self.rule = rule


class StoreError(ProctorError):
    """The journal file itself could not be used."""


class StoreBusy(StoreError):
    hint = "Another process holds the journal lock. Retry in a moment."


class TooManySessions(ProctorError):
    """A server (``proctor mcp --http``) has as many client sessions open as it keeps."""

    hint = "Close a session you no longer use, or wait: an idle one is closed before long."


class StoreReadOnly(StoreError):
    hint = "The journal is open read-only; reopen it writable to make changes."


class StoreFull(StoreError):
    hint = "The disk is full or a file-size limit was hit; free space and retry."


class StoreIOError(StoreError):
    hint = (
        "A disk I/O error: the journal's files were changed or deleted under this process "
        "(its -wal?) or the disk failed. Close and reopen the journal, check that nothing "
        "else deletes journal files, then run `proctor verify`."
    )


class SchemaTooNew(StoreError):
    hint = "This journal was written by a newer Proctor. Upgrade Proctor to open it."


class SchemaTooOld(StoreError):
    hint = "Open it with migration allowed (a backup is made first), or read-only."


class Corrupt(StoreError):
    hint = (
        "Run `proctor verify` to see what is broken; if it names a problem, restore the "
        "journal from a backup taken before it."
    )


class Damaged(Corrupt):
    """A stored value cannot be decoded (its text is not UTF-8, its JSON does not parse): the
    file was damaged at that place (``details``: ``where``). Nothing is decided on a journal
    known to be damaged."""

    hint = (
        "Nothing was changed. `proctor verify` names every damaged place; restore the journal "
        "from a backup taken before the damage, or ask the agents to file their requests again."
    )

    def __init__(self, where: str, what: str, **details: Any) -> None:
        super().__init__(f"the journal is damaged at {where}: {what}", where=where, **details)
        self.where, self.what = where, what


class Cancelled(ProctorError):
    """A long read stopped because its caller no longer wanted it (the desk's damage check
    when its window closes)."""


class Tampered(ProctorError):
    """A stored item no longer matches its own digest: its row was rewritten outside
    Proctor (``details``: ``kind``, ``id``)."""

    hint = (
        "The stored action no longer matches its digest: the journal was changed outside "
        "Proctor. Nothing was decided or run; run `proctor verify` and ask for a new request."
    )


class DecisionUnverified(ProctorError):
    """Trust is configured and a decision is not proven to be a trusted operator's:
    ``why`` is one of unsigned, unknown_key, retired_key, bad_signature, mismatch,
    rule_unsigned, rule_mismatch, no_trust."""

    hint = (
        "Nothing was done: the decision is not signed by an operator you trust. "
        "Ask a trusted operator to decide it again; `proctor verify --trust FILE` shows "
        "every such decision."
    )

    def __init__(self, message: str, *, why: str, **details: Any) -> None:
        super().__init__(message, why=why, **details)
        self.why = why


class NotAJournal(Corrupt):
    """The file is not a Proctor journal at all (a text file, another program's database)."""

    hint = (
        "Choose a journal file made by Proctor (`proctor open --create PATH` starts a new "
        "one). Nothing was written to this file."
    )
