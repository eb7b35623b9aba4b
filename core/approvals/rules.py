"""Approval rules: which rule decides a request, drafting a rule from a decision, its
impact preview, making it (and applying it to pending requests) in one transaction, and
how many requests each rule decided.

Order when several live rules match one request (documented in docs/rules.md):

1. the effect: deny, then prompt, then allow (a matching deny always wins);
2. within one effect, the narrower rule: run scope before space before project before
   every project; a rule with a condition before one without; fewer wildcards in the tool
   pattern, then in the resource pattern; then the longer literal text;
3. then the newer rule (then the id), so the choice is deterministic.

The rule that decides is recorded on the approval (``rule_id``, ``decided_by
rule:<id>``), on its decision row and in its audit row.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from typing import Any

from sqlalchemy import func, select

from proctor.core import errors
from proctor.core.kernel import predicates
from proctor.core.kernel.predicates import condition_holds
from proctor.core.models import (
    ApprovalRule,
    ApprovalScope,
    ApprovalStatus,
    RuleDraft,
    RuleEffect,
    RuleHit,
    RulePreview,
    RuleUsage,
)
from proctor.core.storage import schema as s
from proctor.core.storage.rows import to_model

EFFECT_ORDER = {"deny": 0, "prompt": 1, "allow": 2}
DEFAULT_RULE_TTL = 24 * 3600.0  # a rule made from a decision lasts a day unless edited
MAX_PATTERN = 400
PREVIEW_SCAN = 5_000  # past requests a preview reads (newest first)
PREVIEW_LIST = 200  # of those, how many it lists one by one
RULE_SCOPES = ("run", "space", "project")


def glob_escape(text: str) -> str:
    """A glob pattern that matches exactly ``text``."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def wildcards(pattern: str) -> int:
    return sum(pattern.count(c) for c in "*?[")


def rule_matches(row: Any, name: str, resource: str, action: Any) -> bool:
    return (
        fnmatch.fnmatchcase(name, row.action_pattern)
        and fnmatch.fnmatchcase(resource, row.resource_pattern)
        and condition_holds(row, action)
    )


def breadth(row: Any) -> tuple:
    if row.scope == ApprovalScope.RUN:
        scope_rank = 0
    elif row.space is not None:
        scope_rank = 1
    else:
        scope_rank = 2 if row.project != "*" else 3
    literal = (
        len(row.action_pattern)
        + len(row.resource_pattern)
        - wildcards(row.action_pattern)
        - wildcards(row.resource_pattern)
    )
    return (
        scope_rank,
        0 if getattr(row, "predicate", None) else 1,
        wildcards(row.action_pattern),
        wildcards(row.resource_pattern),
        -literal,
    )


def rule_order(row: Any) -> tuple:
    return (EFFECT_ORDER[row.effect], *breadth(row), -row.created_at, row.id)


def pick(rows: list[Any], name: str, resource: str, action: Any) -> Any:
    """The rule that decides, from the live rules in scope (see the module's order)."""
    subject = predicates.Subject(action)  # the lens reads the action once for all the rules
    hits = [row for row in rows if rule_matches(row, name, resource, subject)]
    hits.sort(key=rule_order)
    return hits[0] if hits else None


# ---------------------------------------------------------------- drafts


def draft_from(approval: Any, scope: str, now: float) -> RuleDraft:
    """The rule a decision with ``scope`` would make, before the operator edits it: this
    tool, exactly this resource (or any, when the action names none), the run's run /
    space / project, expiring after ``DEFAULT_RULE_TTL``."""
    if scope not in RULE_SCOPES:
        raise errors.ValidationError(
            f"a rule's scope is one of {', '.join(RULE_SCOPES)}", field="scope"
        )
    from proctor.core.decisions.writer import action_resource

    resource = action_resource(approval.action)
    return RuleDraft(
        effect=RuleEffect.ALLOW,
        action_pattern=glob_escape(approval.action_name),
        resource_pattern=glob_escape(resource) if resource else "*",
        scope=scope,
        run_id=approval.run_id if scope == "run" else None,
        project=approval.project,
        space=approval.space if scope == "space" else None,
        expires_at=now + DEFAULT_RULE_TTL,
    )


def checked(draft: RuleDraft, now: float) -> RuleDraft:
    """``draft`` with its condition normalized; refuses what cannot be a rule."""
    for field, pattern in (
        ("action_pattern", draft.action_pattern),
        ("resource_pattern", draft.resource_pattern),
    ):
        if not pattern.strip():
            raise errors.ValidationError("a rule needs a pattern (use * for any)", field=field)
        if len(pattern) > MAX_PATTERN:
            raise errors.ValidationError("the pattern is too long", field=field)
    if draft.scope not in RULE_SCOPES:
        raise errors.ValidationError(
            f"a rule's scope is one of {', '.join(RULE_SCOPES)}", field="scope"
        )
    if draft.scope == "run" and not draft.run_id:
        raise errors.ValidationError("a run-scoped rule needs a run", field="run_id")
    if draft.scope == "space" and draft.space is None:
        raise errors.ValidationError("a space-scoped rule needs a space", field="space")
    if draft.expires_at is not None and draft.expires_at <= now:
        raise errors.ValidationError("the rule would expire before it is made", field="expires_at")
    return draft.model_copy(
        update={
            "predicate": predicates.normalized(draft.predicate),
            "space": draft.space if draft.scope == "space" else None,
            "run_id": draft.run_id if draft.scope == "run" else None,
        }
    )


def stored_scope(draft: RuleDraft) -> str:
    """run / space in the table (a project rule is a space rule with no space)."""
    return "run" if draft.scope == "run" else "space"


def check_fits(draft: RuleDraft, run: Any) -> None:
    """A rule made from a decision covers the decided request's own run / space / project."""
    fits = {
        "run": draft.run_id == run.id,
        "space": draft.project == run.project and draft.space == run.space,
        "project": draft.project == run.project,
    }[draft.scope]
    if not fits:
        raise errors.ValidationError(
            f"a rule made from this decision must cover its {draft.scope} "
            f"(run {run.id}, project {run.project}, space {run.space})",
            field="scope",
        )


# ---------------------------------------------------------------- preview


def _in_scope(draft: RuleDraft) -> list[Any]:
    a, r = s.approvals.c, s.runs.c
    if draft.scope == "run":
        return [a.run_id == draft.run_id]
    where = [] if draft.project == "*" else [r.project == draft.project]
    if draft.scope == "space":
        where.append(r.space == draft.space)
    return where


def _hit(row: Any) -> RuleHit:
    return RuleHit(
        id=row.id,
        run_id=row.run_id,
        agent=row.agent,
        action_name=row.action_name,
        status=row.status,
        version=row.version,
        created_at=row.created_at,
        decided_by=row.decided_by,
    )


def preview(
    conn: Any,
    draft: RuleDraft,
    *,
    exclude: str | None = None,
    scan: int = PREVIEW_SCAN,
    listed: int = PREVIEW_LIST,
) -> RulePreview:
    """Which past requests ``draft`` would have decided and which pending ones it would
    decide now (newest first; the past is read up to ``scan`` requests back)."""
    from proctor.core.decisions.writer import action_resource
    from proctor.core.kernel.canonical import loads

    a = s.approvals.c
    base = (
        select(
            a.id,
            a.run_id,
            a.agent,
            a.action_name,
            a.action,
            a.status,
            a.version,
            a.created_at,
            a.decided_by,
        )
        .join(s.runs, s.runs.c.id == a.run_id)
        .where(*_in_scope(draft))
    )
    if wildcards(draft.action_pattern) == 0:
        base = base.where(a.action_name == draft.action_pattern)
    if exclude:
        base = base.where(a.id != exclude)
    probe = RuleProbe(draft)

    def matching(rows: Any) -> list[Any]:
        out = []
        for row in rows:
            action = loads(row.action)
            if probe.matches(row.action_name, action_resource(action), action):
                out.append(row)
        return out

    pending = matching(
        conn.execute(base.where(a.status == "pending").order_by(a.created_at.desc(), a.id.desc()))
    )
    # decided: ix_approvals_action holds these rows (an approval cancelled before 7a734e1
    # set decided_at on a cancel has none, and is not counted: journals older than 2026-11-29)
    past_rows = conn.execute(
        base.where(a.status != "pending", a.decided_at.is_not(None))
        .order_by(a.created_at.desc(), a.id.desc())
        .limit(scan + 1)
    ).all()
    truncated = len(past_rows) > scan
    past = matching(past_rows[:scan])
    counts = Counter((row.agent, row.action_name) for row in past)
    return RulePreview(
        past=[_hit(r) for r in past[:listed]],
        past_total=len(past),
        by_agent_tool=[(agent, tool, n) for (agent, tool), n in counts.most_common()],
        pending=[_hit(r) for r in pending],
        scanned=min(len(past_rows), scan),
        truncated=truncated,
    )


class RuleProbe:
    """A draft, ready to test actions against (its condition parsed once)."""

    def __init__(self, draft: RuleDraft) -> None:
        self.draft = draft
        self.condition = predicates.parse(draft.predicate) if draft.predicate else None

    def matches(self, name: str, resource: str, action: Any) -> bool:
        return (
            fnmatch.fnmatchcase(name, self.draft.action_pattern)
            and fnmatch.fnmatchcase(resource, self.draft.resource_pattern)
            and (self.condition is None or self.condition.matches(action))
        )


# ---------------------------------------------------------------- usage


def usage(conn: Any, *, active_only: bool, now: float) -> list[RuleUsage]:
    r, a = s.approval_rules.c, s.approvals.c
    stmt = select(s.approval_rules).order_by(r.created_at.desc(), r.id.desc())
    if active_only:
        stmt = stmt.where(r.revoked_at.is_(None))
    rules = [to_model(ApprovalRule, row) for row in conn.execute(stmt)]
    counts = dict(
        conn.execute(
            select(a.decided_by, func.count())
            .where(a.decided_by.like("rule:%"))
            .group_by(a.decided_by)
        ).all()
    )
    return [
        RuleUsage(rule=rule, decided=counts.get(f"rule:{rule.id}", 0), state=state_of(rule, now))
        for rule in rules
    ]


def state_of(rule: ApprovalRule, now: float) -> str:
    if rule.revoked_at is not None:
        return "revoked"
    return "expired" if rule.expired(now) else "active"


def decided_by_rule_select(rule_id: str) -> Any:
    from proctor.core.storage.rows import approval_select

    a = s.approvals.c
    return (
        approval_select()
        .where(a.decided_by == f"rule:{rule_id}")
        .order_by(a.decided_at.desc(), a.id.desc())
    )


def status_for(effect: RuleEffect) -> str:
    return (
        ApprovalStatus.APPROVED.value if effect == RuleEffect.ALLOW else ApprovalStatus.DENIED.value
    )


__all__ = [
    "DEFAULT_RULE_TTL",
    "RuleProbe",
    "check_fits",
    "checked",
    "draft_from",
    "glob_escape",
    "pick",
    "preview",
    "rule_order",
    "usage",
]
