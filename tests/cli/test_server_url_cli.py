"""A server URL's password never reaches the terminal: not in an unsupported driver's
refusal, not in a URL that lost a slash, not in "no journal" for a database without one."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    monkeypatch.delenv("PROCTOR_JOURNAL", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg2://alice:s3cret@127.0.0.1:1/x",
        "postgresql+psycopg:/alice:s3cret@127.0.0.1:1/x",
        "postgresql+psycopg://alice:s3cret@127.0.0.1:1/x",
    ],
)
def test_a_refused_url_never_prints_its_password(cli: Callable[..., Any], url: str) -> None:
    result = cli("inbox", "--journal", url)
    assert result.rc != 0
    assert "s3cret" not in result.out + result.err
    assert "alice" in result.err  # the address is still named


def test_no_journal_on_a_server_names_the_url_without_its_password(
    cli: Callable[..., Any], pg_server: Any
) -> None:
    url = pg_server.url(pg_server.empty_database())
    password = url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    result = cli("cancel", "--journal", url, "run_" + "0" * 26, "--reason", "stop")  # writes
    assert result.rc == 3, result.err
    assert password not in result.out + result.err
    assert os.getcwd() not in result.err  # a server URL is not a path under the cwd
