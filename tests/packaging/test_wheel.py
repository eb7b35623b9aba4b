"""The wheel and the sdist: what they contain, and the wheel installed into a fresh venv
runs the command line, builds a demo journal and opens the desk offscreen."""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from pkgtools import ARTIFACTS, REPORT, isolated_env, run
from PySide6.QtGui import QImage

from proctor import resources
from proctor.cli import build_parser

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "proctor": "cli",
    "proctor.core": "core",
    "proctor.gui": "gui",
    "proctor.sim": "sim",
    "proctor.resources": "resources",
}


def listed_packages() -> list[str]:
    """Every package pyproject.toml lists (tests/test_contracts.py checks it lists them all)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["packages"]


def source_folder(package: str) -> str:
    """The source folder of a package (package-dir maps proctor.core to core/, ...)."""
    top = max((k for k in FOLDERS if package == k or package.startswith(k + ".")), key=len)
    return "/".join([FOLDERS[top], *package[len(top) :].split(".")[1:]])


PACKAGES = tuple(p.replace(".", "/") for p in listed_packages())


def subcommands() -> set[str]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    return set(sub.choices)


def test_the_wheel_holds_the_proctor_packages_and_the_resources_and_nothing_else(dists):
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"proctor", "proctor-0.1.0.dist-info"}  # no top-level core/, gui/, sim/
    for package in PACKAGES:
        assert f"{package}/__init__.py" in names, package
    for icon in resources.icon_names():
        assert f"proctor/resources/icons/{icon}.svg" in names
    for size in resources.APP_ICON_SIZES:
        assert f"proctor/resources/icons/app/proctor-{size}.png" in names
    for name in ("themes/light.json", "themes/dark.json", f"linux/{resources.APP_ID}.desktop"):
        assert f"proctor/resources/{name}" in names
    assert "proctor/core/storage/migrations/env.py" in names
    assert "proctor/core/py.typed" in names  # PEP 561: type checkers read the core's types
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    entry_points = (
        zipfile.ZipFile(dists["wheel"]).read("proctor-0.1.0.dist-info/entry_points.txt").decode()
    )
    assert "proctor = proctor.cli:main" in entry_points
    assert "[gui_scripts]\nproctor-desk = proctor.gui.shell.launch:main" in entry_points


def test_the_sdist_holds_the_sources_the_wheel_is_built_from(dists):
    """An sdist is the source layout (core/, gui/, … mapped by package-dir); what matters
    is that it holds every source and resource, which the wheel built from it shows."""
    with tarfile.open(dists["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for folder in map(source_folder, listed_packages()):
        assert f"{folder}/__init__.py" in names, folder
    assert "resources/icons/proctor.svg" in names and "resources/themes/dark.json" in names
    assert "pyproject.toml" in names and "README.md" in names
    assert "core/py.typed" in names
    assert not [n for n in names if n.startswith((".venv/", "build/", "tests/artifacts/"))]


def test_the_installed_wheel_runs_its_commands(wheel_venv, tmp_path):
    env = isolated_env(tmp_path, wheel_venv)
    python = wheel_venv / "python"
    assert run([wheel_venv / "proctor", "--version"], env=env).stdout.strip() == "proctor 0.1.0"
    help_text = run([wheel_venv / "proctor", "--help"], env=env).stdout
    assert sorted(c for c in subcommands() if c not in help_text) == []
    # the installed package is the wheel's, and it brought no top-level core/gui package
    where = run(
        [python, "-c", "import proctor.gui, proctor.core; print(proctor.gui.__file__)"],
        env=env,
        cwd=tmp_path,
    ).stdout
    assert str(wheel_venv.parent) in where
    for name in ("core", "gui", "sim", "cli"):
        probe = f"import importlib.util as u; print(u.find_spec({name!r}) is None)"
        assert run([python, "-c", probe], env=env, cwd=tmp_path).stdout.strip() == "True"


def test_the_installed_wheel_builds_a_demo_journal_and_opens_the_desk(
    wheel_venv, tmp_path, fast_dir
):
    env = isolated_env(tmp_path, wheel_venv)
    journal = fast_dir / "wheel-demo.db"
    run([wheel_venv / "proctor", "demo-journal", journal, "--quiet", "--force"], env=env)
    run([wheel_venv / "proctor", "verify", journal], env=env)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "wheel-desk.png"
    done = run([wheel_venv / "proctor-desk", journal, "--smoke-test", shot], env=env, timeout=300)
    assert "icons ok" in done.stdout and "inbox rows" in done.stdout
    image = QImage(str(shot))
    assert image.width() >= 900 and image.height() >= 560
    # the same through `python -m proctor.gui`
    run(
        [wheel_venv / "python", "-m", "proctor.gui", journal, "--smoke-test", tmp_path / "m.png"],
        env=env,
        timeout=300,
    )
    assert (tmp_path / "log" / "desk.log").exists()
    REPORT.append(
        f"wheel: {sum(1 for _ in Path(wheel_venv.parent).rglob('*'))} files in "
        f"the venv; desk opened offscreen: {done.stdout.strip()}"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="freedesktop menus")
def test_the_installed_wheel_puts_itself_in_the_menu(wheel_venv, tmp_path):
    env = isolated_env(tmp_path, wheel_venv)
    run([wheel_venv / "proctor", "install-desktop"], env=env)
    entry = tmp_path / "data" / "applications" / f"{resources.APP_ID}.desktop"
    text = entry.read_text(encoding="utf-8")
    assert f"Exec={wheel_venv / 'proctor-desk'} %u" in text
    assert (
        tmp_path / "data" / "icons" / "hicolor" / "256x256" / "apps" / f"{resources.APP_ID}.png"
    ).is_file()
