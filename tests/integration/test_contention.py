"""Contention: 8 agent processes writing continuously while 2 desks (two operators, each in
its own process) decide the same items, every kind of them.

- exactly one winner per item; its decision, and only its, is stored (one decision row);
- every loser gets a typed error (already decided, stale version, not in that state);
- no "database is locked" and no store-busy error reaches anyone;
- zero lost updates: every acknowledged agent write is there, and a counter incremented by
  compare-and-set from 8 processes ends at exactly the number of increments acknowledged;
- the wait of every call (lock wait included) is reported: p50 / p99 / max.

``PROCTOR_LONG=1`` decides four times as many items.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.audit.verify import verify

LONG = os.environ.get("PROCTOR_LONG", "") not in ("", "0")
SCALE = 4 if LONG else 1
AGENTS, DESKS = 8, 2
PROC = Path(__file__).with_name("contention_proc.py")
TIMEOUT = 300
LOSSES = {"AlreadyDecided", "StaleVersion", "InvalidTransition"}


def make_items(path: Path) -> tuple[list[dict], str, str]:
    items: list[dict] = []
    with Journal.open(path, actor=Actor.agent("setup-bot")) as a:
        run = a.runs.start("contention", "items to decide", agent="setup-bot")
        for n in range(20 * SCALE):
            items.append(
                {
                    "kind": "approval",
                    "id": a.approvals.request(
                        run.id, {"tool": "deploy", "n": n}, reason="decide me"
                    ).id,
                }
            )
        for n in range(6 * SCALE):
            items.append(
                {"kind": "question", "id": a.questions.ask(run.id, "question", f"question {n}?").id}
            )
            entry = a.memory.add("project", "contention", f"fact {n}", f"value {n}")
            items.append(
                {
                    "kind": "conflict",
                    "id": a.memory.record_conflict(
                        entry.id, f"other {n}", incoming_source="setup-bot"
                    ).id,
                }
            )
            key = f"mail:{n}"
            a.effects.reserve(key, tool="send_email", run_id=run.id)
            a.effects.begin(key)
            a.effects.mark_ambiguous(key, "timed out")
            items.append({"kind": "effect", "id": key})
        counter = a.memory.add("project", "contention", "counter", "0").id
    return items, counter, run.id


class Proc:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(PROC), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[dict] = []
        self.stderr = ""

    def wait_ready(self) -> None:
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", line + self.proc.stderr.read()

    def go(self) -> None:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def finish(self) -> None:
        self.proc.wait(TIMEOUT)
        self.reader.join(TIMEOUT)
        self.stderr = self.proc.stderr.read()
        errors = [line for line in self.lines if line.get("kind") == "error"]
        assert self.proc.returncode == 0 and not errors, (errors, self.stderr[-2000:])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def rows(path: Path | str, sql: str, *args: object) -> list[tuple]:
    if isinstance(path, str):  # a server journal: the same query through psycopg
        import psycopg
        from sqlalchemy.engine import make_url

        u = make_url(path)
        with psycopg.connect(
            host=u.host, port=u.port, user=u.username, password=u.password, dbname=u.database
        ) as conn:
            return conn.execute(sql.replace("?", "%s"), args).fetchall()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


@pytest.fixture(params=["sqlite", "postgresql"], ids=["sqlite", "pg"])
def where(request, tmp_path) -> Path | str:
    """A journal file to be made, or an empty server database (its URL): agents and desks in
    other processes reach it over TCP, as from other hosts."""
    if request.param == "postgresql":
        server = request.getfixturevalue("pg_server")
        name = server.empty_database()
        yield server.url(name)
        server.drop_database(name)
        return
    yield tmp_path / "journal.db"


def test_eight_agents_and_two_desks_on_the_same_items(tmp_path, where):
    path = where
    items, counter, run_id = make_items(path)
    items_file = tmp_path / "items.json"
    items_file.write_text(json.dumps(items))
    stop = tmp_path / "stop"
    agents = [
        Proc("agent", str(path), f"agent-{n}", str(stop), counter, run_id) for n in range(AGENTS)
    ]
    desks = [
        Proc("desk", str(path), name, str(seed), str(items_file))
        for seed, name in enumerate(("alice", "bob"))
    ]
    try:
        for proc in agents + desks:
            proc.wait_ready()
        for proc in agents + desks:
            proc.go()
        for proc in desks:
            proc.finish()
        stop.touch()
        for proc in agents:
            proc.finish()
    finally:
        stop.touch()
        for proc in agents + desks:
            if proc.proc.poll() is None:
                proc.proc.kill()

    # one winner per item, typed errors for the losers, nothing locked or busy
    outcomes: dict[str, dict[str, str]] = {}
    for desk, name in zip(desks, ("alice", "bob"), strict=True):
        for line in desk.lines:
            outcomes.setdefault(line["id"], {})[name] = line["outcome"]
    untyped = {
        i: o for i, o in outcomes.items() if any(v not in LOSSES | {"won"} for v in o.values())
    }
    assert untyped == {}, untyped
    assert all(
        "database is locked" not in line.get("outcome", "") for d in desks for line in d.lines
    )
    for item in items:
        mine = outcomes[item["id"]]
        winners = [name for name, outcome in mine.items() if outcome == "won"]
        assert len(winners) == 1, (item, mine)
        recorded = rows(path, "SELECT actor FROM decisions WHERE target_id = ?", item["id"])
        assert recorded == [(f"operator:{winners[0]}",)], (item, recorded)

    # zero lost updates
    acked_events = [
        i for a in agents for line in a.lines if line["kind"] == "events" for i in line["ids"]
    ]
    acked_approvals = [line["id"] for a in agents for line in a.lines if line["kind"] == "approval"]
    increments = sum(line["kind"] == "increment" for a in agents for line in a.lines)
    stored_events = {r[0] for r in rows(path, "SELECT id FROM events")}
    stored_approvals = {r[0] for r in rows(path, "SELECT id FROM approvals")}
    assert set(acked_events) <= stored_events
    assert set(acked_approvals) <= stored_approvals
    [(content, version)] = rows(
        path, "SELECT content, version FROM memory_entries WHERE id = ?", counter
    )
    assert int(content) == increments and version == increments + 1
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        assert j.integrity_check() == ["ok"]
        report = verify(j)
        assert report.ok, report.problems

    desk_ms = [line["ms"] for d in desks for line in d.lines]
    agent_ms = [line["ms"] for a in agents for line in a.lines]
    print(
        f"\nFIGURE contention items {len(items)} decisions {len(desk_ms)} "
        f"agent_writes {len(agent_ms)} (events {len(acked_events)}, approvals "
        f"{len(acked_approvals)}, increments {increments}) lost 0 busy 0"
    )
    print(
        f"FIGURE contention_desk_wait_ms p50 {percentile(desk_ms, 50):.1f} "
        f"p99 {percentile(desk_ms, 99):.1f} max {max(desk_ms):.1f}"
    )
    print(
        f"FIGURE contention_agent_wait_ms p50 {percentile(agent_ms, 50):.1f} "
        f"p99 {percentile(agent_ms, 99):.1f} max {max(agent_ms):.1f}"
    )
    assert increments > 0 and len(acked_events) > 0
