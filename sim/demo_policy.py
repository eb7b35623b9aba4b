"""The demo's approval policy (docs/policies.md): a group ``ops`` (alice, bob and the desk's
operator), a policy "two of ops for production deploys", and one request under it halfway
through its quorum — alice approved it with her reason, it waits for a second person of ops.
Filed last, so it is the newest row of the demo's inbox."""

from __future__ import annotations

from typing import Any

from proctor.core.policies.models import PolicyDraft, PolicyStage

from .demo_runs import DEMO_ORIGIN

TOOL = "deploy.release"
ACTION = {
    "tool": TOOL,
    "args": {
        "service": "billing-api",
        "version": "2.14.0",
        "environment": "prod",
        "strategy": "rolling, 10% then 100%",
    },
}


def add_policy_run(writer: Any, desk_operator: str | None = None) -> str:
    """The group, the policy and the halfway request; the request's id."""
    alice, bob = writer.operators[0], writer.operators[1]
    people = [alice.actor.name, bob.actor.name]
    if desk_operator and desk_operator not in people:
        people.append(desk_operator)
    for person in people:
        alice.policies.add_member("ops", person, reason="on the release rota")
    alice.policies.add(
        PolicyDraft(
            name="two of ops for production deploys",
            action_pattern=TOOL,
            stages=[PolicyStage(groups=["ops"], need=2)],
        ),
        reason="no production release on one person's say",
    )
    writer.clock.advance(120)
    aj = writer.agents[0]
    run, _ = writer.start(aj)
    asked = aj.approvals.request(
        run.id,
        ACTION,
        reason="release 2.14.0: fixes the invoice rounding bug (ticket BILL-2231)",
        safety_class="external_side_effect",
        origin=DEMO_ORIGIN,  # not this process's: the same seed gives the same journal
    )
    writer.clock.advance(95)
    alice.approvals.decide(
        asked.id,
        True,
        expected_version=asked.version,
        reason="canary healthy for 30 min; rollback plan in BILL-2231",
    )
    writer.clock.advance(40)
    return asked.id
