"""Packaging tests: build the sdist/wheel and the PyInstaller bundle, install and run them.

Tests marked ``packaging`` take minutes (a bundle build, fresh venvs), so the main
``uv run pytest`` skips them; ``.ci/run`` runs them in a second step with
``PROCTOR_PACKAGING=1 uv run pytest -m packaging tests/packaging``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pkgtools import ENABLED, REPORT, ROOT, SKIP_REASON, run, uv


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if ENABLED:
        return
    for item in items:
        if item.get_closest_marker("packaging"):
            item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


def pytest_terminal_summary(terminalreporter) -> None:
    if REPORT:
        terminalreporter.section("packaging figures")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def fast_dir() -> Iterator[Path]:
    """A folder for demo journals: RAM (/dev/shm) where there is one, so the journal's
    fsyncs cost nothing; else the temp folder."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="proctor-pkg-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def constraints(tmp_path_factory) -> Path:
    """The runtime dependency versions of uv.lock (what `uv sync` already cached)."""
    out = tmp_path_factory.mktemp("constraints") / "constraints.txt"
    done = run(
        [
            uv(),
            "export",
            "--quiet",
            "--frozen",
            "--no-dev",
            "--no-hashes",
            "--no-emit-project",
            "--format",
            "requirements-txt",
        ],
        cwd=ROOT,
    )
    out.write_text(done.stdout, encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel built from it (``uv build``), in a temp folder."""
    out = tmp_path_factory.mktemp("dist")
    run([uv(), "build", "--quiet", "--out-dir", out, ROOT], cwd=ROOT, timeout=300)
    [sdist] = out.glob("proctor-*.tar.gz")
    [wheel] = out.glob("proctor-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory, dists, constraints) -> Path:
    """A fresh venv with only the wheel and its runtime dependencies; returns its bin dir."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run([uv(), "venv", "--quiet", "--python", sys.executable, venv])
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    run(
        [
            uv(),
            "pip",
            "install",
            "--quiet",
            "--python",
            bin_dir / "python",
            "-c",
            constraints,
            dists["wheel"],
        ],
        timeout=600,
    )
    return bin_dir
