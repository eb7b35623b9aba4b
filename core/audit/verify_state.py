"""Verify's state checks: what the rows say was revoked, retried, undone or answered agrees with
the decisions that did it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, or_, select

from proctor.core import errors
from proctor.core.decisions.answers import disagrees
from proctor.core.kernel.canonical import digest_of
from proctor.core.models import VerifyProblem
from proctor.core.storage import schema as s

if TYPE_CHECKING:  # the facade is above this module: its type only
    pass


def _verify_revocations(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each ``rule.revoked`` audit row has its rule revoked, and, when the revoking operator
    signed in this journal by then, its signed revocation (a deleted one leaves the audit row
    behind)."""
    a, r, k = s.audit.c, s.approval_rules.c, s.operator_keys.c
    stmt = (
        select(a.sequence, a.entity_id, a.actor, a.created_at, r.revoked_at, r.id.label("rule"))
        .outerjoin(s.approval_rules, r.id == a.entity_id)
        .where(a.action == "rule.revoked", a.entity_kind == "rule")
        .order_by(a.sequence)
    )
    for row in conn.execute(stmt).all():
        where = f"rule {row.entity_id} (audit #{row.sequence})"
        if row.rule is None or row.revoked_at is None:
            problems.append(
                VerifyProblem(
                    what="rule revocation undone",
                    where=where,
                    detail=f"the audit log records its revocation by {row.actor}, the rule "
                    + ("is gone" if row.rule is None else "says it is active"),
                )
            )
            continue
        keyed = conn.execute(
            select(k.key_id).where(k.operator == row.actor, k.first_seen_at <= row.created_at)
        ).first()
        signed = conn.execute(
            select(s.signatures.c.record_id).where(
                s.signatures.c.record_id == f"{row.entity_id}/revoked"
            )
        ).first()
        if keyed is not None and signed is None:
            problems.append(
                VerifyProblem(
                    what="signed revocation missing",
                    where=where,
                    detail=f"{row.actor} signed in this journal by then, but the revocation's "
                    "signature is gone",
                )
            )


def _verify_retries(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each retry a run was asked (its ``retry_requested``) and each one it started (its
    ``run.retried`` events) has an operator's decision row asking it (``request_retry``):
    a retry asked by hand has none (0013u)."""
    from proctor.core.decisions.checks import retry_decision

    r, e = s.runs.c, s.events.c
    for run in conn.execute(
        select(r.id, r.retry_requested).where(r.retry_requested.is_not(None)).order_by(r.id)
    ).all():
        asked = {run.retry_requested}
        for (payload,) in conn.execute(
            select(e.payload).where(e.run_id == run.id, e.type == "run.retried")
        ):
            attempt = _loaded(payload).get("attempt")
            asked.add(attempt)
        for attempt in sorted(asked, key=str):
            if retry_decision(conn, run.id, attempt) is None:
                problems.append(
                    VerifyProblem(
                        what="retry without a decision",
                        where=f"run {run.id}",
                        detail=f"attempt {attempt} was asked as a retry, but no operator's "
                        "decision row asks for it (retry_requested written by hand)",
                    )
                )


def _verify_undos(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each pending approval with a decision has an undo decision row after its last one,
    and each undo came before the hold of the decision it undid ended (0013u): a decision
    cleared by hand, or undone after its hold, is named."""
    from proctor.core.decisions.checks import decision_rows, undone

    a, d = s.approvals.c, s.decisions.c
    decided = select(d.id).where(d.target_kind == "approval", d.target_id == a.id)
    undid = decided.where(d.decision.like('%"undone"%'))
    stmt = (
        select(a.id, a.status)
        .where(or_(and_(a.status == "pending", decided.exists()), undid.exists()))
        .order_by(a.id)
    )
    for row in conn.execute(stmt).all():
        standing = None
        for r in decision_rows(conn, "approval", row.id):
            if not undone(r.decision):
                standing = r
                continue
            hold = _loaded(standing.decision).get("hold_until") if standing else None
            if not isinstance(hold, int | float) or r.created_at >= hold:
                problems.append(
                    VerifyProblem(
                        what="undone after its hold",
                        where=f"approval {row.id}",
                        detail=f"{r.actor}'s undo (decision {r.id}) came "
                        + (
                            "after the hold of the decision it undid had ended"
                            if standing is not None and isinstance(hold, int | float)
                            else "with no held decision to undo"
                        ),
                    )
                )
            standing = None
        if row.status == "pending" and standing is not None:
            problems.append(
                VerifyProblem(
                    what="decision cleared without an undo",
                    where=f"approval {row.id}",
                    detail=f"it is pending, but {standing.actor}'s decision (decision "
                    f"{standing.id}) stands: no undo decision row follows it",
                )
            )


def _verify_question_undos(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each open question with a decision has an undo decision row after its last one
    (0014u): an answer cleared by hand within its hold (the store's triggers refuse it after
    the hold or once taken, not before) is named. (An undo's time against the hold is the
    store's own clock's business: its trigger refuses a late one.)"""
    from proctor.core.decisions.checks import decision_rows, standing

    q, d = s.questions.c, s.decisions.c
    decided = select(d.id).where(d.target_kind == "interaction", d.target_id == q.id)
    stmt = (
        select(q.id)
        .where(q.status.in_(("requested", "presented")), decided.exists())
        .order_by(q.id)
    )
    for row in conn.execute(stmt).all():
        stands = standing(decision_rows(conn, "interaction", row.id))
        if stands:
            problems.append(
                VerifyProblem(
                    what="answer cleared without an undo",
                    where=f"question {row.id}",
                    detail=f"it is open, but {stands[-1].actor}'s answer (decision "
                    f"{stands[-1].id}) stands: no undo decision row follows it",
                )
            )


def _loaded(text_: str | None) -> dict:
    try:
        value = json.loads(text_) if text_ else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _verify_answers(conn: Any, problems: list[VerifyProblem]) -> None:
    """Each answered (or dismissed) question's response is its decision's answer (or
    dismissal), the digest its run's chain recorded (``interaction.answered``, when the event
    has one), and, when signed, what the signature says (checked against the keys the journal
    records: the bytes, not who)."""
    from proctor.core.decisions.checks import check_question, journal_keys
    from proctor.core.decisions.signing import request_event, signature_row

    q = s.questions.c
    stmt = (
        select(s.questions)
        .where(q.status.in_(("resolved", "dismissed")))
        .order_by(q.created_at, q.id)
    )
    keys = None
    for row in _with_standing_answers(conn, conn.execute(stmt).all()):
        where = f"question {row.id} in run {row.run_id}"
        response = json.loads(row.response) if row.response is not None else None
        problem = None
        wrong = (
            None
            if row.answer is None
            else disagrees(json.loads(row.answer), response, row.hold_until)
        )
        if wrong == "response":
            problem = "the response is not the answer its decision records"
        elif wrong == "hold_until":
            problem = "its hold (hold_until) is not the one its decision records"
        else:
            event = request_event(
                conn,
                row.run_id,
                "interaction.dismissed" if row.status == "dismissed" else "interaction.answered",
                "interaction_id",
                row.id,
                near=row.resolved_at,
            )
            recorded = json.loads(event.payload).get("response_digest") if event else None
            if recorded is not None and recorded != digest_of(response):
                problem = "the response is not the one its run's chain recorded"
            elif row.decision_id is not None and signature_row(conn, row.decision_id):
                keys = keys or journal_keys(conn)
                try:
                    check_question(conn, keys, row)
                except errors.DecisionUnverified as err:
                    problem = f"its signed answer does not match: {err.message}"
        if problem is not None:
            problems.append(VerifyProblem(what="answer rewritten", where=where, detail=problem))


class _Answered:
    """A question's row with one of its standing decisions (``decision_id``, ``answer``)."""

    def __init__(self, row: Any, decision: Any) -> None:
        self._row = row
        self.decision_id = None if decision is None else decision.id
        self.answer = None if decision is None else decision.decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self._row, name)


def _with_standing_answers(conn: Any, rows: list[Any]) -> Any:
    """Each answered question with each decision that stands for it: those after its last
    undo (0014u: an answer taken back within its hold no longer stands), or none."""
    from proctor.core.decisions.checks import decision_rows, standing

    for row in rows:
        for decision in standing(decision_rows(conn, "interaction", row.id)) or [None]:
            yield _Answered(row, decision)
