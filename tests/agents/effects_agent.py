"""The agent process of tests/gui/effects/test_effects_flow.py (run as a script, never imported
by the GUI test): ``python effects_agent.py JOURNAL begin KEY...`` reserves, begins and
hangs until killed; ``python effects_agent.py JOURNAL retry RUN KEY...`` reserves again,
polling until each dead lease has lapsed; ``python effects_agent.py JOURNAL other KEY...``
reserves, runs and commits other effects (tests/cli/test_lapsed_leases.py)."""

from __future__ import annotations

import os
import sys
import threading
import time

from proctor.core import Actor, Journal, errors

LEASE_S = float(os.environ.get("EFFECTS_AGENT_LEASE_S", "1.0"))


def agent_main(path: str, mode: str, rest: list[str]) -> int:
    j = Journal.open(path, actor=Actor.agent("payer"))
    if mode == "begin":
        run = j.runs.start("billing", "pay the invoices", agent="payer")
        for key in rest:
            j.runs.record_tool_call(
                run.id, "pay_invoice", {"invoice": key, "amount": 1200}, safety_class="financial"
            )
            j.effects.reserve(
                key,
                tool="pay_invoice",
                run_id=run.id,
                safety_class="financial",
                action={"invoice": key, "amount": 1200},
                lease_seconds=LEASE_S,
                owner="payer@first",
            )
            j.effects.begin(key, owner="payer@first")
        print(f"BEGUN {run.id}", flush=True)
        threading.Event().wait()  # the process is killed here, mid-flight
    if mode == "other":  # another agent's unrelated effect, done whole
        run = j.runs.start("billing", "another invoice", agent="payer")
        for key in rest:
            j.effects.reserve(key, tool="pay_invoice", run_id=run.id, owner="payer@other")
            j.effects.begin(key, owner="payer@other")
            j.effects.commit(key, {"paid": True}, owner="payer@other")
            print(f"COMMITTED {key}", flush=True)
        j.close()
        return 0
    run_id, keys = rest[0], rest[1:]
    deadline = time.monotonic() + 30
    for key in keys:
        while True:
            try:
                effect = j.effects.reserve(
                    key,
                    tool="pay_invoice",
                    run_id=run_id,
                    safety_class="financial",
                    owner="payer@retry",
                )
                print(f"RESERVED {key} {effect.attempt}", flush=True)
            except errors.EffectBusy:
                if time.monotonic() < deadline:
                    time.sleep(0.05)  # the dead process's lease has not lapsed yet
                    continue
                print(f"BUSY {key}", flush=True)
            except errors.ProctorError as exc:
                print(f"REFUSED {key} {type(exc).__name__}", flush=True)
            break
    j.close()
    return 0


if __name__ == "__main__":
    sys.exit(agent_main(sys.argv[1], sys.argv[2], sys.argv[3:]))
