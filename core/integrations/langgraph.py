"""LangGraph adapter: a graph's ``interrupt(...)`` becomes a Proctor question or approval, and the
graph resumes — from any process — once the operator has answered on the desk.

Mapping (one LangGraph thread = one Proctor run, id ``run_id_for(thread_id)``):

- An interrupt whose value is approval-shaped (a dict with ``kind: "approval"`` or an ``action``
  dict with a ``tool`` name) is filed as an approval of that action; it resumes with
  ``{"approved", "reason", "decided_by", "approval_id", "action_digest", "edited", "action",
  "args", "requested_digest"}``: ``action``/``args`` are what to run — the operator's edit if
  they edited the action (``edited``), and ``action_digest`` is its digest. Pass that dict as
  ``approval=`` to :meth:`LangGraphBridge.effect` to consume the approval exactly once.
- Any other interrupt is filed as a human interaction. ``Interrupt.response_schema`` becomes the
  form's JSON Schema (the desk refuses answers that fail it); ``value["kind"]``, ``["question"]``
  / ``["prompt"]`` and ``["options"]`` shape it. With a response_schema the graph resumes with the
  answer object as is; without one, a question resumes with the text, a choice with the chosen
  value, a confirmation with the boolean.
- Interrupt id -> Proctor item: recorded as a ``langgraph.interrupt_filed`` run event.

Exactly once: every step of the graph (start, each resume) is claimed first as a Proctor effect
``langgraph:<thread>:<checkpoint_id>`` (a lease, renewed while the graph runs). Of N concurrent
resumers one wins; the others get ``claimed_elsewhere`` / ``already_resumed``. If the winner
crashes, its lease lapses and the claim turns ``ambiguous`` (the desk shows it: a person resolves
it); the next resumer checks the graph's checkpoint and, when the graph has not moved, claims
the next attempt (``...#2``) and resumes. LangGraph alone would run both resumers.

A node re-runs from its start on resume: whatever a node did before its ``interrupt()`` runs
again. Wrap side effects in :meth:`LangGraphBridge.effect` (reserve -> begin -> commit, the
committed result is returned on re-runs, ``ambiguous`` on a crash).

An answer that passes the JSON Schema but still fails at resume (a pydantic validator) is not
lost: core cannot reopen an answered question, so the adapter files a new question for the same
interrupt, with the refused answer and the error in its request and prompt.

Modules: this one drives the graph (claims, rounds, outcomes); ``langgraph_items`` files
interrupts and reads answers back; ``langgraph_effects`` runs node side effects;
``langgraph_review`` maps LangGraph's and LangChain's review shapes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from langgraph.types import Command
from pydantic import BaseModel, ConfigDict

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import EffectStatus, SafetyClass

from .langgraph_effects import EffectNotExecuted, GraphEffects, jsonable, run_id_for
from .langgraph_items import Interrupts, Pending, answered

T = TypeVar("T")
MAX_CLAIM_ATTEMPTS = 20


Action = Literal[
    "started",
    "resumed",
    "waiting",
    "claimed_elsewhere",
    "already_resumed",
    "refused",
    "done",
    "cancelled",
]


class GraphOutcome(BaseModel):
    """What a start/resume call did, and where the thread stands now."""

    model_config = ConfigDict(frozen=True)
    thread_id: str
    run_id: str
    action: Action
    done: bool = False
    pending: list[Pending] = []
    values: Any = None
    detail: str | None = None


def open_checkpointer(path: str | os.PathLike[str]) -> Any:
    """A ``SqliteSaver`` on its own file, usable from several processes (WAL, busy timeout)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


class LangGraphBridge:
    """Drives one compiled graph (with a checkpointer) against a Proctor journal.

    ``journal`` is opened by the agent (``Actor.agent(...)``, with ``trust=`` to accept only
    decisions a trusted operator signed); ``graph`` is compiled with a checkpointer every
    process can reach (:func:`open_checkpointer`)."""

    def __init__(
        self,
        journal: Journal,
        graph: Any,
        *,
        project: str = "langgraph",
        agent: str | None = None,
        lease_seconds: float = 30.0,
    ) -> None:
        if graph.checkpointer is None:
            raise ValueError("compile the graph with a checkpointer (open_checkpointer(path))")
        check_own_file(journal, graph.checkpointer)
        self.j = journal
        self.graph = graph
        self.project = project
        self.agent = agent or journal.actor.name
        self.lease_seconds = lease_seconds
        self.owner = f"{self.agent}@{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.effects = GraphEffects(journal, owner=self.owner)
        self.items = Interrupts(journal)

    # ------------------------------------------------------------ public
    def start(self, thread_id: str, graph_input: Any, *, title: str | None = None) -> GraphOutcome:
        """Open the run and run the graph until its first interrupt (or its end). Calling it
        again for a started thread runs nothing and reports where the thread stands."""
        rid = run_id_for(thread_id)
        self.j.runs.start(
            self.project,
            title or f"LangGraph thread {thread_id}",
            agent=self.agent,
            run_id=rid,
            metadata={"via": "langgraph", "thread_id": thread_id},
        )
        if self._state(thread_id).created_at is not None:
            return self.status(thread_id)
        return self._round(thread_id, "start", [], lambda: graph_input, "started")

    def resume(self, thread_id: str) -> GraphOutcome:
        """Resume with every answered interrupt, if this process wins the claim."""
        state = self._state(thread_id)
        if state.created_at is None:
            raise errors.NotFound(f"LangGraph thread {thread_id} was never started")
        outcome = self._sync(thread_id, state)
        if outcome is not None:
            return outcome
        stuck = self._ambiguous(thread_id)
        if stuck:  # a node crashed inside a side effect: nothing runs until a person resolves
            return self._waiting_for_resolution(thread_id, stuck)
        if not state.interrupts:  # stopped without an interrupt (a node failed): run it again
            return self._round(thread_id, checkpoint_of(state), [], lambda: None, "resumed")
        pending = self.items.file_all(thread_id, state.interrupts)
        answers = {p.interrupt_id: p for p in pending if answered(p)}
        if not answers:
            return self._outcome(thread_id, "waiting", pending)
        return self._round(
            thread_id,
            checkpoint_of(state),
            list(answers.values()),
            lambda: Command(
                resume=self.items.resume_map(answers, {i.id: i.value for i in state.interrupts})
            ),
            "resumed",
        )

    def status(self, thread_id: str) -> GraphOutcome:
        """Where the thread stands (files any interrupt not yet filed)."""
        state = self._state(thread_id)
        outcome = self._sync(thread_id, state)
        if outcome is not None:
            return outcome
        stuck = self._ambiguous(thread_id)
        if stuck:
            return self._waiting_for_resolution(thread_id, stuck)
        return self._outcome(thread_id, "waiting", self.items.file_all(thread_id, state.interrupts))

    def run_until_done(
        self,
        thread_id: str,
        graph_input: Any = None,
        *,
        poll_s: float = 0.5,
        timeout: float | None = None,
        title: str | None = None,
    ) -> GraphOutcome:
        """Start (if needed), then resume whenever the desk answers, until the graph ends, the
        operator cancels the run, or ``timeout`` passes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outcome = self.start(thread_id, graph_input, title=title)
        while outcome.action not in ("done", "cancelled") and not outcome.done:
            if deadline is not None and time.monotonic() >= deadline:
                return outcome
            if outcome.action not in ("resumed", "refused"):
                time.sleep(poll_s)
            outcome = self.resume(thread_id)
        return outcome

    def effect(self, name: str, fn: Callable[[], T], **kw: Any) -> T:
        """:meth:`GraphEffects.run` with this bridge's journal."""
        return self.effects.run(name, fn, **kw)

    # ------------------------------------------------------------ one claimed step
    def _round(
        self,
        thread_id: str,
        checkpoint: str,
        answers: list[Pending],
        command: Callable[[], Any],
        action: Action,
    ) -> GraphOutcome:
        claim = self._claim(thread_id, checkpoint)
        if isinstance(claim, GraphOutcome):
            return claim
        key = claim
        self.j.effects.begin(key, owner=self.owner)
        state = self._state(thread_id)
        if checkpoint_of(state) != checkpoint:
            self.j.effects.fail(key, "the graph moved on before this claim ran", owner=self.owner)
            return self._outcome(thread_id, "already_resumed", [])
        try:
            with self._heartbeat(key):
                self._invoke(command(), thread_id)
        except Exception as exc:
            self.j.effects.fail(key, f"{type(exc).__name__}: {exc}"[:2000], owner=self.owner)
            if is_invalid_resume(exc):
                message = error_text(exc)
                pending = self.items.refile(
                    thread_id, self._state(thread_id).interrupts, answers, message
                )
                return self._outcome(
                    thread_id, "refused", pending, detail=f"the graph refused the answer: {message}"
                )
            stuck = self._ambiguous(thread_id)
            if stuck:  # the node crashed inside a side effect: a person says what happened
                return self._waiting_for_resolution(thread_id, stuck)
            raise
        state = self._state(thread_id)
        pending = self.items.file_all(thread_id, state.interrupts)
        self.j.effects.commit(
            key,
            {
                "resumed": [a.interrupt_id for a in answers],
                "checkpoint": checkpoint_of(state),
                "pending": [p.interrupt_id for p in pending],
            },
            owner=self.owner,
        )
        outcome = self._sync(thread_id, state)  # completes the run when the graph ended
        if outcome is None:
            return self._outcome(thread_id, action, pending)
        return outcome.model_copy(update={"action": action})

    def _ambiguous(self, thread_id: str) -> list[Pending]:
        """The thread's side effects a crash left ambiguous, as items a person resolves."""
        prefix = f"langgraph:{thread_id}:effect:"
        page = self.j.effects.list(
            status=[EffectStatus.AMBIGUOUS], run_id=run_id_for(thread_id), limit=200
        )
        return [
            Pending(
                interrupt_id=e.key,
                kind="effect",
                item_id=e.key,
                status="ambiguous",
                attempt=e.attempt,
            )
            for e in page.items
            if e.key.startswith(prefix)
        ]

    def _waiting_for_resolution(self, thread_id: str, stuck: list[Pending]) -> GraphOutcome:
        names = ", ".join(p.item_id for p in stuck)
        return self._outcome(
            thread_id,
            "waiting",
            stuck,
            detail=f"waiting for a person to resolve {names} on the desk "
            "(committed: the node goes on; failed: it is retried)",
        )

    def _invoke(self, command: Any, thread_id: str) -> Any:
        """Run the graph (the seam a crash test overrides)."""
        return self.graph.invoke(command, config_for(thread_id))

    def _claim(self, thread_id: str, checkpoint: str) -> str | GraphOutcome:
        """Win the effect ``langgraph:<thread>:<checkpoint>`` or say who has it."""
        base = f"langgraph:{thread_id}:{checkpoint}"
        rid = run_id_for(thread_id)
        holder = self._live_claim(rid)
        if holder is not None:  # another process is inside the graph (maybe past checkpoint)
            return self._outcome(
                thread_id,
                "claimed_elsewhere",
                [],
                detail=f"{holder.key} is held by {holder.lease_owner}",
            )
        for attempt in range(1, MAX_CLAIM_ATTEMPTS + 1):
            key = base if attempt == 1 else f"{base}#{attempt}"
            try:
                self.j.effects.reserve(
                    key,
                    tool="langgraph.resume",
                    run_id=rid,
                    action={
                        "thread_id": thread_id,
                        "checkpoint_id": checkpoint,
                        "attempt": attempt,
                    },
                    safety_class=SafetyClass.UNSAFE_WRITE,
                    lease_seconds=self.lease_seconds,
                    owner=self.owner,
                    origin=origins.here("langgraph", tool="resume"),
                )
                return key
            except errors.EffectBusy as exc:
                return self._outcome(thread_id, "claimed_elsewhere", [], detail=str(exc))
            except errors.EffectCommitted:
                return self._outcome(thread_id, "already_resumed", [])
            except errors.EffectAmbiguous:
                # the claimer's lease lapsed (it crashed): resume only if the graph never moved
                state = self._state(thread_id)
                if checkpoint_of(state) != checkpoint:
                    return self._outcome(
                        thread_id,
                        "already_resumed",
                        [],
                        detail=f"{key} is ambiguous; the graph moved on",
                    )
                self.j.runs.append_event(
                    rid,
                    "langgraph.claim_recovered",
                    {
                        "ambiguous_claim": key,
                        "checkpoint_id": checkpoint,
                        "next_attempt": attempt + 1,
                    },
                )
        raise errors.EffectAmbiguous(
            f"{base}: {MAX_CLAIM_ATTEMPTS} claims crashed; resolve them on the desk"
        )

    def _live_claim(self, run_id: str) -> Any:
        """A claim of this thread whose lease is still running, if any. Read after the graph's
        state: a resumer that is past that state holds a live claim until it commits."""
        page = self.j.effects.list(
            status=[EffectStatus.RESERVED, EffectStatus.EXECUTING], run_id=run_id, limit=50
        )
        now = self.j.now()
        return next(
            (
                e
                for e in page.items
                if e.tool == "langgraph.resume"
                and e.lease_expires_at is not None
                and e.lease_expires_at > now
            ),
            None,
        )

    @contextmanager
    def _heartbeat(self, key: str) -> Iterator[None]:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.lease_seconds / 3):
                try:
                    self.j.effects.renew(key, owner=self.owner)
                except errors.ProctorError:
                    return

        thread = threading.Thread(target=beat, name=f"lease {key}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    # ------------------------------------------------------------ interrupts <-> items
    def _sync(self, thread_id: str, state: Any) -> GraphOutcome | None:
        """Close the run if the graph ended or the operator cancelled it; None otherwise."""
        rid = run_id_for(thread_id)
        run = self.j.runs.get(rid)
        if run.cancel_requested and not run.status.terminal:
            self.j.runs.cancel(rid, run.cancel_reason or "cancelled by the operator")
            return self._outcome(thread_id, "cancelled", [])
        if run.status.terminal and run.status != "completed":
            return self._outcome(thread_id, "cancelled", [], detail=f"the run is {run.status}")
        if not state.interrupts and not state.next and state.created_at is not None:
            values = jsonable(state.values)
            if not run.status.terminal:
                self.j.runs.complete(rid, values)
            return self._outcome(thread_id, "done", [], done=True, values=values)
        return None

    def _state(self, thread_id: str) -> Any:
        return self.graph.get_state(config_for(thread_id))

    def _outcome(
        self, thread_id: str, action: Action, pending: list[Pending], **extra: Any
    ) -> GraphOutcome:
        return GraphOutcome(
            thread_id=thread_id,
            run_id=run_id_for(thread_id),
            action=action,
            pending=pending,
            **extra,
        )


# A question the graph resumes from: answered, or dismissed by the operator.
def is_invalid_resume(exc: BaseException) -> bool:
    """The resume value failed the interrupt's response_schema (langgraph >= 1.2 marks it)."""
    try:
        from langgraph.errors import is_invalid_resume as marked
    except ImportError:  # older langgraph validates nothing at resume
        return False
    return marked(exc)


def error_text(exc: Exception) -> str:
    """One line naming what was wrong (pydantic errors field by field, without doc links)."""
    problems = getattr(exc, "errors", None)
    if callable(problems):
        try:
            return "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in problems()
            )[:1000]
        except (TypeError, KeyError):
            pass
    return str(exc).splitlines()[0][:1000] if str(exc) else type(exc).__name__


def config_for(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def checkpoint_of(state: Any) -> str:
    return str(state.config["configurable"].get("checkpoint_id") or "start")


def check_own_file(journal: Journal, checkpointer: Any) -> None:
    """A SQLite checkpointer must have its own file, never the journal's."""
    conn = getattr(checkpointer, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        return
    files = [row[2] for row in conn.execute("PRAGMA database_list").fetchall() if row[2]]
    if any(Path(f).resolve() == Path(journal.path).resolve() for f in files):
        raise ValueError("give the LangGraph checkpointer its own file, not the journal")


__all__ = [
    "EffectNotExecuted",
    "GraphEffects",
    "GraphOutcome",
    "LangGraphBridge",
    "Pending",
    "config_for",
    "jsonable",
    "open_checkpointer",
    "run_id_for",
]
