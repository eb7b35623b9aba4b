"""SIGKILL at random points of MIXED writes: agent and operator calls of every kind
(events, batches, approvals requested/decided/withdrawn, questions asked/answered, memory
added/replaced/in conflict/resolved, effects reserved/begun/committed/ambiguous/resolved).

tests/integration/test_core_processes.py kills an event writer; this one kills a writer
that does everything, over and over, on one journal. After every kill:

- the raw file passes ``integrity_check`` and ``proctor verify`` (both hash chains,
  decisions with their audit rows);
- every acknowledged commit is there, in at least the acknowledged state;
- no transaction is half-applied (every event has its change row, every decided approval
  exactly one decision, every committed effect a receipt, every memory version a mutation);
- the next ``Journal.open`` repairs nothing silently: the content is the same before and
  after it.

Writers are forked by kill_worker.py (a process without Qt). CI runs a short series;
``PROCTOR_LONG=1`` runs 200 kills (``PROCTOR_KILL_ITERATIONS`` sets any number).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.audit.verify import verify

LONG = os.environ.get("PROCTOR_LONG", "") not in ("", "0")
ITERATIONS = int(os.environ.get("PROCTOR_KILL_ITERATIONS", "200" if LONG else "20"))
WORKER = Path(__file__).with_name("kill_worker.py")
TIMEOUT = 60
# what a later, unacknowledged commit may have moved an acknowledged state on to
LATER = {
    "approval": {"pending": {"pending", "approved", "denied", "cancelled"}},
    "question": {"requested": {"requested", "resolved"}},
    "conflict": {"pending": {"pending", "accepted_local", "accepted_incoming", "dismissed"}},
    "effect": {
        "reserved": {"reserved", "executing", "committed", "ambiguous", "failed"},
        "executing": {"executing", "committed", "ambiguous", "failed"},
        "ambiguous": {"ambiguous", "committed", "failed"},
    },
}


class Zygote:
    """kill_worker.py, with its output read on a thread (a dead writer never hangs us)."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: list[str] = []
        threading.Thread(
            target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True
        ).start()
        threading.Thread(
            target=self._pump, args=(self.proc.stderr, self.errors.append), daemon=True
        ).start()

    @staticmethod
    def _pump(stream, put) -> None:
        for line in stream:
            put(line.rstrip("\n"))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def line(self) -> str:
        try:
            return self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError("the writer stopped: " + "\n".join(self.errors[-20:])) from None

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(TIMEOUT)


def content(path: Path) -> str:
    """A digest of every row of every table, read without Proctor."""
    conn = sqlite3.connect(str(path))
    try:
        digest = hashlib.sha256()
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        ]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
                digest.update(repr((table, row)).encode())
        return digest.hexdigest()
    finally:
        conn.close()


HALF_APPLIED = {
    # a transaction writes one change row per run whose head it moved (tx.one_event_row)
    "an event without its transaction's change row": "SELECT COUNT(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM changes c "
    "WHERE c.run_id = e.run_id AND c.created_at = e.created_at "
    "AND c.entity_kind IN ('event', 'run'))",
    "an approval without its request event": "SELECT (SELECT COUNT(*) FROM approvals) - (SELECT COUNT(*) FROM events "
    "WHERE type = 'approval.requested')",
    "a decided approval without exactly one decision": "SELECT COUNT(*) FROM approvals a WHERE a.status IN ('approved', 'denied') AND "
    "(SELECT COUNT(*) FROM decisions d WHERE d.target_id = a.id) != 1",
    "a withdrawn approval with a decision": "SELECT COUNT(*) FROM approvals a WHERE a.status = 'cancelled' AND "
    "EXISTS (SELECT 1 FROM decisions d WHERE d.target_id = a.id)",
    "a committed effect without a receipt": "SELECT COUNT(*) FROM effects e WHERE e.status = 'committed' AND NOT EXISTS "
    "(SELECT 1 FROM receipts r WHERE r.effect_key = e.key)",
    "a memory version without its mutation": "SELECT COUNT(*) FROM memory_entries m WHERE m.version != "
    "(SELECT COUNT(*) FROM memory_mutations u WHERE u.entry_id = m.id)",
}


def half_applied(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = {what: conn.execute(sql).fetchone()[0] for what, sql in HALF_APPLIED.items()}
    finally:
        conn.close()
    return {what: n for what, n in found.items() if n}


def stored(path: Path) -> dict[str, dict]:
    """Everything the acks are checked against, in a few queries (not one per ack)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:

        def table(sql: str) -> dict:
            return {r[0]: r[1] for r in conn.execute(sql)}

        return {
            "event": {
                f"{run}#{seq}": eid
                for run, seq, eid in conn.execute("SELECT run_id, sequence, id FROM events")
            },
            "run": table("SELECT id, status FROM runs"),
            "approval": table("SELECT id, status FROM approvals"),
            "question": table("SELECT id, status FROM interactions"),
            "conflict": table("SELECT id, status FROM memory_reconciliations"),
            "effect": table("SELECT key, status FROM effects"),
            "memory": table("SELECT id, version FROM memory_entries"),
            "request_id": {
                r[0]: r[1]
                for r in conn.execute(
                    "SELECT target_id, group_concat(request_id) FROM decisions GROUP BY target_id"
                )
            },
        }
    finally:
        conn.close()


def lost(path: Path, acked: dict[tuple[str, str], dict]) -> list[str]:
    """Acknowledged commits that are missing, or went back to an earlier state."""
    now = stored(path)
    missing = []
    for (kind, key), a in acked.items():
        value = now[kind].get(key)
        if kind == "event":
            ok = value == a["id"]
        elif kind == "run":
            ok = value is not None
        elif kind == "memory":
            ok = value is not None and value >= a["version"]
        else:
            ok = value in LATER.get(kind, {}).get(a["status"], {a["status"]})
            if ok and "request_id" in a:
                ok = now["request_id"].get(key) == a["request_id"]
        if not ok:
            missing.append(f"{kind} {key}: acknowledged {a}, stored {value}")
    return missing


def check_after_kill(path: Path, acked: dict) -> None:
    before = content(path)
    with Journal.open(path, actor=Actor.operator("checker")) as journal:
        assert content(path) == before, "opening the journal changed it"
        assert journal.integrity_check() == ["ok"]
        report = verify(journal)
        assert report.ok, report.problems
    assert lost(path, acked) == []
    assert half_applied(path) == {}


def take(zygote: Zygote, acked: dict) -> str:
    """Read one line; an ack is recorded (the latest state of each thing wins)."""
    line = zygote.line()
    if line.startswith("{"):
        a = json.loads(line)
        key = f"{a['run']}#{a['seq']}" if a["kind"] == "event" else a["id"]
        acked[(a["kind"], key)] = a
    elif not line.startswith(("pid", "reaped")):
        raise AssertionError(f"unexpected output: {line}")
    return line


def test_sigkill_at_random_points_of_mixed_writes(tmp_path):
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    rng = random.Random(20261129)
    acked: dict[tuple[str, str], dict] = {}
    zygote = Zygote(path)
    survived = total_acks = 0
    try:
        for i in range(ITERATIONS):
            zygote.send(f"fork {rng.randrange(2**31)} w{i}")
            pid, acks, wanted = None, 0, rng.randint(1, 40)
            while pid is None or acks < wanted:
                line = take(zygote, acked)
                if line.startswith("pid"):
                    pid = int(line.split()[1])
                else:
                    acks += 1
            time.sleep(rng.random() * 0.004)  # land somewhere inside the next call
            os.kill(pid, signal.SIGKILL)
            zygote.send(f"reap {pid}")
            while not (line := take(zygote, acked)).startswith("reaped"):
                acks += 1
            total_acks += acks
            status = int(line.split()[2])
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
                "the writer died on its own: " + "\n".join(zygote.errors[-20:])
            )
            check_after_kill(path, acked)
            survived += 1
    finally:
        zygote.close()
    kinds = sorted({k for k, _ in acked})
    print(
        f"\nFIGURE kill_iterations {survived} acked_calls {total_acks} lost 0 "
        f"kinds {','.join(kinds)}"
    )
    assert survived == ITERATIONS
    assert {"approval", "conflict", "effect", "event", "memory", "question"} <= set(kinds)
