"""`proctor mcp JOURNAL`: an MCP server through which any MCP host asks a person.

Built on the official ``mcp`` SDK (v2 API, ``MCPServer``) and on the public proctor.core API
only. Every request is written through the same services as any agent's, so the desk shows it
live and the operator decides it there.

- One run per client session: the first tool call of a client opens a run (agent name from the
  client's info, or ``--agent``); the session's end completes it. Over stdio one process serves
  one host session; over HTTP (:mod:`.mcp_http`) each MCP session is one.
- Every tool call is a tool-call row on that run.
- ``request_approval`` / ``ask_human`` wait until the operator decides (or at most ``wait_s``,
  then return ``pending`` with the id), sending progress notifications meanwhile.
- ``submit_approval`` / ``submit_question`` + ``await_decision(id, wait_s <= 50)`` serve hosts
  with short tool timeouts (file, then poll with short waits); a cancelled ``await_decision``
  withdraws nothing.

The rule for a request whose caller goes away (a client timeout, a cancelled call, the
session's end, a killed server):

- **With an ``idempotency_key`` it is kept**: it stays pending for the operator, and any later
  call of the same agent (name) in the same project with the same key and the same content —
  on this connection, a reconnected one, another one-shot process, or over HTTP — gets that
  same request back: pending, or its decision. Its run stays open ("MCP session ... ended,
  kept: ...") until nothing it kept is pending; then the next session end, server start or
  collecting call completes it. A kept request that was withdrawn anyway (the operator stopped
  its run) is not rejoined: the key files the next request of its chain.
- **Without a key it is withdrawn** (cancelled, with an audit row) in a shielded write: the
  operator is never asked to decide something nobody can collect.

- A server that died without closing its sessions (SIGKILL, power loss) leaves its runs open;
  the next ``proctor mcp`` on the same journal and host fails them (which withdraws their open
  requests), once the dead server's pid is gone. Runs of servers on other hosts are left alone.

Blocking core calls run in worker threads (``anyio.to_thread``); the event loop never blocks.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel.canonical import digest_of
from proctor.core.models import (
    Actor,
    Approval,
    ApprovalStatus,
    Question,
    QuestionStatus,
    ToolCallStatus,
)

from .host import LIBRARY_NAMES, host_gone, host_process, quiet_stdout
from .outcome import Outcome, approval_outcome, question_outcome
from .runs import (
    KEPT,
    detached_runs,
    end_or_keep,
    is_detached,
    orphaned_runs,
    pid_scope,
    settle_detached,
    withdraw_item,
)
from .sessions import Session, Sessions, http_session_id
from .tools import forbid_unknown_arguments, register_tools, tool_error

log = logging.getLogger(__name__)
T = TypeVar("T", Approval, Question)

RETRY_CHAIN = 50  # at most this many fresh requests for one idempotency key


INSTRUCTIONS = (
    "Proctor puts a person in the loop. Before an action with side effects, call "
    "request_approval(action={'tool': ..., 'args': {...}}, reason=...) and act only if the "
    "result says approved, and then run the result's `action` (the person may have edited "
    "its arguments). To ask the person something, call ask_human(question, "
    "response_schema=...); a question the person dismissed comes back with status "
    "'dismissed' and no answer (its reason says why): go another way. Both wait for the "
    "person; if your tool calls time out quickly, pass "
    "wait_s (a few seconds) or use submit_approval / submit_question, and then call "
    "await_decision(id, wait_s=a few seconds) until the status is no longer 'pending'. Pass an "
    "idempotency_key and reuse it when you retry or reconnect: the person is asked once, and "
    "the request stays open for you when your call times out."
)


class ProctorMCP:
    """The server object. ``.server`` is the ``MCPServer``: give it to ``mcp.Client`` in tests;
    :func:`serve_stdio` serves it to a host."""

    def __init__(
        self,
        journal_path: str | os.PathLike[str],
        *,
        project: str = "mcp",
        agent: str | None = None,
        poll_s: float = 0.1,
        progress_every_s: float = 1.0,
        name: str = "proctor",
        trust: Any = None,
    ) -> None:
        """``trust``: whom to trust (a trusted-operators file, a ``Trust``; None reads
        ``PROCTOR_TRUSTED_OPERATORS``): with it no decision reaches the host unless a trusted
        operator signed it (the tool call fails with DecisionUnverified, naming why)."""
        from proctor.core.decisions.trust import resolve_trust

        self.trust = resolve_trust(trust)
        # a server journal's URL stays a string (Path would fold its "//" and turn it into a
        # file of that name)
        self.journal_path: str | Path = (
            journal_path
            if isinstance(journal_path, str) and "://" in journal_path
            else Path(journal_path)
        )
        self.project = project
        self.agent = agent
        self.poll_s = poll_s
        self.progress_every_s = progress_every_s
        self.sessions: Sessions | None = None  # while the server runs
        # how many client sessions it keeps at once (None: no cap; serve_http sets one)
        self.max_sessions: int | None = None
        self.session_idle_s: float | None = None
        self.server: MCPServer = MCPServer(
            name, instructions=INSTRUCTIONS, lifespan=self._lifespan, log_level="WARNING"
        )
        register_tools(self)
        forbid_unknown_arguments(self.server)

    # ------------------------------------------------------------ sessions
    @asynccontextmanager
    async def _lifespan(self, _server: MCPServer) -> AsyncIterator[Sessions]:
        sessions = Sessions(self, limit=self.max_sessions, idle_s=self.session_idle_s)
        await anyio.to_thread.run_sync(self.fail_orphaned_runs)
        self.sessions = sessions
        try:
            yield sessions
        finally:
            await sessions.close_all("the MCP session ended")
            self.sessions = None

    def client_identity(self, ctx: Context) -> tuple[str, dict[str, Any]]:
        params = ctx.request_context.session.client_params
        info = params.client_info if params is not None else None
        named = info.name if info is not None and info.name else None
        over_http = (
            http_session_id(ctx) is not None
            or getattr(ctx.request_context.request, "headers", None) is not None
        )
        host = None if over_http else host_process()
        agent = (
            self.agent
            or (named if named not in LIBRARY_NAMES else None)
            or (host[0] if host else None)
            or named
            or "mcp-client"
        )
        meta = {
            "via": "mcp",
            "protocol_version": ctx.protocol_version,
            "server_pid": os.getpid(),
            "server_host": socket.gethostname(),
            "server_pid_scope": pid_scope(),
            "client": info.model_dump(mode="json", exclude_none=True) if info else None,
        }
        peer = getattr(getattr(ctx.request_context.request, "client", None), "host", None)
        meta["origin"] = {  # where its requests come from, as the host says (Origin)
            "runtime": "mcp",
            "client": " ".join(filter(None, (named, info.version if info else None))) or None,
            "process": host[0] if host else None,
            "pid": host[1] if host else None,
            "host": peer if over_http else socket.gethostname(),
        }
        return agent[:200], meta

    def open_session(self, agent: str, meta: dict[str, Any]) -> Session:
        journal = Journal.open(self.journal_path, actor=Actor.agent(agent), trust=self.trust)
        try:
            run = journal.runs.start(
                self.project, f"MCP session of {agent}", agent=agent, metadata=meta
            )
        except BaseException:
            journal.close()
            raise
        return Session(journal=journal, run_id=run.id, agent=agent, origin=meta["origin"])

    def fail_orphaned_runs(self) -> list[str]:
        """End the open runs that a dead server on this host left behind: failed, which
        withdraws their open requests, unless one they kept (filed with a key) is still
        pending; then only the others are withdrawn and the run waits for it. Runs of ended
        sessions whose kept requests are all decided now are completed. Returns the ids of
        the runs failed; a journal that cannot be written is left alone (logged)."""
        failed: list[str] = []
        try:
            with Journal.open(  # with the server's trust: else it warns "trusts no key"
                self.journal_path, actor=Actor.agent(self.agent or "proctor-mcp"), trust=self.trust
            ) as journal:
                for run_id, pid in orphaned_runs(journal, self.project):
                    if is_detached(journal, run_id):
                        continue  # ended cleanly; settled below
                    try:
                        if end_or_keep(
                            journal,
                            run_id,
                            f"the MCP server (pid {pid}) on this "
                            "host ended without closing the session",
                            fail=True,
                        ):
                            failed.append(run_id)
                    except errors.ProctorError as err:  # closed meanwhile
                        log.info("orphaned run %s not failed: %s", run_id, err)
                for run_id in detached_runs(journal, self.project):
                    settle_detached(journal, run_id)
        except errors.ProctorError as err:
            log.warning("could not look for runs left open by a dead server: %s", err)
        return failed

    @staticmethod
    def close_session(session: Session, reason: str) -> None:
        try:
            end_or_keep(session.journal, session.run_id, reason)
        except errors.ProctorError as err:
            log.warning("could not close run %s: %s", session.run_id, err)
        finally:
            session.journal.close()

    # ------------------------------------------------------------ one tool call
    async def call(
        self,
        ctx: Context,
        tool: str,
        args: dict[str, Any],
        key: str | None,
        body: Callable[[Session, str], Awaitable[Outcome]],
    ) -> Outcome:
        """Record the call as a tool-call row, run ``body``, finish the row (also when the
        client cancels); core errors become tool errors the model can read."""
        sessions = cast(Sessions, ctx.request_context.lifespan_context)  # what lifespan yields
        async with sessions.using(ctx) as session:
            return await self.call_in(session, tool, args, key, body)

    async def call_in(
        self,
        session: Session,
        tool: str,
        args: dict[str, Any],
        key: str | None,
        body: Callable[[Session, str], Awaitable[Outcome]],
    ) -> Outcome:
        j = session.journal
        calls: list[str] = []

        def record() -> None:
            calls.append(
                j.runs.record_tool_call(session.run_id, f"mcp.{tool}", args, idempotency_key=key).id
            )

        try:
            await anyio.to_thread.run_sync(record)
            outcome = await body(session, calls[0])
            if outcome.run_id != session.run_id and outcome.status != "pending":
                # collected from a run whose session ended: it may be done now
                await anyio.to_thread.run_sync(settle_detached, j, outcome.run_id)
        except anyio.get_cancelled_exc_class():
            if calls:
                with anyio.CancelScope(shield=True):
                    await self.finish_call(
                        j,
                        calls[0],
                        ToolCallStatus.FAILED,
                        error="cancelled: the MCP client cancelled or timed out",
                    )
            raise
        except errors.ProctorError as err:
            if calls:
                await self.finish_call(j, calls[0], ToolCallStatus.FAILED, error=str(err))
            raise tool_error(err) from err
        await self.finish_call(
            j, calls[0], ToolCallStatus.SUCCEEDED, result=outcome.model_dump(mode="json")
        )
        return outcome

    @staticmethod
    async def finish_call(
        j: Journal,
        call_id: str,
        status: ToolCallStatus,
        *,
        result: Any = None,
        error: str | None = None,
    ) -> None:
        try:
            await anyio.to_thread.run_sync(
                lambda: j.runs.finish_tool_call(call_id, status, result=result, error=error)
            )
        except errors.ProctorError as err:  # the run ended meanwhile: the row stays open
            log.info("tool call %s not finished: %s", call_id, err)

    # ------------------------------------------------------------ filing
    def file_approval(
        self,
        s: Session,
        key: str | None,
        tool_call_id: str,
        action: dict,
        reason: str,
        safety_class: str,
        expires_in: float | None,
        *,
        tool: str = "request_approval",
    ) -> Approval:
        def file(run_id: str, request_key: str | None) -> Approval:
            return s.journal.approvals.request(
                run_id,
                action,
                reason=reason,
                safety_class=safety_class,
                expires_in=expires_in,
                request_key=request_key,
                tool_call_id=tool_call_id,
                origin={**s.origin, "tool": tool},
            )

        return self.file_once(
            s, key, file, s.journal.approvals.filed_under, ApprovalStatus.CANCELLED
        )

    def file_question(
        self,
        s: Session,
        key: str | None,
        question: str,
        schema: dict | None,
        options: list | None,
        kind: str | None,
        expires_in: float | None,
        *,
        tool: str = "ask_human",
    ) -> Question:
        kind = kind or ("choice" if options else "form" if schema is not None else "question")

        def file(run_id: str, request_key: str | None) -> Question:
            return s.journal.questions.ask(
                run_id,
                kind,
                question,
                request={"via": "mcp", "agent": s.agent},
                response_schema=schema,
                options=options,
                expires_in=expires_in,
                request_key=request_key,
                origin={**s.origin, "tool": tool},
            )

        return self.file_once(
            s, key, file, s.journal.questions.filed_under, QuestionStatus.CANCELLED
        )

    def scoped_key(self, s: Session, key: str) -> str:
        """The request key of ``key``: one per agent name and project, across sessions."""
        return f"mcp:{digest_of({'project': self.project, 'agent': s.agent})[:24]}:{key}"

    def file_once(
        self,
        s: Session,
        key: str | None,
        file: Callable[[str, str | None], T],
        find: Callable[[str], Any],
        withdrawn: Any,
    ) -> T:
        """File ``key``'s request, or find it again: filed by any session of this agent, it
        is returned as it stands (pending or decided), and it is kept (it outlives this
        connection). A withdrawn one is not rejoined: the key files the next one in its
        chain."""
        if key is None:
            return file(s.run_id, None)
        base = self.scoped_key(s, key)
        for n in range(1, RETRY_CHAIN + 1):
            item = self.file_or_find(s, base + (f"#{n}" if n > 1 else ""), file, find)
            if item.status != withdrawn:
                if item.run_id == s.run_id:
                    s.journal.runs.append_event(
                        s.run_id, KEPT, {"id": item.id}, event_id=f"mcp-kept-{item.id}"
                    )
                return item
        raise errors.ValidationError(
            f"idempotency key {key!r} was withdrawn too often; use a new key",
            field="idempotency_key",
        )

    @staticmethod
    def file_or_find(
        s: Session,
        request_key: str,
        file: Callable[[str, str | None], T],
        find: Callable[[str], Any],
    ) -> T:
        """File in the run of the session that filed it first (the same content there is
        the same request); a session that files it at the same moment loses and finds it."""
        for _ in range(2):
            found = find(request_key)
            try:
                return file(found.run_id if found is not None else s.run_id, request_key)
            except errors.IdempotencyConflict:
                if found is not None:
                    raise
        raise errors.IdempotencyConflict(
            f"request {request_key!r} was filed meanwhile with other content"
        )

    # ------------------------------------------------------------ waiting
    async def file_and_wait(
        self,
        ctx: Context,
        s: Session,
        file: Callable[[], Approval | Question],
        *,
        wait: bool,
        limit: float | None = None,
        kept: bool = False,
    ) -> Outcome:
        """File the request, then (``wait``) wait for the decision, at most ``limit`` seconds
        (None: until decided). If the client cancels or times out before it has the outcome
        — while filing or while waiting — a still-pending request is withdrawn, in a shielded
        write, unless it is ``kept`` (filed with an idempotency key)."""
        filed: list[str] = []

        def file_once() -> Approval | Question:
            item = file()
            filed.append(item.id)
            return item

        try:
            for _ in range(3):
                item = await anyio.to_thread.run_sync(file_once)
                outcome = (
                    approval_outcome(item) if isinstance(item, Approval) else question_outcome(item)
                )
                if outcome.status != "pending":  # found decided: read as any decision is
                    return await anyio.to_thread.run_sync(self.read, s, item.id)
                if not wait:
                    return outcome
                outcome = await self.wait(ctx, s, item.id, limit=limit)
                # a rejoined request that an earlier caller's timeout withdrew: file afresh
                if outcome.status != "withdrawn" or not await anyio.to_thread.run_sync(
                    self.run_goes_on, s
                ):
                    return outcome
            return outcome
        except anyio.get_cancelled_exc_class():
            if filed and not kept:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(
                        self.withdraw,
                        s,
                        filed[-1],
                        "the MCP client cancelled or timed out before it had the decision",
                    )
            raise

    @staticmethod
    def run_goes_on(s: Session) -> bool:
        run = s.journal.runs.get(s.run_id)
        return not run.status.terminal and not run.cancel_requested

    async def wait(self, ctx: Context, s: Session, item_id: str, *, limit: float | None) -> Outcome:
        """Wait (in worker threads) until decided, sending progress; ``limit`` None waits
        until decided, expired or withdrawn."""
        start = anyio.current_time()
        while True:
            elapsed = anyio.current_time() - start
            chunk = (
                self.progress_every_s
                if limit is None
                else max(0.0, min(self.progress_every_s, limit - elapsed))
            )
            outcome = await anyio.to_thread.run_sync(
                self.wait_chunk, s, item_id, chunk, abandon_on_cancel=True
            )
            elapsed = anyio.current_time() - start
            if outcome.status != "pending" or (limit is not None and elapsed >= limit):
                return outcome
            await ctx.report_progress(
                round(elapsed, 3), limit, "waiting for an operator on the Proctor desk"
            )

    def wait_chunk(self, s: Session, item_id: str, timeout: float) -> Outcome:
        outcome = self.read(s, item_id, wait=timeout)
        if outcome.status == "pending":
            run = s.journal.runs.get(outcome.run_id)
            if run.cancel_requested and not run.status.terminal:
                reason = f"the operator asked this run to stop: {run.cancel_reason or ''}".strip()
                self.withdraw(s, item_id, reason)
                s.journal.runs.cancel(run.id, reason)
                return self.read(s, item_id).model_copy(update={"reason": reason})
        return outcome

    def read(self, s: Session, item_id: str, wait: float = 0.0) -> Outcome:
        j = s.journal
        if item_id.startswith("apr_"):
            # wait() proves the decision when trust is configured (even with wait == 0)
            return approval_outcome(
                j.approvals.wait(item_id, wait, poll=self.poll_s)
                if wait > 0 or j.trust is not None
                else j.approvals.get(item_id).as_agent_sees(j.now())  # a held decision: pending
            )
        if item_id.startswith("int_"):
            outcome = question_outcome(
                j.questions.wait(item_id, wait, poll=self.poll_s)
                if wait > 0
                else j.questions.get(item_id)
            )
            if outcome.status == "answered":
                decisions = j.approvals.decisions(item_id)
                if decisions:
                    outcome = outcome.model_copy(update={"reason": decisions[-1].reason})
            return outcome
        raise errors.NotFound(f"{item_id!r} is not an approval (apr_...) or question (int_...) id")

    @staticmethod
    def withdraw(s: Session, item_id: str, reason: str) -> None:
        withdraw_item(s.journal, item_id, reason)


def serve_stdio(
    journal_path: str | os.PathLike[str],
    *,
    project: str = "mcp",
    agent: str | None = None,
    trust: Any = None,
) -> None:
    """Serve over stdio until the host closes the pipe (or SIGTERM/SIGINT)."""
    import signal

    proctor = ProctorMCP(journal_path, project=project, agent=agent, trust=trust)

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            async def serve() -> None:
                await proctor.server.run_stdio_async()
                tg.cancel_scope.cancel()

            tg.start_soon(stop_on_signal)
            tg.start_soon(serve)

    try:
        anyio.run(main)
    except BaseException as exc:
        if not host_gone(exc):
            raise
        log.info("the MCP host went away (its pipe closed); the server stops")
        quiet_stdout()


__all__ = ["Outcome", "ProctorMCP", "serve_stdio"]
