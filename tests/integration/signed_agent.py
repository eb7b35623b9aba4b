"""A trusting agent process: it trusts only the operators in the trust file it is given.

Usage: signed_agent.py JOURNAL TRUST_FILE RUN_ID N. Requests N approvals one after the
other; for each prints ``requested <id>``, waits for the decision and prints ``consumed
<effect status>`` or ``refused <why>``.
"""

from __future__ import annotations

import sys

from proctor.core import Actor, Journal, errors


def main() -> int:
    path, trust, run_id, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with Journal.open(path, actor=Actor.agent("signed-agent"), trust=trust, create=False) as j:
        for i in range(count):
            action = {"tool": "deploy", "args": {"target": f"prod-{i}"}}
            approval = j.approvals.request(run_id, action, reason="ship it")
            print(f"requested {approval.id}", flush=True)
            try:
                decided = j.approvals.wait(approval.id, timeout=120)
                if decided.status != "approved":
                    print(f"refused {decided.status}", flush=True)
                    continue
                effect = j.approvals.consume_and_reserve(
                    approval.id, approval.action_digest, f"deploy-{i}"
                )
                print(f"consumed {effect.status}", flush=True)
            except errors.DecisionUnverified as err:
                print(f"refused {err.why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
