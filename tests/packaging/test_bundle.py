"""The PyInstaller bundle: packaging/build.sh builds it, and it runs offscreen: --version,
a demo journal written by the bundle itself (Alembic migrations read from the bundle),
the desk opened on it with a screenshot, and its desktop files valid."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from pkgtools import ARTIFACTS, REPORT, ROOT, isolated_env, run
from PySide6.QtGui import QImage

from proctor import resources

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(sys.platform == "win32", reason="build.sh needs a POSIX shell"),
]


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="session")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    env = {
        **os.environ,
        "PROCTOR_BUILD_DIR": str(out),
        "PROCTOR_PROJECT_URL": "https://example.org/proctor",
    }
    started = time.monotonic()
    run(["bash", ROOT / "packaging" / "build.sh"], env=env, timeout=1800)
    took = time.monotonic() - started
    folder = out / "dist" / "proctor"
    size = folder_size(folder)
    tarballs = list(out.glob("proctor-*.tar.gz"))
    packed = f", tarball {tarballs[0].stat().st_size / 1e6:.0f} MB" if tarballs else ""
    REPORT.append(
        f"bundle: {size / 1e6:.0f} MB in {sum(1 for _ in folder.rglob('*'))} files"
        f"{packed}; build.sh took {took:.0f} s (wheel, venv, PyInstaller)"
    )
    return folder


def test_the_bundle_has_both_programs_and_the_resources(bundle):
    exe = ".exe" if sys.platform == "win32" else ""
    assert (bundle / f"proctor{exe}").is_file() and (bundle / f"proctor-desk{exe}").is_file()
    internal = bundle / "_internal"
    assert (internal / "proctor" / "resources" / "icons" / "proctor.svg").is_file()
    assert (internal / "proctor" / "resources" / "themes" / "dark.json").is_file()
    assert (internal / "proctor" / "core" / "storage" / "migrations" / "env.py").is_file()
    assert not (internal / "pytest").exists() and not (internal / "hypothesis").exists()


def test_the_bundle_runs_offscreen(bundle, tmp_path, fast_dir):
    env = isolated_env(tmp_path)
    assert run([bundle / "proctor", "--version"], env=env).stdout.strip() == "proctor 0.1.0"
    assert run([bundle / "proctor-desk", "--version"], env=env).stdout.strip() == "proctor 0.1.0"
    journal = fast_dir / "bundle-demo.db"
    run([bundle / "proctor", "demo-journal", journal, "--quiet", "--force"], env=env)
    run([bundle / "proctor", "verify", journal], env=env)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "bundle-desk.png"
    done = run([bundle / "proctor-desk", journal, "--smoke-test", shot], env=env, timeout=300)
    assert "icons ok" in done.stdout
    assert "versions: Proctor 0.1.0; Qt " in done.stdout and "unknown" not in done.stdout
    image = QImage(str(shot))
    assert image.width() >= 900 and image.height() >= 560


def test_the_bundle_runs_agent_modules_like_python_m(bundle, tmp_path):
    done = run(
        [bundle / "proctor", "-m", "proctor.sim.agent_process", "--help"],
        env=isolated_env(tmp_path),
    )
    assert "--journal" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="freedesktop files")
def test_the_bundle_ships_valid_desktop_files_and_installs_its_menu_entry(bundle, tmp_path):
    share = bundle / "share"
    desktop = share / "applications" / f"{resources.APP_ID}.desktop"
    metainfo = share / "metainfo" / f"{resources.APP_ID}.metainfo.xml"
    assert desktop.is_file() and metainfo.is_file()
    assert "@" not in metainfo.read_text(encoding="utf-8")  # every placeholder filled
    if shutil.which("desktop-file-validate"):
        run(["desktop-file-validate", desktop])
    if shutil.which("appstreamcli"):
        run(["appstreamcli", "validate", "--no-net", metainfo])
    env = isolated_env(tmp_path)
    run([bundle / "proctor", "install-desktop"], env=env)
    entry = (tmp_path / "data" / "applications" / desktop.name).read_text(encoding="utf-8")
    assert f"Exec={bundle / 'proctor-desk'} %u" in entry
