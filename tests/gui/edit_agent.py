"""An agent process for the edit-then-approve desk test: asks once (with the tool's input
schema), waits, then runs exactly what was approved — the edited action if the operator
edited it — consuming the approval with that action's digest. Prints:

REQUESTED <id> / APPROVED <id> <edited yes|no> <args as JSON> / CONSUMED <id> <status>
/ REFUSED <id> <error type>
"""

from __future__ import annotations

import json
import sys

from proctor.core import Actor, ApprovalStatus, Journal, errors

SCHEMA = {
    "type": "object",
    "required": ["amount"],
    "properties": {"amount": {"type": "number", "maximum": 500}, "account": {"type": "string"}},
}


def main() -> int:
    j = Journal.open(sys.argv[1], actor=Actor.agent("refund-bot"))
    run = j.runs.start("shop", "refunds", agent="refund-bot")
    asked = j.approvals.request(
        run.id,
        {"tool": "payments.refund", "args": {"amount": 400, "account": "acct-7"}},
        reason="Customer asked for a refund.",
        input_schema=SCHEMA,
    )
    print(f"REQUESTED {asked.id}", flush=True)
    done = j.approvals.wait(asked.id, timeout=60, poll=0.02)
    if done.status != ApprovalStatus.APPROVED:
        print(f"STATUS {done.id} {done.status.value}", flush=True)
        return 0
    print(
        f"APPROVED {done.id} {'yes' if done.edited else 'no'} "
        f"{json.dumps(done.effective_action['args'], sort_keys=True)}",
        flush=True,
    )
    try:  # the requested action's digest is refused once the operator edited it
        j.approvals.consume_and_reserve(done.id, asked.action_digest, f"refund:{done.id}")
        print(f"CONSUMED-ORIGINAL {done.id}", flush=True)
    except errors.DigestMismatch:
        print(f"REFUSED {done.id} DigestMismatch", flush=True)
    effect = j.approvals.consume_and_reserve(done.id, done.effective_digest, f"refund:{done.id}")
    print(
        f"CONSUMED {done.id} {effect.status.value} "
        f"{json.dumps(effect.action['args'], sort_keys=True)}",
        flush=True,
    )
    j.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
