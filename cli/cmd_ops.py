"""Headless operator commands: the desk's services from a shell.

inbox, show, approve, deny, answer, resolve-effect, resolve-conflict, cancel, runs,
timeline, verify, export. Each command is one short session on the journal; every
decision carries the version the operator saw and a fresh request id.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from proctor.core import InboxFilter, InboxKind, Journal, RunStatus, errors
from proctor.core.audit.verify import verify
from proctor.core.kernel import resource
from proctor.core.kernel.safe_text import json_escaped

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    EXIT_REFUSED,
    RESOLUTIONS,
    UsageError,
    add,
    common_parser,
    confirm_approval,
    dump,
    emit_json,
    kind_of,
    natural,
    open_journal,
    output_file,
    parse_json,
    positive,
    request_id,
    require_kind,
    seconds,
    writer_parser,
)

# ---------------------------------------------------------------- listing


def cmd_inbox(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        f = InboxFilter(
            kinds=frozenset(InboxKind(k) for k in args.kind or []),
            agent=args.agent,
            project=args.project,
            safety_class=args.safety,
            text=args.text,
            snoozed=args.snoozed,
            waited=args.waited,
            newest_first=not args.oldest_first,
            sort=args.sort,
        )
        page = j.inbox.list(f, cursor=args.cursor, limit=args.limit)
        deadline = time.monotonic() + (args.wait or 0)
        while not page.items and time.monotonic() < deadline:
            time.sleep(0.1)
            page = j.inbox.list(f, cursor=args.cursor, limit=args.limit)
        counts = j.inbox.counts()
        if args.json:
            items = dump(page.items)
            if args.details:
                for row, item in zip(items, page.items, strict=True):
                    row["detail"] = dump(detail_of(j, item))
            emit_json(
                {
                    "items": items,
                    "next_cursor": page.next_cursor,
                    "counts": {k.value: v for k, v in counts.items()},
                }
            )
        else:
            render.inbox(page, counts, j.now(), what_of(j, page.items))
        return EXIT_OK
    finally:
        j.close()


def what_of(j: Journal, items: list[Any]) -> dict[str, str]:
    """What each approval would do, by id: its tool and resource (a hook request's command,
    a path, a URL), read from the approvals themselves in one read (``Approvals.found``; the
    inbox row carries only the reason). One decided and gone since the page was read says
    nothing; a damaged one is named as such."""
    ids = [item.id for item in items if item.kind == InboxKind.APPROVAL]
    found = {}
    for approval_id, approval in j.approvals.found(ids).items():
        if isinstance(approval, errors.Damaged):  # listed still, and named as damaged
            found[approval_id] = f"(damaged: {approval.what}; see `proctor verify`)"
            continue
        action = approval.action if isinstance(approval.action, dict) else {}
        found[approval_id] = f"{approval.action_name} {resource.words(action)}".strip()
    return found


def detail_of(j: Journal, item: Any) -> Any:
    """The full approval, question, conflict or effect behind an inbox row."""
    get = {
        InboxKind.APPROVAL: j.approvals.get,
        InboxKind.QUESTION: j.questions.get,
        InboxKind.CONFLICT: j.memory.conflict,
        InboxKind.EFFECT: j.effects.get,
    }
    return get[item.kind](item.id)


def cmd_runs(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        page = j.runs.list(
            status=args.status,
            project=args.project,
            agent=args.agent,
            text=args.text,
            has_open_items=args.open,
            newest_first=not args.oldest_first,
            cursor=args.cursor,
            limit=args.limit,
        )
        if args.json:
            emit_json({"items": dump(page.items), "next_cursor": page.next_cursor})
        else:
            render.runs(page, j.now())
        return EXIT_OK
    finally:
        j.close()


def cmd_timeline(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        run = j.runs.get(args.run_id)
        events = j.runs.events(run.id, after=args.after, limit=args.limit, types=args.type)
        more = bool(events) and events[-1].sequence < run.last_sequence and not args.type
        next_after = events[-1].sequence if more else None
        if args.json:
            emit_json({"run": dump(run), "items": dump(events), "next_after": next_after})
        else:
            render.timeline(run, events, next_after, args.full)
        return EXIT_OK
    finally:
        j.close()


def cmd_export(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        run = j.runs.get(args.run_id)
        if args.output:
            with output_file(args.output) as out:
                count = write_events(j, run.id, out)
            print(
                f"wrote {count} events of {render.ident(run.id)} to {render.ident(args.output)}",
                file=sys.stderr,
            )
        else:
            write_events(j, run.id, sys.stdout)
        return EXIT_OK
    finally:
        j.close()


def write_events(j: Journal, run_id: str, out: Any, page: int = 5000) -> int:
    """Every event of a run as one JSON object per line, in sequence order."""
    after, count = 0, 0
    while True:
        batch = j.runs.events(run_id, after=after, limit=page)
        for event in batch:
            out.write(
                json_escaped(
                    json.dumps(event.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)
                )
                + "\n"
            )
        count += len(batch)
        if len(batch) < page:
            return count
        after = batch[-1].sequence


SIGNATURE_PROBLEMS = (
    "decision unsigned",
    "decision forged",
    "decision does not match its item",
    "rule not signed by a trusted operator",
)


def signature_line(report: Any) -> str:
    counts = report.signatures or {}
    if not report.trusted:
        return (
            f"{counts.get('signed', 0)} carry a signature, {counts.get('unsigned', 0)} "
            f"unsigned, {counts.get('automatic', 0)} automatic (not checked: pass "
            "--trust FILE to check them against the operators you trust)"
        )
    return (
        f"{counts.get('signed', 0)} signed, {counts.get('unsigned', 0)} unsigned, "
        f"{counts.get('invalid', 0)} invalid, {counts.get('automatic', 0)} automatic, "
        "checked against the trust file"
    )


def cmd_verify(args: argparse.Namespace) -> int:
    trust = None
    if args.trust:
        from proctor.core.decisions.trust import Trust

        trust = Trust.load(args.trust)
        if trust.problem:
            print(
                f"proctor verify: warning: {render.clean(trust.problem)}; nobody is trusted",
                file=sys.stderr,
            )
    j = open_journal(args, write=False, positional=args.journal_path, warn_lost=False)
    try:
        if args.run:
            j.runs.get(args.run)  # an unknown run is refused, not "ok: 0 runs"
        report = verify(j, quick=args.quick, run_id=args.run, trust=trust)
    finally:
        j.close()
    signed = [p for p in report.problems if p.what in SIGNATURE_PROBLEMS]
    if args.json:
        emit_json(dump(report))
    elif report.ok:
        rows = ", ".join(
            f"{n} {table.replace('_', ' ')}" for table, n in report.checked_rows.items()
        )
        print(
            f"ok: {report.checked_runs} runs, {report.checked_events} events and "
            f"{report.checked_audit} audit rows verified"
            + (f" ({rows})" if rows else "")
            + "; triggers present"
        )
        if report.signatures is not None:
            print(f"decisions: {signature_line(report)}")
    else:
        first = report.problems[0]
        print(
            f"FAILED: {render.clean(first.what, one_line=True)} at "
            f"{render.clean(first.where, one_line=True)}: "
            f"{render.clean(first.detail, 2000, one_line=True, more='')}"
        )
        if signed:
            print(
                f"first unsigned or forged decision: "
                f"{render.clean(signed[0].where, one_line=True)}: "
                f"{render.clean(signed[0].detail, 2000, one_line=True, more='')}"
            )
        if report.signatures is not None:
            print(f"decisions: {signature_line(report)}")
        if len(report.problems) > 1:
            print(f"  ({len(report.problems) - 1} more problems; --json lists them all)")
    return EXIT_OK if report.ok else EXIT_REFUSED


# ---------------------------------------------------------------- show


def cmd_show(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        kind, data = gather(j, args.id)
        if args.json:
            emit_json({"kind": kind, **{k: dump(v) for k, v in data.items()}})
        else:
            render.show(kind, data, full=args.full, now=j.now())
            if "comments" in data:
                from .cmd_comments import show_comments

                show_comments(data["comments"], None if args.full else render.LIMIT)
        return EXIT_OK
    finally:
        j.close()


def gather(j: Journal, ident: str) -> tuple[str, dict]:
    """Everything `show` prints about one id, by its prefix (decisions with their
    signature states)."""
    kind, data = _gather(j, ident)
    if kind in ("approval", "question", "conflict", "effect"):  # the item's thread
        data["comments"] = j.comments.thread(ident, kind=kind)
    if "decisions" in data:
        data["signatures"] = j.signatures.states([d.id for d in data["decisions"]])
    return kind, data


def _gather(j: Journal, ident: str) -> tuple[str, dict]:
    """By the id's prefix; an id no item of that kind has may be a run's id the agent chose
    (any string: ``runs.start(run_id=…)``), so a run is looked for last."""
    kind = kind_of(ident)
    try:
        return _gather_kind(j, kind, ident)
    except errors.NotFound as missing:
        if kind == "run":
            raise
        try:
            return _gather_kind(j, "run", ident)
        except errors.NotFound:
            if kind != "effect":  # apr_…, int_…: that kind's own words
                raise missing from None
        raise errors.NotFound(
            f"nothing has the id {ident}",
            hint="Ids start with apr_, int_, rec_, run_, mem_, rule_ or tc_; anything else "
            "is taken as an effect key or a run id the agent chose.",
        ) from None


def _gather_kind(j: Journal, kind: str, ident: str) -> tuple[str, dict]:
    if kind == "approval":
        from proctor.core.lens import lens_of

        approval = j.approvals.get(ident)
        return kind, {
            "item": approval,
            "decisions": j.approvals.decisions(ident),
            "lens": lens_of(approval, j.approvals.similar(ident, limit=20)),
            "policy": j.policies.progress(ident),
        }
    if kind == "question":
        return kind, {"item": j.questions.get(ident), "decisions": j.approvals.decisions(ident)}
    if kind == "conflict":
        item = j.memory.conflict(ident)
        return kind, {
            "item": item,
            "entry": j.memory.get(item.entry_id),
            "decisions": j.approvals.decisions(ident),
        }
    if kind == "run":
        run = j.runs.get(ident)
        return kind, {
            "item": run,
            "attempts": j.runs.attempts(ident),
            "approvals": j.approvals.for_run(ident),
            "questions": j.questions.for_run(ident),
            "effects": j.effects.list(run_id=ident, limit=100).items,
            "events": j.runs.events(ident, descending=True, limit=10),
            "resume_blockers": []
            if run.status.terminal
            else [{"kind": k, "id": i} for k, i in j.runs.resume_blockers(ident)],
        }
    if kind == "entry":
        return kind, {"item": j.memory.get(ident), "history": j.memory.history(ident)}
    if kind == "rule":
        return kind, {"item": j.approvals.rule(ident)}
    if kind == "policy":
        return kind, {"item": j.policies.get(ident)}
    if kind == "tool_call":
        return kind, {"item": j.runs.tool_call(ident)}
    effect = j.effects.get(ident)
    return "effect", {
        "item": effect,
        "receipts": j.effects.receipts(ident),
        "decisions": j.approvals.decisions(ident),
    }


# ---------------------------------------------------------------- decisions


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


def register(sub: Any) -> None:
    common, writer = common_parser(), writer_parser()
    statuses = [s.value for s in RunStatus]

    p = add(sub, "inbox", cmd_inbox, "list what waits for a person", [common])
    p.add_argument(
        "--kind",
        action="append",
        choices=[k.value for k in InboxKind],
        type=inbox_kind,
        help="only this kind (repeatable)",
    )
    p.add_argument("--agent")
    p.add_argument("--project")
    p.add_argument("--safety", metavar="CLASS", help="only approvals of this safety class")
    p.add_argument("--text", help="search titles, summaries and ids")
    p.add_argument("--snoozed", action="store_true", help="show only snoozed items")
    p.add_argument(
        "--waited", action="store_true", help="show only requests an agent waits for now"
    )
    p.add_argument("--oldest-first", action="store_true")
    p.add_argument(
        "--sort",
        default="age",
        choices=["age", "waiter"],
        help="waiter: the requests an agent waits for now first (each group by age)",
    )
    p.add_argument("--limit", type=positive, default=50)
    p.add_argument("--cursor", help="continue after the previous page")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--wait",
        type=float,
        metavar="S",
        help="if nothing is waiting, wait up to S seconds for something (scripts)",
    )
    p.add_argument(
        "--details",
        action="store_true",
        help="with --json: add each item's full record (action, schema, …)",
    )

    p = add(
        sub,
        "show",
        cmd_show,
        "show one approval, question, conflict, effect or run",
        [common],
        "Show one item by id: apr_… approval, int_… question, rec_… memory "
        "conflict, run_… run, mem_… memory entry, rule_… rule, tc_… tool call; anything "
        "else is an effect key.",
    )
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    p.add_argument("--full", action="store_true", help="do not shorten long text")

    for name, help_ in (
        ("approve", "approve a pending approval"),
        ("deny", "deny a pending approval"),
    ):
        p = add(sub, name, cmd_decide, help_, [common, writer])
        p.add_argument("id", help="approval id (apr_…)")
        p.add_argument("--reason", required=name == "deny", help="why (required to deny)")
        hold_option(p)
        if name == "approve":
            p.add_argument(
                "--yes",
                action="store_true",
                help="approve without asking, even what the desk confirms (destructive, "
                "financial, external side effect, near or past its expiry, --scope run|space); "
                "without a terminal such an approval needs it",
            )
            p.add_argument(
                "--scope",
                choices=["once", "run", "space"],
                default="once",
                help="once; or also allow this action for the rest of the run "
                "or the whole space (creates a rule)",
            )

    p = add(
        sub,
        "answer",
        cmd_answer,
        "answer an open question",
        [common, writer],
        "Answer a question; the answer is validated against its schema "
        "(see it with `proctor show ID`).",
    )
    p.add_argument("id", help="question id (int_…)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--json", metavar="JSON", help="the answer as JSON; @FILE or - for stdin")
    how.add_argument("--text", help='shortcut for {"text": TEXT}')
    how.add_argument("--choice", metavar="VALUE", help='shortcut for {"choice": VALUE}')
    how.add_argument("--confirm", action="store_true", help='shortcut for {"confirmed": true}')
    how.add_argument("--decline", action="store_true", help='shortcut for {"confirmed": false}')
    p.add_argument("--reason")
    hold_option(p)

    p = add(
        sub,
        "dismiss",
        cmd_dismiss,
        "close an open question without answering it",
        [common, writer],
        "Dismiss a question: the asking agent sees it dismissed, with your reason, "
        "and takes another way; nothing answers it afterwards.",
    )
    p.add_argument("id", help="question id (int_…)")
    p.add_argument("--reason", required=True, help="why (the agent is told; kept as evidence)")
    hold_option(p)

    p = add(
        sub,
        "resolve-effect",
        cmd_resolve_effect,
        "say what really happened to an ambiguous effect",
        [common, writer],
    )
    p.add_argument("key", help="effect key")
    p.add_argument("outcome", choices=["committed", "failed"])
    p.add_argument("--reason", required=True, help="how you know (kept as evidence)")
    p.add_argument("--external-id", help="the provider's id for it, if any")
    p.add_argument("--evidence", metavar="JSON", help="extra evidence as JSON (@FILE, -)")

    p = add(
        sub,
        "resolve-conflict",
        cmd_resolve_conflict,
        "resolve a memory conflict",
        [common, writer],
        aliases=["resolve-memory"],
    )  # its name until 0.2
    p.add_argument("id", help="memory conflict id (rec_…)")
    p.add_argument("choice", choices=[*RESOLUTIONS, *RESOLUTIONS.values()])
    p.add_argument("--content", help="the merged text (for merge)")
    p.add_argument("--content-file", metavar="FILE", help="read the merged text from FILE")
    p.add_argument("--reason", required=True, help="why this version (required, as on the desk)")

    p = add(
        sub, "snooze", cmd_snooze, "hide inbox items until later (or wake them)", [common, writer]
    )
    p.add_argument(
        "ids",
        nargs="+",
        metavar="ID",
        help="approval, question, memory conflict ids or effect keys",
    )
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--minutes", type=float, help="hide them for this many minutes")
    when.add_argument("--wake", action="store_true", help="bring them back now")

    p = add(
        sub,
        "undo",
        cmd_undo,
        "take back a decision (approval, answer, dismissal) within its hold",
        [common, writer],
        "Undo an approve, deny, answer or dismiss made with a hold (--hold, or the desk's "
        "undo preference) before the hold ends and before the agent uses it: the approval "
        "is pending again, the question open again; the undo is recorded as a decision of "
        "its own.",
    )
    p.add_argument("id", help="approval id (apr_…) or question id (int_…)")
    p.add_argument("--reason", help="why (kept as evidence)")

    p = add(
        sub,
        "retry",
        cmd_retry,
        "ask the agent of a failed run to try again",
        [common, writer],
        "Retry a failed run: its agent starts a new attempt of the same run when it next "
        "looks (the run goes from failed back to running); the request and its reason are "
        "kept as evidence.",
    )
    p.add_argument("run_id")
    p.add_argument("--reason", required=True, help="why (the agent is told; kept as evidence)")

    p = add(sub, "cancel", cmd_cancel, "ask an agent to stop a run", [common, writer])
    p.add_argument("run_id")
    p.add_argument("--reason", required=True)

    p = add(sub, "runs", cmd_runs, "list runs", [common])
    p.add_argument("--status", action="append", choices=statuses, help="repeatable")
    p.add_argument("--project")
    p.add_argument("--agent")
    p.add_argument("--text", help="search titles")
    p.add_argument("--open", action="store_true", help="only runs with open items")
    p.add_argument("--oldest-first", action="store_true")
    p.add_argument("--limit", type=positive, default=50)
    p.add_argument("--cursor")
    p.add_argument("--json", action="store_true")

    p = add(sub, "timeline", cmd_timeline, "list a run's events in order", [common])
    p.add_argument("run_id")
    p.add_argument(
        "--after", type=natural, default=0, metavar="SEQ", help="start after this sequence number"
    )
    p.add_argument("--limit", type=positive, default=200)
    p.add_argument("--type", action="append", help="only events of this type (repeatable)")
    p.add_argument("--full", action="store_true", help="print whole payloads")
    p.add_argument("--json", action="store_true")

    p = add(
        sub,
        "verify",
        cmd_verify,
        "check a journal's integrity and digest chains",
        [common],
        "Run SQLite's integrity check, check the evidence triggers, and "
        "recompute every run's event chain and the audit chain. Names the first problem.",
    )
    p.add_argument("journal_path", nargs="?", metavar="JOURNAL")
    p.add_argument("--quick", action="store_true", help="quick_check instead of integrity_check")
    p.add_argument("--run", metavar="RUN_ID", help="verify one run's chain only")
    p.add_argument(
        "--trust",
        metavar="FILE",
        help="a trusted-operators file: every operator decision must be signed by "
        "one of its keys (names the first unsigned or forged decision)",
    )
    p.add_argument("--json", action="store_true")

    p = add(sub, "export", cmd_export, "write a run's events as JSON lines", [common])
    p.add_argument("run_id")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


__all__ = ["register"]
