"""Approval policies from a shell (docs/policies.md): `proctor policies`, `proctor
add-policy` (with its preview of the requests it would have governed; `--yes` makes it),
`proctor revoke-policy`, and the groups of operators a policy names: `proctor groups`,
`proctor group add|remove GROUP OPERATOR`, and delegation: `proctor delegate`, `proctor
delegations`, `proctor delegation end ID --reason …`.

A request under a policy is approved with `proctor approve ID` by each required person in
turn; `proctor show ID` prints who approved and who it still waits for.
"""

from __future__ import annotations

import argparse
from typing import Any

from proctor.core import errors
from proctor.core.models import SafetyClass
from proctor.core.policies import models as policy_models
from proctor.core.policies.models import Policy, PolicyDraft, PolicyPreview, PolicyStage

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    UsageError,
    add,
    common_parser,
    dump,
    emit_json,
    open_journal,
    request_id,
    require_kind,
    writer_parser,
)

LISTED = 20  # requests a preview prints one by one


def policy_row(p: Policy) -> list[str]:
    return [
        p.id,
        "active" if p.active else "revoked",
        render.clean(p.name, 40, one_line=True),
        render.clean(p.action_pattern, 40, one_line=True),
        render.clean(p.resource_pattern, 40, one_line=True),
        p.safety_class.value if p.safety_class else "any",
        render.clean(p.predicate or "-", 60, one_line=True),
        render.clean(p.project + (f"/{p.space}" if p.space else ""), 60, one_line=True),
        render.clean(p.needs(), 80, one_line=True),
        render.clean(p.created_by, 40, one_line=True),
    ]


def cmd_policies(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        policies = j.policies.list(active_only=not args.all)
    finally:
        j.close()
    if args.json:
        emit_json([{**dump(p), "active": p.active, "needs": p.needs()} for p in policies])
        return EXIT_OK
    if not policies:
        print("no policies" + ("" if args.all else " (--all lists revoked ones too)"))
        return EXIT_OK
    render.table(
        [policy_row(p) for p in policies],
        ["ID", "STATE", "NAME", "TOOL", "RESOURCE", "SAFETY", "WHEN", "WHERE", "NEEDS", "MADE BY"],
    )
    return EXIT_OK


def stage_of(text: str) -> PolicyStage:
    """``ops:2`` or ``ops,sre:2`` (M of the named groups)."""
    try:
        return policy_models.stage_of(text)
    except errors.ValidationError as err:
        raise UsageError(str(err)) from err


def draft_from_args(args: argparse.Namespace) -> PolicyDraft:
    if args.space and "/" not in args.space:
        raise UsageError("--space takes PROJECT/SPACE")
    project, space = args.space.split("/", 1) if args.space else (args.project or "*", None)
    stages = [stage_of(t) for t in args.stage]
    if bool(args.escalate_after) != bool(args.escalate_to):
        raise UsageError("an escalation takes both --escalate-after and --escalate-to")
    if (args.at_deadline == "deny") != bool(args.deadline):
        raise UsageError("denying at a deadline takes both --at-deadline deny and --deadline")
    if args.at_deadline == "deny" and not args.escalate_to:
        raise UsageError("a deadline is an escalation's: give --escalate-after and --escalate-to")
    from .cmd_rules import seconds

    return PolicyDraft(
        escalate_after=seconds(args.escalate_after) if args.escalate_after else None,
        escalate_to=args.escalate_to,
        at_deadline=args.at_deadline,
        deadline=seconds(args.deadline) if args.deadline else None,
        name=args.name,
        action_pattern=args.tool,
        resource_pattern=args.resource,
        safety_class=SafetyClass(args.safety) if args.safety else None,
        predicate=args.when,
        project=project,
        space=space,
        mode="sequence" if len(stages) > 1 else "quorum",
        stages=stages,
    )


def print_draft(d: PolicyDraft) -> None:
    where = "every project" if d.project == "*" else f"project {d.project}"
    if d.space:
        where = f"space {d.project}/{d.space}"
    print(
        f"policy {render.clean(d.name, 200, one_line=True)}: "
        f"{render.clean(d.action_pattern, 200)} on {render.clean(d.resource_pattern, 200)}"
        + (f", safety {d.safety_class.value}" if d.safety_class else "")
        + (f" when {render.clean(d.predicate, 400)}" if d.predicate else "")
        + f", in {render.clean(where, 200)}"
    )
    needs = ", then ".join(f"{st.need} of {' or '.join(st.groups)}" for st in d.stages)
    if d.escalate_to:
        needs += f"; undecided after {d.escalate_after:g} s, also {d.escalate_to}"
    if d.at_deadline == "deny" and d.deadline:
        needs += f"; denied if still undecided {d.deadline:g} s after it was filed"
    elif d.escalate_to:
        needs += "; then it waits until its own expiry"
    print(f"needs: {render.clean(needs, 400, one_line=True)} (distinct people, never the agent)")


def print_preview(p: PolicyPreview) -> None:
    more = f" (of the newest {p.scanned:,} read)" if p.truncated else ""
    print(f"it would have governed {p.past_total} past request(s){more}")
    for h in p.past[:LISTED]:
        print(
            f"         {h.id}  {h.status.value:<9} {render.clean(h.agent, 60, one_line=True)}  "
            f"{render.clean(h.action_name, 80, one_line=True)}"
        )
    print(
        f"{len(p.pending)} pending request(s) match it; they keep the way they were filed "
        "(a policy governs the requests filed after it is made)"
    )
    for h in p.pending[:LISTED]:
        print(
            f"         {h.id}  {render.clean(h.agent, 60, one_line=True)}  "
            f"{render.clean(h.action_name, 80, one_line=True)}"
        )


def cmd_add_policy(args: argparse.Namespace) -> int:
    j = open_journal(args, write=args.yes)
    try:
        draft = draft_from_args(args)
        preview = j.policies.preview(draft)
        if args.json and not args.yes:
            emit_json({"draft": dump(draft), "preview": dump(preview), "made": None})
            return EXIT_OK
        if not args.json:
            print_draft(draft)
            print_preview(preview)
            known = j.policies.groups()
            for st in draft.stages:
                for group in st.groups:
                    if len(known.get(group, [])) < st.need:
                        print(
                            f"note: {render.ident(group)} has {len(known.get(group, []))} "
                            f"member(s); `proctor group add {group} NAME` adds one"
                        )
        if not args.yes:
            print("nothing was made: pass --yes to make this policy")
            return EXIT_OK
        made = j.policies.add(draft, reason=args.reason, request_id=request_id(args), source="cli")
    finally:
        j.close()
    if args.json:
        emit_json({"draft": dump(draft), "preview": dump(preview), "made": dump(made)})
    else:
        print(f"made {made.id}: matching requests filed from now on need {made.needs()}")
    return EXIT_OK


def cmd_revoke_policy(args: argparse.Namespace) -> int:
    require_kind(args.id, "policy", "revoke-policy")
    if not args.reason.strip():
        raise UsageError("say why with --reason (it is kept in the audit log)")
    j = open_journal(args, write=True)
    try:
        done = j.policies.revoke(args.id, args.reason, request_id=request_id(args), source="cli")
    finally:
        j.close()
    print(
        f"revoked {done.id} ({render.clean(done.name, 80, one_line=True)}); requests already "
        "under it keep it; it stays listed with --all"
    )
    return EXIT_OK


def cmd_groups(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        groups = j.policies.groups()
    finally:
        j.close()
    if args.json:
        emit_json(groups)
        return EXIT_OK
    if not groups:
        print("no groups: `proctor group add GROUP OPERATOR` makes one")
        return EXIT_OK
    for name, members in groups.items():
        print(f"{render.ident(name)}: {', '.join(render.ident(m) for m in members)}")
    return EXIT_OK


def cmd_group(args: argparse.Namespace) -> int:
    j = open_journal(args, write=True)
    try:
        change = j.policies.add_member if args.change == "add" else j.policies.remove_member
        try:
            change(
                args.group,
                args.member,
                reason=args.reason,
                request_id=request_id(args),
                source="cli",
            )
        except errors.InvalidTransition as err:
            raise errors.InvalidTransition(
                err.message, hint="See them with `proctor groups`."
            ) from None
        members = j.policies.groups().get(args.group, [])
    finally:
        j.close()
    verb = "added" if args.change == "add" else "removed"
    where = "to" if args.change == "add" else "from"
    print(
        f"{verb} {render.ident(args.member)} {where} {render.ident(args.group)} "
        f"(now: {', '.join(render.ident(m) for m in members) or 'no one'})"
    )
    return EXIT_OK


def until_of(args: argparse.Namespace, now: float) -> float:
    """``--for 3d`` (from now) or ``--until 2026-12-08T09:00`` (local time)."""
    import datetime as dt

    from .cmd_rules import seconds

    if args.for_:
        return now + seconds(args.for_)
    try:
        return dt.datetime.fromisoformat(args.until).timestamp()
    except ValueError:
        raise UsageError(
            f"{args.until!r} is not a date and time: use e.g. 2026-12-08T09:00"
        ) from None


def cmd_delegate(args: argparse.Namespace) -> int:
    j = open_journal(args, write=True)
    try:
        made = j.policies.delegate(
            args.delegate,
            until=until_of(args, j.now()),
            reason=args.reason,
            request_id=request_id(args),
            source="cli",
        )
    finally:
        j.close()
    print(
        f"{render.ident(made.delegate)} takes {render.ident(made.operator)}'s part in every "
        f"policy until {render.when(made.ends_at)} ({made.id})"
    )
    return EXIT_OK


def cmd_delegation(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise UsageError("say why with --reason (it is kept in the audit log)")
    j = open_journal(args, write=True)
    try:
        done = j.policies.end_delegation(
            args.id, reason=args.reason, request_id=request_id(args), source="cli"
        )
    finally:
        j.close()
    print(
        f"ended {done.id}: {render.ident(done.delegate)} no longer takes "
        f"{render.ident(done.operator)}'s part (a step from now on is their own)"
    )
    return EXIT_OK


def cmd_delegations(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        found = j.policies.delegations(current_only=not args.all)
    finally:
        j.close()
    if args.json:
        emit_json([dump(d) for d in found])
        return EXIT_OK
    if not found:
        print("no delegations" + ("" if args.all else " running or to come (--all: past ones too)"))
        return EXIT_OK
    render.table(
        [
            [
                d.id,
                render.clean(d.operator, 40, one_line=True),
                render.clean(d.delegate, 40, one_line=True),
                render.when(d.starts_at),
                render.when(d.ends_at),
                render.when(d.ended_at) if d.ended_at is not None else "-",
                render.clean(d.reason or "-", 80, one_line=True),
            ]
            for d in found
        ],
        ["ID", "FROM", "TO", "STARTS", "ENDS", "ENDED", "REASON"],
    )
    return EXIT_OK


def register(sub: Any) -> None:
    common, writer = common_parser(), writer_parser()

    p = add(
        sub,
        "policies",
        cmd_policies,
        "list approval policies: who must approve what",
        [common],
        "Every live policy: what it matches (tool, resource, safety class, condition, "
        "project/space) and what a matching request needs.",
    )
    p.add_argument("--all", action="store_true", help="revoked policies too")
    p.add_argument("--json", action="store_true")

    p = add(
        sub,
        "add-policy",
        cmd_add_policy,
        "show a policy and the requests it would have governed; make it with --yes",
        [common, writer],
        "A policy says what a matching request needs before it counts as approved: "
        "--stage ops:2 (two people of ops), --stage ops,sre:2 (two of ops or sre), or "
        "several stages in order: --stage ops:1 --stage finance:1. Makes nothing "
        "without --yes. Conditions (--when) use the language in docs/rules.md.",
    )
    p.add_argument("name", help="a name people recognise (e.g. 'payments: two people')")
    p.add_argument("tool", help="tool name or glob pattern (e.g. payments.*)")
    p.add_argument(
        "--stage",
        action="append",
        required=True,
        metavar="GROUPS:N",
        help="N approvals from the groups (repeat for a sequence)",
    )
    p.add_argument("--resource", default="*", help="resource glob (default: any)")
    p.add_argument("--safety", choices=[c.value for c in SafetyClass], help="only this class")
    p.add_argument("--when", metavar="CONDITION", help="a condition on the action's JSON")
    p.add_argument("--project", metavar="PROJECT", help="only this project (default: every)")
    p.add_argument("--space", metavar="PROJECT/SPACE", help="only this space")
    p.add_argument(
        "--escalate-after",
        metavar="DURATION",
        help="undecided this long (30m, 4h, 1d …), the request is routed to --escalate-to too",
    )
    p.add_argument("--escalate-to", metavar="GROUP", help="who may also approve it then")
    p.add_argument(
        "--at-deadline",
        choices=["deny", "wait"],
        default="wait",
        help="at the escalation's deadline: deny the request, or wait (default) until its "
        "own expiry",
    )
    p.add_argument(
        "--deadline",
        metavar="DURATION",
        help="with --at-deadline deny: how long after it was filed (8h, 1d …) it is denied",
    )
    p.add_argument("--reason", help="why (kept in the audit log)")
    p.add_argument("--yes", action="store_true", help="make the policy as shown")
    p.add_argument("--json", action="store_true")

    p = add(
        sub,
        "revoke-policy",
        cmd_revoke_policy,
        "stop a policy governing new requests",
        [common, writer],
    )
    p.add_argument("id", help="policy id (pol_…)")
    p.add_argument("--reason", required=True, help="why (kept in the audit log)")

    p = add(sub, "groups", cmd_groups, "list the groups of operators", [common])
    p.add_argument("--json", action="store_true")

    p = add(
        sub,
        "group",
        cmd_group,
        "add an operator to a group, or remove them",
        [common, writer],
        "Each change is a decision (signed when you have a key) with its audit row.",
    )
    p.add_argument("change", choices=["add", "remove"])
    p.add_argument("group", help="the group (lower-case letters, digits, . _ -)")
    p.add_argument("member", help="the operator's name")
    p.add_argument("--reason", help="why (kept in the audit log)")

    p = add(
        sub,
        "delegate",
        cmd_delegate,
        "hand your part in every policy to another operator for a while",
        [common, writer],
        "While you are away, DELEGATE may take the step a policy asks of you (counted as "
        "yours: one step per person). A signed, audited decision; it ends at its end.",
    )
    p.add_argument("delegate", help="the operator who takes your part")
    until = p.add_mutually_exclusive_group(required=True)
    until.add_argument("--for", dest="for_", metavar="DURATION", help="30m, 8h, 3d …")
    until.add_argument(
        "--until", metavar="WHEN", help="a local date and time, e.g. 2026-12-08T09:00"
    )
    p.add_argument("--reason", help="why (kept in the audit log)")

    p = add(
        sub,
        "delegation",
        cmd_delegation,
        "end your delegation early",
        [common, writer],
        "Only the delegator ends a delegation: a signed, audited decision; a step the delegate "
        "takes after it no longer counts as yours.",
    )
    p.add_argument("action", choices=["end"])
    p.add_argument("id", help="delegation id (dlg_…)")
    p.add_argument("--reason", required=True, help="why (kept in the audit log)")

    p = add(sub, "delegations", cmd_delegations, "list who takes whose part", [common])
    p.add_argument("--all", action="store_true", help="past delegations too")
    p.add_argument("--json", action="store_true")


__all__ = ["register"]
