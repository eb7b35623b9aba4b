"""The overview's aggregates: counted exactly, bucketed by age and hour, filtered by project
and agent, from one read."""

from __future__ import annotations

from proctor.core import Actor


def action(n: int, tool: str = "shell") -> dict:
    return {"tool": tool, "args": {"command": f"step {n}"}}


def request(agent, run, n, tool="shell"):
    return agent.approvals.request(run.id, action(n, tool), reason="r", request_key=f"k{n}")


def test_pending_items_are_counted_by_kind_and_age(agent, operator, start_run, clock):
    run = start_run()
    request(agent, run, 1)  # will be > 8 h old
    clock.advance(9 * 3600)
    request(agent, run, 2)  # 2-8 h old
    clock.advance(3 * 3600)
    agent.questions.ask(run.id, "question", "which DB?")  # < 5 min old
    facts = operator.overview.facts()
    by_label = {b.label: b.counts for b in facts.pending}
    assert by_label[">8h"]["approval"] == 1
    assert by_label["2–8h"]["approval"] == 1
    assert by_label["<5m"]["question"] == 1
    assert sum(c["approval"] for c in by_label.values()) == 2
    assert sum(c["conflict"] + c["effect"] for c in by_label.values()) == 0


def test_decisions_land_in_their_hour_split_by_who_decided(agent, operator, start_run, clock):
    run = start_run()
    a1, a2 = request(agent, run, 1), request(agent, run, 2)
    clock.advance(600)
    operator.approvals.decide(a1.id, True, expected_version=a1.version, reason="ok")
    clock.advance(3600)
    operator.approvals.decide(a2.id, False, expected_version=a2.version, reason="no")
    operator.approvals.add_rule("allow", "shell", run_id=run.id)
    request(agent, run, 3)  # decided by the rule, now
    clock.advance(60)
    facts = operator.overview.facts(hours=3)
    assert len(facts.per_hour) == 3
    assert [b.counts["manual"] for b in facts.per_hour] == [0, 1, 1]
    assert [b.counts["rule"] for b in facts.per_hour] == [0, 0, 1]
    assert (facts.manual, facts.automatic) == (2, 1)
    [shell] = facts.by_tool
    assert shell.name == "shell" and shell.decisions == 2
    assert shell.mean_s == (600 + 4200) / 2 and shell.max_s == 4200
    assert facts.by_agent[0].name == agent.actor.name


def test_filters_keep_only_that_project_and_agent(open_journal, operator, clock):
    ada = open_journal(Actor.agent("ada"))
    bob = open_journal(Actor.agent("bob"))
    r1 = ada.runs.start("alpha", "one")
    r2 = bob.runs.start("beta", "two")
    request(ada, r1, 1)
    request(bob, r2, 2)
    request(bob, r2, 3)

    def pending(**kw) -> int:
        return sum(b.counts["approval"] for b in operator.overview.facts(**kw).pending)

    assert pending() == 3
    assert pending(project="alpha") == 1 and pending(project="beta") == 2
    assert pending(agent="bob") == 2 and pending(agent="bob", project="alpha") == 0
    facts = operator.overview.facts()
    assert {"alpha", "beta"} <= set(facts.projects) and {"ada", "bob"} <= set(facts.agents)
    runs = operator.overview.facts(project="beta").runs_per_hour
    assert sum(b.counts["active"] for b in runs) == 1


def test_the_overview_is_one_read_transaction(operator, journal_path):
    """All figures come from one snapshot: a single read call on the journal."""
    calls = []
    real = operator.read

    def counting(fn):
        calls.append(fn)
        return real(fn)

    operator.read = counting
    operator.overview.facts()
    assert len(calls) == 1
