"""Fixtures for CLI tests: a small demo journal built once, copied per test, and a runner
that calls `proctor` in-process and returns the exit code and both outputs."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE, Popen

import pytest

from proctor.cli import main
from proctor.sim.demo import build_demo_journal

SEED = 7
OPERATOR = "tester"


@dataclass
class Result:
    rc: int
    out: str
    err: str


@pytest.fixture(scope="session")
def demo_twin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Popen]]:
    """A second build with the same seed by `proctor demo-journal` in another process,
    started first so it runs on the other core while the template is built."""
    path = tmp_path_factory.mktemp("twin") / "twin.db"
    proc = Popen(
        [
            sys.executable,
            "-m",
            "proctor",
            "demo-journal",
            str(path),
            "--seed",
            str(SEED),
            "--json",
            "--quiet",
        ],
        stdout=PIPE,
        stderr=PIPE,
        text=True,
    )
    yield path, proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


@pytest.fixture(scope="session")
def demo_template(
    tmp_path_factory: pytest.TempPathFactory, demo_twin: tuple[Path, Popen]
) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    summary = build_demo_journal(path, "small", seed=SEED)
    assert not Path(f"{path}-wal").exists(), "the template must be checkpointed"
    return path, summary


@pytest.fixture
def journal(
    demo_template: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A private copy of the demo journal, named by PROCTOR_JOURNAL."""
    path = tmp_path / "journal.db"
    shutil.copy2(demo_template[0], path)
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", OPERATOR)
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    def run(*args: object) -> Result:
        try:
            rc = main([str(a) for a in args])
        except SystemExit as stop:
            rc = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        out, err = capsys.readouterr()
        return Result(rc, out, err)

    return run
