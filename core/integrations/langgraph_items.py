"""LangGraph interrupts <-> Proctor items: each interrupt filed once as a question or an
approval (recorded as a ``langgraph.interrupt_filed`` run event), and the value the graph
resumes with read back from the answered item. Part of :mod:`.langgraph`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.types import Interrupt
from pydantic import BaseModel, ConfigDict

from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import (
    Approval,
    ApprovalStatus,
    Question,
    QuestionKind,
    QuestionStatus,
    SafetyClass,
)

from . import langgraph_review as review
from .gates import read_approval, tool_action, verdict_of
from .langgraph_effects import is_approval_value, jsonable, run_id_for

FILED = "langgraph.interrupt_filed"
MAX_REFILES = 20
ANSWER_KEYS = {
    QuestionKind.QUESTION: "text",
    QuestionKind.CHOICE: "choice",
    QuestionKind.CONFIRMATION: "confirmed",
}
# A question the graph resumes from: answered, or dismissed by the operator.
QUESTION_DONE = (QuestionStatus.RESOLVED, QuestionStatus.DISMISSED)


class Pending(BaseModel):
    """One interrupt of the thread and the Proctor item that asks a person about it."""

    model_config = ConfigDict(frozen=True)
    interrupt_id: str
    # approval / interaction: the adapter's own shapes; human_interrupt / hitl_request /
    # tool_approval: LangGraph's and LangChain's review shapes (one item per tool call, in
    # ``items``); effect: a side effect a crash left ambiguous (a person resolves it)
    kind: Literal[
        "approval", "interaction", "human_interrupt", "hitl_request", "tool_approval", "effect"
    ]
    item_id: str
    status: str
    attempt: int = 1
    items: list[dict[str, str]] = []  # {"kind": "approval" | "interaction", "id": ...}


class Interrupts:
    """Files a thread's interrupts on a journal and reads the answers back."""

    def __init__(self, journal: Journal) -> None:
        self.j = journal

    def file_all(self, thread_id: str, interrupts: tuple[Interrupt, ...]) -> list[Pending]:
        filed = self.filed(thread_id)
        return [
            filed[i.id] if i.id in filed else self.file(thread_id, i, 1, None) for i in interrupts
        ]

    def filed(self, thread_id: str) -> dict[str, Pending]:
        """The newest item filed for each interrupt, from the run's events."""
        rid, found, after = run_id_for(thread_id), {}, 0
        while True:
            events = self.j.runs.events(rid, after=after, types=[FILED], limit=500)
            for e in events:
                p = e.payload
                found[p["interrupt_id"]] = Pending(
                    interrupt_id=p["interrupt_id"],
                    kind=p["kind"],
                    item_id=p["item_id"],
                    status="",
                    attempt=p["attempt"],
                    items=p.get("items") or [],
                )
            if len(events) < 500:
                break
            after = events[-1].sequence
        return {k: self.refresh(p) for k, p in found.items()}

    def refresh(self, p: Pending) -> Pending:
        """The item as it stands; with the journal opened with ``trust=`` (or
        ``PROCTOR_TRUSTED_OPERATORS``) a decision no trusted operator signed raises
        DecisionUnverified here, before the graph is resumed with it."""
        if p.kind in review.SHAPES:
            open_ = [i for i in p.items if not self.item_done(i)]
            return p.model_copy(update={"status": "pending" if open_ else "decided"})
        item: Approval | Question = (
            read_approval(self.j, p.item_id)
            if p.kind == "approval"
            else self.j.questions.get(p.item_id)
        )
        return p.model_copy(update={"status": item.status.value})

    def item_done(self, item: Mapping[str, str]) -> bool:
        if item["kind"] == "approval":
            return read_approval(self.j, item["id"]).status in (
                ApprovalStatus.APPROVED,
                ApprovalStatus.DENIED,
                ApprovalStatus.EXPIRED,
            )
        return self.j.questions.get(item["id"]).status in QUESTION_DONE

    def file(self, thread_id: str, intr: Interrupt, attempt: int, refused: dict | None) -> Pending:
        rid = run_id_for(thread_id)
        key = f"langgraph:{thread_id}:{intr.id}" + (f"#{attempt}" if attempt > 1 else "")
        item: Approval | Question
        shape = review.shape_of(intr.value)
        if shape is not None:
            return self.file_review(thread_id, intr, attempt, shape, key)
        if is_approval_value(intr.value):
            value = intr.value
            item = self.j.approvals.request(
                rid,
                dict(value["action"]),
                reason=str(value.get("reason") or "the graph asks before it acts"),
                safety_class=value.get("safety_class", SafetyClass.UNSAFE_WRITE),
                expires_in=value.get("expires_in"),
                request_key=key,
                origin=origins.here(
                    "langgraph",
                    tool=str(value["action"].get("tool") or value["action"].get("name") or "")
                    or None,
                ),
            )
            kind: Literal["approval", "interaction"] = "approval"
        else:
            item = self.ask(rid, key, thread_id, intr, refused)
            kind = "interaction"
        payload = {"interrupt_id": intr.id, "kind": kind, "item_id": item.id, "attempt": attempt}
        event_id = (
            "evt_lg_" + hashlib.sha256(f"{thread_id}|{intr.id}|{attempt}".encode()).hexdigest()[:24]
        )
        self.j.runs.append_event(rid, FILED, payload, event_id=event_id)
        return Pending(**payload, status=item.status.value)

    def file_review(
        self, thread_id: str, intr: Interrupt, attempt: int, shape: review.Shape, key: str
    ) -> Pending:
        """One approval (or, for an answer-only tool, one question) per reviewed tool call."""
        rid = run_id_for(thread_id)
        items = []
        for n, r in enumerate(review.reviews(shape, intr.value)):
            if r.question_only:
                q = self.j.questions.ask(
                    rid,
                    QuestionKind.QUESTION,
                    r.description[:4000],
                    request={
                        "langgraph": {
                            "thread_id": thread_id,
                            "interrupt_id": intr.id,
                            "shape": shape,
                        },
                        "tool": r.name,
                        "args": r.args,
                    },
                    request_key=f"{key}:{n}",
                    origin=origins.here("langgraph", tool=r.name),
                )
                items.append({"kind": "interaction", "id": q.id})
            else:
                a = self.j.approvals.request(
                    rid,
                    tool_action(r.name, r.args),
                    reason=r.description[:2000],
                    request_key=f"{key}:{n}",
                    origin=origins.here("langgraph", tool=r.name),
                )
                items.append({"kind": "approval", "id": a.id})
        payload = {
            "interrupt_id": intr.id,
            "kind": shape,
            "item_id": items[0]["id"],
            "attempt": attempt,
            "items": items,
        }
        event_id = (
            "evt_lg_" + hashlib.sha256(f"{thread_id}|{intr.id}|{attempt}".encode()).hexdigest()[:24]
        )
        self.j.runs.append_event(rid, FILED, payload, event_id=event_id)
        return self.refresh(Pending(**payload, status=""))

    def ask(
        self, rid: str, key: str, thread_id: str, intr: Interrupt, refused: dict | None
    ) -> Question:
        value = intr.value
        fields = value if isinstance(value, Mapping) else {}
        schema = getattr(intr, "response_schema", None)  # langgraph >= 1.2
        schema = schema if isinstance(schema, dict) else None
        options = fields.get("options") if isinstance(fields.get("options"), list) else None
        given = fields.get("kind")
        kind = (
            given
            if isinstance(given, str) and given in set(QuestionKind)
            else ("choice" if options else "form" if schema is not None else "question")
        )
        prompt = str(
            fields.get("question")
            or fields.get("prompt")
            or fields.get("message")
            or (value if isinstance(value, str) else json.dumps(jsonable(value)))
        )
        request: dict[str, Any] = {
            "langgraph": {
                "thread_id": thread_id,
                "interrupt_id": intr.id,
                "schema_given": schema is not None,
            },
            "value": jsonable(value),
        }
        if refused is not None:
            request.update(refused)
            prompt = f"The graph refused the previous answer: {refused['error']}\n\n{prompt}"
        return self.j.questions.ask(
            rid,
            kind,
            prompt,
            request=request,
            response_schema=schema,
            options=options,
            request_key=key,
            origin=origins.here("langgraph", tool="interrupt"),
        )

    def refile(
        self,
        thread_id: str,
        interrupts: tuple[Interrupt, ...],
        answers: list[Pending],
        message: str,
    ) -> list[Pending]:
        """The answers were refused at resume (``interrupts``: the graph's, as they stand
        now): ask again, showing the error."""
        by_id = {i.id: i for i in interrupts}
        refiled = {}
        for p in answers:
            if p.interrupt_id not in by_id or p.attempt >= MAX_REFILES:
                continue
            refused = {
                "refused_answer": self.resume_value(p, by_id[p.interrupt_id].value),
                "error": message,
            }
            refiled[p.interrupt_id] = self.file(
                thread_id, by_id[p.interrupt_id], p.attempt + 1, refused
            )
        filed = self.file_all(thread_id, interrupts)
        return [refiled.get(p.interrupt_id, p) for p in filed]

    # ------------------------------------------------------------ answers
    def resume_map(self, answers: dict[str, Pending], values: Mapping[str, Any]) -> dict[str, Any]:
        return {iid: self.resume_value(p, values.get(iid)) for iid, p in answers.items()}

    def resume_value(self, p: Pending, value: Any = None) -> Any:
        if p.kind in review.SHAPES:
            return self.review_answer(p, value)
        if p.kind == "approval":
            a = self.j.approvals.get(p.item_id)
            reason = a.decision_reason or (
                "expired" if a.status == ApprovalStatus.EXPIRED else None
            )
            approved = a.status == ApprovalStatus.APPROVED
            action = a.effective_action if approved else None
            return {
                "approved": approved,
                "reason": reason,
                "decided_by": a.decided_by,
                "approval_id": a.id,
                "action_digest": a.effective_digest,
                "edited": a.edited,
                "action": action,
                "args": action.get("args") if isinstance(action, dict) else None,
                "requested_digest": a.action_digest,
            }
        q = self.j.questions.get(p.item_id)
        if q.status == QuestionStatus.DISMISSED:
            return dismissed_value(q)
        meta = q.request.get("langgraph", {}) if isinstance(q.request, dict) else {}
        field = ANSWER_KEYS.get(q.kind)
        if meta.get("schema_given") or field is None or not isinstance(q.response, dict):
            return q.response
        return q.response.get(field)

    def review_answer(self, p: Pending, value: Any) -> Any:
        shape: review.Shape = p.kind  # type: ignore[assignment]
        pairs: list[tuple[review.Review, Any]] = []
        for r, item in zip(review.reviews(shape, value), p.items, strict=True):
            if item["kind"] == "approval":
                pairs.append((r, verdict_of(read_approval(self.j, item["id"]))))
            else:
                q = self.j.questions.get(item["id"])
                if q.status == QuestionStatus.DISMISSED:
                    pairs.append((r, q.dismissal or ""))
                    continue
                resp = q.response.get("text") if isinstance(q.response, dict) else q.response
                pairs.append((r, str(resp if resp is not None else "")))
        return review.answer(shape, pairs)

    # ------------------------------------------------------------ helpers


def dismissed_value(q: Question) -> dict[str, Any]:
    """What the graph resumes with for a question the operator dismissed: never an answer,
    a value the node tells apart (``dismissed``) and a sentence to show or log."""
    return {
        "dismissed": True,
        "reason": q.dismiss_reason,
        "message": q.dismissal,
        "decided_by": q.resolved_by,
        "question_id": q.id,
    }


def answered(p: Pending) -> bool:
    """The person has answered the item (or it expired): the graph can resume with it."""
    if p.kind in review.SHAPES:
        return p.status == "decided"
    if p.kind == "approval":
        return p.status in (
            ApprovalStatus.APPROVED,
            ApprovalStatus.DENIED,
            ApprovalStatus.EXPIRED,
        )
    return p.status in QUESTION_DONE
