"""A scripted operator: a separate process that decides everything through the CLI.

    python sim_operator.py JOURNAL STOP_FILE LOG_FILE

Polls `proctor inbox --json --details`, then approves/denies, answers, resolves memory
conflicts and ambiguous effects, each with its own `python -m proctor ...` process (a few
at a time). Appends one JSON line per decision to LOG_FILE. Stops when STOP_FILE exists.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from proctor.sim.content import answer_for

OPERATOR = "sim-operator"


def proctor(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PROCTOR_OPERATOR": OPERATOR, "PROCTOR_CONFIG": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def command_for(item: dict, rng: random.Random) -> list[str]:
    detail, ident = item["detail"], item["id"]
    if item["kind"] == "approval":
        if rng.random() < 0.15:
            return ["deny", ident, "--reason", "not with this account"]
        return ["approve", ident, "--scope", detail["requested_scope"], "--yes"]
    if item["kind"] == "question":
        answer = answer_for(
            detail["kind"], detail["response_schema"], detail["options"], rng, detail["request"]
        )
        return ["answer", ident, "--json", json.dumps(answer)]
    if item["kind"] == "conflict":
        return [
            "resolve-conflict",
            ident,
            rng.choice(["keep-local", "take-incoming", "dismiss"]),
            "--reason",
            "checked with the team",
        ]
    return [
        "resolve-effect",
        ident,
        rng.choice(["committed", "committed", "failed"]),
        "--reason",
        "checked the provider's dashboard",
    ]


def decide(journal: str, item: dict, argv: list[str]) -> dict:
    done = proctor(*argv, "--journal", journal, "--expect-version", str(item["version"]))
    return {
        "kind": item["kind"],
        "id": item["id"],
        "argv": argv,
        "rc": done.returncode,
        "stderr": done.stderr.strip(),
    }


def main() -> int:
    journal, stop_file, log_file = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    rng = random.Random(11)
    seen: set[str] = set()
    with ThreadPoolExecutor(3) as pool, log_file.open("a") as log:
        while not stop_file.exists():
            listing = proctor(
                "inbox",
                "--journal",
                journal,
                "--json",
                "--details",
                "--oldest-first",
                "--limit",
                "30",
                "--wait",
                "2",
            )
            if listing.returncode != 0:
                print(listing.stderr, file=sys.stderr)
                time.sleep(0.2)
                continue
            items = [i for i in json.loads(listing.stdout)["items"] if i["id"] not in seen]
            jobs = [pool.submit(decide, journal, item, command_for(item, rng)) for item in items]
            for job in jobs:
                result = job.result()
                if result["rc"] in (0, 1):  # done, or refused for good; 3 (busy) is retried
                    seen.add(result["id"])
                log.write(json.dumps(result) + "\n")
                log.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
