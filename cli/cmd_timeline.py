"""Run exports beyond `proctor export` (JSONL events): a run as one JSON bundle, the run
list and the audit log as CSV, and `proctor import`, which writes an exported run into
another journal with the same ids, sequences, times and digests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, Any

from proctor.core import Actor, Journal, RunStatus
from proctor.core.audit.timeline import RunQuery
from proctor.core.ops.transfer import (
    import_run,
    read_export,
    write_audit_csv,
    write_run_json,
    write_run_jsonl,
    write_runs_csv,
)

from .ops_base import (
    EXIT_OK,
    EXIT_REFUSED,
    UsageError,
    add,
    common_parser,
    dump,
    emit_json,
    journal_path,
    open_journal,
    operator_name,
    output_file,
)
from .ops_render import ident


def said(args: argparse.Namespace, text: str) -> None:
    if args.output:
        print(text, file=sys.stderr)


def cmd_export_run(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        run = j.runs.get(args.run_id)
        writer = write_run_json if args.format == "json" else write_run_jsonl
        with output_file(args.output) as out:
            count = writer(j, run.id, out)
        said(args, f"wrote {ident(run.id)} ({count} events, {args.format}) to {ident(args.output)}")
        return EXIT_OK
    finally:
        j.close()


def cmd_export_runs(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        q = RunQuery(
            status=tuple(args.status or ()),
            agent=args.agent,
            project=args.project,
            text=args.text,
            has_open_items=args.open,
            sort=args.sort,
            descending=not args.ascending,
        )
        with output_file(args.output) as out:
            count = write_runs_csv(j, q, out)
        said(args, f"wrote {count} runs to {ident(args.output)}")
        return EXIT_OK
    finally:
        j.close()


def cmd_export_audit(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        with output_file(args.output) as out:
            count = write_audit_csv(
                j,
                out,
                actor=args.actor,
                entity_kind=args.entity,
                run_id=args.run,
                action_prefix=args.action,
                text=args.text,
            )
        said(args, f"wrote {count} audit entries to {ident(args.output)}")
        return EXIT_OK
    finally:
        j.close()


def cmd_import(args: argparse.Namespace) -> int:
    try:
        bundle = read_export(args.file)
    except OSError as err:
        raise UsageError(f"cannot read {ident(args.file)}: {err.strerror or err}") from err
    where = journal_path(args)
    path = Path(where).expanduser()
    if "://" in where and not where.startswith(
        "sqlite:///"
    ):  # a server journal: it exists or the server says why not
        j = open_journal(args, write=True)
    elif not path.exists():
        print(f"creating a new journal at {ident(path)}", file=sys.stderr)
        j = Journal.open(path, actor=Actor.operator(operator_name(args)), busy_timeout=args.timeout)
    else:
        j = open_journal(args, write=True)
    try:
        report = import_run(j, bundle, source=f"import of {Path(args.file).name}")
    finally:
        j.close()
    if args.json:
        emit_json(dump(report))
    else:
        show_import(report, sys.stdout)
    return EXIT_OK if report.verify is None or report.verify.ok else EXIT_REFUSED


def show_import(report: Any, out: IO[str]) -> None:
    rows = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in report.rows.items() if n)
    out.write(
        f"imported run {ident(report.run_id)}: {report.events} events"
        + (f", {rows}" if rows else "")
        + "\n"
    )
    for note in report.notes:
        out.write(f"  note: {ident(note)}\n")
    if report.verify is not None:
        verdict = (
            "verifies"
            if report.verify.ok
            else f"does NOT verify: {ident(report.verify.problems[0].where)}"
        )
        out.write(f"  the event chain {verdict}\n")


def register(sub: Any) -> None:
    common = common_parser()
    statuses = [s.value for s in RunStatus]

    p = add(
        sub,
        "export-run",
        cmd_export_run,
        "write a whole run (JSON) or its events (JSONL)",
        [common],
        "Write a run as one JSON document (the run, attempts, events, tool "
        "calls, approvals, questions, decisions, effects, receipts, memory changes and "
        "audit entries; `proctor import` reads it back), or its events as JSON lines.",
    )
    p.add_argument("run_id")
    p.add_argument("--format", choices=["json", "jsonl"], default="json")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    p = add(sub, "export-runs", cmd_export_runs, "write the run list as CSV", [common])
    p.add_argument("--status", action="append", choices=statuses, help="repeatable")
    p.add_argument("--agent")
    p.add_argument("--project")
    p.add_argument("--text", help="title, id, agent or project contains")
    p.add_argument("--open", action="store_true", help="only runs with open items")
    p.add_argument(
        "--sort",
        default="started",
        choices=["started", "updated", "status", "agent", "project", "title", "events"],
    )
    p.add_argument("--ascending", action="store_true", help="oldest / smallest first")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    p = add(sub, "export-audit", cmd_export_audit, "write the audit log as CSV", [common])
    p.add_argument("--actor", help="e.g. operator:alice")
    p.add_argument("--entity", help="entity kind: approval, interaction, effect, run, …")
    p.add_argument("--run", metavar="RUN_ID")
    p.add_argument("--action", metavar="PREFIX", help="action starts with, e.g. approval.")
    p.add_argument("--text", help="search actions, ids, reasons and changes")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    p = add(
        sub,
        "import",
        cmd_import,
        "import an exported run into a journal",
        [common],
        "Import a run exported with `proctor export-run` (JSON) or `proctor "
        "export` (JSON lines) into the journal given by --journal (created if missing). "
        "Ids, sequences, times and digests are kept; the chain is checked before "
        "anything is written and verified after. A run id that already exists is "
        "refused. Audit entries and memory changes are not imported.",
    )
    p.add_argument("file", help="the exported run (.json or .jsonl)")
    p.add_argument(
        "--as",
        dest="operator",
        metavar="NAME",
        help="operator recorded on the run.imported audit entry",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")


__all__ = ["register"]
