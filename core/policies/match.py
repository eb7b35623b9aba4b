"""Which policy governs a request, matched the way rules match (tool and resource glob
patterns, a condition in the rule language, project and space) and by safety class.

When several live policies match one request, the narrowest governs: one of a space before
one of a project before one of every project; one with a condition or a safety class before
one without; fewer wildcards in the tool pattern, then in the resource pattern; then the
newer (then the id). A condition that no longer parses counts as holding (a policy only
ever asks for more)."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from sqlalchemy import bindparam, select

from proctor.core import errors
from proctor.core.kernel import predicates
from proctor.core.models import RuleHit
from proctor.core.storage import schema as s
from proctor.core.storage.sql import Prepared

from .models import Policy, PolicyDraft, PolicyPreview, PolicyStage

MAX_PATTERN = 400  # as a rule's
PREVIEW_SCAN = 5_000  # requests a preview reads (newest first), as a rule's preview
PREVIEW_LIST = 200  # of those, how many it lists one by one


def wildcards(pattern: str) -> int:
    return sum(pattern.count(c) for c in "*?[")


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


def checked(draft: PolicyDraft) -> PolicyDraft:
    """``draft`` with its condition normalized; refuses what cannot be a policy."""
    from .groups import check_group

    for field, pattern in (
        ("action_pattern", draft.action_pattern),
        ("resource_pattern", draft.resource_pattern),
    ):
        if not pattern.strip():
            raise errors.ValidationError("a policy needs a pattern (use * for any)", field=field)
        if len(pattern) > MAX_PATTERN:
            raise errors.ValidationError("the pattern is too long", field=field)
    if draft.mode == "quorum" and len(draft.stages) != 1:
        raise errors.ValidationError(
            "a quorum has one stage (M of its groups); use a sequence for more", field="stages"
        )
    if (draft.escalate_after is None) != (draft.escalate_to is None):
        raise errors.ValidationError(
            "an escalation names both how long to wait and the group to route to",
            field="escalate_to",
        )
    if draft.escalate_to is not None:
        check_group(draft.escalate_to)
    from .escalation import check_deadline

    check_deadline(draft)
    for stage in draft.stages:
        for group in stage.groups:
            check_group(group)
        if len(set(stage.groups)) != len(stage.groups):
            raise errors.ValidationError("a stage names each group once", field="stages")
    return draft.model_copy(update={"predicate": predicates.normalized(draft.predicate)})


def _live() -> Any:
    p, r = s.policies.c, s.policy_revocations.c
    return (
        select(s.policies)
        .outerjoin(s.policy_revocations, r.policy_id == p.id)
        .where(r.policy_id.is_(None))
    )


def _holds(text: str | None, subject: Any) -> bool:
    if text is None:
        return True
    try:
        return predicates.parse(text).matches(subject)
    except errors.ValidationError:
        return True


def _narrowness(row: Any) -> tuple:
    return (
        0 if row.space is not None else 1 if row.project != "*" else 2,
        0 if (row.predicate or row.safety_class) else 1,
        wildcards(row.action_pattern),
        wildcards(row.resource_pattern),
        -row.created_at,
        row.id,
    )


def governs(row: Any, name: str, resource: str, safety: str, subject: Any) -> bool:
    return (
        fnmatch.fnmatchcase(name, row.action_pattern)
        and fnmatch.fnmatchcase(resource, row.resource_pattern)
        and (row.safety_class is None or row.safety_class == safety)
        and _holds(row.predicate, subject)
    )


def _in_scope() -> Any:
    p = s.policies.c
    return _live().where(
        (p.project == "*") | (p.project == bindparam("project")),
        p.space.is_(None) | (p.space == bindparam("space")),
    )


# The live policies that may govern a request in a run (then matched in Python).
LIVE_POLICIES = Prepared(_in_scope())


def pick_in(conn: Any, *, name: str, resource: str, safety: str, action: Any, run: Any) -> Any:
    """The live policy row that governs a request of ``run``, or None."""
    rows = LIVE_POLICIES.all(conn, project=run.project, space=run.space)
    if not rows:
        return None
    subject = predicates.Subject(action)
    hits = [row for row in rows if governs(row, name, resource, safety, subject)]
    return min(hits, key=_narrowness) if hits else None


def stages_in(conn: Any, policy_id: str) -> list[PolicyStage]:
    st = s.policy_stages.c
    rows = conn.execute(
        select(st.stage, st.group_name, st.need)
        .where(st.policy_id == policy_id)
        .order_by(st.stage, st.group_name)
    ).all()
    out: dict[int, PolicyStage] = {}
    for row in rows:
        kept = out.get(row.stage)
        groups = [*(kept.groups if kept else []), row.group_name]
        out[row.stage] = PolicyStage(groups=groups, need=row.need)
    return [out[k] for k in sorted(out)]


def policy_in(conn: Any, policy_id: str) -> Policy:
    row = conn.execute(select(s.policies).where(s.policies.c.id == policy_id)).first()
    if row is None:
        raise errors.NotFound(f"policy {policy_id} does not exist")
    return _model(conn, row)


def _model(conn: Any, row: Any) -> Policy:
    r = s.policy_revocations.c
    gone = conn.execute(select(s.policy_revocations).where(r.policy_id == row.id)).first()
    return Policy(
        id=row.id,
        name=row.name,
        action_pattern=row.action_pattern,
        resource_pattern=row.resource_pattern,
        safety_class=row.safety_class,
        predicate=row.predicate,
        project=row.project,
        space=row.space,
        mode=row.mode,
        stages=stages_in(conn, row.id),
        escalate_after=row.escalate_after,
        escalate_to=row.escalate_to,
        at_deadline=row.at_deadline or "wait",
        deadline=row.deadline,
        created_by=row.created_by,
        created_at=row.created_at,
        revoked_at=gone.revoked_at if gone else None,
        revoked_by=gone.revoked_by if gone else None,
        revoke_reason=gone.reason if gone else None,
    )


def policies_in(conn: Any, *, active_only: bool) -> list[Policy]:
    p = s.policies.c
    stmt = (_live() if active_only else select(s.policies)).order_by(
        p.created_at.desc(), p.id.desc()
    )
    return [_model(conn, row) for row in conn.execute(stmt).all()]


def preview_in(conn: Any, draft: PolicyDraft, *, scan: int = PREVIEW_SCAN) -> PolicyPreview:
    """The requests ``draft`` would have governed (newest first, up to ``scan`` back) and the
    pending ones it matches."""
    from proctor.core.decisions.writer import action_resource

    a, r = s.approvals.c, s.runs.c
    base = select(
        a.id,
        a.run_id,
        a.agent,
        a.action_name,
        a.action,
        a.safety_class,
        a.status,
        a.version,
        a.created_at,
        a.decided_by,
    ).join(s.runs, r.id == a.run_id)
    if draft.project != "*":
        base = base.where(r.project == draft.project)
    if draft.space is not None:
        base = base.where(r.space == draft.space)
    if wildcards(draft.action_pattern) == 0:
        base = base.where(a.action_name == draft.action_pattern)
    rows = conn.execute(base.order_by(a.created_at.desc(), a.id.desc()).limit(scan + 1)).all()
    truncated = len(rows) > scan
    safety = draft.safety_class.value if draft.safety_class else None
    hits = []
    for row in rows[:scan]:
        action = json.loads(row.action)
        subject = predicates.Subject(action)
        probe = _Probe(draft, safety)
        if governs(probe, row.action_name, action_resource(action), row.safety_class, subject):
            hits.append(row)
    pending = [h for h in hits if h.status == "pending"]
    past = [h for h in hits if h.status != "pending"]
    return PolicyPreview(
        past=[_hit(h) for h in past[:PREVIEW_LIST]],
        past_total=len(past),
        pending=[_hit(h) for h in pending],
        scanned=min(len(rows), scan),
        truncated=truncated,
    )


class _Probe:
    def __init__(self, draft: PolicyDraft, safety: str | None) -> None:
        self.action_pattern = draft.action_pattern
        self.resource_pattern = draft.resource_pattern
        self.safety_class = safety
        self.predicate = draft.predicate
