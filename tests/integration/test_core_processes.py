"""proctor.core across real processes on a real file: the effect reservation race, an operator
and an agent racing on one approval, and writers killed with SIGKILL mid-stream.

Children are started with the ``spawn`` context or ``subprocess`` (never fork)."""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify

SPAWN = multiprocessing.get_context("spawn")
RACERS = 8
TIMEOUT = 120


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    return path


@pytest.fixture(params=["sqlite", "postgresql"], ids=["sqlite", "pg"])
def journal_path(request, tmp_path) -> Path | str:
    """A journal file, or a server journal's URL (agents on "other hosts": TCP)."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    path = tmp_path / "journal.db"
    shutil.copy2(request.getfixturevalue("template"), path)
    return path


def collect(queue, n: int) -> list:
    return [queue.get(timeout=TIMEOUT) for _ in range(n)]


def join_all(procs) -> None:
    for proc in procs:
        proc.join(TIMEOUT)
        assert proc.exitcode == 0, f"{proc.name} exited with {proc.exitcode}"


# ---------------------------------------------------------------- 8 processes, one key


def reserve_racer(path: str, name: str, keys: list[str], barrier, results) -> None:
    """Child: for each round, wait for everyone, then try to win ``key``."""
    journal = Journal.open(path, actor=Actor.agent(name))
    try:
        for key in keys:
            barrier.wait(TIMEOUT)
            try:
                effect = journal.effects.reserve(key, tool="deploy", owner=name, lease_seconds=300)
                results.put((key, name, "won", effect.attempt))
            except errors.ProctorError as err:
                results.put((key, name, type(err).__name__, None))
    finally:
        journal.close()


def test_at_most_one_of_eight_processes_wins_a_reservation(journal_path):
    rounds = ["fresh", "fresh", "fresh", "lapsed"]  # fresh: won, then failed, then committed
    barrier = SPAWN.Barrier(RACERS + 1)
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(
            target=reserve_racer,
            name=f"p{n}",
            args=(str(journal_path), f"p{n}", rounds, barrier, results),
        )
        for n in range(RACERS)
    ]
    for proc in procs:
        proc.start()
    with Journal.open(journal_path, actor=Actor.operator("ops")) as parent:
        # round 1: nobody holds it
        barrier.wait(TIMEOUT)
        first = collect(results, RACERS)
        winners = [r for r in first if r[2] == "won"]
        assert len(winners) == 1 and winners[0][3] == 1, first
        assert sorted(r[2] for r in first if r[2] != "won") == ["EffectBusy"] * (RACERS - 1)
        owner = winners[0][1]
        parent.effects.fail("fresh", "HTTP 503", owner=owner)
        # round 2: failed may be retried, by exactly one of them, as attempt 2
        barrier.wait(TIMEOUT)
        second = collect(results, RACERS)
        winners = [r for r in second if r[2] == "won"]
        assert len(winners) == 1 and winners[0][3] == 2, second
        owner = winners[0][1]
        parent.effects.begin("fresh", owner=owner)
        parent.effects.commit("fresh", {"deployed": True}, owner=owner)
        # round 3: committed is never reserved again
        barrier.wait(TIMEOUT)
        third = collect(results, RACERS)
        assert [r[2] for r in third] == ["EffectCommitted"] * RACERS
        # round 4: a lapsed lease turns ambiguous exactly once, and every racer is refused
        parent.effects.reserve("lapsed", tool="deploy", owner="crashed", lease_seconds=0.01)
        time.sleep(0.05)
        barrier.wait(TIMEOUT)
        fourth = collect(results, RACERS)
        assert [r[2] for r in fourth] == ["EffectAmbiguous"] * RACERS
        join_all(procs)
        lapsed = parent.effects.get("lapsed")
        assert lapsed.status == "ambiguous" and lapsed.lease_owner == "crashed"
        assert [a.action for a in parent.audit.for_entity("lapsed")] == ["effect.ambiguous"]
        fresh = parent.effects.get("fresh")
        assert (fresh.status, fresh.attempt) == ("committed", 2)
        assert len(parent.effects.receipts("fresh")) == 1
        assert verify(parent).ok


# ---------------------------------------------------------------- operator vs agent


def approval_racer(
    path: str, role: str, approvals: list[tuple[str, int]], barrier, results
) -> None:
    """Child: the operator approves while the agent withdraws, round after round."""
    actor = Actor.operator("ops") if role == "operator" else Actor.agent("bot")
    journal = Journal.open(path, actor=actor)
    try:
        for approval_id, version in approvals:
            barrier.wait(TIMEOUT)
            try:
                if role == "operator":
                    journal.approvals.decide(
                        approval_id, True, expected_version=version, reason="go ahead"
                    )
                else:
                    journal.approvals.withdraw(approval_id, "changed my mind")
                results.put((approval_id, role, "ok"))
            except errors.ProctorError as err:
                results.put((approval_id, role, type(err).__name__))
    finally:
        journal.close()


def test_operator_and_agent_race_on_one_approval(journal_path):
    rounds = 12
    with Journal.open(journal_path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("proj", "race")
        approvals = [
            agent.approvals.request(run.id, {"tool": "deploy", "n": n}, reason="r")
            for n in range(rounds)
        ]
    pairs = [(a.id, a.version) for a in approvals]
    barrier = SPAWN.Barrier(2)
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(
            target=approval_racer,
            name=role,
            args=(str(journal_path), role, pairs, barrier, results),
        )
        for role in ("operator", "agent")
    ]
    for proc in procs:
        proc.start()
    outcomes = collect(results, 2 * rounds)
    join_all(procs)
    wins = {"operator": 0, "agent": 0}
    with Journal.open(journal_path, actor=Actor.operator("ops")) as journal:
        for approval_id, _ in pairs:
            mine = {role: outcome for aid, role, outcome in outcomes if aid == approval_id}
            winners = [role for role, outcome in mine.items() if outcome == "ok"]
            assert len(winners) == 1, mine
            winner = winners[0]
            wins[winner] += 1
            loser_error = mine["agent" if winner == "operator" else "operator"]
            # the operator who loses to a withdrawal is told it was withdrawn (Withdrawn, an
            # AlreadyDecided that says what happened)
            assert loser_error == ("InvalidTransition" if winner == "operator" else "Withdrawn")
            stored = journal.approvals.get(approval_id)
            assert stored.status == ("approved" if winner == "operator" else "cancelled")
            assert stored.version == 2
            assert len(journal.approvals.decisions(approval_id)) == (
                1 if winner == "operator" else 0
            )
            audit = [a.action for a in journal.audit.for_entity(approval_id)]
            assert audit == (
                ["approval.approved"] if winner == "operator" else ["approval.withdrawn"]
            )
        events = journal.runs.events(run.id, limit=1000)
        closing = [e for e in events if e.type in ("approval.approved", "approval.withdrawn")]
        assert len(closing) == rounds
        assert journal.runs.get(run.id).status == "running"
        assert verify(journal).ok
    assert sum(wins.values()) == rounds


# ---------------------------------------------------------------- SIGKILL mid-stream

WRITER = r"""
import sys
from proctor.core import Actor, Journal

path, run_id, tag = sys.argv[1], sys.argv[2], sys.argv[3]
journal = Journal.open(path, actor=Actor.agent("writer"))
print("ready", flush=True)
sys.stdin.readline()
n = 0
while True:
    n += 1
    if n % 4 == 0:
        batch = [("batch", {"tag": tag, "n": n, "k": k}) for k in range(5)]
        acked = journal.runs.append_events(run_id, batch)
    elif n % 7 == 0:
        approval = journal.approvals.request(run_id, {"tool": "t", "tag": tag, "n": n},
                                             reason="crash test")
        journal.approvals.withdraw(approval.id, "crash test")
        acked = []
    else:
        acked = [journal.runs.append_event(run_id, "single", {"tag": tag, "n": n})]
    for event in acked:
        print("ack", event.sequence, event.id, flush=True)
"""


def start_writer(path: Path, run_id: str, tag: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), run_id, tag],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"writer did not start: {line!r} {proc.stderr.read()}")


def read_acks(proc: subprocess.Popen, wanted: int) -> list[tuple[int, str]]:
    acks = []
    while len(acks) < wanted:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"writer died on its own: {proc.stderr.read()}")
        _, seq, event_id = line.split()
        acks.append((int(seq), event_id))
    return acks


def check_after_crash(path: Path, run_id: str, acked: dict[int, str]) -> int:
    with Journal.open(path, actor=Actor.operator("checker")) as journal:
        assert journal.integrity_check() == ["ok"]
        events = journal.runs.events(run_id, limit=10_000)
        seqs = [e.sequence for e in events]
        run = journal.runs.get(run_id)
        assert run.last_sequence == max(seqs) == len(seqs), "half-applied append"
        assert seqs == list(range(1, len(seqs) + 1))
        stored = {e.sequence: e.id for e in events}
        lost = {s: i for s, i in acked.items() if stored.get(s) != i}
        assert not lost, f"acknowledged events lost: {lost}"
        batches: dict[tuple, int] = {}
        for e in events:
            if e.type == "batch":
                key = (e.payload["tag"], e.payload["n"])
                batches[key] = batches.get(key, 0) + 1
        assert set(batches.values()) <= {5}, "a batch was half written"
        requested = sum(e.type == "approval.requested" for e in events)
        assert len(journal.approvals.for_run(run_id)) == requested
        report = verify(journal)
        assert report.ok, report.problems
        return len(seqs)


@pytest.mark.slow
def test_sigkilled_writers_lose_no_acknowledged_commit(journal_path):
    iterations = int(os.environ.get("PROCTOR_CRASH_ITERATIONS", "25"))
    rng = random.Random(20261129)
    with Journal.open(journal_path, actor=Actor.agent("writer")) as journal:
        run_id = journal.runs.start("crash", "killed again and again").id
    acked: dict[int, str] = {}
    upcoming = start_writer(journal_path, run_id, "w0")
    try:
        for i in range(iterations):
            writer = upcoming
            wait_ready(writer)
            # the next writer imports while this one writes (spawning costs ~1 s)
            upcoming = (
                start_writer(journal_path, run_id, f"w{i + 1}") if i + 1 < iterations else None
            )
            writer.stdin.write("go\n")
            writer.stdin.flush()
            got = read_acks(writer, rng.randint(1, 60))
            time.sleep(rng.random() * 0.004)  # land somewhere inside the next transaction
            writer.send_signal(signal.SIGKILL)
            rest, _ = writer.communicate(timeout=TIMEOUT)
            assert writer.returncode == -signal.SIGKILL
            for line in rest.split("\n")[:-1]:  # whole lines printed before the kill
                parts = line.split()
                if len(parts) == 3 and parts[0] == "ack":
                    got.append((int(parts[1]), parts[2]))
            acked.update(got)
            total = check_after_crash(journal_path, run_id, acked)
            assert total >= len(acked)
    finally:
        if upcoming is not None:
            upcoming.kill()
            upcoming.communicate()


# ---------------------------------------------------------------- SIGKILL inside the write lock

HOLDER = r"""
import sys, time
from proctor.core import Actor, Journal

path, run_id = sys.argv[1], sys.argv[2]
journal = Journal.open(path, actor=Actor.agent("holder"))

def inside(tx):
    tx.run_event(run_id, "half", {"written": "inside the transaction"})
    print("inside", flush=True)
    time.sleep(600)  # killed here: the write lock held, the event written, nothing committed

journal.write(inside)
"""


def test_a_writer_killed_inside_its_transaction_leaves_nothing_and_frees_the_lock(journal_path):
    """Killed while it holds the write lock with a row written: the next writer gets the
    lock (SQLite: the file lock dies with the process; a server: with its connection) and
    finds nothing of the killed transaction."""
    with Journal.open(journal_path, actor=Actor.agent("writer")) as journal:
        run_id = journal.runs.start("crash", "killed inside").id
        before = journal.runs.get(run_id).last_sequence
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(journal_path), run_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = holder.stdout.readline()
        assert line.strip() == "inside", line + holder.stderr.read()
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=TIMEOUT)
        with Journal.open(journal_path, actor=Actor.agent("writer"), busy_timeout=30) as journal:
            event = journal.runs.append_event(run_id, "after", {})
            events = journal.runs.events(run_id, limit=100)
            assert [e.type for e in events if e.type == "half"] == []
            assert event.sequence == before + 1
            assert verify(journal).ok
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate()
