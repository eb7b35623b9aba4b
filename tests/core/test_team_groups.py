"""Server roles as groups in team mode (0018e, core/ops/team_groups.py), against a real
PostgreSQL server: ``team add-user NAME --group ops`` grants the group's server role and
records the journal's change; a login that writes the journal's rows that would make it a
member (an agent login's raw INSERT; an operator login's own group change, decision and all)
gains no step, because the server asks the role. An agent login sweeps a request its policy
denies at the deadline (by the server's clock), and cannot deny one by hand before it."""

from __future__ import annotations

import pytest
import team_fixtures

from proctor.core import Actor, errors
from proctor.core.ops.team import add_user
from proctor.core.policies.models import PolicyDraft, PolicyStage

from .helpers import FakeClock

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

ACTION = {"tool": "shell", "args": {"command": "make build"}}
GROUP = "ops-team-test"


def approve(journal, approval_id):
    current = journal.approvals.get(approval_id)
    return journal.approvals.decide(approval_id, True, expected_version=current.version)


def one_of(journal, group, **more):
    stage = PolicyStage(groups=[group], need=1)
    return journal.policies.add(
        PolicyDraft(name=f"one of {group}", action_pattern="shell", stages=[stage], **more)
    )


def test_a_group_is_a_server_role_and_journal_rows_make_no_member(team):
    import psycopg

    add_user(team.url(), "op_dana", "operator", team_fixtures.PASSWORD, (GROUP,))
    with team.owner() as conn:
        granted = conn.execute(
            "SELECT pg_has_role('op_dana', %s, 'MEMBER'), pg_has_role('op_eli', %s, 'MEMBER')",
            (f"proctor_group_{GROUP}", f"proctor_group_{GROUP}"),
        ).fetchone()
    assert granted == (True, False)
    with (
        team.journal("op_dana", Actor.operator("op_dana")) as dana,
        team.journal("op_eli", Actor.operator("op_eli")) as eli,
        team.journal("agent_a", Actor.agent("builder")) as agent,
    ):
        assert dana.policies.groups()[GROUP] == ["op_dana"]  # recorded in the journal too
        one_of(dana, GROUP)
        run = agent.runs.start("proj", "team run")
        asked = agent.approvals.request(run.id, ACTION, reason="build it")
        # an agent login writes no group change for itself
        with team.raw("agent_a") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO group_changes (id, group_name, operator, seq, change, decision_id, "
                "actor, created_at) VALUES ('grp_x', %s, 'agent_a', 1, 'add', 'dec_x', "
                "'system:x', 1.0)",
                (GROUP,),
            )
        # an operator login makes the journal say it is a member (its own signed-able change)
        eli.policies.add_member(GROUP, "op_eli", reason="let me in")
        assert "op_eli" in eli.policies.groups()[GROUP]
        with pytest.raises(errors.ProctorError):
            approve(eli, asked.id)  # the server asks the group's role: op_eli has none
        assert agent.approvals.get(asked.id).status == "pending"
        assert dana.policies.progress(asked.id).steps == []
        done = approve(dana, asked.id)
        assert done.status == "approved" and done.decided_by == "operator:op_dana"


def test_a_step_names_the_login_that_takes_it(team):
    import psycopg

    add_user(team.url(), "op_dana", "operator", team_fixtures.PASSWORD, (GROUP,))
    with (
        team.journal("op_dana", Actor.operator("op_dana")) as dana,
        team.journal("agent_a", Actor.agent("builder")) as agent,
    ):
        one_of(dana, GROUP)
        run = agent.runs.start("proj", "team run")
        asked = agent.approvals.request(run.id, ACTION, reason="build it")
    with team.raw("op_eli") as conn:
        policy = conn.execute(
            "SELECT policy_id FROM policy_bindings WHERE approval_id = %s", (asked.id,)
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
            "source, created_at, digest) VALUES ('dec_x', 'approval_step', %s, %s, '{}', "
            "'operator:op_eli', 'cli', 1.0, %s)",
            (asked.id, run.id, "0" * 64),
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="login's own"):
            conn.execute(
                "INSERT INTO approval_steps (id, approval_id, policy_id, stage, group_name, "
                "operator, approve, decision_id, created_at) VALUES ('stp_x', %s, %s, 0, %s, "
                "'op_dana', 1, 'dec_x', 1.0)",
                (asked.id, policy, GROUP),
            )


def test_an_agent_login_sweeps_a_deadline_denial_by_the_servers_clock(team):
    import psycopg

    clock = FakeClock()  # far behind the server's clock: the server decides when is due
    add_user(team.url(), "op_dana", "operator", team_fixtures.PASSWORD, (GROUP,))
    with (
        team.journal("op_dana", Actor.operator("op_dana"), clock=clock) as dana,
        team.journal("agent_a", Actor.agent("builder"), clock=clock) as agent,
    ):
        policy = one_of(
            dana,
            GROUP,
            escalate_after=3600,
            escalate_to="managers",
            at_deadline="deny",
            deadline=8 * 3600,
        )
        run = agent.runs.start("proj", "team run")
        asked = agent.approvals.request(run.id, ACTION, reason="build it")
        clock.advance(8 * 3600)
        seen = agent.approvals.wait(asked.id, timeout=0)
        assert seen.status == "denied" and seen.decided_by == f"policy:{policy.id}"
    # filed now by the server's clock: an agent login cannot deny it by the policy yet
    with team.journal("agent_a", Actor.agent("builder")) as live:
        fresh = live.approvals.request(run.id, {**ACTION, "n": 2}, reason="again")
    with team.raw("agent_a") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "UPDATE approvals SET status = 'denied', decided_by = %s, decided_at = "
            "created_at + 99999, version = version + 1 WHERE id = %s",
            (f"policy:{policy.id}", fresh.id),
        )
