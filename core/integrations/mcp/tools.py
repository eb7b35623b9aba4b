"""The tools a Proctor MCP server offers (request_approval, submit_approval, ask_human,
submit_question, await_decision), their argument types, and the refusal of arguments a
tool does not declare."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from proctor.core import errors

from .outcome import Outcome

if TYPE_CHECKING:
    from .server import ProctorMCP
    from .sessions import Session


SafetyName = Literal[
    "safe_read",
    "idempotent_write",
    "unsafe_write",
    "external_side_effect",
    "financial",
    "destructive",
]


KindName = Literal[
    "question",
    "choice",
    "form",
    "confirmation",
    "diff_review",
    "merge_conflict",
    "credential_binding",
    "memory_change_review",
]


ExpiresIn = Annotated[float | None, Field(gt=0, description="seconds until the request lapses")]


IdempotencyKey = Annotated[
    str | None,
    Field(max_length=200, description="reuse it when you retry, so the person is asked once"),
]


WaitSeconds = Annotated[float, Field(ge=0, le=50, description="wait at most this long (<= 50 s)")]


WaitAtMost = Annotated[
    float | None,
    Field(
        ge=0,
        le=3600,
        description=(
            "wait at most this long, then return status 'pending' with the id (poll with "
            "await_decision or call again with the same idempotency_key); default: until decided"
        ),
    ),
]


def tool_error(err: errors.ProctorError) -> ToolError:
    hint = f" {err.hint}" if err.hint else ""
    return ToolError(f"{type(err).__name__}: {err.message}.{hint}")


def forbid_unknown_arguments(server: MCPServer) -> None:
    """An argument a tool does not declare (``idempotencyKey`` for ``idempotency_key``) is
    refused with an error naming it, never silently dropped; the published input schemas say
    so (``additionalProperties: false``). The SDK keeps its tools in ``_tool_manager``
    (mcp 2.x)."""
    for t in server._tool_manager.list_tools():
        base = t.fn_metadata.arg_model
        t.fn_metadata.arg_model = type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(**{**base.model_config, "extra": "forbid"}),
                "__module__": base.__module__,
                "_refuse_unknown": model_validator(mode="before")(refuse_unknown(t.name, base)),
            },
        )
        t.parameters["additionalProperties"] = False


def refuse_unknown(tool: str, model: type[BaseModel]) -> Callable[[Any, Any], Any]:
    known = {f.alias or name for name, f in model.model_fields.items()}

    def check(cls: Any, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(str(k)[:80] for k in data if k not in known)
            if unknown:
                raise ValueError(
                    f"{tool} takes no argument {', '.join(map(repr, unknown))}; its arguments "
                    f"are {', '.join(sorted(known))} (nothing was filed)"
                )
        return data

    return check


def register_tools(p: ProctorMCP) -> None:
    """The five tools. Closures over ``p``, so several servers can live in one process."""
    mcp = p.server

    async def file_approval(ctx: Context, tool: str, args: dict, *, wait: bool) -> Outcome:
        async def body(s: Session, call_id: str) -> Outcome:
            return await p.file_and_wait(
                ctx,
                s,
                lambda: p.file_approval(
                    s,
                    args["idempotency_key"],
                    call_id,
                    args["action"],
                    args["reason"],
                    args["safety_class"],
                    args["expires_in"],
                    tool=tool,
                ),
                wait=wait,
                limit=args.get("wait_s"),
                kept=args["idempotency_key"] is not None,
            )

        return await p.call(ctx, tool, args, args["idempotency_key"], body)

    async def file_question(ctx: Context, tool: str, args: dict, *, wait: bool) -> Outcome:
        async def body(s: Session, _call_id: str) -> Outcome:
            return await p.file_and_wait(
                ctx,
                s,
                lambda: p.file_question(
                    s,
                    args["idempotency_key"],
                    args["question"],
                    args["response_schema"],
                    args["options"],
                    args["kind"],
                    args["expires_in"],
                    tool=tool,
                ),
                wait=wait,
                limit=args.get("wait_s"),
                kept=args["idempotency_key"] is not None,
            )

        return await p.call(ctx, tool, args, args["idempotency_key"], body)

    @mcp.tool()
    async def request_approval(
        action: dict[str, Any],
        reason: str,
        ctx: Context,
        safety_class: SafetyName = "unsafe_write",
        expires_in: ExpiresIn = None,
        idempotency_key: IdempotencyKey = None,
        wait_s: WaitAtMost = None,
    ) -> Outcome:
        """Ask a person to approve `action` (a JSON object with a 'tool' name and 'args') and
        wait for the decision (at most wait_s, if given: then status 'pending' and the id).
        Act only if status is 'approved', and then run the returned `action` (the person may
        have edited its arguments: `edited`); a denial carries the reason."""
        args = dict(
            action=action,
            reason=reason,
            safety_class=safety_class,
            expires_in=expires_in,
            idempotency_key=idempotency_key,
            wait_s=wait_s,
        )
        return await file_approval(ctx, "request_approval", args, wait=True)

    @mcp.tool()
    async def submit_approval(
        action: dict[str, Any],
        reason: str,
        ctx: Context,
        safety_class: SafetyName = "unsafe_write",
        expires_in: ExpiresIn = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Outcome:
        """Like request_approval, but return at once with the request id; then call
        await_decision(id) until the status is no longer 'pending'."""
        args = dict(
            action=action,
            reason=reason,
            safety_class=safety_class,
            expires_in=expires_in,
            idempotency_key=idempotency_key,
        )
        return await file_approval(ctx, "submit_approval", args, wait=False)

    @mcp.tool()
    async def ask_human(
        question: str,
        ctx: Context,
        response_schema: dict[str, Any] | None = None,
        options: list[Any] | None = None,
        kind: KindName | None = None,
        expires_in: ExpiresIn = None,
        idempotency_key: IdempotencyKey = None,
        wait_s: WaitAtMost = None,
    ) -> Outcome:
        """Ask a person a question and wait for the answer (at most wait_s, if given: then
        status 'pending' and the id). Give `options` for a choice, or a JSON Schema
        `response_schema` for a form; the answer is validated against it."""
        args = dict(
            question=question,
            response_schema=response_schema,
            options=options,
            kind=kind,
            expires_in=expires_in,
            idempotency_key=idempotency_key,
            wait_s=wait_s,
        )
        return await file_question(ctx, "ask_human", args, wait=True)

    @mcp.tool()
    async def submit_question(
        question: str,
        ctx: Context,
        response_schema: dict[str, Any] | None = None,
        options: list[Any] | None = None,
        kind: KindName | None = None,
        expires_in: ExpiresIn = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Outcome:
        """Like ask_human, but return at once with the question id; then call
        await_decision(id) until the status is no longer 'pending'."""
        args = dict(
            question=question,
            response_schema=response_schema,
            options=options,
            kind=kind,
            expires_in=expires_in,
            idempotency_key=idempotency_key,
        )
        return await file_question(ctx, "submit_question", args, wait=False)

    @mcp.tool()
    async def await_decision(id: str, ctx: Context, wait_s: WaitSeconds = 25.0) -> Outcome:
        """Wait up to wait_s seconds for the decision on a submitted approval or question and
        return its state; call again while the status is 'pending'."""

        async def body(s: Session, _call_id: str) -> Outcome:
            return await p.wait(ctx, s, id, limit=wait_s)  # a poll: its cancel withdraws nothing

        return await p.call(ctx, "await_decision", {"id": id, "wait_s": wait_s}, None, body)
