"""The command line on a team journal (real server): an operator login decides as itself
without --as; a typed name that is not the login is refused by the server with a sentence;
an agent login cannot approve from the command line either."""

from __future__ import annotations

import pytest
import team_fixtures

from proctor.core import Actor

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures


@pytest.fixture
def pending(team):
    with team.journal("agent_a", Actor.agent("builder")) as agent:
        run = agent.runs.start("proj", "cli run")
        return agent.approvals.request(run.id, {"tool": "deploy", "args": {}}, reason="go")


def test_an_operator_login_decides_as_itself(cli, team, pending, monkeypatch):
    monkeypatch.setenv("PROCTOR_OPERATOR", "someone-typed")
    refused = cli("approve", pending.id, "--journal", team.url("op_dana"), "--as", "eli", "--yes")
    assert refused.rc == 1
    assert "the operator recorded must be the login (operator:op_dana)" in refused.err
    assert team_fixtures.PASSWORD not in refused.err + refused.out
    done = cli("approve", pending.id, "--journal", team.url("op_dana"), "--yes")
    assert done.rc == 0, done.err
    shown = cli("show", pending.id, "--journal", team.url("obs_fay"), "--json")
    assert '"decided_by": "operator:op_dana"' in shown.out


def test_an_agent_login_cannot_approve_from_the_command_line(cli, team, pending):
    refused = cli("approve", pending.id, "--journal", team.url("agent_a"), "--yes")
    assert refused.rc == 1 and "cannot write an operator's row" in refused.err
