"""One simulated agent process (``python -m proctor.sim.agent_process ...``).

It behaves like a real agent runtime on the public ``proctor.core`` API: starts runs,
records model and tool-call events, asks approval before acting and consumes each
approval exactly once (reserve -> begin -> commit), asks questions of every type and
uses the answers, writes memory and produces conflicts. Now and then it crashes between
begin and commit (``os._exit``) or hangs past its lease, so ambiguous effects appear; a
restarted process finds them and waits for a person. SIGTERM/SIGINT stop it cleanly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from proctor.core import Actor, Journal, errors
from proctor.core.models import (
    ApprovalStatus,
    EffectStatus,
    QuestionKind,
    QuestionStatus,
    RunStatus,
)

from . import content
from .demo_runs import DEMO_AGENTS
from .steps import CRASH_EXIT, Cancelled, Steps, Stop

POLL_S = 0.1

__all__ = ["CRASH_EXIT", "Agent", "main"]


class Agent(Steps):
    def __init__(self, opts: argparse.Namespace) -> None:
        self.name = opts.name
        self.index = opts.index
        self.seed = opts.seed
        self.restart = opts.restart
        self.rate = max(opts.rate, 0.01)
        # A fresh agent that started late (a busy machine) still gets its drain time.
        self.until = (
            opts.until if opts.until is None or opts.restart else max(opts.until, time.time())
        )
        self.drain = opts.drain
        self.fault_rate = opts.fault_rate
        self.parent_pid = opts.parent_pid
        self.stats_path = Path(opts.stats) if opts.stats else None
        # The owner is stable across restarts, so a restarted agent can own up to its
        # crashed effects (mark them ambiguous) instead of leaving a lapsed lease.
        self.owner = f"{opts.name}"
        self.rng = random.Random(f"{opts.seed}:{opts.name}:{opts.restart}")
        self.j = Journal.open(opts.journal, actor=Actor.agent(opts.name), create=False)
        self.stats: Counter[str] = Counter()
        self.stopping = False
        self.run_id: str | None = None
        self.waiting_on: tuple[str, str] | None = None
        self.effects_done = 0
        self.memory_steps = 0
        self.action_deck: list[str] = []
        self.question_deck: list[str] = []

    # ------------------------------------------------------------ lifecycle
    def main(self) -> int:
        started = time.monotonic()
        try:
            self.recover()
            while not self.stopping and (self.owes_its_fault() or not self.past_deadline()):
                try:
                    self.one_run()
                except errors.ProctorError as err:  # e.g. the journal stayed locked too long
                    self.stats["errors"] += 1
                    print(
                        f"{self.name}: the run stopped on an error: {err}",
                        file=sys.stderr,
                        flush=True,
                    )
                self.think()
        except Stop:
            pass
        finally:
            # a Counter holds the float seconds too (typeshed types its values as int)
            self.stats["seconds"] += round(time.monotonic() - started, 3)  # type: ignore[assignment]
            print(self.summary(self.save_stats()), flush=True)
            self.j.close()
        return 0

    def owes_its_fault(self) -> bool:
        """A fresh agent goes on past the deadline (within the drain) until it has run an
        effect: its first effect crashes or lapses, so every simulation shows both kinds,
        even when a late start or a denied approval left its first run without an effect."""
        return self.restart == 0 and self.effects_done == 0

    def request_stop(self, *_: Any) -> None:
        self.stopping = True

    def past_deadline(self, grace: float = 0.0) -> bool:
        return self.until is not None and time.time() >= self.until + grace

    def check(self) -> None:
        """Raise Stop or Cancelled when the agent must not go on with this run."""
        if (
            self.stopping
            or self.past_deadline(self.drain)
            or (self.parent_pid and os.getppid() != self.parent_pid)
        ):
            raise Stop
        if self.run_id is not None:
            run = self.j.runs.get(self.run_id)
            if run.cancel_requested:
                raise Cancelled(run.cancel_reason or "cancel requested")

    def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < end:
            time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))

    def think(self) -> None:
        self.pause(min(self.rng.expovariate(self.rate), 4.0 / self.rate))

    # ------------------------------------------------------------ one run
    def one_run(self) -> None:
        failed = self.retry_asked()
        if failed is not None:  # an operator asked us to try it again: that comes first
            self.retry_run(failed)
            return
        project, space = content.pick_place(self.rng)
        title = content.maybe_hostile(self.rng, content.run_title(self.rng, project), 0.06)
        self.model = self.rng.choice(content.MODELS)
        run = self.j.runs.start(
            project,
            title,
            space=space,
            metadata={"model": self.model, "simulated": True, "seed": self.seed},
        )
        self.run_id, self.project, self.space, self.step_no = run.id, project, space, 0
        self.stats["runs"] += 1
        try:
            for step in self.plan():
                self.check()
                if step() == "failed":
                    self.stats["failed"] += 1
                    return
                self.think()
            self.check()
            self.j.runs.complete(run.id, {"summary": f"{title[:80]}: done", "steps": self.step_no})
            self.stats["completed"] += 1
        except Cancelled as why:
            self.j.runs.cancel(run.id, f"cancelled on request: {why}")
            self.stats["cancelled"] += 1
        except Stop:
            self.leave(run.id)
            raise
        except errors.ProctorError as err:
            with contextlib.suppress(errors.ProctorError):
                self.j.runs.fail(run.id, f"agent error: {type(err).__name__}: {err}")
            self.stats["failed"] += 1
            raise
        finally:
            self.run_id, self.waiting_on = None, None

    def retry_asked(self) -> Any:
        """A failed run an operator asked to retry: one of ours, else one of the demo
        journal's (its agents live only in the journal; in ``proctor demo`` these agents
        stand in for them, so that "Retry run…" on a failed demo run is carried out as the
        desk says, not left failed)."""
        for agent in (self.name, *DEMO_AGENTS):
            for run in self.j.runs.list(status=["failed"], agent=agent, limit=50).items:
                if run.retry_pending:
                    return run
        return None

    def retry_run(self, failed: Any) -> None:
        """Start the attempt the operator asked for (``Runs.retry``: the run is running
        again), do the work once more and complete it, or fail it again as a run does.
        Another agent that started it first (a demo run: any of us may) leaves it to that
        one."""
        try:
            attempt = self.j.runs.retry(failed.id)
        except errors.InvalidTransition:
            return
        self.run_id, self.project, self.space, self.step_no = (
            failed.id,
            failed.project,
            failed.space,
            0,
        )
        self.model = self.rng.choice(content.MODELS)
        self.stats["retried"] += 1
        try:
            self.j.runs.append_event(
                failed.id,
                "agent.retrying",
                {"attempt": attempt.number, "because": failed.retry_reason},
            )
            for step in (self.step_model, self.step_model):
                self.check()
                step()
                self.think()
            self.check()
            self.j.runs.complete(
                failed.id,
                {"summary": f"retried as attempt {attempt.number}: done", "steps": self.step_no},
            )
            self.stats["completed"] += 1
        except Cancelled as why:
            self.j.runs.cancel(failed.id, f"cancelled on request: {why}")
            self.stats["cancelled"] += 1
        except Stop:
            self.leave(failed.id)
            raise
        except errors.ProctorError as err:
            with contextlib.suppress(errors.ProctorError):
                self.j.runs.fail(failed.id, f"agent error: {type(err).__name__}: {err}")
            self.stats["failed"] += 1
            raise
        finally:
            self.run_id, self.waiting_on = None, None

    def plan(self) -> list[Any]:
        first = self.stats["runs"] == 1
        steps: list[Any] = [self.step_model]
        middle: list[Any] = [self.step_approval, self.step_question]
        if self.rng.random() < 0.5:
            middle.append(self.step_approval)
        if self.rng.random() < 0.6 or first:
            middle.append(self.step_memory)
        if self.rng.random() < 0.3 or first:
            middle.append(self.step_question)
        self.rng.shuffle(middle)
        if first:  # a fresh agent asks more, and asks first, in its first run
            order = [self.step_question, self.step_memory]
            middle = [
                self.step_question,
                *sorted(middle, key=lambda s: order.index(s) if s in order else len(order)),
            ]
        for step in middle:
            steps += [step, self.step_model]
        return steps

    def leave(self, run_id: str) -> None:
        """Stopping mid-run: withdraw what we waited for and mark the run interrupted."""
        try:
            if self.waiting_on is not None:
                kind, item_id = self.waiting_on
                service = self.j.approvals if kind == "approval" else self.j.questions
                with contextlib.suppress(errors.InvalidTransition):
                    service.withdraw(item_id, "the agent process is stopping")
            if not self.j.runs.get(run_id).status.terminal:
                self.j.runs.interrupt(run_id, "the agent process stopped")
                self.stats["interrupted"] += 1
        except errors.ProctorError as err:
            print(f"{self.name}: could not leave run {run_id} cleanly: {err}", file=sys.stderr)

    # ------------------------------------------------------------ decks
    def next_action_kind(self) -> str:
        if not self.action_deck:
            self.action_deck = rotated(list(content.ACTION_KINDS), self.index * 2)
        return self.action_deck.pop(0)

    def next_question_kind(self) -> QuestionKind:
        if not self.question_deck:
            self.question_deck = rotated(
                [k.value for k in content.QUESTION_KINDS], self.index * 3 + self.restart
            )
        return QuestionKind(self.question_deck.pop(0))

    def next_fault(self) -> str | None:
        """Which fault (if any) the next effect suffers. A fresh agent's first effect always
        gets one (a crash or a lapsed lease, by agent), so every simulation shows both."""
        self.effects_done += 1
        if self.restart == 0 and self.effects_done == 1:
            return "crash" if self.index % 2 == 0 else "lease"
        if self.rng.random() < self.fault_rate:
            return self.rng.choice(["crash", "lease"])
        return None

    # ------------------------------------------------------------ waiting
    def wait_approval(self, approval_id: str) -> Any:
        self.waiting_on = ("approval", approval_id)
        while True:
            approval = self.j.approvals.wait(approval_id, timeout=0.5, poll=POLL_S)
            if approval.status != ApprovalStatus.PENDING:
                self.waiting_on = None
                return approval
            self.check()

    def wait_answer(self, interaction_id: str) -> Any:
        self.waiting_on = ("interaction", interaction_id)
        open_ = (QuestionStatus.REQUESTED, QuestionStatus.PRESENTED)
        while True:
            item = self.j.questions.wait(interaction_id, timeout=0.5, poll=POLL_S)
            if item.status not in open_:
                self.waiting_on = None
                return item
            self.check()

    def wait_for_person(self, key: str) -> Any:
        """An effect is ambiguous: wait until a person says what happened."""
        assert self.run_id is not None
        if self.j.runs.get(self.run_id).status == RunStatus.RUNNING:
            self.j.runs.wait_for_user(self.run_id)
        self.j.runs.append_event(
            self.run_id,
            "agent.waiting_for_person",
            {"effect_key": key, "why": "the outcome of this effect is unknown"},
        )
        while True:
            effect = self.j.effects.get(key)
            if effect.status in (EffectStatus.COMMITTED, EffectStatus.FAILED):
                break
            self.check()
            time.sleep(0.25)
        if self.j.runs.get(self.run_id).status == RunStatus.WAITING_FOR_USER:
            self.j.runs.resume(self.run_id)
        self.j.runs.append_event(
            self.run_id,
            "agent.effect_resolution_seen",
            {"effect_key": key, "outcome": effect.status.value, "by": effect.resolved_by},
        )
        return effect

    # ------------------------------------------------------------ recovery
    def recover(self) -> None:
        """Find effects a crashed predecessor left in flight; wait for a person on each."""
        live = self.j.effects.list(status=["reserved", "executing"], limit=500).items
        for effect in live:
            if effect.lease_owner != self.owner:
                continue
            with contextlib.suppress(errors.EffectAmbiguous, errors.InvalidTransition):
                self.j.effects.mark_ambiguous(
                    effect.key,
                    "the agent process restarted mid-effect; nobody knows whether it happened",
                    owner=self.owner,
                )
            self.stats["recovered"] += 1
        for effect in self.j.effects.list(status=["ambiguous"], limit=500).items:
            if effect.run_id is None:
                continue
            run = self.j.runs.get(effect.run_id)
            if run.agent != self.name or run.status.terminal or run.status == RunStatus.INTERRUPTED:
                continue
            self.finish_recovered(run, effect)

    def finish_recovered(self, run: Any, effect: Any) -> None:
        self.run_id = run.id
        try:
            # the resume gate: a new attempt starts once a person resolved the effect
            outcome = self.wait_for_person(effect.key)
            self.check()  # a cancel request ends the run instead
            self.j.runs.start_attempt(run.id, "agent process restarted after a crash")
            retried = outcome.status == EffectStatus.FAILED
            if retried:  # "Mark failed, allow a retry": this attempt runs it again
                outcome = self.retry(outcome, {"retried_after": "a person marked it failed"})
            done = (
                {"retried": True, "attempt": outcome.attempt}
                if retried
                else {"confirmed_by": outcome.resolved_by}
            )
            for call in self.j.runs.tool_calls(run.id):
                if call.status in ("running", "pending"):
                    self.j.runs.finish_tool_call(call.id, "succeeded", result=done)
            self.j.runs.complete(
                run.id,
                {
                    "summary": "finished after a crash"
                    + ("; the effect was retried" if retried else ""),
                    "effect": effect.key,
                },
            )
            self.stats["completed"] += 1
        except Cancelled as why:
            self.j.runs.cancel(run.id, f"cancelled on request: {why}")
            self.stats["cancelled"] += 1
        except Stop:
            self.leave(run.id)
            raise
        finally:
            self.run_id = None

    # ------------------------------------------------------------ reporting
    def save_stats(self) -> Counter[str]:
        """Add this process's counts to the stats file (totals across restarts)."""
        total = Counter(self.stats)
        if self.stats_path is None:
            return total
        if self.stats_path.exists():
            with contextlib.suppress(OSError, ValueError):
                total.update(json.loads(self.stats_path.read_text()))
        total["restarts"] = self.restart
        self.stats_path.write_text(json.dumps(dict(total), sort_keys=True))
        self.stats.clear()
        return total

    def summary(self, s: Counter[str]) -> str:
        restarted = f", {self.restart} restarts" if self.restart else ""
        return (
            f"{self.name}: {s['runs']} runs ({s['completed']} completed, {s['failed']} "
            f"failed, {s['cancelled']} cancelled, {s['interrupted']} interrupted), "
            f"{s['approvals']} approvals ({s['auto_decided']} by rule, {s['denied']} "
            f"not approved), {s['questions']} questions, {s['memory_writes']} memory "
            f"writes ({s['conflicts']} conflicts), {s['effects']} effects "
            f"({s['ambiguous']} ambiguous, {s['recovered']} recovered){restarted}"
        )


def rotated(items: list[Any], by: int) -> list[Any]:
    by %= len(items)
    return items[by:] + items[:by]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m proctor.sim.agent_process",
        allow_abbrev=False,
        description="One simulated agent writing to a journal.",
    )
    p.add_argument("--journal", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rate", type=float, default=1.0, help="steps per second")
    p.add_argument(
        "--until",
        type=float,
        default=None,
        help="wall-clock time (epoch s) after which no new run starts",
    )
    p.add_argument(
        "--drain",
        type=float,
        default=10.0,
        help="seconds after --until to finish the current run before leaving it",
    )
    p.add_argument("--fault-rate", type=float, default=0.08)
    p.add_argument("--restart", type=int, default=0)
    p.add_argument("--parent-pid", type=int, default=0)
    p.add_argument("--stats", default=None, help="JSON file the totals are added to")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        agent = Agent(opts)
    except errors.ProctorError as err:
        print(f"{opts.name}: cannot open the journal: {err}", file=sys.stderr)
        return 3
    signal.signal(signal.SIGTERM, agent.request_stop)
    signal.signal(signal.SIGINT, agent.request_stop)
    return agent.main()


if __name__ == "__main__":
    sys.exit(main())
