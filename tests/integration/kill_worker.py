"""A fork server for the crash tests (no Qt is ever imported here, so forking is safe).

It imports proctor once, then on ``fork SEED TAG`` forks a writer that opens its own
journals and performs a random mix of agent and operator writes forever, printing one
``ack`` JSON line after each call returns (committed). The test SIGKILLs the writer at a
random moment and sends ``reap PID``; ``reaped PID`` comes after every line the writer
printed. Usage: python kill_worker.py JOURNAL
"""

from __future__ import annotations

import json
import os
import random
import sys

from proctor.core import Actor, Journal, errors


def ack(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Writer:
    """Random mixed writes; every ack names what must be in the journal from now on."""

    def __init__(self, path: str, seed: int, tag: str) -> None:
        self.rng = random.Random(seed)
        self.tag = tag
        self.agent = Journal.open(path, actor=Actor.agent("bot"))
        self.op = Journal.open(path, actor=Actor.operator("olga"))
        self.run = self.agent.runs.start("crash", f"writer {tag}", run_id=f"run_{tag}").id
        ack(kind="run", id=self.run)
        self.pending: list[tuple[str, int]] = []  # approvals (id, version)
        self.asked: list[tuple[str, int]] = []  # questions
        self.entries: list[tuple[str, int]] = []  # memory (id, version)
        self.conflicts: list[tuple[str, int]] = []
        self.effects: list[tuple[str, str]] = []  # (key, status)
        self.n = 0

    def step(self) -> None:
        self.n += 1
        choices = [self.event, self.batch, self.approval, self.question, self.memory, self.effect]
        if self.pending:
            choices += [self.decide, self.decide, self.withdraw]
        if self.asked:
            choices.append(self.answer)
        if self.entries:
            choices += [self.replace, self.conflict]
        if self.conflicts:
            choices.append(self.resolve_conflict)
        if self.effects:
            choices += [self.advance_effect, self.advance_effect]
        self.rng.choice(choices)()

    # ---------------------------------------------------------------- agent writes
    def event(self) -> None:
        e = self.agent.runs.append_event(self.run, "step", {"tag": self.tag, "n": self.n})
        ack(kind="event", run=self.run, seq=e.sequence, id=e.id)

    def batch(self) -> None:
        events = self.agent.runs.append_events(
            self.run, [("batch", {"tag": self.tag, "n": self.n, "k": k}) for k in range(4)]
        )
        for e in events:
            ack(kind="event", run=self.run, seq=e.sequence, id=e.id)

    def approval(self) -> None:
        a = self.agent.approvals.request(
            self.run,
            {"tool": "deploy", "n": self.n},
            reason="crash test",
            request_key=f"{self.tag}-{self.n}",
        )
        self.pending.append((a.id, a.version))
        ack(kind="approval", id=a.id, status="pending")

    def question(self) -> None:
        q = self.agent.questions.ask(self.run, "question", f"question {self.n}?")
        self.asked.append((q.id, q.version))
        ack(kind="question", id=q.id, status="requested")

    def memory(self) -> None:
        m = self.agent.memory.add("project", "crash", f"fact {self.tag}-{self.n}", f"v{self.n}")
        self.entries.append((m.id, m.version))
        ack(kind="memory", id=m.id, version=m.version)

    def replace(self) -> None:
        i = self.rng.randrange(len(self.entries))
        entry_id, version = self.entries[i]
        try:
            m = self.agent.memory.replace(entry_id, f"v{self.n}", expected_version=version)
        except errors.StaleVersion:  # a resolved conflict moved it on: refused, not acked
            self.entries[i] = (entry_id, self.agent.memory.get(entry_id).version)
            return
        self.entries[i] = (entry_id, m.version)
        ack(kind="memory", id=entry_id, version=m.version)

    def conflict(self) -> None:
        entry_id, _version = self.rng.choice(self.entries)
        try:
            c = self.agent.memory.record_conflict(
                entry_id, f"incoming {self.n}", incoming_source="crash"
            )
        except errors.ConflictPending:
            return  # one conflict waits for a person per entry: refused, nothing written
        self.conflicts.append((c.id, c.version))
        ack(kind="conflict", id=c.id, status="pending")

    def effect(self) -> None:
        key = f"effect:{self.tag}:{self.n}"
        self.agent.effects.reserve(key, tool="send", run_id=self.run, lease_seconds=600)
        self.effects.append((key, "reserved"))
        ack(kind="effect", id=key, status="reserved")

    def advance_effect(self) -> None:
        i = self.rng.randrange(len(self.effects))
        key, status = self.effects[i]
        if status == "reserved":
            self.agent.effects.begin(key)
            status = "executing"
        elif status == "executing":
            if self.rng.random() < 0.5:
                self.agent.effects.commit(key, {"ok": True}, evidence={"n": self.n})
                status = "committed"
            else:
                self.agent.effects.mark_ambiguous(key, "timed out")
                status = "ambiguous"
        elif status == "ambiguous":
            version = self.op.effects.get(key).version
            outcome = self.rng.choice(["committed", "failed"])
            self.op.effects.resolve(
                key,
                outcome,
                reason="checked by hand",
                expected_version=version,
                request_id=f"res-{key}",
            )
            status = outcome
        else:
            self.effects.pop(i)
            return
        self.effects[i] = (key, status)
        ack(kind="effect", id=key, status=status)

    def withdraw(self) -> None:
        approval_id, _ = self.pending.pop(self.rng.randrange(len(self.pending)))
        self.agent.approvals.withdraw(approval_id, "no longer needed")
        ack(kind="approval", id=approval_id, status="cancelled")

    # ---------------------------------------------------------------- operator writes
    def decide(self) -> None:
        approval_id, version = self.pending.pop(self.rng.randrange(len(self.pending)))
        approve = self.rng.random() < 0.7
        rid = f"click-{approval_id}"
        a = self.op.approvals.decide(
            approval_id,
            approve,
            expected_version=version,
            reason=None if approve else "no",
            request_id=rid,
        )
        ack(kind="approval", id=approval_id, status=a.status.value, request_id=rid)

    def answer(self) -> None:
        interaction_id, version = self.asked.pop(self.rng.randrange(len(self.asked)))
        self.op.questions.answer(
            interaction_id,
            {"text": f"answer {self.n}"},
            expected_version=version,
            request_id=f"ans-{interaction_id}",
        )
        ack(kind="question", id=interaction_id, status="resolved")

    def resolve_conflict(self) -> None:
        item_id, version = self.conflicts.pop(self.rng.randrange(len(self.conflicts)))
        choice = self.rng.choice(["accepted_local", "accepted_incoming", "dismissed"])
        try:
            self.op.memory.resolve(
                item_id,
                choice,
                expected_version=version,
                reason="crash test",
                request_id=f"rec-{item_id}",
            )
        except errors.ProctorError:
            return  # e.g. the entry moved on since: refused, and nothing acknowledged
        ack(kind="conflict", id=item_id, status=choice)


def serve(path: str) -> None:
    for line in sys.stdin:
        words = line.split()
        if words[0] == "fork":
            pid = os.fork()
            if pid == 0:
                writer = Writer(path, int(words[1]), words[2])
                while True:
                    writer.step()
            print(f"pid {pid}", flush=True)
        elif words[0] == "reap":
            _, status = os.waitpid(int(words[1]), 0)
            print(f"reaped {words[1]} {status}", flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
