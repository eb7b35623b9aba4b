"""An agent process for desk tests: asks one question and waits for the operator. Prints
one line per step (flushed): ASKED <interaction_id> / GOT <id> <status> <reason or answer>."""

from __future__ import annotations

import json
import sys

from proctor.core import Actor, Journal


def main() -> int:
    with Journal.open(sys.argv[1], actor=Actor.agent("asker")) as j:
        run = j.runs.start("shop", "asker run", agent="asker")
        q = j.questions.ask(run.id, "question", "Which warehouse ships the order?")
        print(f"ASKED {q.id}", flush=True)
        got = j.questions.wait(q.id, timeout=120)
        told = got.dismissal if got.dismissal is not None else json.dumps(got.response)
        print(f"GOT {got.id} {got.status.value} {told}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
