"""A team server over TLS (docs/team.md asks for it): a journal opened with
``sslmode=verify-full`` talks to the server encrypted after checking its certificate, a
certificate no trusted CA signed is refused in a sentence before anything is sent, and
``sslmode=disable`` really is plain. The server is the session's real PostgreSQL with TLS on
(tests/pg_server.py makes its CA and certificate)."""

from __future__ import annotations

from pathlib import Path

import pg_server as pgs
import pytest

from proctor.core import Actor, Journal, errors


def encrypted(journal: Journal) -> bool:
    return bool(
        journal.read(
            lambda c: c.exec_driver_sql(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
            ).scalar()
        )
    )


def with_tls(url: str, mode: str, ca: Path | None = None) -> str:
    return f"{url}?sslmode={mode}" + (f"&sslrootcert={ca}" if ca else "")


def test_verify_full_checks_the_certificate_and_encrypts(pg_server, pg_url):
    url = with_tls(pg_url, "verify-full", pg_server.ca_file)
    with (
        Journal.open(url, actor=Actor.agent("remote-bot")) as agent,
        Journal.open(url, actor=Actor.operator("alice")) as operator,
    ):
        assert encrypted(agent) and encrypted(operator)
        run = agent.runs.start("remote", "over TLS", agent="remote-bot")
        asked = agent.approvals.request(run.id, {"tool": "t", "args": {}}, reason="r")
        operator.approvals.decide(asked.id, True, expected_version=asked.version)
        assert agent.approvals.get(asked.id).status.value == "approved"


def test_a_certificate_no_trusted_ca_signed_is_refused_in_a_sentence(pg_server, pg_url, tmp_path):
    other_ca, _cert, _key = pgs.make_certs(tmp_path, ca_name="someone else's CA")
    with pytest.raises(errors.StoreError) as refused:
        Journal.open(with_tls(pg_url, "verify-full", other_ca), actor=Actor.agent("x"))
    message = str(refused.value)
    assert "certificate verify failed" in message
    assert "sslrootcert" in refused.value.hint
    assert pgs.PASSWORD not in message
    assert "Traceback" not in message and "psycopg" not in type(refused.value).__module__


def test_disable_is_plain_and_prefer_takes_tls(pg_url):
    with Journal.open(with_tls(pg_url, "disable"), actor=Actor.agent("x")) as plain:
        assert not encrypted(plain)
    with Journal.open(with_tls(pg_url, "prefer"), actor=Actor.agent("x")) as preferred:
        assert encrypted(preferred)
