"""Fixtures for core tests: real journal files (never :memory:), an agent and an operator
journal on the same file, and a controllable clock for expiry and lease tests.

The journal fixtures (``journal_path`` and all built on it) run each test twice: on a file
(``[sqlite]``) and on a real PostgreSQL server (``[pg]``, tests/pg_server.py), where
``journal_path`` is the server journal's URL. A test that needs a file (raw sqlite3, the
-wal, permissions, the witness) is marked ``sqlite_only``. ``PROCTOR_TEST_BACKENDS=sqlite``
(or ``=postgresql``) runs one backend only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.models import Run

from .helpers import FakeClock

AGENT = "agent-1"
OPERATOR = "alice"


@pytest.fixture(scope="session")
def template_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One freshly migrated journal per session; each test copies it (migrating is slow)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    assert not Path(f"{path}-wal").exists(), "template must be checkpointed before copying"
    return path


@pytest.fixture(scope="session")
def busy_template(
    tmp_path_factory: pytest.TempPathFactory, template_journal: Path
) -> tuple[Path, dict]:
    """A journal with a row in every table (see helpers.populate), built once per session."""
    from .helpers import populate

    path = tmp_path_factory.mktemp("busy") / "busy.db"
    shutil.copy2(template_journal, path)
    clock = FakeClock()
    with (
        Journal.open(path, actor=Actor.agent(AGENT), clock=clock) as agent,
        Journal.open(path, actor=Actor.operator(OPERATOR), clock=clock) as operator,
    ):
        ids = populate(agent, operator, clock)
    return path, ids


BACKENDS = ("sqlite", "postgresql")
BACKEND_IDS = {"sqlite": "sqlite", "postgresql": "pg"}


def backends() -> list[str]:
    chosen = os.environ.get("PROCTOR_TEST_BACKENDS")
    names = [b.strip() for b in chosen.split(",")] if chosen else list(BACKENDS)
    return [b for b in BACKENDS if b in names]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test on a journal fixture runs on both backends (one, if marked sqlite_only)."""
    if "backend" not in metafunc.fixturenames:
        return
    chosen = backends()
    if metafunc.definition.get_closest_marker("sqlite_only"):
        chosen = [b for b in chosen if b == "sqlite"]
    metafunc.parametrize("backend", chosen, ids=[BACKEND_IDS[b] for b in chosen], indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The store the test's journal is on: "sqlite" (a file) or "postgresql" (a server)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def journal_path(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Path:
    """The test's journal: a file (a copy of the migrated template), or on the postgresql
    backend a fresh server database's URL (a str)."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    template_journal = request.getfixturevalue("template_journal")
    folder = tmp_path / "journal"
    folder.mkdir(mode=0o700)
    path = folder / "journal.db"
    shutil.copy2(template_journal, path)
    return path


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_journal(journal_path: Path, clock: FakeClock) -> Iterator[Callable[..., Journal]]:
    """Open more journals on the test's file; all are closed at teardown."""
    opened: list[Journal] = []

    def _open(actor: Actor | str, **kwargs) -> Journal:
        kwargs.setdefault("clock", clock)
        journal = Journal.open(kwargs.pop("path", journal_path), actor=actor, **kwargs)
        opened.append(journal)
        return journal

    yield _open
    for journal in opened:
        journal.close()


@pytest.fixture
def agent(open_journal: Callable[..., Journal]) -> Journal:
    return open_journal(Actor.agent(AGENT))


@pytest.fixture
def operator(open_journal: Callable[..., Journal]) -> Journal:
    return open_journal(Actor.operator(OPERATOR))


@pytest.fixture
def start_run(agent: Journal) -> Callable[..., Run]:
    counter = iter(range(1, 10_000))

    def _start(project: str = "proj", title: str | None = None, **kwargs) -> Run:
        return agent.runs.start(project, title or f"run {next(counter)}", **kwargs)

    return _start


@pytest.fixture
def run(start_run: Callable[..., Run]) -> Run:
    return start_run()
