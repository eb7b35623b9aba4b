"""The review shapes of LangGraph's prebuilt ``HumanInterrupt`` and LangChain's
``HumanInTheLoopMiddleware``, as Proctor approvals and questions, and their answers.

Three interrupt values are recognised:

- ``human_interrupt`` (``langgraph.prebuilt`` / ``langchain.agents.interrupt``): a list of
  ``{action_request: {action, args}, config: {allow_accept, allow_edit, allow_respond,
  allow_ignore}, description}``; it resumes with a list of ``{type, args}``, one per request.
- ``hitl_request`` (``HumanInTheLoopMiddleware``, batched): ``{action_requests: [{name, args,
  description}], review_configs: [{action_name, allowed_decisions}]}``; it resumes with
  ``{decisions: [...]}``.
- ``tool_approval`` (the middleware's per-call mode): ``{type: "tool_approval", tool_call_id,
  name, args, description}``; it resumes with one decision.

Each request whose reviewer may accept/approve becomes a Proctor approval of
``{"tool": name, "args": args}``; a request that can only be answered (respond-only: an
"ask the user" tool) becomes a question. Decisions map as:

============================  =========================  ==============================
Proctor                       HumanInterrupt              HumanInTheLoopMiddleware
============================  =========================  ==============================
approved                      ``accept``                  ``approve``
approved, edited (core with   ``edit`` with the edited    ``edit`` with ``edited_action``
edit-then-approve)            args
denied / expired (reason)     ``response`` with the       ``reject`` with ``message`` =
                              reason (``ignore`` when     the reason
                              respond is not allowed)
question answered             ``response`` with the text  ``respond`` with the text
============================  =========================  ==============================

An edit the runtime does not allow is never passed on as an approval: it is answered as a
rejection naming why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .gates import Verdict

Shape = Literal["human_interrupt", "hitl_request", "tool_approval"]
SHAPES = ("human_interrupt", "hitl_request", "tool_approval")


class Review(BaseModel):
    """One reviewable tool call of an interrupt."""

    model_config = ConfigDict(frozen=True)
    name: str
    args: dict[str, Any]
    description: str
    allowed: frozenset[str]  # approve, edit, reject, respond (the middleware's words)

    @property
    def question_only(self) -> bool:
        return "approve" not in self.allowed and "respond" in self.allowed


def shape_of(value: Any) -> Shape | None:
    if (
        isinstance(value, list)
        and value
        and all(
            isinstance(v, Mapping) and isinstance(v.get("action_request"), Mapping) for v in value
        )
    ):
        return "human_interrupt"
    if isinstance(value, Mapping):
        if value.get("type") == "tool_approval" and isinstance(value.get("name"), str):
            return "tool_approval"
        if isinstance(value.get("action_requests"), list):
            return "hitl_request"
    return None


def reviews(shape: Shape, value: Any) -> list[Review]:
    if shape == "human_interrupt":
        return [legacy_review(v) for v in value]
    if shape == "tool_approval":
        return [
            Review(
                name=value["name"],
                args=as_args(value.get("args")),
                description=text(value.get("description"), value["name"]),
                allowed=frozenset(value.get("allowed_decisions") or ("approve", "edit", "reject")),
            )
        ]
    configs = {
        c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, Mapping)
    }
    out = []
    for req in value["action_requests"]:
        req = req if isinstance(req, Mapping) else {}
        name = str(req.get("name") or "unknown-tool")
        allowed = (configs.get(name) or {}).get("allowed_decisions") or ("approve", "reject")
        out.append(
            Review(
                name=name,
                args=as_args(req.get("args")),
                description=text(req.get("description"), name),
                allowed=frozenset(allowed),
            )
        )
    return out


def legacy_review(v: Mapping[str, Any]) -> Review:
    req, cfg = v["action_request"], v.get("config") or {}
    name = str(req.get("action") or "unknown-action")
    allowed = {
        d
        for d, key in (
            ("approve", "allow_accept"),
            ("edit", "allow_edit"),
            ("respond", "allow_respond"),
            ("ignore", "allow_ignore"),
        )
        if cfg.get(key)
    }
    return Review(
        name=name,
        args=as_args(req.get("args")),
        description=text(v.get("description"), name),
        allowed=frozenset(allowed),
    )


def as_args(args: Any) -> dict[str, Any]:
    return dict(args) if isinstance(args, Mapping) else {"input": args}


def text(description: Any, name: str) -> str:
    return (str(description).strip() if description else "") or f"the graph asks to run {name}"


def answer(shape: Shape, items: list[tuple[Review, Verdict | str]]) -> Any:
    """The resume value for the interrupt: each review with its Proctor verdict (approval)
    or answer text (question)."""
    if shape == "human_interrupt":
        return [legacy_answer(r, v) for r, v in items]
    decisions = [hitl_answer(r, v) for r, v in items]
    return decisions[0] if shape == "tool_approval" else {"decisions": decisions}


def legacy_answer(r: Review, v: Verdict | str) -> dict[str, Any]:
    if isinstance(v, str):
        return {"type": "response", "args": v}
    if v.approved and not v.edited:
        return {"type": "accept", "args": None}
    if v.approved and "edit" in r.allowed:
        return {"type": "edit", "args": {"action": r.name, "args": v.args}}
    reason = refusal(v)
    if "respond" in r.allowed or "ignore" not in r.allowed:
        return {"type": "response", "args": reason}
    return {"type": "ignore", "args": None}


def hitl_answer(r: Review, v: Verdict | str) -> dict[str, Any]:
    if isinstance(v, str):
        return {"type": "respond", "message": v}
    if v.approved and not v.edited:
        return {"type": "approve"}
    if v.approved and "edit" in r.allowed:
        return {"type": "edit", "edited_action": {"name": r.name, "args": v.args}}
    if "reject" not in r.allowed and "respond" in r.allowed:
        return {"type": "respond", "message": refusal(v)}
    return {"type": "reject", "message": refusal(v)}


def refusal(v: Verdict) -> str:
    if v.approved:  # edited, but this tool takes no edits: never run the unedited call
        return (
            "The operator approved only an edited version of this call, which this tool "
            "does not accept; it was not run."
        )
    who = v.decided_by or "the operator"
    return f"Denied on the Proctor desk by {who}: {v.reason or 'no reason given'}"


__all__ = ["SHAPES", "Review", "answer", "reviews", "shape_of"]
