"""Headless operator commands: the desk's services from a shell.

inbox, show, approve, deny, answer, resolve-effect, resolve-conflict, cancel, runs,
timeline, verify, export. Each command is one short session on the journal; every
decision carries the version the operator saw and a fresh request id. This module builds
their parsers; the listing commands are in ops_listing, the decisions in ops_decisions.
"""

from __future__ import annotations

from typing import Any

from proctor.core import InboxKind, RunStatus

from . import ops_render as render
from .ops_base import RESOLUTIONS, add, common_parser, natural, positive, writer_parser
from .ops_decisions import (
    cmd_answer,
    cmd_cancel,
    cmd_decide,
    cmd_dismiss,
    cmd_resolve_conflict,
    cmd_resolve_effect,
    cmd_retry,
    cmd_snooze,
    cmd_undo,
    hold_option,
    inbox_kind,
)
from .ops_listing import cmd_export, cmd_inbox, cmd_runs, cmd_show, cmd_timeline, cmd_verify

__all__ = ["register", "render"]


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
