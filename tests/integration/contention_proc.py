"""A process for test_contention.py: an agent writing continuously, or a desk deciding.

Usage:
  python contention_proc.py agent JOURNAL NAME STOP_FILE COUNTER_ID RUN_ID
  python contention_proc.py desk JOURNAL NAME SEED ITEMS_FILE

Both print ``ready``, wait for a line on stdin, work, and print one JSON line per result.
An agent appends events and batches, asks for approvals and increments a shared memory
counter by compare-and-set (retrying only on StaleVersion) until STOP_FILE exists. A
desk decides every item in ITEMS_FILE, in its own order, as the operator NAME.
Every call's duration (its wait for the write lock included) is reported in ms.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback

from proctor.core import Actor, Journal, errors


def out(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000


def agent(path: str, name: str, stop_file: str, counter_id: str, run_id: str) -> None:
    journal = Journal.open(path, actor=Actor.agent(name))
    own = journal.runs.start("contention", f"{name} writing", agent=name).id
    print("ready", flush=True)
    sys.stdin.readline()
    n = 0
    while not os.path.exists(stop_file):
        n += 1
        step = n % 4
        if step == 0:
            batch = [("batch", {"n": n, "k": k}) for k in range(5)]
            events, ms = timed(lambda b=batch: journal.runs.append_events(own, b))
            out(kind="events", ids=[e.id for e in events], ms=ms)
        elif step == 1:
            event, ms = timed(lambda m=n: journal.runs.append_event(own, "step", {"n": m}))
            out(kind="events", ids=[event.id], ms=ms)
        elif step == 2:
            action = {"tool": "deploy", "agent": name, "n": n}
            approval, ms = timed(
                lambda a=action: journal.approvals.request(run_id, a, reason="more work")
            )
            out(kind="approval", id=approval.id, ms=ms)
        else:
            while True:  # read-modify-write: a lost update would show in the total
                entry = journal.memory.get(counter_id)
                value = int(entry.content) + 1
                try:
                    _, ms = timed(
                        lambda e=entry, v=value: journal.memory.replace(
                            counter_id, str(v), expected_version=e.version
                        )
                    )
                    break
                except errors.StaleVersion:
                    continue
            out(kind="increment", ms=ms)
    journal.close()


def decide(journal: Journal, name: str, item: dict) -> None:
    kind, item_id = item["kind"], item["id"]
    rid = f"{name}-{item_id}"
    if kind == "approval":
        version = journal.approvals.get(item_id).version
        journal.approvals.decide(
            item_id, True, expected_version=version, request_id=rid, reason=f"go, says {name}"
        )
    elif kind == "question":
        version = journal.questions.get(item_id).version
        journal.questions.answer(
            item_id, {"text": f"{name} answered"}, expected_version=version, request_id=rid
        )
    elif kind == "conflict":
        version = journal.memory.conflict(item_id).version
        journal.memory.resolve(
            item_id,
            "accepted_local",
            expected_version=version,
            reason=f"{name} keeps local",
            request_id=rid,
        )
    else:
        version = journal.effects.get(item_id).version
        journal.effects.resolve(
            item_id, "committed", reason=f"{name} checked", expected_version=version, request_id=rid
        )


def desk(path: str, name: str, seed: int, items_file: str) -> None:
    with open(items_file) as f:
        items = json.load(f)
    random.Random(seed).shuffle(items)
    journal = Journal.open(path, actor=Actor.operator(name))
    print("ready", flush=True)
    sys.stdin.readline()
    for item in items:
        start = time.perf_counter()
        try:
            decide(journal, name, item)
            outcome = "won"
        except errors.StoreBusy as exc:
            outcome = f"StoreBusy: {exc}"
        except errors.ProctorError as exc:
            outcome = type(exc).__name__
        except Exception as exc:  # noqa: BLE001 - reported, the test fails on it
            outcome = f"untyped {type(exc).__name__}: {exc} {traceback.format_exc()[-400:]}"
        out(
            kind="decision", id=item["id"], outcome=outcome, ms=(time.perf_counter() - start) * 1000
        )
    journal.close()


if __name__ == "__main__":
    role, args = sys.argv[1], sys.argv[2:]
    try:
        if role == "agent":
            agent(*args)
        else:
            desk(args[0], args[1], int(args[2]), args[3])
    except Exception:  # noqa: BLE001 - any escape is a failure the test shows
        out(kind="error", detail=traceback.format_exc()[-1500:])
        sys.exit(1)
