"""Who acts and what they run: actors, runs, attempts, a run's events and tool calls, the
origin a row records."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .enums import ActorKind, AttemptStatus, Frozen, RunStatus, SafetyClass, ToolCallStatus


class Actor(Frozen):
    """Who performs a call. Recorded on every decision and audit row."""

    name: str = Field(min_length=1, max_length=200)
    kind: ActorKind = ActorKind.OPERATOR

    @classmethod
    def operator(cls, name: str) -> Actor:
        return cls(name=name, kind=ActorKind.OPERATOR)

    @classmethod
    def agent(cls, name: str) -> Actor:
        return cls(name=name, kind=ActorKind.AGENT)

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"  # a StrEnum formats as its value


class Run(Frozen):
    id: str
    project: str
    space: str
    agent: str
    title: str
    parent_run_id: str | None
    status: RunStatus
    version: int
    deadline: float | None
    created_at: float
    updated_at: float
    finished_at: float | None
    last_sequence: int
    current_attempt: int
    cancel_requested: bool
    cancel_reason: str | None
    error: str | None
    open_items: int = 0
    retry_requested: int | None = None  # the attempt an operator asked a retry as (0013u)
    retry_reason: str | None = None

    @property
    def retry_pending(self) -> bool:
        """A retry was asked of this failed run and its agent has not started it yet."""
        return (
            self.status == RunStatus.FAILED
            and self.retry_requested is not None
            and self.retry_requested > self.current_attempt
        )


class Attempt(Frozen):
    run_id: str
    number: int
    status: AttemptStatus
    started_at: float
    finished_at: float | None
    error: str | None


class RunEvent(Frozen):
    id: str
    run_id: str
    sequence: int
    type: str
    payload: Any
    run_version: int
    attempt: int
    actor: str
    created_at: float
    prev_digest: str
    digest: str


class ToolCall(Frozen):
    id: str
    run_id: str
    attempt: int
    tool: str
    safety_class: SafetyClass
    idempotency_key: str | None
    request: Any
    result: Any
    error: str | None
    status: ToolCallStatus
    version: int
    created_at: float
    updated_at: float


class Origin(Frozen):
    """Where a request came from, as the agent reports it: the runtime (mcp, langgraph,
    claude-code, openai-agents, pydantic-ai, python), the host process (name, pid, machine),
    the tool that filed it and the client's own name. Nothing here is checked; it is shown as
    the agent's word and is never part of what the operator approves (no digest holds it).
    Fixed once filed (a trigger refuses any UPDATE of it)."""

    runtime: str
    process: str | None = None
    pid: int | None = None
    host: str | None = None
    tool: str | None = None
    client: str | None = None
