"""What the decision paths record is pinned to the byte: a fixed scenario with fixed ids and
clock writes chains whose head digests are those the code before the one decision writer
(``decision_rows.record_decision``) wrote. A refactor of how rows are written (fewer
statements, one writer for five paths) must not change a single recorded byte."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3

from proctor.core import Actor, Journal

# Written by main before record_decision (e6ada70), with the scenario below; the run head
# since issue #31, whose approval.requested event records the origin's digest and whose
# interaction.answered event the response's (the deliberate change: what the chain records).
# DECISIONS since issue 37: an answer's decision records {"answer": ..., "hold_until": ...}
# (the hold signed with it; no answer reads as an undo), the one deliberate change there.
RUN_HEAD = "a5cddbd4ec3b944e694c591c79f14f704155178b222224f90e2d49031149939f"
AUDIT_HEAD = "f3f2e6464d9cd196b13cff93518de41276ae485f69f1e4ac37acb7cb99373a8b"
DECISIONS = "ad2e2237eabcb5f7f88321838998ede7245d08bf1ea90b6ceb832a5bf8b6ceac"


def act(name: str, **args: str) -> dict:
    return {"tool": "fs.write", "name": name, "args": {"path": f"/tmp/{name}", **args}}


def test_every_decision_path_records_the_same_bytes(tmp_path, monkeypatch):
    # the agent's default origin names this process (pid, host): fixed, so the chain is too
    monkeypatch.setattr(
        "proctor.core.kernel.origin._python_here", lambda *_: '{"runtime":"python"}'
    )
    path = tmp_path / "j.db"
    ticks = itertools.count(1_700_000_000, 7)

    def clock() -> float:
        return float(next(ticks))

    op = Journal.open(path, actor=Actor.operator("olga"), id_seed=1, clock=clock)
    ag = Journal.open(path, actor=Actor.agent("bot"), id_seed=2, clock=clock)
    try:
        run = ag.runs.start("p", "t", run_id="run_1")
        a1 = ag.approvals.request(run.id, act("a1"), reason="r")
        op.approvals.decide(a1.id, True, expected_version=a1.version, reason="ok", request_id="q1")
        a2 = ag.approvals.request(run.id, act("a2"), reason="r")
        op.approvals.decide(a2.id, False, expected_version=a2.version, reason="no")
        a3 = ag.approvals.request(run.id, act("a3"), reason="r")
        op.approvals.decide(a3.id, True, expected_version=a3.version, scope="run")
        post = {"tool": "net.post", "name": "n", "args": {"url": "http://x"}}
        a4 = ag.approvals.request(run.id, post, reason="r")
        draft = op.approvals.rule_draft(a4.id, "run")
        op.approvals.decide_with_rule(
            a4.id, draft, expected_version=a4.version, reason="rule", request_id="q2"
        )
        ag.approvals.request(run.id, post, reason="auto")  # the rule decides it
        a6 = ag.approvals.request(run.id, act("a6", mode="w"), reason="r")
        op.approvals.approve_edited(
            a6.id, act("a6", mode="a"), expected_version=a6.version, reason="edited"
        )
        ag.approvals.request(run.id, act("a7"), reason="r", expires_in=1)
        op.approvals.expire_due()
        q = ag.questions.ask(run.id, "question", "why?")
        op.questions.answer(q.id, {"text": "because"}, expected_version=q.version, reason="x")
        ag.effects.reserve("k1", tool="t", run_id=run.id, action={"x": 1}, owner="bot")
        ag.effects.begin("k1", owner="bot")
        ag.effects.mark_ambiguous("k1", "lost", owner="bot")
        op.effects.resolve(
            "k1", "committed", reason="seen it", expected_version=op.effects.get("k1").version
        )
        op.runs.request_cancel(run.id, "stop", expected_version=op.runs.get(run.id).version)
    finally:
        op.close()
        ag.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT last_digest FROM runs").fetchone()[0] == RUN_HEAD
        assert (
            conn.execute("SELECT digest FROM audit ORDER BY sequence DESC LIMIT 1").fetchone()[0]
            == AUDIT_HEAD
        )
        digests = "".join(
            r[0] for r in conn.execute("SELECT digest FROM decisions ORDER BY created_at, id")
        )
        assert hashlib.sha256(digests.encode()).hexdigest() == DECISIONS
        assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 10
    finally:
        conn.close()
