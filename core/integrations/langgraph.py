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
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from langgraph.types import Command, Interrupt
from pydantic import BaseModel, ConfigDict

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import (
    Approval,
    ApprovalStatus,
    EffectStatus,
    Question,
    QuestionKind,
    QuestionStatus,
    SafetyClass,
)

from . import langgraph_review as review
from .gates import read_approval, tool_action, verdict_of

T = TypeVar("T")
FILED = "langgraph.interrupt_filed"
MAX_REFILES = 20
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
ANSWER_KEYS = {
    QuestionKind.QUESTION: "text",
    QuestionKind.CHOICE: "choice",
    QuestionKind.CONFIRMATION: "confirmed",
}


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


class EffectNotExecuted(Exception):
    """Raise from an effect's function when it certainly did not happen: the effect is marked
    ``failed`` (it may be retried). Any other exception marks it ``ambiguous``."""


def run_id_for(thread_id: str) -> str:
    return "run_" + hashlib.sha256(f"langgraph:{thread_id}".encode()).hexdigest()[:24]


def open_checkpointer(path: str | os.PathLike[str]) -> Any:
    """A ``SqliteSaver`` on its own file, usable from several processes (WAL, busy timeout)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def jsonable(value: Any) -> Any:
    """Plain JSON data (pydantic models dumped, anything else unknown as its str)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        return str(obj)

    return json.loads(json.dumps(value, default=default, ensure_ascii=False))


def is_approval_value(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    action = value.get("action")
    return value.get("kind") == "approval" or (
        isinstance(action, Mapping) and bool(action.get("tool") or action.get("name"))
    )


class GraphEffects:
    """Side effects of graph nodes as Proctor effects. Build it before the graph (nodes close
    over it); :class:`LangGraphBridge` has one as ``.effects``."""

    def __init__(self, journal: Journal, *, owner: str | None = None) -> None:
        self.j = journal
        self.owner = owner or f"{journal.actor.name}@{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def run(
        self,
        name: str,
        fn: Callable[[], T],
        *,
        tool: str | None = None,
        action: Any = None,
        approval: Mapping[str, Any] | None = None,
        safety_class: SafetyClass | str = SafetyClass.UNSAFE_WRITE,
        lease_seconds: float = 60.0,
    ) -> T:
        """Run a side effect at most once per thread, inside a node.

        The effect key is ``langgraph:<thread>:effect:<name>``. A committed effect is not run
        again: its stored result is returned (``fn`` must return JSON data). With
        ``approval=`` (the resume value of an approval interrupt) the approval is consumed for
        exactly its action in the same transaction as the reservation. ``fn`` raising
        :class:`EffectNotExecuted` marks the effect failed; anything else marks it ambiguous
        (a person resolves it on the desk)."""
        from langgraph.config import get_config

        thread_id = str(get_config()["configurable"]["thread_id"])
        key = f"langgraph:{thread_id}:effect:{name}"
        done = self._committed(key)
        if done is not None:
            return done.result
        try:
            if approval is not None and not self._consumed_for(approval, key):
                self.j.approvals.consume_and_reserve(
                    approval["approval_id"],
                    approval["action_digest"],
                    key,
                    lease_seconds=lease_seconds,
                    owner=self.owner,
                    origin=origins.here("langgraph", tool=tool or name),
                )
            else:  # no approval, or a retry of a failed attempt that already consumed it
                self.j.effects.reserve(
                    key,
                    tool=tool or name,
                    run_id=run_id_for(thread_id),
                    action=action,
                    safety_class=safety_class,
                    lease_seconds=lease_seconds,
                    owner=self.owner,
                    origin=origins.here("langgraph", tool=tool or name),
                )
        except errors.EffectCommitted:
            return self.j.effects.get(key).result
        self.j.effects.begin(key, owner=self.owner)
        try:
            result = fn()
        except EffectNotExecuted as exc:
            self.j.effects.fail(key, str(exc) or "not executed", owner=self.owner)
            raise
        except BaseException as exc:
            self.j.effects.mark_ambiguous(key, f"{type(exc).__name__}: {exc}", owner=self.owner)
            raise
        self.j.effects.commit(key, jsonable(result), owner=self.owner)
        return result

    def _committed(self, key: str) -> Any:
        try:
            effect = self.j.effects.get(key)
        except errors.NotFound:
            return None
        return effect if effect.status == EffectStatus.COMMITTED else None

    def _consumed_for(self, approval: Mapping[str, Any], key: str) -> bool:
        return self.j.approvals.get(approval["approval_id"]).consumed_effect_key == key


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
        pending = self._file_all(thread_id, state.interrupts)
        answers = {p.interrupt_id: p for p in pending if self._answered(p)}
        if not answers:
            return self._outcome(thread_id, "waiting", pending)
        return self._round(
            thread_id,
            checkpoint_of(state),
            list(answers.values()),
            lambda: Command(
                resume=self._resume_map(answers, {i.id: i.value for i in state.interrupts})
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
        return self._outcome(thread_id, "waiting", self._file_all(thread_id, state.interrupts))

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
                pending = self._refile(thread_id, answers, message)
                return self._outcome(
                    thread_id, "refused", pending, detail=f"the graph refused the answer: {message}"
                )
            stuck = self._ambiguous(thread_id)
            if stuck:  # the node crashed inside a side effect: a person says what happened
                return self._waiting_for_resolution(thread_id, stuck)
            raise
        state = self._state(thread_id)
        pending = self._file_all(thread_id, state.interrupts)
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

    def _file_all(self, thread_id: str, interrupts: tuple[Interrupt, ...]) -> list[Pending]:
        filed = self._filed(thread_id)
        return [
            filed[i.id] if i.id in filed else self._file(thread_id, i, 1, None) for i in interrupts
        ]

    def _filed(self, thread_id: str) -> dict[str, Pending]:
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
        return {k: self._refresh(p) for k, p in found.items()}

    def _refresh(self, p: Pending) -> Pending:
        """The item as it stands; with the journal opened with ``trust=`` (or
        ``PROCTOR_TRUSTED_OPERATORS``) a decision no trusted operator signed raises
        DecisionUnverified here, before the graph is resumed with it."""
        if p.kind in review.SHAPES:
            open_ = [i for i in p.items if not self._item_done(i)]
            return p.model_copy(update={"status": "pending" if open_ else "decided"})
        item: Approval | Question = (
            read_approval(self.j, p.item_id)
            if p.kind == "approval"
            else self.j.questions.get(p.item_id)
        )
        return p.model_copy(update={"status": item.status.value})

    def _item_done(self, item: Mapping[str, str]) -> bool:
        if item["kind"] == "approval":
            return read_approval(self.j, item["id"]).status in (
                ApprovalStatus.APPROVED,
                ApprovalStatus.DENIED,
                ApprovalStatus.EXPIRED,
            )
        return self.j.questions.get(item["id"]).status in QUESTION_DONE

    def _file(self, thread_id: str, intr: Interrupt, attempt: int, refused: dict | None) -> Pending:
        rid = run_id_for(thread_id)
        key = f"langgraph:{thread_id}:{intr.id}" + (f"#{attempt}" if attempt > 1 else "")
        item: Approval | Question
        shape = review.shape_of(intr.value)
        if shape is not None:
            return self._file_review(thread_id, intr, attempt, shape, key)
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
            item = self._ask(rid, key, thread_id, intr, refused)
            kind = "interaction"
        payload = {"interrupt_id": intr.id, "kind": kind, "item_id": item.id, "attempt": attempt}
        event_id = (
            "evt_lg_" + hashlib.sha256(f"{thread_id}|{intr.id}|{attempt}".encode()).hexdigest()[:24]
        )
        self.j.runs.append_event(rid, FILED, payload, event_id=event_id)
        return Pending(**payload, status=item.status.value)

    def _file_review(
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
        return self._refresh(Pending(**payload, status=""))

    def _ask(
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

    def _refile(self, thread_id: str, answers: list[Pending], message: str) -> list[Pending]:
        """The answers were refused at resume: ask again, showing the error."""
        state = self._state(thread_id)
        by_id = {i.id: i for i in state.interrupts}
        refiled = {}
        for p in answers:
            if p.interrupt_id not in by_id or p.attempt >= MAX_REFILES:
                continue
            refused = {
                "refused_answer": self._resume_value(p, by_id[p.interrupt_id].value),
                "error": message,
            }
            refiled[p.interrupt_id] = self._file(
                thread_id, by_id[p.interrupt_id], p.attempt + 1, refused
            )
        filed = self._file_all(thread_id, state.interrupts)
        return [refiled.get(p.interrupt_id, p) for p in filed]

    # ------------------------------------------------------------ answers
    @staticmethod
    def _answered(p: Pending) -> bool:
        if p.kind in review.SHAPES:
            return p.status == "decided"
        if p.kind == "approval":
            return p.status in (
                ApprovalStatus.APPROVED,
                ApprovalStatus.DENIED,
                ApprovalStatus.EXPIRED,
            )
        return p.status in QUESTION_DONE

    def _resume_map(self, answers: dict[str, Pending], values: Mapping[str, Any]) -> dict[str, Any]:
        return {iid: self._resume_value(p, values.get(iid)) for iid, p in answers.items()}

    def _resume_value(self, p: Pending, value: Any = None) -> Any:
        if p.kind in review.SHAPES:
            return self._review_answer(p, value)
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

    def _review_answer(self, p: Pending, value: Any) -> Any:
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
QUESTION_DONE = (QuestionStatus.RESOLVED, QuestionStatus.DISMISSED)


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
    "GraphOutcome",
    "LangGraphBridge",
    "Pending",
    "config_for",
    "jsonable",
    "open_checkpointer",
    "run_id_for",
]
