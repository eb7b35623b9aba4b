"""Team-mode fixtures shared by the core, CLI and desk tests: logins in the three roles
(made once per session: roles belong to the server), and a fresh team journal per test on
pg-core's real PostgreSQL server (``pg_server``, tests/pg_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from proctor.core import Actor, Journal
from proctor.core.ops.team import add_user, init

PASSWORD = "team-test-pw"
LOGINS = {
    "agent_a": "agent",
    "agent_b": "agent",
    "op_dana": "operator",
    "op_eli": "operator",
    "obs_fay": "observer",
}


@pytest.fixture(scope="session")
def team_logins(pg_server) -> dict[str, str]:
    """The logins (roles are the server's, not a database's): made once per session."""
    name = pg_server.fresh_database()
    url = pg_server.url(name)
    init(url)
    for login, role in LOGINS.items():
        add_user(url, login, role, PASSWORD)
    pg_server.drop_database(name)
    return LOGINS


@dataclass
class Team:
    server: Any
    database: str

    def url(self, login: str | None = None) -> str:
        if login is None:
            return self.server.url(self.database)  # the owner
        return self.server.url(self.database, user=login, password=PASSWORD)

    def raw(self, login: str) -> Any:
        import psycopg

        return psycopg.connect(
            host="127.0.0.1",
            port=self.server.port,
            dbname=self.database,
            user=login,
            password=PASSWORD,
            autocommit=True,
        )

    def journal(self, login: str, actor: Actor, **kw: Any) -> Journal:
        return Journal.open(self.url(login), actor=actor, create=False, **kw)

    def owner(self) -> Any:
        import psycopg

        return psycopg.connect(self.server.dsn(self.database), autocommit=True)


@pytest.fixture
def team(pg_server, team_logins) -> Iterator[Team]:
    name = pg_server.fresh_database()
    init(pg_server.url(name))
    yield Team(pg_server, name)
    pg_server.drop_database(name)


def grant_group(team: Team, login: str, group: str) -> None:
    """Put ``login`` in ``group``'s server role (0018e: on a team server a step needs it, as
    well as the journal's group change), as ``team add-user --group`` does, without writing
    the journal's change (the test writes that itself)."""
    role = f"proctor_group_{group}"
    with team.owner() as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            conn.execute(f'CREATE ROLE "{role}" NOLOGIN NOINHERIT')
        conn.execute(f'GRANT "{role}" TO "{login}"')
