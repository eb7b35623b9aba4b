"""Rules and edits from a shell: `proctor rules`, `proctor add-rule` (with its impact
preview), `proctor revoke-rule`, and `proctor approve-edited` (approve an action after
editing its arguments).

`add-rule` shows the rule and which requests it would decide and makes nothing unless
`--yes` is given; `--apply-pending` also decides the pending requests the preview
listed, in the same transaction (refused whole if any of them changed meanwhile).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from proctor.core import errors
from proctor.core.models import RuleDraft, RulePreview, RuleUsage

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    UsageError,
    add,
    common_parser,
    confirm_approval,
    dump,
    emit_json,
    open_journal,
    parse_json,
    request_id,
    require_kind,
    writer_parser,
)

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
LISTED = 20  # requests a preview prints one by one


def seconds(text: str) -> float:
    m = DURATION.match(text.strip())
    if m is None:
        raise UsageError(f"{text!r} is not a duration: use e.g. 30m, 8h, 7d")
    return float(m.group(1)) * UNITS[m.group(2)]


def rule_row(u: RuleUsage) -> list[str]:
    r = u.rule
    made = render.clean(r.created_by, 40, one_line=True) + (
        f" from {r.source_approval_id}" if r.source_approval_id else ""
    )
    return [
        r.id,
        u.state,
        r.effect.value,
        render.clean(r.action_pattern, 40, one_line=True),
        render.clean(r.resource_pattern, 40, one_line=True),
        render.clean(r.predicate or "-", 60, one_line=True),
        render.clean(r.scope_text, 60, one_line=True),
        render.when(r.expires_at) if r.expires_at else "never",
        str(u.decided),
        made,
    ]


# ---------------------------------------------------------------- rules


def cmd_rules(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        rules = j.approvals.rule_usage(active_only=args.active)
        if args.json:
            emit_json(
                [
                    {
                        **dump(u.rule),
                        "state": u.state,
                        "decided": u.decided,
                        "scope_label": u.rule.scope_label,
                    }
                    for u in rules
                ]
            )
            return EXIT_OK
        if not rules:
            print("no rules")
            return EXIT_OK
        render.table(
            [rule_row(u) for u in rules],
            [
                "ID",
                "STATE",
                "EFFECT",
                "TOOL",
                "RESOURCE",
                "WHEN",
                "SCOPE",
                "EXPIRES",
                "DECIDED",
                "MADE BY",
            ],
        )
        if not args.decided:
            print("\nSee what a rule decided: proctor rules --decided RULE_ID")
            return EXIT_OK
        print(f"\ndecided by {args.decided}:")
        for a in j.approvals.decided_by_rule(args.decided):
            print(
                f"  {a.id}  {a.status.value:<8}  {render.clean(a.agent, 40, one_line=True)}"
                f"  {render.clean(a.action_name, 60, one_line=True)}"
                f"  {render.when(a.decided_at)}"
            )
        return EXIT_OK
    finally:
        j.close()


def cmd_revoke_rule(args: argparse.Namespace) -> int:
    require_kind(args.id, "rule", "revoke-rule")
    if not args.reason.strip():
        raise UsageError("say why with --reason (it is kept in the audit log)")
    j = open_journal(args, write=True)
    try:
        current = j.approvals.rule(args.id)
        done = j.approvals.revoke_rule(
            args.id,
            expected_version=args.expect_version or current.version,
            reason=args.reason,
            request_id=request_id(args),
        )
    finally:
        j.close()
    print(
        f"revoked {done.id} ({done.effect.value} {render.clean(done.action_pattern, 80)}); "
        "it stays listed as history"
    )
    return EXIT_OK


def draft_from_args(args: argparse.Namespace, now: float) -> RuleDraft:
    chosen = [x for x in (args.run, args.space, args.project) if x]
    if len(chosen) != 1:
        raise UsageError(
            "choose the rule's scope: --run RUN_ID, --space PROJECT/SPACE or --project PROJECT"
        )
    if args.space and "/" not in args.space:
        raise UsageError("--space takes PROJECT/SPACE")
    expires = None if args.expires_in == "never" else now + seconds(args.expires_in)
    scope: dict[str, Any]
    if args.run:
        scope = {"scope": "run", "run_id": args.run}
    elif args.space:
        project, space = args.space.split("/", 1)
        scope = {"scope": "space", "project": project, "space": space}
    else:
        scope = {"scope": "project", "project": args.project}
    return RuleDraft(
        effect=args.effect,
        action_pattern=args.tool,
        resource_pattern=args.resource,
        predicate=args.when,
        expires_at=expires,
        **scope,
    )


def print_draft(d: RuleDraft) -> None:
    where = {
        "run": f"run {d.run_id}",
        "space": f"space {d.project}/{d.space}",
        "project": f"project {d.project}",
    }[d.scope]
    print(
        f"rule: {d.effect} {render.clean(d.action_pattern, 200)} on "
        f"{render.clean(d.resource_pattern, 200)}"
        + (f" when {render.clean(d.predicate, 400)}" if d.predicate else "")
        + f", in {render.clean(where, 200)}, "
        + (f"until {render.when(d.expires_at)}" if d.expires_at else "for ever")
    )


def print_preview(p: RulePreview) -> None:
    more = f" (of the newest {p.scanned:,} read)" if p.truncated else ""
    print(f"it would have decided {p.past_total} past request(s){more}")
    for agent, tool, n in p.by_agent_tool:
        print(
            f"  {n:>5}  {render.clean(agent, 60, one_line=True)}  "
            f"{render.clean(tool, 80, one_line=True)}"
        )
    for h in p.past[:LISTED]:
        print(f"         {h.id}  {h.status.value}")
    print(f"it would decide {len(p.pending)} pending request(s) now")
    for h in p.pending[:LISTED]:
        print(
            f"         {h.id}  {render.clean(h.agent, 60, one_line=True)}  "
            f"{render.clean(h.action_name, 80, one_line=True)}"
        )


def cmd_add_rule(args: argparse.Namespace) -> int:
    j = open_journal(args, write=args.yes)
    try:
        draft = draft_from_args(args, j.now())
        preview = j.approvals.preview_rule(draft)
        if args.json and not args.yes:
            emit_json({"draft": dump(draft), "preview": dump(preview), "made": None})
            return EXIT_OK
        if not args.json:
            print_draft(draft)
            print_preview(preview)
        if not args.yes:
            print(
                "nothing was made: pass --yes to make this rule"
                + (
                    " (and --apply-pending to decide those pending requests)"
                    if preview.pending
                    else ""
                )
            )
            return EXIT_OK
        apply_to = [(h.id, h.version) for h in preview.pending] if args.apply_pending else []
        made = j.approvals.make_rule(draft, apply_to=apply_to, request_id=request_id(args))
    finally:
        j.close()
    if args.json:
        emit_json({"draft": dump(draft), "preview": dump(preview), "made": dump(made)})
    else:
        print(
            f"made {made.rule.id}"
            + (f"; applied to {len(made.applied)} pending request(s)" if made.applied else "")
        )
    return EXIT_OK


# ---------------------------------------------------------------- edit, then approve


def cmd_approve_edited(args: argparse.Namespace) -> int:
    require_kind(args.id, "approval", "approve-edited")
    j = open_journal(args, write=True)
    try:
        current = j.approvals.get(args.id)
        if args.action is not None:
            action = parse_json(args.action, "--action")
        else:
            edited_args = parse_json(args.args, "--args")
            action = {**current.action, "args": edited_args}
        try:
            j.approvals.check_edit(current, action)  # before asking
            # asked as approving asks, restating what will run: the edited action
            once = argparse.Namespace(scope="once", yes=args.yes, reason=args.reason)
            confirm_approval(once, current.model_copy(update={"action": action}), j.now())
            done = j.approvals.approve_edited(
                args.id,
                action,
                expected_version=args.expect_version or current.version,
                reason=args.reason,
                request_id=request_id(args),
                source="cli",
            )
        except errors.ValidationError as err:
            raise errors.ValidationError(
                err.message,
                field=err.field,
                hint=f"See the action and its schema with `proctor show {args.id}`.",
            ) from err
    finally:
        j.close()
    print(
        f"approved {done.id} as edited ({render.clean(done.action_name, 80)}); the agent "
        f"must run digest {done.approved_digest}"
    )
    return EXIT_OK


# ---------------------------------------------------------------- parsers


def register(sub: Any) -> None:
    common, writer = common_parser(), writer_parser()

    p = add(
        sub,
        "rules",
        cmd_rules,
        "list approval rules (revoked ones too, as history)",
        [common],
        "Every rule: its effect, what it matches (tool, resource, condition), "
        "its scope, when it expires, how many requests it decided and who made it from "
        "which decision.",
    )
    p.add_argument("--active", action="store_true", help="only rules not revoked")
    p.add_argument("--decided", metavar="RULE_ID", help="also list what this rule decided")
    p.add_argument("--json", action="store_true")

    p = add(sub, "revoke-rule", cmd_revoke_rule, "stop a rule deciding", [common, writer])
    p.add_argument("id", help="rule id (rule_…)")
    p.add_argument("--reason", required=True, help="why (kept in the audit log)")

    p = add(
        sub,
        "add-rule",
        cmd_add_rule,
        "show a rule and what it would decide; make it with --yes",
        [common, writer],
        "Shows the rule and its impact (past requests it would have decided, by agent "
        "and tool; pending requests it would decide now). Makes nothing without --yes. "
        "Conditions (--when) use the language in docs/rules.md, e.g. "
        "'args.amount <= 100'.",
    )
    p.add_argument("effect", choices=["allow", "prompt", "deny"])
    p.add_argument("tool", help="tool name or glob pattern (e.g. fs.write, payments.*)")
    p.add_argument("--resource", default="*", help="resource glob (default: any)")
    p.add_argument("--when", metavar="CONDITION", help="a condition on the action's JSON")
    p.add_argument("--run", metavar="RUN_ID")
    p.add_argument("--space", metavar="PROJECT/SPACE")
    p.add_argument("--project", metavar="PROJECT")
    p.add_argument(
        "--expires-in",
        default="24h",
        metavar="DURATION",
        help="30m, 8h, 7d … or 'never' (default 24h)",
    )
    p.add_argument("--yes", action="store_true", help="make the rule as shown")
    p.add_argument(
        "--apply-pending",
        action="store_true",
        help="with --yes: also decide the pending requests the preview lists",
    )
    p.add_argument("--json", action="store_true")

    p = add(
        sub,
        "approve-edited",
        cmd_approve_edited,
        "approve an action after editing its arguments",
        [common, writer],
        "Approve the action with other arguments; the edit gets its own digest, which "
        "the agent must then run; the requested action stays as evidence.",
    )
    p.add_argument("id", help="approval id (apr_…)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--args", metavar="JSON", help="the new arguments (@FILE, - for stdin)")
    what.add_argument("--action", metavar="JSON", help="the whole edited action (@FILE, -)")
    p.add_argument("--reason")
    p.add_argument(
        "--yes",
        action="store_true",
        help="approve without asking, even what the desk confirms (as for approve)",
    )


__all__ = ["register"]
