"""An agent process for desk tests: asks for approvals, waits for the operator's
decision, consumes what was approved. Prints one line per step (flushed):

RUN <run_id> / REQUESTED <approval_id> / STATUS <id> <status> <decided_by> <reason>
/ CONSUMED <id> <effect_status> / REFUSED <id> <error type>
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from proctor.core import Actor, ApprovalStatus, Journal, errors


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("journal")
    p.add_argument("--name", default="test-agent")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--expires", type=float, default=None)
    p.add_argument("--tool", default="deploy")
    p.add_argument("--args", default='{"target": "staging"}')
    p.add_argument("--reason", default="Ship the fix.")
    p.add_argument("--wait", type=float, default=60.0)
    a = p.parse_args()
    j = Journal.open(a.journal, actor=Actor.agent(a.name))
    run = j.runs.start("shop", f"{a.name} run", agent=a.name)
    print(f"RUN {run.id}", flush=True)
    action = {"tool": a.tool, "args": json.loads(a.args)}
    ids = []
    for n in range(a.count):
        approval = j.approvals.request(
            run.id, {**action, "n": n}, reason=a.reason, expires_in=a.expires
        )
        ids.append(approval)
        print(f"REQUESTED {approval.id}", flush=True)
    deadline = time.monotonic() + a.wait
    for approval in ids:
        done = j.approvals.wait(
            approval.id, timeout=max(0.1, deadline - time.monotonic()), poll=0.02
        )
        reason = (done.decision_reason or "").replace("\n", " ")
        print(f"STATUS {done.id} {done.status.value} {done.decided_by} {reason}", flush=True)
        if done.status == ApprovalStatus.APPROVED:
            try:
                effect = j.approvals.consume_and_reserve(
                    done.id, approval.action_digest, f"effect:{done.id}"
                )
                print(f"CONSUMED {done.id} {effect.status.value}", flush=True)
            except errors.ProctorError as exc:
                print(f"REFUSED {done.id} {type(exc).__name__}", flush=True)
    j.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
