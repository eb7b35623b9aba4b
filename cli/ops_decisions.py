"""Headless decision commands: approve, deny, answer, dismiss, undo, retry,
resolve-effect, resolve-conflict, snooze, cancel.

Each is one short session on the journal (registered by cmd_ops); every decision carries
the version the operator saw and a fresh request id."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from proctor.core import InboxKind, Journal, errors

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    EXIT_REFUSED,
    RESOLUTIONS,
    UsageError,
    confirm_approval,
    kind_of,
    open_journal,
    parse_json,
    request_id,
    require_kind,
    seconds,
)


def cmd_decide(args: argparse.Namespace) -> int:
    approve = args.command == "approve"
    require_kind(args.id, "approval", args.command)
    if approve and args.hold and args.scope != "once":
        raise UsageError(
            f"--hold is for a one-time decision: --scope {args.scope} makes a standing rule, "
            "which decides at once and is revoked (proctor revoke-rule), not undone"
        )
    j = open_journal(args, write=True)
    try:
        current = j.approvals.get(args.id)
        if approve:
            confirm_approval(args, current, j.now())
        done = j.approvals.decide(
            args.id,
            approve,
            expected_version=args.expect_version or current.version,
            reason=args.reason,
            scope=args.scope if approve else "once",
            request_id=request_id(args),
            source="cli",
            hold=args.hold,
        )
        progress = j.policies.progress(args.id)
    finally:
        j.close()
    if progress is not None and done.status.value == "pending":
        print(
            f"{'approved' if approve else 'denied'} (your step) {render.ident(done.id)} "
            f"({render.clean(done.action_name, 80, one_line=True)}): "
            f"{render.clean(progress.summary(), 400, one_line=True)}"
        )
        return EXIT_OK
    rule = f", rule {done.rule_id}" if done.rule_id else ""
    if done.hold_until is not None:
        rule += "; " + held_note(done.id, args.hold)
    print(
        f"{done.status.value} {render.ident(done.id)} "
        f"({render.clean(done.action_name, 80, one_line=True)}, "
        f"scope {done.decision_scope.value if done.decision_scope else 'once'}{rule})"
    )
    return EXIT_OK


def held_note(item_id: str, hold: float) -> str:
    """What a decision made with ``--hold`` tells the operator: when the agent acts on it,
    and how to take it back until then."""
    return (
        f"the agent acts on it after {hold:g} s: "
        f"`proctor undo {render.last_word(item_id)}` takes it back until then"
    )


def hold_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--hold",
        type=seconds,
        default=0.0,
        metavar="SECONDS",
        help="the agent may act on the decision only after this long; until then "
        "`proctor undo ID` takes it back (0, the default: at once; at most 60)",
    )


def answer_from(args: argparse.Namespace) -> Any:
    if args.json is not None:
        return parse_json(args.json, "the answer")
    if args.text is not None:
        return {"text": args.text}
    if args.choice is not None:
        return {"choice": args.choice}
    return {"confirmed": bool(args.confirm)}


def cmd_answer(args: argparse.Namespace) -> int:
    require_kind(args.id, "question", "answer")
    response = answer_from(args)
    j = open_journal(args, write=True)
    try:
        current = j.questions.get(args.id)
        try:
            done = j.questions.answer(
                args.id,
                response,
                expected_version=args.expect_version or current.version,
                reason=args.reason,
                request_id=request_id(args),
                source="cli",
                hold=args.hold,
            )
        except errors.ValidationError as err:
            raise errors.ValidationError(
                f"the answer does not fit the question's schema: {err.message}",
                field=err.field,
                hint=f"See the schema with `proctor show {render.last_word(args.id)}`.",
            ) from err
    finally:
        j.close()
    held = f"; {held_note(done.id, args.hold)}" if done.hold_until is not None else ""
    print(f"answered {render.ident(done.id)} ({done.kind.value}{held})")
    return EXIT_OK


def written(args: argparse.Namespace, version_of: Any, write: Any) -> Any:
    """One operator write from the CLI: the journal opened for writing, the item's version
    from ``--expect-version`` or ``version_of(journal)``, then ``write(journal, version)``."""
    j = open_journal(args, write=True)
    try:
        return write(j, args.expect_version or version_of(j))
    finally:
        j.close()


def cmd_undo(args: argparse.Namespace) -> int:
    if kind_of(args.id) != "question":
        require_kind(args.id, "approval", "undo")
    question = kind_of(args.id) == "question"

    def service(j: Journal) -> Any:
        return j.questions if question else j.approvals

    done = written(
        args,
        lambda j: service(j).get(args.id).version,
        lambda j, version: service(j).undo(
            args.id,
            expected_version=version,
            reason=args.reason,
            request_id=request_id(args),
            source="cli",
        ),
    )
    again = "open" if question else "pending"
    print(f"undid the decision on {render.ident(done.id)}; it is {again} again")
    return EXIT_OK


def cmd_retry(args: argparse.Namespace) -> int:
    if kind_of(args.run_id) not in ("run", "effect"):  # a run's id may be any string
        require_kind(args.run_id, "run", "retry")
    done = written(
        args,
        lambda j: j.runs.get(args.run_id).version,
        lambda j, version: j.runs.request_retry(
            args.run_id,
            args.reason,
            expected_version=version,
            request_id=request_id(args),
            source="cli",
        ),
    )
    print(
        f"asked {render.ident(args.run_id)} to try again as attempt {done.retry_requested}; "
        "its agent starts it when it next looks"
    )
    return EXIT_OK


def cmd_dismiss(args: argparse.Namespace) -> int:
    require_kind(args.id, "question", "dismiss")
    done = written(
        args,
        lambda j: j.questions.get(args.id).version,
        lambda j, version: j.questions.dismiss(
            args.id,
            args.reason,
            expected_version=version,
            request_id=request_id(args),
            source="cli",
            hold=args.hold,
        ),
    )
    held = f" ({held_note(done.id, args.hold)})" if done.hold_until is not None else ""
    print(f"dismissed {render.ident(done.id)}{held}")
    return EXIT_OK


def cmd_resolve_effect(args: argparse.Namespace) -> int:
    evidence = parse_json(args.evidence, "--evidence") if args.evidence else None
    j = open_journal(args, write=True)
    try:
        current, marked = lapsed_made_ambiguous(j, j.effects.get(args.key), args.expect_version)
        done = j.effects.resolve(
            args.key,
            args.outcome,
            reason=args.reason,
            expected_version=current.version if marked else args.expect_version or current.version,
            external_id=args.external_id,
            evidence=evidence,
            request_id=request_id(args),
            source="cli",
        )
    finally:
        j.close()
    print(f"resolved {render.clean(done.key, 200, one_line=True)} as {done.status.value}")
    return EXIT_OK


def lapsed_made_ambiguous(j: Journal, effect: Any, expected: int | None) -> tuple[Any, bool]:
    """As the desk's "Mark ambiguous" does: an effect whose holder's lease lapsed (its agent
    was killed mid-effect) is first marked ambiguous, then resolved; a live lease is the
    agent's, and is refused in words that say so. Returns the effect and whether it was
    marked here (``expected``, the version the operator saw, was checked before)."""
    if effect.status.value not in ("reserved", "executing"):
        return effect, False
    if effect.lease_expires_at is None or effect.lease_expires_at > j.now():
        raise errors.EffectBusy(
            f"effect {effect.key} is {effect.status.value}: {effect.lease_owner} holds its "
            f"lease until {render.when(effect.lease_expires_at)}, and may still finish it",
            hint="Only an effect whose outcome nobody knows is resolved by hand; wait for "
            "its agent, or for the lease to lapse.",
        )
    if expected is not None and expected != effect.version:
        raise errors.StaleVersion(
            f"effect {effect.key} is at version {effect.version}; you saw {expected}"
        )
    j.effects.sweep_expired(effect.key)
    marked = j.effects.get(effect.key)
    print(
        f"proctor: the lease of {render.ident(effect.lease_owner)} on "
        f"{render.ident(effect.key)} lapsed at {render.when(effect.lease_expires_at)} "
        f"before it said what happened: marked it {marked.status.value} first",
        file=sys.stderr,
    )
    return marked, True


def inbox_kind(text: str) -> str:
    """An inbox kind as typed; the retired ``memory`` is taken as ``conflict``, with a note."""
    if text == "memory":
        print("proctor: note: --kind memory is now --kind conflict", file=sys.stderr)
        return InboxKind.CONFLICT.value
    return text


def cmd_resolve_conflict(args: argparse.Namespace) -> int:
    require_kind(args.id, "conflict", "resolve-conflict")
    choice = RESOLUTIONS.get(args.choice, args.choice)
    merged = args.content
    if args.content_file:
        try:
            merged = Path(args.content_file).read_text(encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot read {args.content_file}: {err}") from err
    if choice == "merged" and not merged:
        raise UsageError("merge needs the merged text: --content TEXT or --content-file FILE")
    j = open_journal(args, write=True)
    try:
        current = j.memory.conflict(args.id)
        done = j.memory.resolve(
            args.id,
            choice,
            expected_version=args.expect_version or current.version,
            merged_content=merged if choice == "merged" else None,
            reason=args.reason,
            request_id=request_id(args),
            source="cli",
        )
    finally:
        j.close()
    print(f"resolved {render.ident(done.id)} as {done.status.value}")
    return EXIT_OK


SNOOZE_KINDS = frozenset({"approval", "question", "conflict", "effect"})


class Versioned(Protocol):
    """An inbox item as snooze reads it: its current version."""

    @property
    def version(self) -> int: ...


def cmd_snooze(args: argparse.Namespace) -> int:
    """Snooze (or wake) several inbox items at once: the core's bulk snooze, each item at
    its current version (or --expect-version when one id is given), each its own
    transaction; one line per item."""
    kinds = [kind_of(ident) for ident in args.ids]
    for ident, kind in zip(args.ids, kinds, strict=True):
        if kind not in SNOOZE_KINDS:
            raise UsageError(
                f"{render.clean(ident, 80)} is not an inbox item id "
                "(apr_…, int_…, rec_… or an effect key)"
            )
    until = None if args.wake else time.time() + args.minutes * 60
    j = open_journal(args, write=True)
    try:
        getters: dict[str, Callable[[str], Versioned]] = {
            "approval": j.approvals.get,
            "question": j.questions.get,
            "conflict": j.memory.conflict,
            "effect": j.effects.get,
        }
        items = []
        for ident, kind in zip(args.ids, kinds, strict=True):
            version = (
                args.expect_version
                if args.expect_version and len(args.ids) == 1
                else getters[kind](ident).version
            )
            items.append((kind, ident, version))
        results = j.inbox.bulk_snooze(items, until, request_id=request_id(args))
    finally:
        j.close()
    verb = "woke" if args.wake else f"snoozed for {args.minutes:g} min"
    for r in results:
        print(
            f"{verb} {render.clean(r.id, 200)}"
            if r.ok
            else f"refused {render.clean(r.id, 200)}: {render.clean(r.error or '', 300)}"
        )
    return EXIT_OK if all(r.ok for r in results) else EXIT_REFUSED


def cmd_cancel(args: argparse.Namespace) -> int:
    if kind_of(args.run_id) not in ("run", "effect"):  # a run's id may be any string
        require_kind(args.run_id, "run", "cancel")
    j = open_journal(args, write=True)
    try:
        current = j.runs.get(args.run_id)
        j.runs.request_cancel(
            args.run_id,
            args.reason,
            expected_version=args.expect_version or current.version,
            request_id=request_id(args),
            source="cli",
        )
    finally:
        j.close()
    print(f"asked {render.ident(args.run_id)} to stop; the agent ends it at its next step")
    return EXIT_OK
