"""The example agent (examples/langgraph_refund_agent.py) as a test process, with a start line
for racing and a crash seam.

    python lg_app.py JOURNAL COMMAND THREAD [--lease S] [--go FILE]

COMMAND is start, resume or crash-after-claim. The last stdout line is the GraphOutcome JSON.
The graph's "bank" is ``JOURNAL.refunds.log``: one line per refund really made.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from proctor.core.integrations.langgraph import LangGraphBridge

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_refund_agent.py"


def load_example() -> Any:
    name = "langgraph_refund_agent"
    if name not in sys.modules:  # registered first: the graph's TypedDict resolves through it
        spec = importlib.util.spec_from_file_location(name, EXAMPLE)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


class CrashAfterClaim(LangGraphBridge):
    def _invoke(self, command: Any, thread_id: str) -> Any:
        os._exit(17)  # the claim is won and begun; the process dies before the graph runs


def main() -> int:
    p = argparse.ArgumentParser()
    for name in ("journal", "command", "thread"):
        p.add_argument(name)
    p.add_argument("--lease", type=float, default=30.0)
    p.add_argument("--go", help="wait for this file to exist before acting (a start line)")
    args = p.parse_args()
    cls = CrashAfterClaim if args.command == "crash-after-claim" else LangGraphBridge
    bridge, journal = load_example().make_bridge(
        Path(args.journal), lease=args.lease, bridge_cls=cls
    )
    if args.go:
        print("ready", flush=True)
        while not os.path.exists(args.go):
            time.sleep(0.005)
    if args.command == "start":
        outcome = bridge.start(args.thread, {}, title="Refund for acct-9")
    else:
        outcome = bridge.resume(args.thread)
    print(outcome.model_dump_json(), flush=True)
    journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
