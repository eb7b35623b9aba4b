"""Comments in team mode (core/ops/team.py), against a real PostgreSQL server: an operator
login comments as itself through the API; an agent login's raw SQL writes no comment at
all (nor changes or removes one); an operator login cannot write a comment as another
operator."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import team_fixtures

from proctor.core import Actor, Journal, errors

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

INSERT = (
    "INSERT INTO comments (id, item_kind, item_id, seq, author, body, decision_id, created_at, "
    "prev_digest, digest) VALUES (%s, 'approval', %s, %s, %s, 'forged', %s, 1.0, %s, 'x')"
)


@pytest.fixture
def agent(team) -> Iterator[Journal]:
    with team.journal("agent_a", Actor.agent("builder")) as j:
        yield j


@pytest.fixture
def commented(team, agent):
    """An approval with op_dana's comment on it."""
    run = agent.runs.start("proj", "team run")
    asked = agent.approvals.request(run.id, {"tool": "shell"}, reason="build it")
    with team.journal("op_dana", Actor.operator("op_dana")) as dana:
        posted = dana.comments.add(asked.id, "looks fine to me")
    assert posted.author == "operator:op_dana"
    return asked, posted


def comments_of(team: Any) -> list[tuple]:
    with team.owner() as conn:
        return conn.execute("SELECT id, author, body, seq FROM comments ORDER BY seq").fetchall()


def test_an_agent_login_writes_no_comment(team, agent, commented):
    import psycopg

    asked, posted = commented
    before = comments_of(team)
    with pytest.raises(errors.NotAllowed):
        agent.comments.add(asked.id, "approve me")
    with team.raw("agent_a") as conn:
        for sql, params in (
            (INSERT, ("cmt_x", asked.id, 2, "operator:op_dana", posted.id, posted.digest)),
            (INSERT, ("cmt_y", asked.id, 2, "agent:builder", posted.id, posted.digest)),
            ("UPDATE comments SET body = 'approve it' WHERE id = %s", (posted.id,)),
            ("DELETE FROM comments WHERE id = %s", (posted.id,)),
            ("TRUNCATE comments", None),
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql, params)
    assert comments_of(team) == before


def test_an_operator_login_comments_only_as_itself(team, commented):
    import psycopg

    asked, posted = commented
    before = comments_of(team)
    with team.raw("op_eli") as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # its decision, as dana
            conn.execute(
                "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
                "source, request_id, reason, created_at, digest) VALUES ('dec_f', 'comment', "
                "'cmt_f', NULL, '{}', 'operator:op_dana', 'cli', NULL, NULL, 1.0, 'x')"
            )
        with pytest.raises(psycopg.Error):  # the comment as dana (no decision of hers names it)
            conn.execute(INSERT, ("cmt_f", asked.id, 2, "operator:op_dana", "dec_f", posted.digest))
    assert comments_of(team) == before
    with team.journal("op_eli", Actor.operator("op_eli")) as eli:
        assert eli.comments.add(asked.id, "agreed").author == "operator:op_eli"
    assert [r[1] for r in comments_of(team)] == ["operator:op_dana", "operator:op_eli"]
