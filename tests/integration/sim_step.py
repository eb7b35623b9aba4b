"""One simulated demo agent (``proctor.sim``'s own Agent, in its own process) running one
chosen step in one run, so a test can make each operator choice the desk offers and watch
what the demo agent does with it:

    python sim_step.py JOURNAL NAME INDEX RESTART STEP

STEP is ``approval`` (an action to approve; a fresh agent's first effect crashes for an
even INDEX and hangs past its lease for an odd one; RESTART > 0: no fault), ``approvals``
(twelve of them in one run), ``question``
(a memory change review), ``recover`` (a restarted agent finishing its crashed run) or
``retry`` (an agent looking for work: a failed run of its own an operator asked to retry).
Prints ``RUN <id> <status>`` when its run has ended.
"""

from __future__ import annotations

import sys

from proctor.core.models import QuestionKind
from proctor.sim.agent_process import Agent, parse_args


def main() -> int:
    journal, name, index, restart, step = sys.argv[1:6]
    place = ["--journal", journal, "--name", name, "--index", index, "--restart", restart]
    opts = parse_args([*place, "--rate", "50", "--drain", "300", "--fault-rate", "0"])
    agent = Agent(opts)
    runs_before = {r.id for r in agent.j.runs.list(limit=500).items}
    if step == "recover":
        agent.recover()
    elif step == "retry":
        agent.plan = list  # type: ignore[method-assign]
        agent.one_run()
    else:
        agent.next_question_kind = lambda: QuestionKind.MEMORY_CHANGE_REVIEW  # type: ignore[method-assign]
        chosen = agent.step_question if step == "question" else agent.step_approval
        count = 12 if step == "approvals" else 1
        agent.plan = lambda: [chosen] * count  # type: ignore[method-assign]
        agent.one_run()
    for run in agent.j.runs.list(limit=500).items:
        if run.agent == name and (step in ("recover", "retry") or run.id not in runs_before):
            print(f"RUN {run.id} {run.status.value}", flush=True)
    agent.j.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
