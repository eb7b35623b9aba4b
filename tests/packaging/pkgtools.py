"""Helpers shared by the packaging tests (a plain module: tests/packaging is not a package,
so that it cannot shadow the `packaging` library)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
ENABLED = os.environ.get("PROCTOR_PACKAGING", "") not in ("", "0")
SKIP_REASON = (
    "builds wheels and the desktop bundle (minutes): set PROCTOR_PACKAGING=1 "
    "(.ci/run does, in its packaging step)"
)
REPORT: list[str] = []  # figures measured by the tests, printed at the end of the run


def run(
    args: list[str | Path],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess:
    """Run a command; on failure the assertion shows its output."""
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd
    )
    assert done.returncode == 0, (
        f"{args} exited {done.returncode}\n"
        f"--- stdout\n{done.stdout[-4000:]}\n"
        f"--- stderr\n{done.stderr[-4000:]}"
    )
    return done


def uv() -> str:
    found = shutil.which("uv")
    assert found, "the packaging tests need uv (https://docs.astral.sh/uv/) on PATH"
    return found


def isolated_env(home: Path, bin_dir: Path | None = None) -> dict[str, str]:
    """Offscreen Qt, and settings/logs/data under ``home`` (never the user's own)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        PROCTOR_LOG_DIR=str(home / "log"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
    )
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env
