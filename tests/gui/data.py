"""Journals for desk tests, filled through the public core API (as agents would)."""

from __future__ import annotations

import time
from pathlib import Path

from proctor.core import Actor, Journal

HOSTILE_REASON = (
    'I need this <b>bold</b> <img src="http://example.invalid/x.png"> '
    '<a href="http://example.invalid">click</a>'
)
HOSTILE_ARGS = {
    "path": "<b>/etc/passwd</b>",
    "html": '<img src="x" onerror="alert(1)">',
    "link": '<a href="http://example.invalid">here</a>',
}


def agent(path: Path, name: str) -> Journal:
    return Journal.open(path, actor=Actor.agent(name))


def expire_later(path: Path, hours: float = 2.0) -> int:
    """Expire what will be due ``hours`` from now, as a sweep then would: a test's expiry
    happens when the test says, not on a timer racing the desk. Returns how many expired."""
    later = time.time() + hours * 3600
    with Journal.open(path, actor=Actor.agent("sweeper"), clock=lambda: later) as j:
        return j.approvals.expire_due() + j.questions.expire_due()


def request(j: Journal, run_id: str, tool: str, args: dict, reason: str, **kw) -> str:
    return j.approvals.request(run_id, {"tool": tool, "args": args}, reason=reason, **kw).id


def populate(path: Path) -> dict[str, str]:
    """A small but varied journal: every inbox kind, decided history, events. Returns ids."""
    ids: dict[str, str] = {}
    with agent(path, "coder") as a:
        run = a.runs.start("webshop", "Fix checkout rounding bug", agent="coder")
        a.runs.append_events(run.id, [("step", {"n": n, "note": f"step {n}"}) for n in range(30)])
        ids["run"] = run.id
        ids["approval"] = request(
            a,
            run.id,
            "write_file",
            {"path": "src/cart.py", "bytes": 2048},
            "Apply the rounding fix to the cart total.",
            safety_class="idempotent_write",
            expires_in=3600,
        )
        ids["hostile"] = request(
            a, run.id, "shell", HOSTILE_ARGS, HOSTILE_REASON, safety_class="destructive"
        )
        ids["question"] = a.questions.ask(
            run.id, "choice", "Which currency should the report use?", options=["EUR", "USD"]
        ).id
    with agent(path, "ops-bot") as b:
        run2 = b.runs.start("infra", "Rotate database credentials", agent="ops-bot")
        ids["run2"] = run2.id
        ids["payment"] = request(
            b,
            run2.id,
            "pay_invoice",
            {"account": "ACME", "amount": 1200},
            "Invoice 4411 is due today.",
            safety_class="financial",
            expires_in=900,
        )
        effect = b.effects.reserve(
            "email:welcome:42",
            tool="send_email",
            run_id=run2.id,
            action={"to": "new@example.com"},
            safety_class="external_side_effect",
        )
        b.effects.begin(effect.key)
        b.effects.mark_ambiguous(effect.key, "SMTP timed out after DATA")
        ids["effect"] = effect.key
        entry = b.memory.add("project", "infra", "DB host", "db1.internal", run_id=run2.id)
        ids["conflict"] = b.memory.record_conflict(
            entry.id, "db2.internal", incoming_source="ops-bot", run_id=run2.id
        ).id
        past = request(
            b,
            run2.id,
            "pay_invoice",
            {"account": "ACME", "amount": 90},
            "Small invoice.",
            safety_class="financial",
        )
    with Journal.open(path, actor=Actor.operator("alice")) as op:
        op.approvals.decide(past, True, expected_version=1, reason="known vendor")
    return ids
