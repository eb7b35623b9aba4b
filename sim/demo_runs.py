"""The runs a demo journal is made of, written through the public core API.

Every call goes through agent or operator journals that share one deterministic clock
and seeded ids, so the same seed writes the same bytes (same digests).
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

from proctor.core import Actor, Journal, errors
from proctor.core.models import ApprovalStatus, Origin, QuestionKind, SafetyClass

from . import content

# Where the seeded requests say they come from: the same in every build with one seed (the
# default names this process's pid, and the request event binds its digest).
DEMO_ORIGIN = Origin(runtime="python", process="proctor demo-journal")

DEMO_AGENTS = [
    "claude-billing",
    "codex-docs",
    "ops-bot",
    "triage-bot",
    "pipeline-agent",
    "release-bot",
]
DEMO_OPERATORS = ["alice", "bob"]
BASE_TIME = 1_790_841_600.0  # 2026-10-01 08:00 UTC


class DemoClock:
    """A deterministic clock: every reading moves time forward by one small tick."""

    def __init__(self, start: float = BASE_TIME, tick: float = 0.0137) -> None:
        self.t = start
        self.tick = tick

    def __call__(self) -> float:
        self.t = round(self.t + self.tick, 4)
        return self.t

    def advance(self, seconds: float) -> None:
        self.t = round(self.t + seconds, 4)


class DemoWriter:
    """Writes believable runs: finished history and runs left waiting for a person."""

    def __init__(self, path: str, seed: int, clock: DemoClock) -> None:
        self.rng = random.Random(f"demo:{seed}")
        # how long a person takes to decide: its own sequence, so the content stays as seeded
        self.pace = random.Random(f"demo-pace:{seed}")
        self.clock = clock
        # a demo journal is rebuilt, not recovered: its commits skip the per-commit fsync
        self.agents = [
            Journal.open(
                path,
                actor=Actor.agent(name),
                clock=clock,
                id_seed=seed * 1000 + i,
                synchronous="NORMAL",
            )
            for i, name in enumerate(DEMO_AGENTS)
        ]
        self.operators = [
            Journal.open(
                path,
                actor=Actor.operator(name),
                clock=clock,
                id_seed=seed * 1000 + 500 + i,
                synchronous="NORMAL",
            )
            for i, name in enumerate(DEMO_OPERATORS)
        ]
        self.events = 0
        self.action_turn = 0
        self.question_turn = 0
        self.pending_turn = 0
        self.approval_turn = 0

    def close(self) -> None:
        for journal in self.agents + self.operators:
            journal.close()

    # ------------------------------------------------------------ helpers
    def agent(self) -> Journal:
        return self.rng.choice(self.agents)

    def operator(self) -> Journal:
        return self.rng.choice(self.operators)

    def start(self, aj: Journal, parent: str | None = None) -> tuple[Any, str]:
        project, space = content.pick_place(self.rng)
        title = content.maybe_hostile(self.rng, content.run_title(self.rng, project), 0.04)
        model = self.rng.choice(content.MODELS)
        run = aj.runs.start(
            project,
            title,
            space=space,
            parent_run_id=parent,
            metadata={"model": model, "demo": True},
        )
        self.chatter(aj, run.id, model, self.rng.randint(1, 3))
        return run, model

    def chatter(
        self, aj: Journal, run_id: str, model: str, steps: int, tool_call: bool = True
    ) -> None:
        batch: list[tuple[str, Any]] = []
        for step in range(1, steps + 1):
            batch += content.model_events(self.rng, model, step)
        aj.runs.append_events(run_id, batch)
        if not tool_call:
            return
        tool, request = content.read_request(self.rng, "demo")
        call = aj.runs.record_tool_call(run_id, tool, request)
        aj.runs.finish_tool_call(
            call.id, "succeeded", result={"bytes": self.rng.randint(200, 90_000)}
        )

    def next_action(self, project: str) -> content.ActionSpec:
        kind = content.ACTION_KINDS[self.action_turn % len(content.ACTION_KINDS)]
        self.action_turn += 1
        return content.make_action(kind, self.rng, project)

    def next_question_kind(self) -> QuestionKind:
        kind = content.QUESTION_KINDS[self.question_turn % len(content.QUESTION_KINDS)]
        self.question_turn += 1
        return kind

    def request(
        self,
        aj: Journal,
        run: Any,
        spec: content.ActionSpec,
        *,
        expiring: bool = False,
        scope: str = "once",
    ) -> tuple[Any, str]:
        call = aj.runs.record_tool_call(
            run.id, spec.action["tool"], spec.action["args"], safety_class=spec.safety_class
        )
        extra: dict[str, Any] = {}
        if expiring:
            extra = {
                "expires_in": float(self.rng.choice([900, 3600, 86_400])),
                "on_expiry": "keep_pending",
            }
        approval = aj.approvals.request(
            run.id,
            spec.action,
            reason=spec.reason,
            safety_class=spec.safety_class,
            requested_scope=scope,
            tool_call_id=call.id,
            origin=DEMO_ORIGIN,
            **extra,
        )
        return approval, call.id

    def execute(
        self,
        aj: Journal,
        approval: Any,
        spec: content.ActionSpec,
        call_id: str,
        *,
        fault: str | None = None,
    ) -> str:
        key = f"{spec.action['tool']}/{approval.id}"
        owner = f"{aj.actor.name}@demo"
        aj.approvals.consume_and_reserve(
            approval.id, approval.action_digest, key, lease_seconds=30.0, owner=owner
        )
        aj.effects.begin(key, owner=owner)
        if fault in ("lease", "lost"):  # the provider answered "accepted", then went quiet
            aj.effects.record_receipt(
                key,
                external_id=f"req_{approval.id[-10:]}",
                owner=owner,
                evidence={"provider_status": 202, "note": "request accepted; no final response"},
            )
        if fault == "lease":
            self.clock.advance(45.0)
            aj.effects.sweep_expired()
        elif fault == "lost":
            aj.effects.mark_ambiguous(
                key,
                content.maybe_hostile(
                    self.rng, "the provider timed out after 30 s; the request may have gone through"
                ),
                owner=owner,
                partial_result={"status": "accepted", "request_id": f"req_{approval.id[-10:]}"},
            )
        else:
            aj.effects.commit(
                key,
                spec.result,
                owner=owner,
                external_id=str(next(iter(spec.result.values()), "")),
                evidence={"demo": True},
            )
            aj.runs.finish_tool_call(call_id, "succeeded", result=spec.result)
        return key

    # ------------------------------------------------------------ finished history
    def history_run(self, parent: str | None = None) -> Any:
        aj = self.agent()
        run, model = self.start(aj, parent)
        for _ in range(self.rng.choice([0, 1, 1, 2])):
            self.decided_approval(aj, run)
            self.chatter(aj, run.id, model, 1, tool_call=False)
        if self.rng.random() < 0.5:
            self.answered_question(aj, run)
        if self.rng.random() < 0.35:
            self.memory_history(aj, run)
        return self.finish(aj, run)

    def person_thinks(self) -> None:
        """The time a person takes to read a request and decide: mostly a minute or two,
        sometimes half an hour (the Overview's "Time to decision" reads it)."""
        self.clock.advance(min(1800.0, max(5.0, self.pace.lognormvariate(4.5, 0.9))))

    def decided_approval(self, aj: Journal, run: Any) -> None:
        spec = self.next_action(run.project)
        scope = "run" if self.rng.random() < 0.15 else "once"
        approval, call_id = self.request(aj, run, spec, scope=scope)
        if approval.status == ApprovalStatus.PENDING:
            if self.rng.random() < 0.08:  # nobody looked in time
                aj.approvals.withdraw(approval.id, "the agent stopped waiting after 1 h")
                aj.runs.finish_tool_call(call_id, "failed", error="no decision in time")
                return
            op = self.operator()
            self.person_thinks()
            approve = self.rng.random() < 0.8
            approval = op.approvals.decide(
                approval.id,
                approve,
                expected_version=approval.version,
                reason=None
                if approve
                else self.rng.choice(
                    [
                        "Not during business hours.",
                        "Use the staging account first.",
                        "Amount looks wrong; check the order.",
                        "No: ask the customer first.",
                    ]
                ),
                scope=scope if approve else "once",
                source=self.rng.choice(["desk", "desk", "cli"]),
            )
        if approval.status == ApprovalStatus.APPROVED:
            self.execute(aj, approval, spec, call_id)
            if scope == "run":  # the run rule approves the follow-up by itself
                again = self.next_action(run.project)
                again = content.ActionSpec(
                    again.kind,
                    {**again.action, "tool": spec.action["tool"]},
                    again.safety_class,
                    again.reason,
                    again.result,
                )
                follow, follow_call = self.request(aj, run, again)
                if follow.status == ApprovalStatus.APPROVED:
                    self.execute(aj, follow, again, follow_call)
        else:
            aj.runs.finish_tool_call(call_id, "failed", error="not approved")
            aj.runs.append_event(
                run.id, "agent.adapted", {"approval_id": approval.id, "instead": spec.alternative}
            )

    def answered_question(self, aj: Journal, run: Any) -> None:
        kind = self.next_question_kind()
        entry = self.entry_for(aj, run) if kind == QuestionKind.MEMORY_CHANGE_REVIEW else None
        spec = content.make_question(kind, self.rng, run.project, entry)
        item = aj.questions.ask(
            run.id,
            spec.kind,
            spec.prompt,
            request=spec.request,
            response_schema=spec.response_schema,
            options=spec.options,
        )
        answer = content.answer_for(
            item.kind, item.response_schema, item.options, self.rng, item.request
        )
        op = self.operator()
        self.person_thinks()
        op.questions.answer(item.id, answer, expected_version=item.version)
        aj.runs.append_event(
            run.id, "agent.answer_used", {"interaction_id": item.id, "kind": kind.value}
        )

    def memory_history(self, aj: Journal, run: Any) -> None:
        entry = self.entry_for(aj, run)
        variant = content.memory_variant(self.rng, entry.content)
        if not entry.confirmed:  # a confirmed entry changes only through a person
            entry = aj.memory.replace(
                entry.id,
                variant,
                expected_version=entry.version,
                run_id=run.id,
                reason="newer information from the run",
            )
        if self.rng.random() < 0.4:
            incoming = content.memory_variant(self.rng, entry.content)
            fields = content.memory_incoming_fields(self.rng, entry)
            try:
                item = aj.memory.record_conflict(
                    entry.id,
                    incoming,
                    incoming_source=f"{aj.actor.name} (run {run.id})",
                    run_id=run.id,
                    **fields,
                )
            except errors.ConflictPending:  # one already waits on this entry
                item = None
            op = self.operator()  # drawn either way: the demo's later content stays the same
            choice = self.rng.choice(["accepted_local", "accepted_incoming", "dismissed"])
            if item is not None:
                op.memory.resolve(
                    item.id, choice, expected_version=item.version, reason="checked with the team"
                )
        elif self.rng.random() < 0.3:
            op = self.operator()
            current = op.memory.get(entry.id)
            op.memory.confirm(entry.id, expected_version=current.version, reason="verified by hand")

    def entry_for(self, aj: Journal, run: Any) -> Any:
        scope, key = content.memory_place(self.rng, run.project, run.space)
        title, text, kind = content.memory_fact(self.rng, scope)
        for entry in aj.memory.list(scope=scope, scope_key=key, limit=50):
            if entry.title == title:
                aj.memory.mark_used([entry.id])  # the agent read what it knew
                return entry
        return aj.memory.add(
            scope,
            key,
            title,
            text,
            kind=kind,
            run_id=run.id,
            trust=self.rng.choice(["agent_observed", "model_inferred"]),
            sensitivity=self.rng.choice(["normal", "normal", "internal"]),
            reason="learned while working",
        )

    def finish(self, aj: Journal, run: Any) -> Any:
        roll = self.rng.random()
        if roll < 0.08:
            done = aj.runs.fail(
                run.id,
                content.maybe_hostile(
                    self.rng,
                    self.rng.choice(
                        [
                            "TimeoutError: the deploy did not become healthy in 10 min",
                            "tests failed after 3 attempts",
                            "the customer record was not found",
                        ]
                    ),
                ),
            )
        elif roll < 0.12:
            op = self.operator()
            current = op.runs.get(run.id)
            op.runs.request_cancel(
                run.id, "Superseded by a newer run.", expected_version=current.version
            )
            done = aj.runs.cancel(run.id, "cancelled on request: Superseded by a newer run.")
        else:
            done = aj.runs.complete(run.id, {"summary": "done"})
        self.events += done.last_sequence
        self.clock.advance(self.rng.uniform(30, 600))
        return done

    # ------------------------------------------------------------ left waiting
    def pending_approval_run(self) -> Any:
        aj = self.agent()
        run, _ = self.start(aj)
        if self.rng.random() < 0.3:
            self.decided_approval(aj, run)
        safety = list(SafetyClass)[self.approval_turn % len(SafetyClass)]
        self.approval_turn += 1
        for _ in range(5):  # a rule may decide it at once; then the agent asks for another
            spec = content.make_action_of_class(safety, self.rng, run.project)
            approval, _ = self.request(
                aj,
                run,
                spec,
                expiring=self.rng.random() < 0.2,
                scope="run" if self.rng.random() < 0.25 else "once",
            )
            if approval.status == ApprovalStatus.PENDING:
                break
        return self.left_open(aj, run)

    def pending_question_run(self) -> Any:
        aj = self.agent()
        run, _ = self.start(aj)
        kind = content.QUESTION_KINDS[self.pending_turn % len(content.QUESTION_KINDS)]
        self.pending_turn += 1
        entry = self.entry_for(aj, run) if kind == QuestionKind.MEMORY_CHANGE_REVIEW else None
        spec = content.make_question(kind, self.rng, run.project, entry)
        aj.questions.ask(
            run.id,
            spec.kind,
            spec.prompt,
            request=spec.request,
            response_schema=spec.response_schema,
            options=spec.options,
        )
        return self.left_open(aj, run)

    def ambiguous_run(self) -> Any:
        aj = self.agent()
        run, _ = self.start(aj)
        kind = self.rng.choice(["payment", "email", "http", "shell"])
        spec = content.make_action(kind, self.rng, run.project)
        approval, call_id = self.request(aj, run, spec)
        if approval.status == ApprovalStatus.PENDING:
            approval = self.operator().approvals.decide(
                approval.id, True, expected_version=approval.version
            )
        if approval.status != ApprovalStatus.APPROVED:
            return self.left_open(aj, run)
        key = self.execute(aj, approval, spec, call_id, fault=self.rng.choice(["lease", "lost"]))
        aj.runs.wait_for_user(run.id)
        aj.runs.append_event(
            run.id,
            "agent.waiting_for_person",
            {"effect_key": key, "why": "the outcome of this effect is unknown"},
        )
        return self.left_open(aj, run)

    def conflict_run(self) -> Any:
        """A finished run that left a memory conflict behind (or a sync did)."""
        aj = self.agent()
        run, _ = self.start(aj)
        entry = self.entry_for(aj, run)
        from_sync = self.rng.random() < 0.3
        incoming = content.memory_variant(self.rng, entry.content)
        fields = content.memory_incoming_fields(self.rng, entry)
        with contextlib.suppress(errors.ConflictPending):  # one already waits on this entry
            aj.memory.record_conflict(
                entry.id,
                incoming,
                incoming_source="sync from alice's laptop"
                if from_sync
                else f"{aj.actor.name} (run {run.id})",
                run_id=None if from_sync else run.id,
                local_version=entry.version,
                **fields,
            )
        return self.finish(aj, run)

    def interrupted_run(self) -> Any:
        aj = self.agent()
        run, model = self.start(aj)
        aj.runs.interrupt(run.id, "the agent process was stopped (SIGTERM)")
        if self.rng.random() < 0.5:  # resumed by a second attempt, then finished
            aj.runs.start_attempt(run.id, "resumed after the worker restarted")
            self.chatter(aj, run.id, model, 2)
            return self.finish(aj, run)
        return self.left_open(aj, run)

    def parent_with_children(self) -> Any:
        parent = self.history_run()
        for _ in range(self.rng.randint(1, 3)):
            self.history_run(parent=parent.id)
        return parent

    def left_open(self, aj: Journal, run: Any) -> Any:
        current = aj.runs.get(run.id)
        self.events += current.last_sequence
        self.clock.advance(self.rng.uniform(30, 600))
        return current

    # ------------------------------------------------------------ rules
    def add_rules(self) -> None:
        op = self.operators[0]
        op.approvals.add_rule(
            "allow",
            "http.request",
            resource_pattern="https://hooks.slack.com/*",
            scope="space",
            project="*",
        )
        op.approvals.add_rule(
            "deny",
            "db.migrate",
            resource_pattern="*",
            scope="space",
            project="billing-service",
            space="prod",
        )
        old = op.approvals.add_rule(
            "allow", "payments.refund", scope="space", project="support-bot"
        )
        op.approvals.revoke_rule(old.id, expected_version=old.version)
