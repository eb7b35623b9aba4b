"""Headless listing commands: inbox, show, runs, timeline, verify, export.

Each is one short read-only session on the journal (registered by cmd_ops)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from proctor.core import InboxFilter, InboxKind, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.kernel import resource
from proctor.core.kernel.safe_text import json_escaped

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    EXIT_REFUSED,
    dump,
    emit_json,
    kind_of,
    open_journal,
    output_file,
)


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
        return EXIT_OK
    finally:
        j.close()


def gather(j: Journal, ident: str) -> tuple[str, dict]:
    """Everything `show` prints about one id, by its prefix (decisions with their
    signature states)."""
    kind, data = _gather(j, ident)
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
