"""Journals for the Runs/Audit/timeline tests.

A run with 100 000 events is written through ``proctor.core.ops.transfer.import_run`` from
a bundle computed here (the same rows and digests the core would write), which takes a
second or two instead of the minute ``append_events`` needs on a busy machine.
"""

from __future__ import annotations

from pathlib import Path

from proctor.core import Actor, Journal
from proctor.core.journal import event_digest_body
from proctor.core.kernel.canonical import ZERO_DIGEST, chain_digest
from proctor.core.ops.transfer import FORMAT, VERSION, import_run

T0 = 1_750_000_000.0
TYPES = ("model.request", "model.response", "tool.output", "log", "agent.thought")


def event_rows(run_id: str, n: int, t0: float, step: float, *, title: str) -> list[dict]:
    rows, prev = [], ZERO_DIGEST
    for seq in range(1, n + 1):
        if seq == 1:
            type_, payload = (
                "run.started",
                {
                    "title": title,
                    "project": "bench",
                    "space": "default",
                    "agent": "big-agent",
                    "parent_run_id": None,
                    "deadline": None,
                    "metadata": {},
                },
            )
        else:
            type_ = TYPES[seq % len(TYPES)]
            payload = {"n": seq, "text": f"line {seq}", "needle": seq == n // 2}
        row = {
            "id": f"evt_{run_id[4:]}_{seq:07d}",
            "run_id": run_id,
            "sequence": seq,
            "type": type_,
            "payload": payload,
            "run_version": seq,
            "attempt": 1,
            "actor": "agent:big-agent",
            "created_at": t0 + seq * step,
            "prev_digest": prev,
        }
        row["digest"] = prev = chain_digest(prev, event_digest_body(row, payload))
        rows.append(row)
    return rows


def big_run_bundle(
    run_id: str, n: int, *, t0: float = T0, step: float = 0.01, title: str = "A very long run"
) -> dict:
    """A running run with ``n`` events (sequence 1 is run.started)."""
    events = event_rows(run_id, n, t0, step, title=title)
    last = events[-1]
    run = {
        "id": run_id,
        "project": "bench",
        "space": "default",
        "agent": "big-agent",
        "title": title,
        "parent_run_id": None,
        "status": "running",
        "version": n,
        "deadline": None,
        "created_at": t0 + step,
        "updated_at": last["created_at"],
        "finished_at": None,
        "last_sequence": n,
        "last_digest": last["digest"],
        "current_attempt": 1,
        "cancel_requested": False,
        "cancel_reason": None,
        "error": None,
    }
    attempts = [
        {
            "run_id": run_id,
            "number": 1,
            "status": "running",
            "started_at": t0 + step,
            "finished_at": None,
            "error": None,
        }
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "run": run,
        "tables": {"attempts": attempts},
        "events": events,
    }


def add_big_run(path: Path, run_id: str, n: int, **kw) -> None:
    with Journal.open(path, actor=Actor.operator("setup")) as j:
        import_run(j, big_run_bundle(run_id, n, **kw), verify=False)
